//! Errors in a DTD, rendered like a compiler's:
//!
//! ```text
//! error: field `size` has no width
//!  --> heap.dtd:4:18
//!   |
//! 4 |     alloc : (tag, size) {
//!   |                   ^^^^ used here
//!   = hint: add `size.width = 4;` globally or in the record
//! ```

use std::fmt;

use crate::ast::{Origin, Span};
use crate::source::LineIndex;

/// One error, already resolved to a file, line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// What is wrong, in one sentence.
    pub message: String,
    /// The file the error is in (`<builtin>` for the built-in records).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// Byte offset of the error in the file.
    pub offset: usize,
    /// Number of characters to underline (at least 1).
    pub width: usize,
    /// The text of the line, for display: the whole line, or when it is longer than
    /// [`MAX_EXCERPT`] characters an excerpt of that many around the error, marked with `…`
    /// where it is cut (so a DTD written on one huge line does not echo all of it per error).
    pub source_line: String,
    /// 1-based column of the error within [`Self::source_line`] (equal to [`Self::column`]
    /// unless the line was cut).
    pub excerpt_column: usize,
    /// A short note printed after the carets.
    pub label: Option<String>,
    /// How to fix it.
    pub hint: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let number = self.line.to_string();
        let pad = " ".repeat(number.len());
        writeln!(f, "error: {}", self.message)?;
        writeln!(f, "{pad}--> {}:{}:{}", self.file, self.line, self.column)?;
        writeln!(f, "{pad} |")?;
        writeln!(f, "{number} | {}", self.source_line)?;
        // Copy tabs from the source line so the carets line up in a terminal.
        let indent: String = self
            .source_line
            .chars()
            .take(self.excerpt_column - 1)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        write!(f, "{pad} | {indent}{}", "^".repeat(self.width.max(1)))?;
        match &self.label {
            Some(label) => writeln!(f, " {label}")?,
            None => writeln!(f)?,
        }
        if let Some(hint) = &self.hint {
            writeln!(f, "{pad} = hint: {hint}")?;
        }
        Ok(())
    }
}

/// Every error found in a DTD, in source order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
    /// Errors found after the first [`MAX_SHOWN`], counted but not kept.
    omitted: usize,
}

/// Most errors kept and printed: a hostile DTD can have one error per declaration, and
/// beyond the first hundred more of the same help nobody.
pub const MAX_SHOWN: usize = 100;

/// Longest source line echoed under an error, in characters; longer lines are cut around the
/// error.
pub const MAX_EXCERPT: usize = 120;

impl Diagnostics {
    /// Number of errors found, including those not kept (see [`Self::omitted`]).
    pub fn len(&self) -> usize {
        self.items.len() + self.omitted
    }

    /// True when there are no errors.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Errors found but not kept, after the first [`MAX_SHOWN`].
    pub fn omitted(&self) -> usize {
        self.omitted
    }

    /// The errors kept (at most [`MAX_SHOWN`]), in source order.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.items.iter()
    }

    /// The errors kept (at most [`MAX_SHOWN`]), in source order.
    pub fn as_slice(&self) -> &[Diagnostic] {
        &self.items
    }
}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.items.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        if self.omitted > 0 {
            writeln!(f)?;
            writeln!(
                f,
                "error: {} more errors not shown (the first {} are)",
                self.omitted,
                self.items.len()
            )?;
        }
        if self.len() > 1 {
            writeln!(f)?;
            writeln!(f, "error: {} errors", self.len())?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// An error not yet placed on a line: what validation produces.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    /// Where.
    pub span: Span,
    /// What.
    pub message: String,
    /// Note after the carets.
    pub label: Option<String>,
    /// How to fix it.
    pub hint: Option<String>,
    /// An earlier place the message refers to ("first set here"), shown as a line number.
    pub see: Option<Span>,
}

impl Problem {
    /// A problem at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Problem {
            span,
            message: message.into(),
            label: None,
            hint: None,
            see: None,
        }
    }

    /// Mentions an earlier place, printed after the hint as "(see line N)".
    pub fn see(mut self, span: Span) -> Self {
        self.see = Some(span);
        self
    }

    /// Adds a note printed after the carets.
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// The texts spans refer to, for turning [`Problem`]s into [`Diagnostic`]s.
pub struct Sources<'a> {
    /// The user's DTD and its file name.
    pub user: (&'a str, &'a str),
    /// The built-in definitions.
    pub builtin: &'a str,
}

impl Sources<'_> {
    /// Places problems on lines, sorts them by position and drops exact duplicates (a global
    /// property can be found wrong once per record that uses it).
    pub fn render(&self, mut problems: Vec<Problem>) -> Diagnostics {
        problems.sort();
        problems.dedup();
        let omitted = problems.len().saturating_sub(MAX_SHOWN);
        problems.truncate(MAX_SHOWN);
        let user = LineIndex::new(self.user.0);
        let builtin = LineIndex::new(self.builtin);
        let items = problems
            .into_iter()
            .map(|p| {
                let (index, text, file) = match p.span.origin {
                    Origin::User => (&user, self.user.0, self.user.1),
                    Origin::Builtin => (&builtin, self.builtin, "<builtin>"),
                };
                let (line, column) = index.line_col(p.span.start);
                let source_line = index.line_text(p.span.start);
                let line_start = index.line_start(p.span.start);
                let line_end = line_start + source_line.len();
                let start = p.span.start.min(text.len());
                let end = p.span.end.clamp(start, line_end.max(start));
                let width = text.get(start..end).map_or(1, |s| s.chars().count()).max(1);
                let (source_line, excerpt_column, width) = excerpt(source_line, column, width);
                let hint = match (p.hint, p.see) {
                    (Some(h), Some(s)) if s.origin == p.span.origin => {
                        Some(format!("{h} (see line {})", index.line_col(s.start).0))
                    }
                    (h, _) => h,
                };
                Diagnostic {
                    message: p.message,
                    file: file.to_string(),
                    line,
                    column,
                    offset: p.span.start,
                    width,
                    source_line,
                    excerpt_column,
                    label: p.label,
                    hint,
                }
            })
            .collect();
        Diagnostics { items, omitted }
    }
}

/// The part of `line` shown under an error at 1-based character `column` that underlines
/// `width` characters: the whole line when it has at most [`MAX_EXCERPT`] characters, else
/// that many around the error, with `…` where it was cut. Returns the excerpt, the error's
/// column in it and the width still inside it.
fn excerpt(line: &str, column: usize, width: usize) -> (String, usize, usize) {
    let chars = line.chars().count();
    if chars <= MAX_EXCERPT {
        return (line.to_string(), column, width);
    }
    // A little context before the error, the rest after it.
    let from = column.saturating_sub(1).saturating_sub(MAX_EXCERPT / 4);
    let to = (from + MAX_EXCERPT).min(chars);
    let from = to.saturating_sub(MAX_EXCERPT);
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    out.extend(line.chars().skip(from).take(to - from));
    if to < chars {
        out.push('…');
    }
    let lead = usize::from(from > 0);
    let excerpt_column = column.saturating_sub(from) + lead;
    let room = to.saturating_sub(column - 1).max(1);
    (out, excerpt_column, width.min(room))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str, start: usize, end: usize) -> String {
        let problem = Problem::new(
            Span {
                origin: Origin::User,
                start,
                end,
            },
            "bad",
        )
        .label("here")
        .hint("fix it");
        Sources {
            user: (text, "f.dtd"),
            builtin: "",
        }
        .render(vec![problem])
        .to_string()
    }

    #[test]
    fn carets_follow_tabs_and_the_gutter_fits_the_line_number() {
        let text = format!("{}\tab cd\n", "\n".repeat(11));
        let out = render(&text, 15, 17);
        assert_eq!(
            out,
            "error: bad\n  --> f.dtd:12:5\n   |\n12 | \tab cd\n   | \t   ^^ here\n   = hint: fix it\n"
        );
    }

    #[test]
    fn a_long_line_is_cut_around_the_error() {
        let text = format!("{}bad{}", "a".repeat(5000), "b".repeat(5000));
        let out = render(&text, 5000, 5003);
        assert!(out.contains("f.dtd:1:5001"), "{out}");
        let shown = out.lines().nth(3).unwrap();
        assert!(shown.chars().count() < MAX_EXCERPT + 10, "{shown}");
        assert!(shown.contains("…aaa") && shown.contains("bbb…"), "{shown}");
        // The carets still sit under `bad`.
        let carets = out.lines().nth(4).unwrap();
        let at = carets.chars().position(|c| c == '^').unwrap();
        let under: String = shown.chars().skip(at).take(3).collect();
        assert_eq!(under, "bad", "{shown}\n{carets}");
        assert!(carets.contains("^^^ here"), "{carets}");
        // Near the end of a long line, the excerpt ends with the line.
        let out = render(&text, 9999, 10003);
        assert!(out.lines().nth(3).unwrap().ends_with('b'), "{out}");
    }

    #[test]
    fn only_the_first_errors_are_kept_and_the_rest_counted() {
        let text = "x\n".repeat(1000);
        let problems = (0..1000)
            .map(|i| {
                Problem::new(
                    Span {
                        origin: Origin::User,
                        start: 2 * i,
                        end: 2 * i + 1,
                    },
                    format!("bad {i}"),
                )
            })
            .collect();
        let d = Sources {
            user: (&text, "f.dtd"),
            builtin: "",
        }
        .render(problems);
        assert_eq!(d.len(), 1000);
        assert_eq!(d.iter().count(), MAX_SHOWN);
        assert_eq!(d.omitted(), 1000 - MAX_SHOWN);
        let out = d.to_string();
        assert!(
            out.contains("error: bad 99\n") && !out.contains("bad 100\n"),
            "{out}"
        );
        assert!(out.contains("900 more errors not shown"), "{out}");
        assert!(out.ends_with("error: 1000 errors\n"), "{out}");
    }

    #[test]
    fn spans_past_the_line_end_are_cut_and_end_of_file_is_shown() {
        let out = render("ab\ncd", 1, 5);
        assert!(out.contains("1 | ab\n  |  ^ here"), "{out}");
        let out = render("ab", 2, 2);
        assert!(out.contains("f.dtd:1:3"), "{out}");
    }
}

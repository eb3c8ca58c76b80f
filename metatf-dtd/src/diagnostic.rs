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
    /// The text of the line, for display.
    pub source_line: String,
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
            .take(self.column - 1)
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
}

impl Diagnostics {
    /// Number of errors.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there are no errors.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The errors in source order.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.items.iter()
    }

    /// The errors in source order.
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
        if self.items.len() > 1 {
            writeln!(f)?;
            writeln!(f, "error: {} errors", self.items.len())?;
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
                    source_line: source_line.to_string(),
                    label: p.label,
                    hint,
                }
            })
            .collect();
        Diagnostics { items }
    }
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
    fn spans_past_the_line_end_are_cut_and_end_of_file_is_shown() {
        let out = render("ab\ncd", 1, 5);
        assert!(out.contains("1 | ab\n  |  ^ here"), "{out}");
        let out = render("ab", 2, 2);
        assert!(out.contains("f.dtd:1:3"), "{out}");
    }
}

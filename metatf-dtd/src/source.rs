//! Line/column lookup and a small lexical scan of a DTD's text.
//!
//! The scan runs before the grammar for two reasons: the grammar throws comments away, but the
//! formatter wants to keep them; and an unterminated comment or an unclosed brace is best reported
//! where it *starts*, which a PEG parser failing at end of file cannot do.

/// Maps byte offsets to 1-based line and column numbers (columns count characters).
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, line_starts }
    }

    /// 0-based line number containing `offset`.
    fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// The byte offset clamped into the text and moved back onto a character boundary.
    fn clamp(&self, offset: usize) -> usize {
        let mut o = offset.min(self.text.len());
        while !self.text.is_char_boundary(o) {
            o -= 1;
        }
        o
    }

    /// 1-based line and column of `offset`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = self.clamp(offset);
        let line = self.line_of(offset);
        let col = self.text[self.line_starts[line]..offset].chars().count() + 1;
        (line + 1, col)
    }

    /// The text of the line containing `offset`, without its line terminator.
    pub fn line_text(&self, offset: usize) -> &'a str {
        let offset = self.clamp(offset);
        let line = self.line_of(offset);
        let start = self.line_starts[line];
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(self.text.len(), |&next| next - 1);
        self.text[start..end].trim_end_matches('\r')
    }

    /// Byte offset where the line containing `offset` starts.
    pub fn line_start(&self, offset: usize) -> usize {
        self.line_starts[self.line_of(self.clamp(offset))]
    }
}

/// A comment found by the scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// First byte (the `/`).
    pub start: usize,
    /// One past the last byte (the newline of a `//` comment is not included).
    pub end: usize,
}

/// A problem found by the lexical scan, reported instead of (or before) the grammar's error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanProblem {
    /// `/*` without `*/`.
    UnterminatedComment {
        /// Offset of the `/*`.
        start: usize,
    },
    /// An opening bracket never closed.
    Unclosed {
        /// Offset of the bracket.
        at: usize,
        /// The bracket character.
        open: char,
        /// A closing bracket of the wrong kind that ended it, if any.
        wrong_close: Option<(usize, char)>,
    },
    /// A closing bracket with nothing to close.
    Stray {
        /// Offset of the bracket.
        at: usize,
        /// The bracket character.
        close: char,
    },
    /// Brackets nested deeper than [`MAX_NESTING`].
    TooDeep {
        /// Offset of the bracket that went too deep.
        at: usize,
    },
}

/// Deepest bracket nesting accepted; keeps every recursive pass on the syntax tree shallow.
pub const MAX_NESTING: usize = 32;

/// The result of scanning a text.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Every complete comment, in order.
    pub comments: Vec<Comment>,
    /// Problems, in order of position.
    pub problems: Vec<ScanProblem>,
}

fn closer_of(open: char) -> char {
    if open == '(' {
        ')'
    } else {
        '}'
    }
}

/// Finds comments and checks that brackets and block comments are closed.
pub fn scan(text: &str) -> Scan {
    let bytes = text.as_bytes();
    let mut out = Scan::default();
    let mut stack: Vec<(usize, char)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
                out.comments.push(Comment { start: i, end });
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => match text[i + 2..].find("*/") {
                Some(n) => {
                    let end = i + 2 + n + 2;
                    out.comments.push(Comment { start: i, end });
                    i = end;
                }
                None => {
                    out.problems
                        .push(ScanProblem::UnterminatedComment { start: i });
                    // Everything after is comment text; brackets in it do not count.
                    i = bytes.len();
                }
            },
            // Brackets and slashes inside a line pattern's quoted text are text.
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            c @ (b'(' | b'{') => {
                stack.push((i, c as char));
                if stack.len() > MAX_NESTING {
                    out.problems.push(ScanProblem::TooDeep { at: i });
                    return out;
                }
                i += 1;
            }
            c @ (b')' | b'}') => {
                let close = c as char;
                if stack.iter().any(|&(_, open)| closer_of(open) == close) {
                    // Openers above the matching one were never closed.
                    while let Some((at, open)) = stack.pop() {
                        if closer_of(open) == close {
                            break;
                        }
                        out.problems.push(ScanProblem::Unclosed {
                            at,
                            open,
                            wrong_close: Some((i, close)),
                        });
                    }
                } else {
                    out.problems.push(ScanProblem::Stray { at: i, close });
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    for (at, open) in stack.into_iter().rev() {
        out.problems.push(ScanProblem::Unclosed {
            at,
            open,
            wrong_close: None,
        });
    }
    out.problems.sort_by_key(|p| match p {
        ScanProblem::UnterminatedComment { start } => *start,
        ScanProblem::Unclosed { at, .. }
        | ScanProblem::Stray { at, .. }
        | ScanProblem::TooDeep { at } => *at,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_from_one() {
        let idx = LineIndex::new("ab\nçd\r\nx");
        assert_eq!(idx.line_col(0), (1, 1));
        assert_eq!(idx.line_col(3), (2, 1));
        assert_eq!(idx.line_col(5), (2, 2));
        assert_eq!(idx.line_text(5), "çd");
        assert_eq!(idx.line_col(8), (3, 1));
        assert_eq!(idx.line_col(4), (2, 1), "inside a character moves back");
    }

    #[test]
    fn scan_finds_comments_and_ignores_brackets_in_them() {
        let s = scan("a // ( {\n/* } */ (b)");
        assert_eq!(s.comments.len(), 2);
        assert!(s.problems.is_empty());
    }

    #[test]
    fn scan_reports_unclosed_and_stray_brackets() {
        let s = scan("x { ( }");
        assert!(matches!(
            s.problems[0],
            ScanProblem::Unclosed {
                at: 4,
                open: '(',
                wrong_close: Some((6, '}'))
            }
        ));
        assert_eq!(s.problems.len(), 1, "the `{{` is closed by the `}}`");
        let s = scan(")");
        assert_eq!(s.problems, vec![ScanProblem::Stray { at: 0, close: ')' }]);
        let s = scan("/* open");
        assert_eq!(
            s.problems,
            vec![ScanProblem::UnterminatedComment { start: 0 }]
        );
    }
}

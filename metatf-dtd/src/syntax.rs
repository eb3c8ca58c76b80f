//! From text to [`ast::Dtd`]: the pest grammar, the tree builder and syntax-error messages.

use pest::iterators::Pair;
use pest::Parser;
use pest_derive::Parser;

use crate::ast::{
    Body, Dtd, Field, Item, LinePart, LinePattern, Origin, Property, Record, SectionDecl, Span,
    Term, Token, UnmatchedDecl, Value,
};
use crate::diagnostic::Problem;
use crate::source::{scan, ScanProblem};

/// The generated pest parser for `grammar.pest`.
#[derive(Parser)]
#[grammar = "grammar.pest"]
pub struct DtdParser;

/// Parses a DTD into its syntax tree, or explains the first syntax error (plus every unclosed
/// bracket or comment, which are found by a separate scan).
pub fn parse(text: &str, origin: Origin) -> Result<Dtd, Vec<Problem>> {
    let span = |start: usize, end: usize| Span { origin, start, end };
    let scanned = scan(text);
    let mut problems: Vec<Problem> = scanned
        .problems
        .iter()
        .map(|p| scan_problem(p, text, &span))
        .collect();
    // Unterminated comments and runaway nesting make the grammar's own error useless (or the
    // parse needlessly deep), so stop here.
    if scanned.problems.iter().any(|p| {
        matches!(
            p,
            ScanProblem::UnterminatedComment { .. } | ScanProblem::TooDeep { .. }
        )
    }) {
        return Err(problems);
    }
    match DtdParser::parse(Rule::dtd, text) {
        Ok(mut pairs) => {
            if !problems.is_empty() {
                return Err(problems);
            }
            let Some(dtd) = pairs.next() else {
                return Err(vec![Problem::new(span(0, 0), "empty parse")]);
            };
            let items = dtd
                .into_inner()
                .filter(|p| p.as_rule() != Rule::EOI)
                .map(|p| item(p, origin))
                .collect();
            Ok(Dtd {
                items,
                end: text.len(),
            })
        }
        Err(first) => {
            // A bracket problem found by the scan explains any grammar error at or after it.
            let first_scan = scanned
                .problems
                .iter()
                .map(|p| match p {
                    ScanProblem::Unclosed { at, .. } | ScanProblem::Stray { at, .. } => *at,
                    _ => 0,
                })
                .min();
            let mut err = first;
            let mut base = 0;
            loop {
                let at = base + error_offset(&err);
                if first_scan.is_some_and(|s| at >= s) {
                    break;
                }
                problems.push(grammar_problem(&err, at, text, &span));
                // Resume after the statement holding the error, but only when brackets are
                // balanced: otherwise the resumed parse would only report echoes.
                if problems.len() >= MAX_SYNTAX_ERRORS || !scanned.problems.is_empty() {
                    break;
                }
                let Some(resume) = resync(text, at, &scanned.comments) else {
                    break;
                };
                match DtdParser::parse(Rule::dtd, &text[resume..]) {
                    Ok(_) => break,
                    Err(next) => {
                        err = next;
                        base = resume;
                    }
                }
            }
            Err(problems)
        }
    }
}

/// Syntax errors reported for one file at most.
const MAX_SYNTAX_ERRORS: usize = 20;

fn error_offset(err: &pest::error::Error<Rule>) -> usize {
    match err.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    }
}

/// Where parsing can start again after a syntax error at `at`: just after the `;` or `}` that
/// ends the top-level item containing it (brackets and comments taken into account).
fn resync(text: &str, at: usize, comments: &[crate::source::Comment]) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0i64;
    let mut next_comment = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(c) = comments.get(next_comment) {
            if i >= c.start {
                i = i.max(c.end);
                next_comment += 1;
                continue;
            }
        }
        let b = bytes[i];
        match b {
            b'(' | b'{' => depth += 1,
            b')' | b'}' => {
                depth -= 1;
                if i >= at && depth == 0 && b == b'}' {
                    return Some(i + 1);
                }
            }
            b';' if i >= at && depth == 0 => return Some(i + 1),
            _ => {}
        }
        i += 1;
    }
    None
}

fn scan_problem(p: &ScanProblem, text: &str, span: &impl Fn(usize, usize) -> Span) -> Problem {
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    match *p {
        ScanProblem::UnterminatedComment { start } => {
            Problem::new(span(start, start + 2), "unterminated block comment")
                .label("the comment starts here and never ends")
                .hint("close it with `*/`")
        }
        ScanProblem::Unclosed {
            at,
            open,
            wrong_close,
        } => {
            let closer = if open == '(' { ')' } else { '}' };
            let what = if open == '(' { "field list" } else { "block" };
            let problem = Problem::new(span(at, at + 1), format!("unclosed {what}"))
                .label(format!("this `{open}` is never closed"));
            match wrong_close {
                Some((c, ch)) => problem.hint(format!(
                    "`{ch}` on line {} does not match; add `{closer}` before it",
                    line_of(c)
                )),
                None => problem.hint(format!("add `{closer}` where the {what} should end")),
            }
        }
        ScanProblem::Stray { at, close } => {
            Problem::new(span(at, at + 1), format!("unexpected `{close}`"))
                .label("nothing to close here")
                .hint("remove it, or add the missing opening bracket")
        }
        ScanProblem::TooDeep { at } => Problem::new(
            span(at, at + 1),
            format!(
                "brackets nested more than {} levels deep",
                crate::source::MAX_NESTING
            ),
        )
        .hint("flatten the definition with named records"),
    }
}

/// Human words for what a grammar rule would have accepted.
fn describe(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::name | Rule::field_name => "a name",
        Rule::word => "a value",
        Rule::arg => "a number",
        Rule::kw_section => "`section`",
        Rule::section | Rule::record | Rule::property | Rule::item => return None,
        Rule::field | Rule::repeated | Rule::composite => "a field",
        Rule::value | Rule::words | Rule::reference => "a value",
        Rule::predictors | Rule::predictor => "a predictor",
        Rule::operand => "a field or a number",
        Rule::kw_model => return None,
        Rule::body => "`{`",
        Rule::string => "a quoted text",
        Rule::line_field => "a field",
        Rule::spec => "a spelling such as `x` or `08d`",
        Rule::line_pattern | Rule::kw_line | Rule::unmatched | Rule::kw_unmatched => return None,
        Rule::lbrace => "`{`",
        Rule::rbrace => "`}`",
        Rule::lparen => "`(`",
        Rule::rparen => "`)`",
        Rule::colon => "`:`",
        Rule::comma => "`,`",
        Rule::star => "`*`",
        Rule::dot => "`.`",
        Rule::equals => "`=`",
        Rule::semi => "`;`",
        Rule::EOI => "end of file",
        _ => return None,
    })
}

fn grammar_problem(
    err: &pest::error::Error<Rule>,
    at: usize,
    text: &str,
    span: &impl Fn(usize, usize) -> Span,
) -> Problem {
    let mut expected: Vec<&str> = Vec::new();
    if let pest::error::ErrorVariant::ParsingError { positives, .. } = &err.variant {
        for r in positives {
            if let Some(d) = describe(*r) {
                if !expected.contains(&d) {
                    expected.push(d);
                }
            }
        }
    }
    let found = text[at.min(text.len())..]
        .chars()
        .next()
        .map_or("end of file".to_string(), |c| format!("`{c}`"));
    let list = match expected.len() {
        0 => "a record, a property or a section".to_string(),
        1 => expected[0].to_string(),
        n => format!("{} or {}", expected[..n - 1].join(", "), expected[n - 1]),
    };
    // A missing `;` is noticed at the next token, often on the next line: point just after the
    // statement instead, where the `;` belongs.
    if expected == ["`;`"] || expected.first() == Some(&"a number") && expected.contains(&"`;`") {
        let before = end_of_previous_token(text, at);
        return Problem::new(span(before, before + 1), format!("expected {list}"))
            .label("`;` missing here")
            .hint("every property ends with `;`");
    }
    let hint = if found == "end of file" {
        "the file ends in the middle of a definition"
    } else if expected.contains(&"a name") {
        "names start with a letter or `_`"
    } else if expected.contains(&"`,`") && expected.contains(&"`)`") {
        "separate the fields of a list with `,` and end it with `)`"
    } else if expected == ["a value"] {
        "a value is a number, an interpretation such as `default 0`, or a reference such as `length.value`"
    } else if expected.contains(&"a field") {
        "a field list holds at least one field name, e.g. `(tag, size)`"
    } else {
        "see section 4 of docs/FORMAT.md for the grammar"
    };
    Problem::new(span(at, at + 1), format!("expected {list}, found {found}"))
        .label("unexpected here")
        .hint(hint)
}

/// Offset just after the last non-blank, non-comment character before `at`.
fn end_of_previous_token(text: &str, at: usize) -> usize {
    let comments = scan(text).comments;
    let bytes = text.as_bytes();
    let mut i = at.min(text.len());
    while i > 0 {
        if let Some(c) = comments.iter().find(|c| c.start < i && i <= c.end) {
            i = c.start;
            continue;
        }
        if !bytes[i - 1].is_ascii_whitespace() {
            break;
        }
        i -= 1;
    }
    i
}

fn token(p: &Pair<Rule>, origin: Origin) -> Token {
    Token {
        text: p.as_str().to_string(),
        span: span_of(p, origin),
    }
}

fn span_of(p: &Pair<Rule>, origin: Origin) -> Span {
    let s = p.as_span();
    Span {
        origin,
        start: s.start(),
        end: s.end(),
    }
}

/// Named children, with punctuation rules dropped.
fn children<'i>(p: Pair<'i, Rule>) -> impl Iterator<Item = Pair<'i, Rule>> {
    p.into_inner().filter(|c| {
        !matches!(
            c.as_rule(),
            Rule::lbrace
                | Rule::rbrace
                | Rule::lparen
                | Rule::rparen
                | Rule::colon
                | Rule::comma
                | Rule::star
                | Rule::dot
                | Rule::equals
                | Rule::semi
                | Rule::kw_section
                | Rule::kw_line
                | Rule::kw_unmatched
        )
    })
}

fn item(p: Pair<Rule>, origin: Origin) -> Item {
    match p.as_rule() {
        Rule::section => Item::Section(section(p, origin)),
        Rule::record => Item::Record(record(p, origin)),
        Rule::unmatched => Item::Unmatched(unmatched(p, origin)),
        _ => Item::Property(property(p, origin)),
    }
}

fn unmatched(p: Pair<Rule>, origin: Origin) -> UnmatchedDecl {
    let span = span_of(&p, origin);
    let target = children(p)
        .find(|c| c.as_rule() == Rule::name)
        .map(|c| token(&c, origin))
        .unwrap_or_else(|| Token {
            text: String::new(),
            span,
        });
    UnmatchedDecl { target, span }
}

fn section(p: Pair<Rule>, origin: Origin) -> SectionDecl {
    let whole = span_of(&p, origin);
    let mut header_end = whole.start;
    let mut close = whole;
    for c in p.clone().into_inner() {
        match c.as_rule() {
            Rule::lbrace if header_end == whole.start => header_end = c.as_span().end(),
            Rule::rbrace => close = span_of(&c, origin),
            _ => {}
        }
    }
    let mut inner = children(p);
    let name = inner.next().map(|c| token(&c, origin));
    let number = inner.next().map(|c| token(&c, origin));
    let items = inner.map(|c| item(c, origin)).collect();
    let empty = Token {
        text: String::new(),
        span: whole,
    };
    SectionDecl {
        name: name.unwrap_or_else(|| empty.clone()),
        number: number.unwrap_or(empty),
        header: Span {
            end: header_end,
            ..whole
        },
        close,
        items,
    }
}

fn record(p: Pair<Rule>, origin: Origin) -> Record {
    let whole = span_of(&p, origin);
    let mut name = None;
    let mut field_ast = None;
    let mut body_ast = None;
    for c in children(p) {
        match c.as_rule() {
            Rule::name => name = Some(token(&c, origin)),
            Rule::field => field_ast = Some(field(c, origin)),
            Rule::body => body_ast = Some(body(c, origin)),
            _ => {}
        }
    }
    let name = name.unwrap_or(Token {
        text: String::new(),
        span: whole,
    });
    let field_ast = field_ast.unwrap_or_else(|| Field::Name(name.clone()));
    let header = Span {
        end: field_ast.span().end,
        ..whole
    };
    Record {
        name,
        field: field_ast,
        body: body_ast,
        header,
    }
}

fn body(p: Pair<Rule>, origin: Origin) -> Body {
    let whole = span_of(&p, origin);
    let mut open = whole;
    let mut close = whole;
    let mut properties = Vec::new();
    let mut lines = Vec::new();
    for c in p.into_inner() {
        match c.as_rule() {
            Rule::lbrace => open = span_of(&c, origin),
            Rule::rbrace => close = span_of(&c, origin),
            Rule::property => properties.push(property(c, origin)),
            Rule::line_pattern => lines.push(line_pattern(c, origin)),
            _ => {}
        }
    }
    Body {
        open,
        properties,
        lines,
        close,
    }
}

fn line_pattern(p: Pair<Rule>, origin: Origin) -> LinePattern {
    let span = span_of(&p, origin);
    let mut parts = Vec::new();
    for c in children(p) {
        match c.as_rule() {
            Rule::string => parts.push(LinePart::Literal(token(&c, origin))),
            Rule::line_field => {
                let mut inner = children(c);
                let name = inner.next().map(|n| token(&n, origin));
                let spec = inner.next().map(|n| token(&n, origin));
                if let Some(name) = name {
                    parts.push(LinePart::Field { name, spec });
                }
            }
            _ => {}
        }
    }
    LinePattern { parts, span }
}

fn field(p: Pair<Rule>, origin: Origin) -> Field {
    let whole = span_of(&p, origin);
    let inner = match p.into_inner().next() {
        Some(i) => i,
        None => {
            return Field::Name(Token {
                text: String::new(),
                span: whole,
            })
        }
    };
    match inner.as_rule() {
        Rule::repeated => {
            let span = span_of(&inner, origin);
            let mut parts = children(inner);
            let count = parts.next().map(|c| token(&c, origin));
            let element = parts.next().map(|c| simple(c, origin));
            let count = count.unwrap_or(Token {
                text: String::new(),
                span,
            });
            let element = element.unwrap_or_else(|| Field::Name(count.clone()));
            Field::Repeated {
                count,
                element: Box::new(element),
                span,
            }
        }
        Rule::record => Field::Record(Box::new(record(inner, origin))),
        _ => simple(inner, origin),
    }
}

fn simple(p: Pair<Rule>, origin: Origin) -> Field {
    match p.as_rule() {
        Rule::composite => {
            let span = span_of(&p, origin);
            Field::Composite {
                fields: children(p).map(|c| field(c, origin)).collect(),
                span,
            }
        }
        _ => {
            // field_name wraps a name
            let span = span_of(&p, origin);
            let name = p.into_inner().next().map(|n| token(&n, origin));
            Field::Name(name.unwrap_or(Token {
                text: String::new(),
                span,
            }))
        }
    }
}

fn property(p: Pair<Rule>, origin: Origin) -> Property {
    let span = span_of(&p, origin);
    let mut parts = children(p);
    let empty = Token {
        text: String::new(),
        span,
    };
    let field = parts.next().map_or(empty.clone(), |c| token(&c, origin));
    let name = parts.next().map_or(empty.clone(), |c| token(&c, origin));
    let value = parts.next();
    if let Some(v) = value.as_ref().filter(|v| v.as_rule() == Rule::predictors) {
        let terms = children(v.clone())
            .filter(|t| t.as_rule() == Rule::predictor)
            .map(|t| {
                let mut words = t.into_inner().map(|c| token(&c, origin));
                Term {
                    name: words.next().unwrap_or(empty.clone()),
                    operands: words.collect(),
                }
            })
            .collect();
        return Property {
            field,
            name,
            value: Value::Predictors(terms),
            span,
        };
    }
    let value = value
        .and_then(|v| v.into_inner().next())
        .map(|v| match v.as_rule() {
            Rule::reference => {
                let mut r = children(v);
                let f = r.next().map_or(empty.clone(), |c| token(&c, origin));
                let q = r.next().map_or(empty.clone(), |c| token(&c, origin));
                Value::Reference {
                    field: f,
                    property: q,
                }
            }
            _ => {
                let mut w = v.into_inner().map(|c| token(&c, origin));
                let head = w.next().unwrap_or(empty.clone());
                Value::Words {
                    head,
                    args: w.collect(),
                }
            }
        })
        .unwrap_or(Value::Words {
            head: empty.clone(),
            args: Vec::new(),
        });
    Property {
        field,
        name,
        value,
        span,
    }
}

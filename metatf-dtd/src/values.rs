//! What a property's right-hand side means, checked on its own (without knowing the record).

use std::collections::BTreeSet;

use crate::ast::{Property, Token, Value};
use crate::diagnostic::Problem;
use crate::model::Interpretation;
use crate::predictors::{self, Checked};

/// The widest field, in bytes. Byte strings longer than this use `vfield`.
pub const MAX_WIDTH: u64 = 8;

/// The property names: the paper's three, and `model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PropKind {
    /// `width`: bytes the field occupies.
    Width,
    /// `interpretation`: how stored bits become the value.
    Interpretation,
    /// `value`: the fixed value (only for `tag`).
    Value,
    /// `model`: the field's model interpretation (predictors of the model engine).
    Model,
}

impl PropKind {
    /// The name as written in a DTD.
    pub fn as_str(self) -> &'static str {
        match self {
            PropKind::Width => "width",
            PropKind::Interpretation => "interpretation",
            PropKind::Value => "value",
            PropKind::Model => "model",
        }
    }
}

/// Interpretation names with their number of arguments and what the arguments are.
pub const INTERPRETATIONS: [(&str, usize, &str); 7] = [
    ("none", 0, ""),
    ("default", 1, "the value"),
    ("baseOffset", 1, "the base"),
    ("delta", 1, "the initial value"),
    ("stride", 2, "the initial value and the stride"),
    ("sectionOffset", 1, "the section number"),
    ("sectionStride", 2, "the section number and the stride"),
];

/// A checked right-hand side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Literal {
    /// A width in bytes.
    Width(u8),
    /// An interpretation with its arguments.
    Interpretation(Interpretation),
    /// A tag value.
    Number(u64),
    /// A `model` value: the predictors checked on their own, the primary first (none for
    /// `auto`).
    Model(Vec<Checked>),
    /// `field.property` of another field.
    Reference {
        /// The other field's name.
        field: Token,
        /// Which property of it.
        property: PropKind,
    },
}

/// Parses a property name.
pub fn prop_kind(t: &Token) -> Result<PropKind, Problem> {
    match t.text.as_str() {
        "width" => Ok(PropKind::Width),
        "interpretation" => Ok(PropKind::Interpretation),
        "value" => Ok(PropKind::Value),
        "model" => Ok(PropKind::Model),
        other => {
            let mut p =
                Problem::new(t.span, format!("unknown property `{other}`")).label("not a property");
            p = match suggest(other, ["width", "interpretation", "value", "model"]) {
                Some(s) => p.hint(format!("did you mean `{s}`?")),
                None => p.hint("the properties are `width`, `interpretation`, `value` and `model`"),
            };
            Err(p)
        }
    }
}

/// A candidate within edit distance 2 (or equal ignoring case), if any.
pub fn suggest<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = if c.eq_ignore_ascii_case(word) {
            0
        } else {
            edit_distance(word, c)
        };
        if d <= 2 && d < word.len().max(1) && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A non-negative integer, decimal or `0x` hexadecimal.
pub fn number(t: &Token, what: &str) -> Result<u64, Problem> {
    let text = t.text.as_str();
    if let Some(rest) = text.strip_prefix('-') {
        if parse_unsigned(rest).is_some() {
            return Err(Problem::new(t.span, format!("{what} cannot be negative"))
                .label("negative")
                .hint("values in a DTD are non-negative integers"));
        }
    }
    let digits = text.strip_prefix('+').unwrap_or(text);
    match parse_unsigned(digits) {
        Some(Ok(n)) => Ok(n),
        Some(Err(())) => Err(Problem::new(t.span, format!("{what} is too large"))
            .label("does not fit in 64 bits")
            .hint("values are at most 18446744073709551615")),
        None => Err(
            Problem::new(t.span, format!("{what} must be a number, found `{text}`"))
                .label("not a number")
                .hint("write a decimal number, or hexadecimal with `0x`"),
        ),
    }
}

/// Like [`number`] but a leading `-` gives the two's complement (for a stride that goes down).
pub fn signed_number(t: &Token, what: &str) -> Result<u64, Problem> {
    match t.text.strip_prefix('-') {
        Some(rest) => match parse_unsigned(rest) {
            Some(Ok(n)) if n <= 1u64 << 63 => Ok(n.wrapping_neg()),
            Some(_) => Err(Problem::new(t.span, format!("{what} is too large"))
                .label("does not fit in 64 bits")
                .hint("a negative stride is at least -9223372036854775808")),
            None => number(t, what),
        },
        None => number(t, what),
    }
}

/// `None` when the text is not a number at all; `Some(Err)` when it overflows.
fn parse_unsigned(text: &str) -> Option<Result<u64, ()>> {
    let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (text, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    Some(u64::from_str_radix(digits, radix).map_err(|_| ()))
}

/// Checks a property's value against the property's kind, without record context.
pub fn literal(p: &Property, sections: &BTreeSet<u8>) -> Result<Literal, Vec<Problem>> {
    let kind = prop_kind(&p.name).map_err(|e| vec![e])?;
    match (&p.value, kind) {
        (Value::Predictors(terms), PropKind::Model) => predictors::check(terms).map(Literal::Model),
        (Value::Predictors(_), _) | (_, PropKind::Model) => Err(vec![Problem::new(
            p.value.span(),
            format!("`{}` cannot be set to this value", kind.as_str()),
        )
        .label("wrong kind of value")
        .hint("only `model` takes predictors such as `sum size, last`")]),
        (Value::Reference { field, property }, _) => {
            let target = prop_kind(property).map_err(|e| vec![e])?;
            let ok = match kind {
                PropKind::Width => matches!(target, PropKind::Width | PropKind::Value),
                PropKind::Interpretation => target == PropKind::Interpretation,
                PropKind::Value | PropKind::Model => false,
            };
            if !ok {
                let hint = match kind {
                    PropKind::Width => "a width can be another field's `width` (same size) or an earlier field's `value` (a length)",
                    PropKind::Interpretation => "an interpretation can only copy another field's `interpretation`",
                    PropKind::Value | PropKind::Model => "a tag value must be a number",
                };
                return Err(vec![Problem::new(
                    p.value.span(),
                    format!(
                        "`{}` cannot be set from `{}.{}`",
                        kind.as_str(),
                        field.text,
                        property.text
                    ),
                )
                .label("wrong kind of reference")
                .hint(hint)]);
            }
            Ok(Literal::Reference {
                field: field.clone(),
                property: target,
            })
        }
        (Value::Words { head, args }, PropKind::Width) => {
            no_extra_args(args, "a width")?;
            let n = number(head, "a width").map_err(|e| vec![e])?;
            if n > MAX_WIDTH {
                return Err(vec![Problem::new(
                    head.span,
                    format!("width {n} is larger than {MAX_WIDTH} bytes"),
                )
                .label("too wide")
                .hint(
                    "fields hold at most 8 bytes; use `vfield` for longer byte strings",
                )]);
            }
            Ok(Literal::Width(n as u8))
        }
        (Value::Words { head, args }, PropKind::Value) => {
            no_extra_args(args, "a value")?;
            Ok(Literal::Number(
                number(head, "a value").map_err(|e| vec![e])?,
            ))
        }
        (Value::Words { head, args }, PropKind::Interpretation) => {
            interpretation(head, args, sections).map(Literal::Interpretation)
        }
    }
}

fn no_extra_args(args: &[Token], what: &str) -> Result<(), Vec<Problem>> {
    match args.first() {
        Some(a) => Err(vec![Problem::new(
            a.span,
            format!("unexpected `{}` after {what}", a.text),
        )
        .label("extra value")
        .hint("only interpretations take several values")]),
        None => Ok(()),
    }
}

fn interpretation(
    head: &Token,
    args: &[Token],
    sections: &BTreeSet<u8>,
) -> Result<Interpretation, Vec<Problem>> {
    let Some(&(name, arity, meaning)) = INTERPRETATIONS.iter().find(|i| i.0 == head.text) else {
        let mut p = Problem::new(head.span, format!("unknown interpretation `{}`", head.text))
            .label("not an interpretation");
        if number(head, "").is_ok() {
            p = p.hint(
                "an interpretation is a name such as `none` or `default 0`; numbers go in `width`",
            );
        } else if let Some(s) = suggest(&head.text, INTERPRETATIONS.iter().map(|i| i.0)) {
            p = p.hint(format!("did you mean `{s}`?"));
        } else {
            p = p.hint("the interpretations are none, default, baseOffset, delta, stride, sectionOffset and sectionStride");
        }
        return Err(vec![p]);
    };
    if args.len() != arity {
        let span = args.get(arity).map_or(head.span, |a| a.span);
        let takes = match arity {
            0 => "takes no values".to_string(),
            1 => format!("takes one value ({meaning})"),
            _ => format!("takes two values ({meaning})"),
        };
        return Err(vec![Problem::new(
            span,
            format!("`{name}` {takes}, found {}", args.len()),
        )
        .label(if args.len() > arity {
            "extra value"
        } else {
            "values missing"
        })
        .hint(match arity {
            0 => "write `none`".to_string(),
            1 => format!("write `{name} N`"),
            _ => format!("write `{name} A B`"),
        })]);
    }
    let mut problems = Vec::new();
    let mut num = |i: usize, what: &str, signed: bool| {
        let r = if signed {
            signed_number(&args[i], what)
        } else {
            number(&args[i], what)
        };
        r.map_err(|e| problems.push(e)).unwrap_or(0)
    };
    let result = match name {
        "none" => Interpretation::None,
        "default" => Interpretation::Default(num(0, "a default value", false)),
        "baseOffset" => Interpretation::BaseOffset(num(0, "a base", false)),
        "delta" => Interpretation::Delta(num(0, "an initial value", false)),
        "stride" => Interpretation::Stride {
            initial: num(0, "an initial value", false),
            stride: num(1, "a stride", true),
        },
        "sectionOffset" => Interpretation::SectionOffset(0),
        _ => Interpretation::SectionStride {
            section: 0,
            stride: num(1, "a stride", false),
        },
    };
    let result = match result {
        Interpretation::SectionOffset(_) => {
            section_ref(&args[0], sections, &mut problems).map(Interpretation::SectionOffset)
        }
        Interpretation::SectionStride { stride, .. } => {
            section_ref(&args[0], sections, &mut problems)
                .map(|section| Interpretation::SectionStride { section, stride })
        }
        other => Some(other),
    };
    match result {
        Some(i) if problems.is_empty() => Ok(i),
        _ => Err(problems),
    }
}

fn section_ref(t: &Token, sections: &BTreeSet<u8>, problems: &mut Vec<Problem>) -> Option<u8> {
    let n = number(t, "a section number")
        .map_err(|e| problems.push(e))
        .ok()?;
    if !(1..=255).contains(&n) {
        problems.push(
            Problem::new(t.span, format!("section number {n} is out of range"))
                .label("not 1-255")
                .hint("sections are numbered 1 to 255"),
        );
        return None;
    }
    if !sections.contains(&(n as u8)) {
        problems.push(
            Problem::new(t.span, format!("section {n} is not declared"))
                .label("no such section")
                .hint(format!(
                    "declare it, e.g. `section values{n} {n} {{ }}` (a value section needs no records)"
                )),
        );
        return None;
    }
    Some(n as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{Origin, Span};

    fn tok(text: &str) -> Token {
        Token {
            text: text.to_string(),
            span: Span {
                origin: Origin::User,
                start: 0,
                end: text.len(),
            },
        }
    }

    #[test]
    fn numbers_are_decimal_or_hex_and_never_negative() {
        assert_eq!(number(&tok("42"), "x"), Ok(42));
        assert_eq!(number(&tok("0x1F"), "x"), Ok(31));
        assert_eq!(number(&tok("+7"), "x"), Ok(7));
        assert_eq!(number(&tok("18446744073709551615"), "x"), Ok(u64::MAX));
        assert!(number(&tok("18446744073709551616"), "x").is_err());
        assert!(number(&tok("-1"), "x")
            .unwrap_err()
            .message
            .contains("negative"));
        assert!(number(&tok("four"), "x")
            .unwrap_err()
            .message
            .contains("number"));
        assert!(number(&tok("0x"), "x").is_err());
    }

    #[test]
    fn a_negative_stride_is_twos_complement() {
        assert_eq!(signed_number(&tok("-8"), "s"), Ok(8u64.wrapping_neg()));
        assert_eq!(
            signed_number(&tok("-9223372036854775808"), "s"),
            Ok(1u64 << 63)
        );
        assert!(signed_number(&tok("-9223372036854775809"), "s").is_err());
    }

    #[test]
    fn suggestions_need_a_close_candidate() {
        assert_eq!(suggest("widht", ["width", "value"]), Some("width"));
        assert_eq!(suggest("None", ["none", "delta"]), Some("none"));
        assert_eq!(suggest("zzzzzz", ["width"]), None);
        assert_eq!(
            suggest("a", ["b"]),
            None,
            "one letter is not a typo of another"
        );
    }
}

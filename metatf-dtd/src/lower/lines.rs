//! Lowering a record's `line = ...;` into a [`LineRecord`]: fields looked up by name (the k-th
//! use of a name is the record's k-th field of that name), spellings parsed, literals
//! unescaped, and the pattern checked to be unambiguous and to spell every field once.

use crate::ast::{LinePart, LinePattern, Record, Span, Token, UnmatchedDecl};
use crate::diagnostic::Problem;
use crate::lines::{Digits, LinePiece, LineRecord, NumberSpelling, Unmatched};
use crate::model::{FieldKind, RecordDef, Schema};
use crate::validate::visit_inline;
use crate::values::suggest;

/// Most digits a spelling may ask for (a 64-bit value needs at most 20 decimal digits).
const MAX_DIGITS: u64 = 64;

/// Lowers the line pattern of `ast` (a trace record lowered to `def`), if it has one.
pub(super) fn line_record(
    ast: &Record,
    def: &RecordDef,
    section: Option<u8>,
    problems: &mut Vec<Problem>,
) -> Option<LineRecord> {
    visit_inline(&ast.field, &mut |inner| refuse_nested(inner, problems));
    let body = ast.body.as_ref()?;
    let (first, rest) = body.lines.split_first()?;
    for again in rest {
        problems.push(
            Problem::new(
                again.span,
                format!("record `{}` has two line patterns", def.name),
            )
            .label("second `line`")
            .hint("a record is spelled one way; write a second record for another spelling")
            .see(first.span),
        );
    }
    lower_pattern(first, def, section, problems)
}

/// Resolves `unmatched = TARGET;`: `verbatim`, `error`, or a trace record with no line pattern
/// whose fields are one byte string and its length (as the built-in `comment`).
pub(super) fn unmatched(
    decl: Option<&UnmatchedDecl>,
    schema: &Schema,
    patterns: &[LineRecord],
    problems: &mut Vec<Problem>,
) -> Unmatched {
    let Some(decl) = decl else {
        return Unmatched::Verbatim;
    };
    let target = decl.target.text.as_str();
    match target {
        "verbatim" => return Unmatched::Verbatim,
        "error" => return Unmatched::Error,
        _ => {}
    }
    let all = schema.global_records.iter().map(|r| (None, r)).chain(
        schema
            .sections
            .iter()
            .flat_map(|s| s.records.iter().map(move |r| (Some(s.number), r))),
    );
    let mut names = vec!["verbatim", "error"];
    let mut found = None;
    for (section, r) in all {
        names.push(r.name.as_str());
        if found.is_none() && r.name == target {
            found = Some((section, r));
        }
    }
    let Some((section, def)) = found else {
        let p = Problem::new(
            decl.target.span,
            format!("no trace record `{target}` for unmatched lines"),
        )
        .label("unknown");
        problems.push(match suggest(target, names.iter().copied()) {
            Some(s) => p.hint(format!("did you mean `{s}`?")),
            None => {
                p.hint("write `verbatim`, `error`, or the name of a record holding one byte string")
            }
        });
        return Unmatched::Verbatim;
    };
    if patterns
        .iter()
        .any(|p| p.name == def.name && p.section == section)
    {
        problems.push(
            Problem::new(
                decl.target.span,
                format!("record `{target}` has a line pattern"),
            )
            .label("cannot also take unmatched lines")
            .hint("unmatched lines are kept as they are, line ending included; name a record without `line = ...;`"),
        );
        return Unmatched::Verbatim;
    }
    let leaves = def.leaves();
    let shaped = leaves.len() == 2
        && matches!(leaves[0].kind, FieldKind::Scalar { .. })
        && matches!(leaves[1].kind, FieldKind::Bytes { length_position } if length_position == leaves[0].position);
    if !shaped {
        problems.push(
            Problem::new(
                decl.target.span,
                format!("record `{target}` is not one byte string"),
            )
            .label("cannot hold a line")
            .hint("a record for unmatched lines has a length and a byte string: `other : (tag, length, text) { text.width = length.value; ... }`"),
        );
        return Unmatched::Verbatim;
    }
    Unmatched::Record {
        name: def.name.clone(),
        section,
        tag: def.tag,
    }
}

fn refuse_nested(r: &Record, problems: &mut Vec<Problem>) {
    if let Some(body) = &r.body {
        for l in &body.lines {
            problems.push(
                Problem::new(l.span, "a line pattern inside a nested record")
                    .label("not a trace record")
                    .hint("write the pattern in the trace record that uses this one, naming its fields"),
            );
        }
    }
    visit_inline(&r.field, &mut |inner| refuse_nested(inner, problems));
}

fn lower_pattern(
    pattern: &LinePattern,
    def: &RecordDef,
    section: Option<u8>,
    problems: &mut Vec<Problem>,
) -> Option<LineRecord> {
    let before = problems.len();
    let leaves = def.leaves();
    if def
        .fields
        .iter()
        .any(|f| matches!(f.kind, FieldKind::Repeated { .. }))
        || has_repetition(&def.fields)
    {
        problems.push(
            Problem::new(pattern.span, format!("record `{}` has a repeated field", def.name))
                .label("cannot be spelled as one line")
                .hint("line patterns spell records of single fields; the repetition count is not known from the text"),
        );
        return None;
    }
    let mut used = vec![false; leaves.len()];
    let mut pieces: Vec<LinePiece> = Vec::new();
    // The piece before, for the adjacency checks.
    let mut last: Option<Before> = None;
    for part in &pattern.parts {
        match part {
            LinePart::Literal(t) => {
                let Some(bytes) = unescape(t, problems) else {
                    continue;
                };
                if bytes.is_empty() {
                    continue;
                }
                if let Some(Before::Spaces(prev)) = last {
                    if bytes[0] == b' ' {
                        problems.push(
                            Problem::new(
                                t.span,
                                "a literal starting with a space after a run of spaces",
                            )
                            .label("the run before takes every space")
                            .hint("move the space into the run, or put other text between them")
                            .see(prev),
                        );
                    }
                }
                last = None;
                match pieces.last_mut() {
                    Some(LinePiece::Literal(prev)) => prev.extend_from_slice(&bytes),
                    _ => pieces.push(LinePiece::Literal(bytes)),
                }
            }
            LinePart::Field { name, spec } => {
                let Some(index) = find_leaf(def, &leaves, &used, name, problems) else {
                    continue;
                };
                used[index] = true;
                let piece = match &leaves[index].kind {
                    FieldKind::Bytes { length_position } => {
                        if let Some(s) = spec.as_ref().filter(|s| s.text != "s") {
                            problems.push(
                                Problem::new(s.span, format!("`{}` is a byte string", name.text))
                                    .label("a number spelling")
                                    .hint("byte strings take `:s` or no spelling"),
                            );
                        }
                        let Some(length_field) =
                            leaves.iter().position(|l| l.position == *length_position)
                        else {
                            continue;
                        };
                        if used[length_field] {
                            problems.push(length_named(name, &leaves[length_field].name));
                        }
                        used[length_field] = true;
                        LinePiece::Bytes {
                            field: index,
                            length_field,
                        }
                    }
                    _ => {
                        if leaves.iter().any(|l| {
                            matches!(l.kind, FieldKind::Bytes { length_position }
                                if length_position == leaves[index].position)
                        }) {
                            problems.push(length_named(name, &name.text));
                            continue;
                        }
                        if spec.as_ref().is_some_and(|s| s.text == SPACES) {
                            LinePiece::Spaces { field: index }
                        } else {
                            let Some(spelling) = spelling(spec.as_ref(), problems) else {
                                continue;
                            };
                            LinePiece::Number {
                                field: index,
                                spelling,
                            }
                        }
                    }
                };
                let this = match &piece {
                    LinePiece::Spaces { .. } => Before::Spaces(name.span),
                    LinePiece::Number { spelling, .. } => Before::Field {
                        at: name.span,
                        exact: matches!(spelling.digits, Digits::Exactly(_)),
                        reads_spaces: matches!(spelling.digits, Digits::Spaced(_)),
                        bytes: false,
                    },
                    _ => Before::Field {
                        at: name.span,
                        exact: false,
                        reads_spaces: false,
                        bytes: true,
                    },
                };
                adjacent(last, &this, name, problems);
                last = Some(this);
                pieces.push(piece);
            }
        }
    }
    for (i, leaf) in leaves.iter().enumerate() {
        if !used[i] {
            problems.push(
                Problem::new(
                    pattern.span,
                    format!("field `{}` is not in the line pattern", leaf.name),
                )
                .label(format!("record `{}` has it", def.name))
                .hint("every field of the record appears once in its pattern (a byte string's length comes with it)"),
            );
        }
    }
    (problems.len() == before).then(|| LineRecord {
        name: def.name.clone(),
        section,
        tag: def.tag,
        field_count: leaves.len(),
        pieces,
    })
}

/// The spelling of an integer field that is a run of spaces.
const SPACES: &str = "sp";

/// What came just before a field in a pattern, for the adjacency checks.
#[derive(Clone, Copy)]
enum Before {
    /// A number or byte string: where it is, whether it ends by itself (an exact digit
    /// count), whether it reads spaces before its digits (`_N`) and whether it is a byte
    /// string (which ends only at a literal).
    Field {
        at: Span,
        exact: bool,
        reads_spaces: bool,
        bytes: bool,
    },
    /// A run of spaces (`:sp`).
    Spaces(Span),
}

/// Checks that the field `this` (named `name`), coming right after `last`, can be told apart
/// from it: two fields need a literal between them unless the first ends by itself (an exact
/// digit count), or one of them is a run of spaces and the other neither starts with spaces
/// (`_N`) nor is a byte string before it (which ends only at a literal).
fn adjacent(last: Option<Before>, this: &Before, name: &Token, problems: &mut Vec<Problem>) {
    let two_fields = |prev: Span| {
        Problem::new(name.span, "two fields with nothing between them")
            .label("where does the one before end?")
            .hint(
                "put a literal between them, or give the first an exact digit count such as `=8x`",
            )
            .see(prev)
    };
    match (last, this) {
        (None, _) => {}
        (Some(Before::Spaces(prev)), Before::Spaces(_)) => problems.push(
            Problem::new(name.span, "two runs of spaces with nothing between them")
                .label("where does the one before end?")
                .hint("one `:sp` field takes the whole run")
                .see(prev),
        ),
        (Some(Before::Spaces(prev)), Before::Field { reads_spaces, .. }) => {
            if *reads_spaces {
                problems.push(
                    Problem::new(name.span, "a right-aligned number after a run of spaces")
                        .label("its spaces would be taken by the run before")
                        .hint("spell it without `_N`: the run keeps the spaces")
                        .see(prev),
                );
            }
        }
        (Some(Before::Field { at, bytes, .. }), Before::Spaces(_)) => {
            // A number's digits end at the first space; a byte string ends only at a literal.
            if bytes {
                problems.push(two_fields(at));
            }
        }
        (Some(Before::Field { at, exact, .. }), Before::Field { .. }) => {
            if !exact {
                problems.push(two_fields(at));
            }
        }
    }
}

fn has_repetition(fields: &[crate::model::FieldDef]) -> bool {
    fields.iter().any(|f| match &f.kind {
        FieldKind::Repeated { .. } => true,
        FieldKind::Composite(children) => has_repetition(children),
        _ => false,
    })
}

fn length_named(at: &Token, length: &str) -> Problem {
    Problem::new(
        at.span,
        format!("`{length}` is the length of a byte string"),
    )
    .label("spelled by the string itself")
    .hint("leave the length out: it is the number of bytes the string field reads")
}

/// The index of the next unused leaf called `name`.
fn find_leaf(
    def: &RecordDef,
    leaves: &[&crate::model::FieldDef],
    used: &[bool],
    name: &Token,
    problems: &mut Vec<Problem>,
) -> Option<usize> {
    let mut same = leaves
        .iter()
        .enumerate()
        .filter(|(_, l)| l.name == name.text)
        .peekable();
    if same.peek().is_none() {
        let mut p = Problem::new(
            name.span,
            format!("record `{}` has no field `{}`", def.name, name.text),
        )
        .label("unknown field");
        p = match suggest(&name.text, leaves.iter().map(|l| l.name.as_str())) {
            Some(s) => p.hint(format!("did you mean `{s}`?")),
            None => p.hint(format!(
                "its fields are: {}",
                leaves
                    .iter()
                    .map(|l| format!("`{}`", l.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        };
        problems.push(p);
        return None;
    }
    let found = same.find(|(i, _)| !used[*i]).map(|(i, _)| i);
    if found.is_none() {
        problems.push(
            Problem::new(
                name.span,
                format!(
                    "`{}` is spelled more times than the record has it",
                    name.text
                ),
            )
            .label("one too many")
            .hint("the k-th use of a name in the pattern is the record's k-th field of that name"),
        );
    }
    found
}

/// Most fraction digits (10^18 is the largest power of ten below 2^64).
const MAX_FRACTION: u64 = 18;

/// Parses `[#][0N|=N|_N](d|i|x|X|t)[.K]`; no spelling means unsigned decimal.
fn spelling(spec: Option<&Token>, problems: &mut Vec<Problem>) -> Option<NumberSpelling> {
    let mut s = NumberSpelling {
        radix: 10,
        signed: false,
        upper: false,
        prefix: false,
        digits: Digits::Minimal,
        fraction: 0,
        clock: false,
    };
    let Some(spec) = spec else {
        return Some(s);
    };
    let bad = |why: &str| {
        Problem::new(spec.span, format!("`{}` is not a number spelling: {why}", spec.text))
            .label("bad spelling")
            .hint("write `d` (decimal), `i` (signed decimal), `x` or `X` (hexadecimal) or `t` (a clock H:MM:SS), with `#` for a `0x` prefix and `0N` (at least N digits), `=N` (exactly N digits) or `_N` (spaces before, at least N bytes in all) before the letter and `.K` (K fraction digits) after `d` or `t`, e.g. `#08x`, `_12d.6`; or `sp` for a run of spaces")
    };
    let mut rest = spec.text.as_str();
    if let Some((head, k)) = rest.split_once('.') {
        match k.parse::<u64>() {
            Ok(n) if (1..=MAX_FRACTION).contains(&n) && k.bytes().all(|b| b.is_ascii_digit()) => {
                s.fraction = n as u8;
            }
            _ => {
                problems.push(bad(&format!(
                    "the fraction digit count after `.` must be 1 to {MAX_FRACTION}"
                )));
                return None;
            }
        }
        rest = head;
    }
    if let Some(r) = rest.strip_prefix('#') {
        s.prefix = true;
        rest = r;
    }
    let exact = rest.starts_with('=');
    let padded = rest.starts_with('0');
    let spaced = rest.starts_with('_');
    if exact || padded || spaced {
        rest = &rest[1..];
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n: u64 = match rest[..end].parse() {
            Ok(n) if (1..=MAX_DIGITS).contains(&n) => n,
            _ => {
                problems.push(bad(&format!("the digit count must be 1 to {MAX_DIGITS}")));
                return None;
            }
        };
        let n = n as u8;
        s.digits = if exact {
            Digits::Exactly(n)
        } else if spaced {
            Digits::Spaced(n)
        } else {
            Digits::AtLeast(n)
        };
        rest = &rest[end..];
    }
    match rest {
        "d" => {}
        "i" => s.signed = true,
        "x" => s.radix = 16,
        "X" => {
            s.radix = 16;
            s.upper = true;
        }
        "t" => s.clock = true,
        "" => {
            problems.push(bad("the letter (`d`, `i`, `x`, `X` or `t`) is missing"));
            return None;
        }
        "s" => {
            problems.push(bad(
                "`s` is for byte-string fields, and this one is an integer",
            ));
            return None;
        }
        other => {
            problems.push(bad(&format!("unknown letter `{other}`")));
            return None;
        }
    }
    if s.prefix && s.radix != 16 {
        problems.push(bad("`#` (the `0x` prefix) goes with `x` or `X`"));
        return None;
    }
    if s.fraction > 0 && (s.radix != 10 || s.signed) {
        problems.push(bad("a fraction `.K` goes with `d` or `t`"));
        return None;
    }
    Some(s)
}

/// The bytes of a quoted literal: `\\`, `\"`, `\t`, `\r` and `\xHH` are the escapes.
fn unescape(t: &Token, problems: &mut Vec<Problem>) -> Option<Vec<u8>> {
    let raw = t.text.as_bytes();
    let inner = &raw[1..raw.len().saturating_sub(1).max(1)];
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    let mut ok = true;
    while i < inner.len() {
        if inner[i] != b'\\' {
            out.push(inner[i]);
            i += 1;
            continue;
        }
        let at = t.span.start + 1 + i;
        let esc = inner.get(i + 1).copied();
        let (byte, len) = match esc {
            Some(b'\\') => (Some(b'\\'), 2),
            Some(b'"') => (Some(b'"'), 2),
            Some(b't') => (Some(b'\t'), 2),
            Some(b'r') => (Some(b'\r'), 2),
            Some(b'x') => {
                let hex = inner
                    .get(i + 2..i + 4)
                    .and_then(|h| std::str::from_utf8(h).ok());
                (hex.and_then(|h| u8::from_str_radix(h, 16).ok()), 4)
            }
            _ => (None, 2),
        };
        match byte {
            Some(b) => out.push(b),
            None => {
                ok = false;
                problems.push(
                    Problem::new(
                        Span {
                            start: at,
                            end: (at + len).min(t.span.end - 1),
                            ..t.span
                        },
                        "unknown escape in a line pattern",
                    )
                    .label("not an escape")
                    .hint("the escapes are `\\\\`, `\\\"`, `\\t`, `\\r` and `\\xHH`; a line pattern cannot hold a newline"),
                );
            }
        }
        i += len;
    }
    ok.then_some(out)
}

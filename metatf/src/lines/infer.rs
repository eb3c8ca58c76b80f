//! Inferring a DTD with line patterns from a sample of a text trace (`hatf dtd infer`,
//! `hatf encode --from any`).
//!
//! Each line is cut into *words* (runs of ASCII letters, digits and `_`) and the *separators*
//! between them. Lines with the same separators form a shape; within a shape, a word column
//! with a few values that are not numbers (an opcode, a keyword) splits the shape into one
//! record per value. The remaining columns become fields: decimal or hexadecimal (with its
//! letter case, `0x` prefix and zero padding as the sample writes them) when every value is
//! such a number of at most 64 bits, otherwise byte strings. Shapes seen fewer than
//! [`MIN_SHARE`] of the time or on fewer than [`MIN_LINES`] lines get no whole-line record;
//! their lines form *prefix shapes* (the same leading words, the rest of the line one byte
//! string); the lines no prefix shape takes form *head shapes* (a byte string up to the
//! first space, then the rest of the line as a whole-line shape), and only what fits none
//! stays verbatim. Nothing here knows any particular tool: only the sample decides.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// A shape needs at least this share of the sample's lines (and two lines) to get a record.
pub const MIN_SHARE: f64 = 0.0005;
/// A shape needs at least this many lines of the sample to get a record (or a quarter of a
/// short sample's lines). Why: a record costs its pattern in the stored DTD and starts its
/// streams' models cold, while a line kept verbatim is coded by the byte-string model (a
/// dictionary, context mixing and long-range matches) about as well as `xz -9` codes text. So
/// a rare shape costs more as a record than as verbatim lines; on traces whose lines all
/// share a few shapes the floor changes nothing.
pub const MIN_LINES: usize = 512;
/// Most records an inferred DTD defines (tags 4 and up must fit in one byte).
pub const MAX_RECORDS: usize = 200;
/// Most distinct values a keyword column may have before it is a field instead.
const MAX_KEYWORDS: usize = 8;
/// Lines of the sample looked at.
const MAX_SAMPLE_LINES: usize = 200_000;

/// A line cut into separators and words: `seps[0] words[0] seps[1] ... words[n-1] seps[n]`.
struct Cut<'a> {
    /// The whole line.
    line: &'a [u8],
    seps: Vec<&'a [u8]>,
    words: Vec<&'a [u8]>,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn cut(line: &[u8]) -> Cut<'_> {
    let mut seps = Vec::new();
    let mut words = Vec::new();
    let mut i = 0;
    loop {
        let start = i;
        while i < line.len() && !is_word(line[i]) {
            i += 1;
        }
        seps.push(&line[start..i]);
        if i == line.len() {
            break;
        }
        let start = i;
        while i < line.len() && is_word(line[i]) {
            i += 1;
        }
        words.push(&line[start..i]);
    }
    Cut { line, seps, words }
}

/// What a column of words holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Column {
    /// The same word everywhere, not a number: part of the literal text.
    Keyword(Vec<u8>),
    /// A number: the spelling written after `:` in the pattern.
    Number(String),
    /// Anything else.
    Text,
}

/// Decides how a column's values are spelled.
fn classify(values: &[&[u8]]) -> Column {
    let first = values[0];
    let constant = values.iter().all(|v| *v == first);
    let all = |f: &dyn Fn(u8) -> bool| values.iter().all(|v| v.iter().all(|&b| f(b)));
    let any = |f: &dyn Fn(u8) -> bool| values.iter().any(|v| v.iter().any(|&b| f(b)));
    if all(&|b| b.is_ascii_digit()) {
        if values.iter().any(|v| v.len() > 19) {
            return Column::Text;
        }
        return Column::Number(padded(values, "d"));
    }
    let prefixed = values
        .iter()
        .all(|v| v.len() > 2 && v.starts_with(b"0x") && v[2..].iter().all(u8::is_ascii_hexdigit));
    if prefixed {
        let rest: Vec<&[u8]> = values.iter().map(|v| &v[2..]).collect();
        return hex_column(&rest, "#").unwrap_or(Column::Text);
    }
    let hex = all(&|b| b.is_ascii_hexdigit());
    // A hexadecimal column has digits somewhere; a few letter-only words are keywords.
    if hex && any(&|b| b.is_ascii_digit()) {
        if let Some(c) = hex_column(values, "") {
            return c;
        }
    }
    if constant {
        return Column::Keyword(first.to_vec());
    }
    Column::Text
}

fn hex_column(values: &[&[u8]], prefix: &str) -> Option<Column> {
    if values.iter().any(|v| v.len() > 16) {
        return None;
    }
    let lower = values.iter().any(|v| v.iter().any(u8::is_ascii_lowercase));
    let upper = values.iter().any(|v| v.iter().any(u8::is_ascii_uppercase));
    if lower && upper {
        return None;
    }
    let letter = if upper { "X" } else { "x" };
    Some(Column::Number(format!(
        "{prefix}{}",
        padded(values, letter)
    )))
}

/// `0N` + `letter` when the sample pads with zeros (N the shortest length), else `letter`.
fn padded(values: &[&[u8]], letter: &str) -> String {
    let zeros = values.iter().any(|v| v.len() > 1 && v[0] == b'0');
    let shortest = values.iter().map(|v| v.len()).min().unwrap_or(1);
    if zeros && shortest > 1 {
        format!("0{shortest}{letter}")
    } else {
        letter.to_string()
    }
}

/// Distinct values kept per numeric column to compare columns of different shapes.
const MAX_VALUES: usize = 4096;
/// Columns of two records share a field name when this share of the smaller one's distinct
/// values also occur in the other (a free's pointer among the allocations' pointers).
const SHARED_VALUES: f64 = 0.2;

/// A record to write: its pattern parts and how many sample lines it covers.
struct Shape {
    parts: Vec<Part>,
    count: usize,
    /// 0 for a whole-line shape; else the words of the line before the text field that
    /// takes the rest of it.
    prefix: usize,
    /// Whether the shape starts with a byte string up to the line's first space
    /// ([`head_shapes`]).
    head: bool,
}

enum Part {
    Literal(Vec<u8>),
    /// The spelling and a sample of the distinct values.
    Number(String, HashSet<u64>),
    Text,
}

/// Writes a DTD whose line patterns describe the frequent line shapes of `sample` (a start of
/// the trace, whole lines). The DTD always parses and always has a pattern: with no frequent
/// shape, one record whose pattern is the whole line as text.
pub fn infer_dtd(sample: &[u8]) -> String {
    infer(sample, true)
}

/// [`infer_dtd`] without its comments (the sample's counts, the note on spellings): the DTD
/// `hatf encode --from any` stores in the file. Why: the comments are for a reader editing
/// the DTD, and they are a large part of the stored DTD, which matters on a short trace.
pub fn infer_dtd_bare(sample: &[u8]) -> String {
    infer(sample, false)
}

/// The DTD `hatf encode --from any` stores: [`infer_dtd_bare`], unless the header would
/// store [`infer_dtd`] in fewer bytes. Why both: the header stores a DTD under
/// [`crate::container::COMPRESS_DTD_FROM`] bytes verbatim, so a bare DTD just under that
/// length would cost more than the commented one compressed.
pub fn infer_dtd_to_store(sample: &[u8]) -> String {
    let bare = infer(sample, false);
    let full = infer(sample, true);
    if stored_len(&full) < stored_len(&bare) {
        full
    } else {
        bare
    }
}

/// Bytes of a text-lines header carrying `dtd` as the writer stores it.
pub fn stored_len(dtd: &str) -> usize {
    let header = crate::container::ContainerHeader {
        dtd: dtd.to_string(),
        format: super::LINES_FORMAT.to_string(),
        properties: Vec::new(),
    };
    header
        .encode(crate::container::DtdStorage::Auto, None)
        .map_or(usize::MAX, |h| h.len())
}

fn infer(sample: &[u8], comments: bool) -> String {
    let mut lines: Vec<&[u8]> = sample
        .split(|&b| b == b'\n')
        .take(MAX_SAMPLE_LINES + 1)
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect();
    // The piece after the last newline is empty or a partial line: not a shape (unless the
    // sample is one line without a newline).
    if lines.len() > 1 {
        lines.pop();
    }
    lines.truncate(MAX_SAMPLE_LINES);
    let total = lines.len();
    let empty = lines.iter().filter(|l| l.is_empty()).count();
    let cuts: Vec<Cut> = lines
        .into_iter()
        .filter(|l| !l.is_empty())
        .map(cut)
        .collect();
    let (groups, order) = by_shape(&cuts);
    let needed = ((total as f64 * MIN_SHARE).ceil() as usize)
        .max(MIN_LINES.min(total / 4))
        .max(2);
    let mut shapes = Vec::new();
    // Empty lines are a shape of their own (`line = "";`), with no words to cut.
    if empty >= needed {
        shapes.push(Shape {
            parts: Vec::new(),
            count: empty,
            prefix: 0,
            head: false,
        });
    }
    let mut rare: Vec<&Cut> = Vec::new();
    for key in order {
        let members = &groups[&key];
        if members.len() < needed {
            rare.extend(members);
            continue;
        }
        rare.extend(split_shape(members, needed, 0, &mut shapes));
    }
    let left = prefix_shapes(&rare, needed, &mut shapes);
    head_shapes(&left, needed, &mut shapes);
    // Whole-line shapes before prefix shapes (a prefix shape would take their lines), longer
    // prefixes before shorter ones; then the specific shapes (a text field to the end of the
    // line matches much), then the frequent ones. Head shapes come last: they were made from
    // the lines no other shape took, and their leading text field would take lines the
    // others were made for (a column of a few keywords, which the others spell as literals).
    shapes.sort_by_key(|s| {
        (
            s.head,
            s.prefix > 0,
            std::cmp::Reverse(s.prefix),
            s.parts.iter().filter(|p| matches!(p, Part::Text)).count(),
            std::cmp::Reverse(s.count),
        )
    });
    // Prefix shapes of different lengths can spell the same pattern once their keywords are
    // literal text: the first would take every line, so the others go.
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    shapes.retain(|s| seen.insert(signature(&s.parts)));
    shapes.truncate(MAX_RECORDS);
    if shapes.is_empty() {
        // No line shape repeats: one record holds each line's text, so that any text still
        // encodes (and the engine still compresses the lines).
        let count = groups.values().map(Vec::len).sum();
        shapes.push(Shape {
            parts: vec![Part::Text],
            count,
            prefix: 0,
            head: false,
        });
    }
    write_dtd(&shapes, total, comments)
}

/// Whole-line shapes after a free first token, for the lines of rare shapes: the bytes before a
/// line's first space are one byte string, and the rest of the line (from that space on) is
/// cut, grouped and classified as whole lines are. Why: many tools start a line with a name
/// (a command, a host, a function) whose punctuation varies from line to line (`bash`,
/// `pyenv-version-f`, `kworker/0:1`), and since words are split at punctuation, each spelling
/// of the name makes a shape of its own, too rare for a record, although the rest of the lines
/// (ids, times, counts) is one regular shape. Runs on the lines no prefix shape takes.
fn head_shapes(rare: &[&Cut], needed: usize, out: &mut Vec<Shape>) {
    let rests: Vec<Cut> = rare.iter().filter_map(|c| head_rest(c)).map(cut).collect();
    let (groups, order) = by_shape(&rests);
    for key in order {
        let members = &groups[&key];
        if members.len() < needed {
            continue;
        }
        let from = out.len();
        // The lines of keyword values too rare for a record stay verbatim.
        split_shape(members, needed, 0, out);
        for shape in &mut out[from..] {
            shape.parts.insert(0, Part::Text);
            shape.head = true;
        }
    }
}

/// Lines grouped by their separators (spaced as [`key_sep`] says), with the keys in the order
/// of their first line.
type Shapes<'c, 'a> = (HashMap<Vec<&'a [u8]>, Vec<&'c Cut<'a>>>, Vec<Vec<&'a [u8]>>);

fn by_shape<'c, 'a>(cuts: &'c [Cut<'a>]) -> Shapes<'c, 'a> {
    let mut groups: HashMap<Vec<&[u8]>, Vec<&Cut>> = HashMap::new();
    let mut order = Vec::new();
    for c in cuts {
        let key: Vec<&[u8]> = (0..c.seps.len()).map(|i| key_sep(c, i)).collect();
        let g = groups.entry(key.clone()).or_default();
        if g.is_empty() {
            order.push(key);
        }
        g.push(c);
    }
    (groups, order)
}

/// The line of `c` from its first space on, when a non-empty token without spaces comes
/// before it.
fn head_rest<'a>(c: &Cut<'a>) -> Option<&'a [u8]> {
    let p = c.line.iter().position(|&b| b == b' ')?;
    (p > 0).then(|| &c.line[p..])
}

/// The pattern a shape's parts spell, as bytes: equal for equal patterns.
fn signature(parts: &[Part]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        match p {
            Part::Literal(l) => {
                out.push(0);
                out.extend_from_slice(&(l.len() as u32).to_le_bytes());
                out.extend_from_slice(l);
            }
            Part::Number(spelling, _) => {
                out.push(1);
                out.extend_from_slice(&(spelling.len() as u32).to_le_bytes());
                out.extend_from_slice(spelling.as_bytes());
            }
            Part::Text => out.push(2),
        }
    }
    out
}

/// Most words a prefix shape holds before the text field that takes the rest of the line.
const MAX_PREFIX_WORDS: usize = 12;

/// Prefix shapes for the lines of rare whole-line shapes: lines whose first `k` words have
/// the same separators around them, the rest of each line (from word `k` on) one text field.
/// Why: lines of free text (argument lists, messages) rarely repeat their whole separator
/// sequence, but often start alike (a process id, a time, a name), and those leading
/// numbers cost far less as fields than as text. Each line joins the group of its longest
/// frequent prefix. Returns the lines that join no group.
fn prefix_shapes<'c, 'a>(
    rare: &[&'c Cut<'a>],
    needed: usize,
    out: &mut Vec<Shape>,
) -> Vec<&'c Cut<'a>> {
    let mut left = Vec::new();
    let key = |c: &Cut, k: usize| -> Vec<u8> {
        let mut key = Vec::new();
        for i in 0..=k {
            // The separator before the rest of the line is exact: the literal before the text.
            let sep = if i < k { key_sep(c, i) } else { c.seps[i] };
            key.extend_from_slice(&(sep.len() as u32).to_le_bytes());
            key.extend_from_slice(sep);
        }
        key
    };
    // Each round, a line may use prefixes shorter than its limit; the lines of a group too
    // small once split by its keywords try shorter prefixes in the next round.
    let mut pool: Vec<(&Cut, usize)> = rare
        .iter()
        .map(|&c| (c, c.words.len().min(MAX_PREFIX_WORDS + 1)))
        .collect();
    while !pool.is_empty() {
        let mut counts: HashMap<Vec<u8>, usize> = HashMap::new();
        for &(c, limit) in &pool {
            for k in 1..limit {
                *counts.entry(key(c, k)).or_default() += 1;
            }
        }
        let mut groups: HashMap<(usize, Vec<u8>), Vec<&Cut>> = HashMap::new();
        let mut order = Vec::new();
        for &(c, limit) in &pool {
            let best = (1..limit).rev().find(|&k| counts[&key(c, k)] >= needed);
            if let Some(k) = best {
                let g = groups.entry((k, key(c, k))).or_default();
                if g.is_empty() {
                    order.push((k, key(c, k)));
                }
                g.push(c);
            } else {
                left.push(c);
            }
        }
        let mut next = Vec::new();
        for id in order {
            let members = &groups[&id];
            let k = id.0;
            if members.len() < needed {
                next.extend(members.iter().map(|&c| (c, k)));
                continue;
            }
            let from = out.len();
            let dropped = split_shape(members, needed, k, out);
            next.extend(dropped.into_iter().map(|c| (c, k)));
            for shape in &mut out[from..] {
                shape.parts.push(Part::Text);
            }
        }
        pool = next;
    }
    left
}

/// Splits one separator shape by its keyword columns and classifies the rest: the first
/// `prefix` words of each line when `prefix` > 0, else all of them. Returns the lines of the
/// parts too rare to become records.
fn split_shape<'c, 'a>(
    cuts: &[&'c Cut<'a>],
    needed: usize,
    prefix: usize,
    out: &mut Vec<Shape>,
) -> Vec<&'c Cut<'a>> {
    let mut dropped = Vec::new();
    let n = if prefix > 0 {
        prefix
    } else {
        cuts[0].words.len()
    };
    // Columns with a few non-numeric values split the shape.
    let mut split_cols = Vec::new();
    for col in 0..n {
        let mut distinct: Vec<&[u8]> = Vec::new();
        for c in cuts {
            if !distinct.contains(&c.words[col]) {
                distinct.push(c.words[col]);
                if distinct.len() > MAX_KEYWORDS {
                    break;
                }
            }
        }
        if distinct.len() > 1
            && distinct.len() <= MAX_KEYWORDS
            && !matches!(
                classify(&cuts.iter().map(|c| c.words[col]).collect::<Vec<_>>()),
                Column::Number(_)
            )
        {
            split_cols.push(col);
        }
    }
    // Columns whose separators end in different counts of spaces: right-aligned numbers, or
    // numbers right-aligned to widths that vary from line to line (the lines are split by
    // width), or else the lines are split by their exact spacing.
    let mut spaced: Vec<Option<(usize, usize)>> = vec![None; n];
    let mut misfit = vec![false; cuts.len()];
    let mut spacing_cols = Vec::new();
    let mut width_cols = Vec::new();
    for (col, aligned) in spaced.iter_mut().enumerate() {
        let t: Vec<usize> = cuts.iter().map(|c| trailing_spaces(c.seps[col])).collect();
        if t.iter().all(|&x| x == t[0]) {
            continue;
        }
        match aligned_width(cuts, col, &t) {
            Some((m, w, fits)) => {
                *aligned = Some((m, w));
                for (bad, fit) in misfit.iter_mut().zip(fits) {
                    *bad |= !fit;
                }
            }
            None => match varying_widths(cuts, col, &t) {
                Some(m) => width_cols.push((col, m)),
                None => spacing_cols.push(col),
            },
        }
    }
    let width =
        |c: &Cut, &(col, m): &(usize, usize)| trailing_spaces(c.seps[col]) - m + c.words[col].len();
    // Keyed by the keyword values and exact separators, and the widths.
    type Key<'a> = (Vec<&'a [u8]>, Vec<usize>);
    let mut subgroups: HashMap<Key, Vec<&Cut<'a>>> = HashMap::new();
    let mut order = Vec::new();
    for (&c, &bad) in cuts.iter().zip(&misfit) {
        if bad {
            dropped.push(c);
            continue;
        }
        let words: Vec<&[u8]> = split_cols
            .iter()
            .map(|&i| c.words[i])
            .chain(spacing_cols.iter().map(|&i| c.seps[i]))
            .collect();
        let key = (words, width_cols.iter().map(|wc| width(c, wc)).collect());
        let e = subgroups.entry(key.clone()).or_default();
        if e.is_empty() {
            order.push(key);
        }
        e.push(c);
    }
    for key in order {
        let members = &subgroups[&key];
        if members.len() < needed {
            dropped.extend(members);
            continue;
        }
        // A column of varying widths is right-aligned to this part's width.
        let mut spaced = spaced.clone();
        for wc in &width_cols {
            spaced[wc.0] = Some((wc.1, width(members[0], wc)));
        }
        let mut parts: Vec<Part> = Vec::new();
        let mut literal = Vec::new();
        let mut skip_to = 0;
        for (col, &aligned) in spaced.iter().enumerate() {
            if col < skip_to {
                // A word of a time or fixed-point number read with the column before.
                continue;
            }
            let values: Vec<&[u8]> = members.iter().map(|c| c.words[col]).collect();
            let mut class = classify(&values);
            let sep = members[0].seps[col];
            let same_sep = members.iter().all(|c| c.seps[col] == sep);
            match aligned {
                Some((m, w)) if !same_sep => {
                    literal.extend_from_slice(&sep[..sep.len() - trailing_spaces(sep)]);
                    literal.extend(std::iter::repeat_n(b' ', m));
                    class = match class {
                        Column::Number(spelling) if is_minimal(&spelling) => {
                            Column::Number(spaced_spelling(&spelling, w))
                        }
                        // Another spelling reads the spaces as part of a text field.
                        _ => Column::Text,
                    };
                }
                _ => literal.extend_from_slice(sep),
            }
            // Several words spelling one time or fixed-point number are one field.
            let mut merged_values = None;
            if let Column::Number(spelling) = &class {
                let m = fixed_point_at(members, col, n);
                if let Some((m, fixed)) = m.and_then(|m| Some((m, fixed_spelling(spelling, m)?))) {
                    merged_values = Some(
                        members
                            .iter()
                            .filter_map(|c| fixed_value(c, col, m))
                            .take(MAX_VALUES)
                            .collect(),
                    );
                    class = Column::Number(fixed);
                    skip_to = col + m.words;
                }
            }
            match class {
                Column::Keyword(k) => literal.extend_from_slice(&k),
                other => {
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    } else if matches!(parts.last(), Some(Part::Number(..) | Part::Text)) {
                        // Two fields with nothing between cannot be told apart: keep one text.
                        parts.pop();
                        parts.push(Part::Text);
                        continue;
                    }
                    parts.push(match other {
                        Column::Number(spelling) => {
                            let distinct = merged_values
                                .take()
                                .unwrap_or_else(|| distinct_values(&values, &spelling));
                            Part::Number(spelling, distinct)
                        }
                        _ => Part::Text,
                    });
                }
            }
        }
        literal.extend_from_slice(members[0].seps[n]);
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        out.push(Shape {
            parts,
            count: members.len(),
            prefix,
            head: false,
        });
    }
    dropped
}

/// A time or fixed-point number spread over several words: `S.F` (two words) or
/// `H:MM:SS` and `H:MM:SS.F` (three or four).
#[derive(Debug, Clone, Copy)]
struct FixedPoint {
    /// Words it spans.
    words: usize,
    /// Whether it is a clock.
    clock: bool,
    /// Fraction digits (0 for none).
    fraction: usize,
}

/// Whether the words of `cuts` from column `col` (of the first `n`) spell one time or
/// fixed-point number in every line: decimal digits, then (for a clock, when every line has
/// them) `:` and two digits below 60 twice, then `.` and digits of one count in every line.
/// Why: a time split into its words is two to four fields whose carries break each other's
/// deltas; as one integer it is one value that grows steadily.
fn fixed_point_at(cuts: &[&Cut], col: usize, n: usize) -> Option<FixedPoint> {
    let digits = |c: &Cut, i: usize| c.words[i].iter().all(u8::is_ascii_digit);
    let sep_is = |i: usize, s: &[u8]| i < n && cuts.iter().all(|c| c.seps[i] == s);
    if !cuts.iter().all(|c| digits(c, col)) {
        return None;
    }
    let mut next = col + 1;
    let mut clock = false;
    let sixty = |c: &Cut, i: usize| {
        let w = c.words[i];
        w.len() == 2 && digits(c, i) && w[0] < b'6'
    };
    if next + 1 < n
        && sep_is(next, b":")
        && sep_is(next + 1, b":")
        && cuts.iter().all(|c| sixty(c, next) && sixty(c, next + 1))
    {
        clock = true;
        next += 2;
    }
    let mut fraction = 0;
    if next < n && sep_is(next, b".") {
        let k = cuts[0].words[next].len();
        if (1..=18).contains(&k)
            && cuts
                .iter()
                .all(|c| c.words[next].len() == k && digits(c, next))
        {
            fraction = k;
            next += 1;
        }
    }
    if !clock && fraction == 0 {
        return None;
    }
    let m = FixedPoint {
        words: next - col,
        clock,
        fraction,
    };
    // The value must fit 64 bits in every line.
    cuts.iter()
        .all(|c| fixed_value(c, col, m).is_some())
        .then_some(m)
}

/// The value of the number `m` spells at column `col` of `c`.
fn fixed_value(c: &Cut, col: usize, m: FixedPoint) -> Option<u64> {
    let parse = |w: &[u8]| std::str::from_utf8(w).ok()?.parse::<u64>().ok();
    let mut v = parse(c.words[col])?;
    let mut i = col + 1;
    if m.clock {
        for _ in 0..2 {
            v = v.checked_mul(60)?.checked_add(parse(c.words[i])?)?;
            i += 1;
        }
    }
    if m.fraction > 0 {
        v = v
            .checked_mul(10u64.pow(m.fraction as u32))?
            .checked_add(parse(c.words[i])?)?;
    }
    Some(v)
}

/// The spelling of the number `m`, its integer part spelled `spelling` (`d`, `0Nd` or
/// `_Nd`; a right-aligned width grows by the bytes after the integer part), or `None` when
/// that width would pass the largest a spelling may have.
fn fixed_spelling(spelling: &str, m: FixedPoint) -> Option<String> {
    let tail = if m.clock { 6 } else { 0 } + if m.fraction > 0 { 1 + m.fraction } else { 0 };
    let mut out = match spelling.strip_prefix('_') {
        Some(rest) => {
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            let w: usize = rest[..end].parse().unwrap_or(0);
            if w + tail > 64 {
                return None;
            }
            format!("_{}{}", w + tail, &rest[end..])
        }
        None => spelling.to_string(),
    };
    if m.clock {
        out.pop();
        out.push('t');
    }
    if m.fraction > 0 {
        let _ = write!(out, ".{}", m.fraction);
    }
    Some(out)
}

/// Spaces at the end of a separator.
fn trailing_spaces(sep: &[u8]) -> usize {
    sep.iter().rev().take_while(|&&b| b == b' ').count()
}

/// Separator `i` of a line as its shape is keyed: a run of spaces ending a separator before a
/// word counts as one space. Why: tools right-align numbers in columns (call-stack addresses,
/// sizes, ids), so the spaces before them vary with the number's length; [`split_shape`]
/// turns such a column into a spaced number (`_N`) or splits the lines by their exact spacing.
fn key_sep<'a>(c: &Cut<'a>, i: usize) -> &'a [u8] {
    let sep = c.seps[i];
    let t = trailing_spaces(sep);
    if i < c.words.len() && t > 1 {
        &sep[..sep.len() - t + 1]
    } else {
        sep
    }
}

/// Share of a column's lines that must fit one right-aligned width for it to be spaced.
const ALIGNED_SHARE: f64 = 0.9;

/// Whether column `col`, whose separators end in `t[i]` spaces, holds numbers right-aligned
/// to one width: the fewest trailing spaces `m` (kept as literal text), the width `w` of the
/// number with the spaces beyond `m`, and which lines fit it.
fn aligned_width(cuts: &[&Cut], col: usize, t: &[usize]) -> Option<(usize, usize, Vec<bool>)> {
    let values: Vec<&[u8]> = cuts.iter().map(|c| c.words[col]).collect();
    match classify(&values) {
        Column::Number(spelling) if is_minimal(&spelling) => {}
        _ => return None,
    }
    let m = *t.iter().min()?;
    let mut widths: HashMap<usize, usize> = HashMap::new();
    for (&ti, v) in t.iter().zip(&values) {
        *widths.entry(ti - m + v.len()).or_default() += 1;
    }
    let (&w, _) = widths.iter().max_by_key(|&(&w, &count)| (count, w))?;
    if !(2..=64).contains(&w) {
        return None;
    }
    let fits: Vec<bool> = t
        .iter()
        .zip(&values)
        .map(|(&ti, v)| ti - m == w.saturating_sub(v.len()))
        .collect();
    let fitting = fits.iter().filter(|&&f| f).count();
    (fitting as f64 >= ALIGNED_SHARE * t.len() as f64).then_some((m, w, fits))
}

/// Whether column `col`, whose separators end in `t[i]` spaces, holds numbers right-aligned
/// to a width that varies from line to line (a listing pads each of its blocks to that
/// block's widest number): the fewest trailing spaces `m`, when the column is numbers of a
/// spelling with no digit count and every line's width `t − m + length` is at most 64. Why:
/// split by their exact spacing, the lines of one block would make one record per length of
/// their number; split by width, they make one record per width, and a block keeps to one.
fn varying_widths(cuts: &[&Cut], col: usize, t: &[usize]) -> Option<usize> {
    let values: Vec<&[u8]> = cuts.iter().map(|c| c.words[col]).collect();
    match classify(&values) {
        Column::Number(spelling) if is_minimal(&spelling) => {}
        _ => return None,
    }
    let m = *t.iter().min()?;
    t.iter()
        .zip(&values)
        .all(|(&ti, v)| ti - m + v.len() <= 64)
        .then_some(m)
}

/// A number spelling with no digit count (`d`, `x`, `X`, `#x`, `#X`).
fn is_minimal(spelling: &str) -> bool {
    !spelling.bytes().any(|b| b.is_ascii_digit())
}

/// `spelling` without its right-aligned width (`#_8x` → `#x`).
fn without_width(spelling: &str) -> String {
    match spelling.split_once('_') {
        Some((prefix, rest)) => {
            format!(
                "{prefix}{}",
                rest.trim_start_matches(|c: char| c.is_ascii_digit())
            )
        }
        None => spelling.to_string(),
    }
}

/// `spelling` right-aligned to `w` bytes: `_Nd`, `#_Nx`.
fn spaced_spelling(spelling: &str, w: usize) -> String {
    match spelling.strip_prefix('#') {
        Some(rest) => format!("#_{w}{rest}"),
        None => format!("_{w}{spelling}"),
    }
}

/// Up to [`MAX_VALUES`] distinct values of a numeric column.
fn distinct_values(values: &[&[u8]], spelling: &str) -> HashSet<u64> {
    let radix = if spelling.ends_with('d') { 10 } else { 16 };
    let mut out = HashSet::new();
    for v in values {
        let digits = v.strip_prefix(b"0x").unwrap_or(v);
        let parsed = std::str::from_utf8(digits)
            .ok()
            .and_then(|d| u64::from_str_radix(d, radix).ok());
        if let Some(n) = parsed {
            out.insert(n);
            if out.len() >= MAX_VALUES {
                break;
            }
        }
    }
    out
}

/// Field names: numeric columns of different records whose values overlap (see
/// [`SHARED_VALUES`]) get the same name, so the engine's cross-record predictors (which pair
/// fields by name) can link them; every other field gets a name of its own.
fn field_names(shapes: &[Shape]) -> Vec<Vec<String>> {
    // (shape, part) of every numeric column, and a union-find over them.
    let columns: Vec<(usize, usize)> = shapes
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.parts
                .iter()
                .enumerate()
                .filter(|(_, p)| matches!(p, Part::Number(..)))
                .map(move |(j, _)| (i, j))
        })
        .collect();
    let values = |c: (usize, usize)| match &shapes[c.0].parts[c.1] {
        Part::Number(_, v) => v,
        _ => unreachable!("only numeric columns are listed"),
    };
    let mut parent: Vec<usize> = (0..columns.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    // Pairs sharing enough values, most similar first, so a column joins its closest match.
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for a in 0..columns.len() {
        for b in a + 1..columns.len() {
            if columns[a].0 == columns[b].0 {
                continue;
            }
            let (va, vb) = (values(columns[a]), values(columns[b]));
            let (small, large) = if va.len() <= vb.len() {
                (va, vb)
            } else {
                (vb, va)
            };
            if small.len() < 2 {
                continue;
            }
            let common = small.iter().filter(|v| large.contains(v)).count();
            if (common as f64) < SHARED_VALUES * small.len() as f64 {
                continue;
            }
            // Ordered by similarity of the whole sets: a column of small indices is closer to
            // another column of the same indices than to a column of all sorts of sizes.
            let union = small.len() + large.len() - common;
            pairs.push((common as f64 / union as f64, a, b));
        }
    }
    // Before them, columns in the same place of their lines: the same ordinal among the
    // line's numbers, the same spelling (but for a right-aligned width: the same column of
    // a listing padded to another width) and the same literal text just before (a time or
    // an id at the start of every line, whatever follows), which value sets alone cannot
    // tell when the values are few or spread thin.
    let place = |c: (usize, usize)| -> Option<(usize, String, &[u8])> {
        let parts = &shapes[c.0].parts;
        let Part::Number(spelling, _) = &parts[c.1] else {
            return None;
        };
        let Some(Part::Literal(before)) = c.1.checked_sub(1).map(|j| &parts[j]) else {
            return None;
        };
        let ordinal = parts[..c.1]
            .iter()
            .filter(|p| matches!(p, Part::Number(..)))
            .count();
        Some((ordinal, without_width(spelling), before.as_slice()))
    };
    let mut same_place: Vec<(f64, usize, usize)> = Vec::new();
    for a in 0..columns.len() {
        for b in a + 1..columns.len() {
            if columns[a].0 != columns[b].0
                && place(columns[a]).is_some()
                && place(columns[a]) == place(columns[b])
            {
                same_place.push((2.0, a, b));
            }
        }
    }
    pairs.sort_by(|x, y| y.0.total_cmp(&x.0));
    same_place.extend(pairs);
    for (_, a, b) in same_place {
        {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            if ra == rb {
                continue;
            }
            // One name cannot stand for two fields of the same record.
            let shapes_of = |r: usize, parent: &mut [usize]| -> Vec<usize> {
                (0..columns.len())
                    .filter(|&k| root(parent, k) == r)
                    .map(|k| columns[k].0)
                    .collect()
            };
            let sa = shapes_of(ra, &mut parent);
            let sb = shapes_of(rb, &mut parent);
            if sa.iter().any(|s| sb.contains(s)) {
                continue;
            }
            parent[ra] = rb;
        }
    }
    let mut class_names: HashMap<usize, String> = HashMap::new();
    let mut names: Vec<Vec<String>> = shapes
        .iter()
        .map(|s| vec![String::new(); s.parts.len()])
        .collect();
    for (k, &(i, j)) in columns.iter().enumerate() {
        let r = root(&mut parent, k);
        let next = class_names.len() + 1;
        names[i][j] = class_names
            .entry(r)
            .or_insert_with(|| format!("n{next}"))
            .clone();
    }
    let mut texts = 0;
    for (i, s) in shapes.iter().enumerate() {
        for (j, p) in s.parts.iter().enumerate() {
            if matches!(p, Part::Text) {
                texts += 1;
                names[i][j] = format!("text{texts}");
            }
        }
    }
    names
}

fn write_dtd(shapes: &[Shape], total: usize, comments: bool) -> String {
    let mut s = String::new();
    let covered: usize = shapes.iter().map(|s| s.count).sum();
    let timed = shapes
        .iter()
        .flat_map(|s| &s.parts)
        .any(|p| matches!(p, Part::Number(spelling, _) if spelling.contains(['.', 't'])));
    if comments {
        let _ = writeln!(
            s,
            "// Line patterns inferred from a sample of {total} lines: {} line shapes cover {covered}.\n\
             // Lines of other shapes are kept verbatim. Rename records and fields freely; a field's\n\
             // spelling (`x` hexadecimal, `08x` at least 8 digits, `_6d` right-aligned in 6 columns,\n\
             // `d` decimal, `s` text{}) must stay.",
            shapes.len(),
            // Said only when used: the commented DTD is stored when it compresses smaller.
            if timed {
                ",\n// `d.6` with 6 digits after a point, `02t` a clock HH:MM:SS"
            } else {
                ""
            }
        );
    }
    s.push_str("tag.width = 1;\n");
    let mut used_names: Vec<String> = Vec::new();
    let names = field_names(shapes);
    for (k, shape) in shapes.iter().enumerate() {
        let name = record_name(shape, k, &used_names);
        used_names.push(name.clone());
        let mut fields = vec!["tag".to_string()];
        let mut props = String::new();
        let mut line = String::from("line =");
        for (part, f) in shape.parts.iter().zip(&names[k]) {
            match part {
                Part::Literal(l) => {
                    line.push(' ');
                    line.push_str(&quote(l));
                }
                Part::Number(spelling, _) => {
                    fields.push(f.clone());
                    let _ = writeln!(props, "    {f}.width = 8; {f}.interpretation = none;");
                    let _ = write!(line, " {f}");
                    if spelling != "d" {
                        let _ = write!(line, ":{spelling}");
                    }
                }
                Part::Text => {
                    fields.push(format!("{f}_length"));
                    fields.push(f.clone());
                    let _ = writeln!(
                        props,
                        "    {f}_length.width = 4; {f}_length.interpretation = none;\n    {f}.width = {f}_length.value; {f}.interpretation = none;"
                    );
                    let _ = write!(line, " {f}:s");
                }
            }
        }
        if shape.parts.is_empty() {
            line.push_str(" \"\"");
        }
        if comments {
            let _ = write!(s, "\n// {} lines of the sample.\n", shape.count);
        }
        let _ = writeln!(
            s,
            "{name} : ({}) {{\n    tag.value = {};\n{props}    {line};\n}}",
            fields.join(", "),
            k + 4
        );
    }
    s
}

/// `line_KEYWORDS` from the literal's words, or `line_N`; unique among `used`.
fn record_name(shape: &Shape, k: usize, used: &[String]) -> String {
    let mut words = String::new();
    for part in &shape.parts {
        if let Part::Literal(l) = part {
            for w in l.split(|&b| !is_word(b)).filter(|w| !w.is_empty()) {
                if words.len() < 24 {
                    words.push('_');
                    words.extend(w.iter().map(|&b| b.to_ascii_lowercase() as char));
                }
            }
        }
    }
    let base = if shape.parts.is_empty() {
        "empty_line".to_string()
    } else if words.is_empty() {
        format!("line_{}", k + 1)
    } else {
        format!("line{words}")
    };
    let mut name = base.clone();
    let mut i = 2;
    while used.contains(&name) {
        name = format!("{base}_{i}");
        i += 1;
    }
    name
}

/// A DTD string literal for `bytes`: printable ASCII as is, `"` and `\` escaped, others `\xHH`.
fn quote(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for &b in bytes {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
    }
    s.push('"');
    s
}

//! The records of the built-in formats: their types, named as the formats' DTDs in `dtds/`
//! name them, and the parse of one record's text (a line, or a malloc-bench protobuf field)
//! with each format's own line parser. The text comes from the format's own range decoder, so
//! no layout is decoded a second time here.

use super::value::{FieldSpec, FieldType, Fields, RecordType, Value};
use crate::formats::et::line::{
    self as et_line, Kind as EtKind, Line as EtLine, Record as EtRecord,
};
use crate::formats::jvm::line::{self as jvm_line, Field as JvmField, Kind as JvmKind, Parsed};
use crate::formats::malloc_bench::proto;
use crate::formats::memory_replay::line::{self as replay_line, Action, ReplayLine};
use crate::formats::mtrace::line::{self as mtrace_line, Line as MtraceLine, Op, OpLine};
use crate::formats::wee_alloc::{self, WeeLine};

use FieldType::{Bytes, I64, U64};

/// A table of record types: names, then `(field, type)` pairs.
type Table = &'static [(&'static str, &'static [(&'static str, FieldType)])];

const MTRACE: Table = &[
    ("start", &[]),
    ("end", &[]),
    ("verbatim", &[("text", Bytes)]),
    ("verbatimLast", &[("text", Bytes)]),
    (
        "malloc",
        &[("site", Bytes), ("address", U64), ("size", U64)],
    ),
    ("free", &[("site", Bytes), ("address", U64)]),
    ("reallocOld", &[("site", Bytes), ("address", U64)]),
    (
        "reallocNew",
        &[("site", Bytes), ("address", U64), ("size", U64)],
    ),
    // Lines without `@ CALLER`: their own records, as a record has no absent fields.
    ("mallocNoCaller", &[("address", U64), ("size", U64)]),
    ("freeNoCaller", &[("address", U64)]),
    ("reallocOldNoCaller", &[("address", U64)]),
    ("reallocNewNoCaller", &[("address", U64), ("size", U64)]),
];

const MEMORY_REPLAY: Table = &[
    ("verbatim", &[("text", Bytes)]),
    ("verbatimLast", &[("text", Bytes)]),
    (
        "malloc",
        &[("thread", U64), ("address", U64), ("size", U64)],
    ),
    ("free", &[("thread", U64), ("address", U64)]),
    (
        "calloc",
        &[
            ("thread", U64),
            ("address", U64),
            ("extra", U64),
            ("size", U64),
        ],
    ),
    (
        "memalign",
        &[
            ("thread", U64),
            ("address", U64),
            ("extra", U64),
            ("size", U64),
        ],
    ),
    (
        "realloc",
        &[
            ("thread", U64),
            ("address", U64),
            ("old_address", U64),
            ("size", U64),
        ],
    ),
    ("threadDone", &[("thread", U64)]),
];

const WEE_ALLOC: Table = &[
    ("verbatim", &[("text", Bytes)]),
    ("verbatimLast", &[("text", Bytes)]),
    ("alloc", &[("size", U64)]),
    // The DTD calls it `index`; renamed so that it is not taken for the record number.
    ("free", &[("alloc_index", U64)]),
];

const MALLOC_BENCH: Table = &[
    // `absent`: bit k set when the protobuf leaves out the k-th field (from 0); that field is
    // then 0. A number, so the record text form and every reader carry it alike.
    (
        "malloc",
        &[
            ("id", U64),
            ("size", U64),
            ("alignment", U64),
            ("absent", U64),
        ],
    ),
    (
        "free",
        &[
            ("id", U64),
            ("size", U64),
            ("alignment", U64),
            ("absent", U64),
        ],
    ),
    (
        "realloc",
        &[("id", U64), ("old_id", U64), ("size", U64), ("absent", U64)],
    ),
    (
        "calloc",
        &[("id", U64), ("nmemb", U64), ("size", U64), ("absent", U64)],
    ),
    // Not trace lines, but top-level fields of the message that records count too.
    ("maxSimultaneousAllocs", &[("value", U64)]),
    ("verbatim", &[("text", Bytes)]),
];

const ET_ALLOC: &[(&str, FieldType)] = &[
    ("obj", U64),
    ("size", U64),
    ("type", U64),
    ("site", U64),
    ("len", U64),
    ("thread", U64),
];
const ET_THROW: &[(&str, FieldType)] = &[
    ("method", U64),
    ("obj", U64),
    ("exception", U64),
    ("thread", U64),
];

/// ET2 and ET3 differ only in the order of `U`'s fields (as their DTDs say).
const fn et_table(
    u: &'static [(&'static str, FieldType)],
) -> [(&'static str, &'static [(&'static str, FieldType)]); 13] {
    [
        ("N", ET_ALLOC),
        ("A", ET_ALLOC),
        ("D", &[("obj", U64), ("thread", U64), ("time", U64)]),
        (
            "Ds",
            &[("obj", U64), ("thread", U64), ("time", U64), ("size", U64)],
        ),
        ("U", u),
        ("M", &[("method", U64), ("obj", U64), ("thread", U64)]),
        ("E", &[("method", U64), ("thread", U64)]),
        ("W", &[("obj", U64), ("class", U64), ("thread", U64)]),
        ("T", ET_THROW),
        ("H", ET_THROW),
        ("X", ET_THROW),
        ("blank", &[]),
        ("verbatim", &[("text", Bytes)]),
    ]
}

const ET2: Table = &et_table(&[
    ("obj", U64),
    ("field", U64),
    ("value", U64),
    ("thread", U64),
]);
const ET3: Table = &et_table(&[
    ("obj", U64),
    ("value", U64),
    ("field", U64),
    ("thread", U64),
]);

const JVM: Table = &[
    ("VS", &[("time", I64)]),
    ("VI", &[("time", I64)]),
    ("VD", &[("time", I64)]),
    ("CL", &[("time", I64), ("class", Bytes)]),
    ("OA", &[("time", I64), ("class", Bytes), ("obj", I64)]),
    ("OF", &[("time", I64), ("class", Bytes), ("obj", I64)]),
    ("TB", &[("time", I64), ("thread", I64)]),
    ("TE", &[("time", I64), ("thread", I64)]),
    (
        "MN",
        &[
            ("time", I64),
            ("thread", I64),
            ("class", Bytes),
            ("method", Bytes),
            ("obj", I64),
        ],
    ),
    (
        "MX",
        &[
            ("time", I64),
            ("thread", I64),
            ("class", Bytes),
            ("method", Bytes),
        ],
    ),
    (
        "FP",
        &[
            ("time", I64),
            ("thread", I64),
            ("class", Bytes),
            ("method", Bytes),
        ],
    ),
    ("verbatim", &[("text", Bytes)]),
];

/// How the decoded text is cut into records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// One record per line, `\n` included (the last line may lack it).
    Lines,
    /// One record per top-level protobuf field (malloc-bench); bytes at the end that form no
    /// field are one last record, as the encoder counts them.
    Protobuf,
}

/// A built-in format's record parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parser {
    Mtrace,
    MemoryReplay,
    WeeAlloc,
    MallocBench,
    Et2,
    Et3,
    Jvm,
}

impl Parser {
    /// The parser of the format stored as `format`, if it is a built-in one.
    pub(crate) fn of(format: &str) -> Option<Parser> {
        Some(match format {
            "mtrace" => Parser::Mtrace,
            "memory-replay" | "memory-replay-zip" => Parser::MemoryReplay,
            "wee-alloc" => Parser::WeeAlloc,
            "malloc-bench" => Parser::MallocBench,
            "et2" => Parser::Et2,
            "et3" => Parser::Et3,
            "jvm" | "jvm-zip" => Parser::Jvm,
            _ => return None,
        })
    }

    pub(crate) fn framing(self) -> Framing {
        match self {
            Parser::MallocBench => Framing::Protobuf,
            _ => Framing::Lines,
        }
    }

    fn table(self) -> Table {
        match self {
            Parser::Mtrace => MTRACE,
            Parser::MemoryReplay => MEMORY_REPLAY,
            Parser::WeeAlloc => WEE_ALLOC,
            Parser::MallocBench => MALLOC_BENCH,
            Parser::Et2 => ET2,
            Parser::Et3 => ET3,
            Parser::Jvm => JVM,
        }
    }

    /// The format's record types; [`Parser::parse`] returns indexes into them.
    pub(crate) fn types(self) -> Vec<RecordType> {
        self.table()
            .iter()
            .map(|(name, fields)| RecordType {
                name: (*name).to_string(),
                fields: fields
                    .iter()
                    .map(|(n, ty)| FieldSpec {
                        name: (*n).to_string(),
                        ty: *ty,
                    })
                    .collect(),
            })
            .collect()
    }

    /// Parses one record's text (as [`Framing`] cut it) into `out`; returns its type.
    pub(crate) fn parse<'a>(self, text: &'a [u8], out: &mut Fields<'a>) -> usize {
        match self.framing() {
            Framing::Protobuf => malloc_bench(text, out),
            Framing::Lines => {
                let (line, last) = match text.strip_suffix(b"\n") {
                    Some(l) => (l, false),
                    None => (text, true),
                };
                match self {
                    Parser::Mtrace => mtrace(line, last, out),
                    Parser::MemoryReplay => memory_replay(line, last, out),
                    Parser::WeeAlloc => wee(line, last, out),
                    Parser::Et2 | Parser::Et3 => et(line, out),
                    _ => jvm(line, out),
                }
            }
        }
    }
}

/// Index of `name` in `table`, if it is there.
const fn find(table: Table, name: &str) -> Option<usize> {
    let name = name.as_bytes();
    let mut i = 0;
    while i < table.len() {
        let candidate = table[i].0.as_bytes();
        if candidate.len() == name.len() {
            let mut k = 0;
            while k < name.len() && candidate[k] == name[k] {
                k += 1;
            }
            if k == name.len() {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

/// Index of record type `$name` in `$table`, found when the program is compiled (a name
/// missing from the table does not compile), not compared name by name for every record.
macro_rules! at {
    ($table:expr, $name:expr) => {
        const {
            match find($table, $name) {
                Some(i) => i,
                None => panic!("a record type missing from its table"),
            }
        }
    };
}

/// A line no record type describes: `verbatim`, or `verbatimLast` for a last line without `\n`
/// in the formats whose DTD tells them apart.
fn verbatim<'a>(table: Table, line: &'a [u8], last: bool, out: &mut Fields<'a>) -> usize {
    out.push(Value::Bytes(line));
    // Only the tables that have both are given here.
    find(table, if last { "verbatimLast" } else { "verbatim" }).unwrap_or(0)
}

/// An `mtrace` line: a marker, an operation, or a line kept verbatim.
pub(super) fn mtrace<'a>(line: &'a [u8], last: bool, out: &mut Fields<'a>) -> usize {
    match mtrace_line::parse(line) {
        Ok(MtraceLine::Marker(b"Start")) => mtrace_start(),
        Ok(MtraceLine::Marker(b"End")) => mtrace_end(),
        Ok(MtraceLine::Op(op)) => mtrace_op(&op, out),
        _ => verbatim(MTRACE, line, last, out),
    }
}

/// The type of `= Start`.
pub(super) const fn mtrace_start() -> usize {
    at!(MTRACE, "start")
}

/// The type of `= End`.
pub(super) const fn mtrace_end() -> usize {
    at!(MTRACE, "end")
}

/// An `mtrace` operation, parsed from its line or as the model decoded it.
pub(super) fn mtrace_op<'a>(op: &OpLine<'a>, out: &mut Fields<'a>) -> usize {
    // A line without `@ CALLER` is a record of its own: the text form cannot spell an absent
    // field.
    if let Some(site) = op.caller {
        out.push(Value::Bytes(site));
    }
    out.u64(op.addr);
    if op.op.has_size() {
        out.u64(op.size);
    }
    match (op.op, op.caller.is_some()) {
        (Op::Malloc, true) => at!(MTRACE, "malloc"),
        (Op::Free, true) => at!(MTRACE, "free"),
        (Op::ReallocOld, true) => at!(MTRACE, "reallocOld"),
        (Op::ReallocNew, true) => at!(MTRACE, "reallocNew"),
        (Op::Malloc, false) => at!(MTRACE, "mallocNoCaller"),
        (Op::Free, false) => at!(MTRACE, "freeNoCaller"),
        (Op::ReallocOld, false) => at!(MTRACE, "reallocOldNoCaller"),
        (Op::ReallocNew, false) => at!(MTRACE, "reallocNewNoCaller"),
    }
}

/// A `memory_replay` line: an action, or a line kept verbatim.
pub(super) fn memory_replay<'a>(line: &'a [u8], last: bool, out: &mut Fields<'a>) -> usize {
    match replay_line::parse(line) {
        Ok(l) => replay_action(&l, out),
        Err(_) => verbatim(MEMORY_REPLAY, line, last, out),
    }
}

/// A `memory_replay` action, parsed from its line or as the model decoded it.
pub(super) fn replay_action(l: &ReplayLine, out: &mut Fields<'_>) -> usize {
    out.u64(l.tid);
    if l.action == Action::ThreadDone {
        return at!(MEMORY_REPLAY, "threadDone");
    }
    out.u64(l.ptr);
    match l.action {
        Action::Malloc => {
            out.u64(l.a);
            at!(MEMORY_REPLAY, "malloc")
        }
        Action::Free => at!(MEMORY_REPLAY, "free"),
        Action::Calloc | Action::Memalign | Action::Realloc => {
            out.u64(l.a);
            out.u64(l.b);
            match l.action {
                Action::Calloc => at!(MEMORY_REPLAY, "calloc"),
                Action::Memalign => at!(MEMORY_REPLAY, "memalign"),
                _ => at!(MEMORY_REPLAY, "realloc"),
            }
        }
        Action::ThreadDone => at!(MEMORY_REPLAY, "threadDone"),
    }
}

fn wee<'a>(line: &'a [u8], last: bool, out: &mut Fields<'a>) -> usize {
    match wee_alloc::parse(line) {
        Ok(WeeLine::Alloc(n)) => {
            out.u64(n);
            at!(WEE_ALLOC, "alloc")
        }
        Ok(WeeLine::Free(i)) => {
            out.u64(i);
            at!(WEE_ALLOC, "free")
        }
        Err(_) => verbatim(WEE_ALLOC, line, last, out),
    }
}

fn malloc_bench<'a>(field: &'a [u8], out: &mut Fields<'a>) -> usize {
    match proto::parse_top_level(field) {
        Some(proto::TopLevel::Line(l)) => {
            let mut absent = 0;
            for (k, (v, present)) in l.fields.iter().zip(l.present).enumerate() {
                out.u64(if present { *v } else { 0 });
                absent |= u64::from(!present) << k;
            }
            out.u64(absent);
            (l.case as usize).saturating_sub(1)
        }
        Some(proto::TopLevel::MaxSimultaneousAllocs(n)) => {
            out.u64(n);
            at!(MALLOC_BENCH, "maxSimultaneousAllocs")
        }
        None => {
            out.push(Value::Bytes(field));
            at!(MALLOC_BENCH, "verbatim")
        }
    }
}

/// An Elephant Tracks line: a record, a blank line, or a line kept verbatim.
pub(super) fn et<'a>(line: &'a [u8], out: &mut Fields<'a>) -> usize {
    match et_line::classify(line) {
        EtLine::Canonical(r) | EtLine::Spelled(r) => et_record(&r, out),
        EtLine::Blank => at!(ET2, "blank"),
        _ => {
            out.push(Value::Bytes(line));
            at!(ET2, "verbatim")
        }
    }
}

/// An Elephant Tracks record, parsed from its line or as the model decoded it.
pub(super) fn et_record(r: &EtRecord, out: &mut Fields<'_>) -> usize {
    for &v in r.fields() {
        out.u64(v);
    }
    // ET2 and ET3 list the same record types in the same order.
    match r.kind {
        EtKind::N => at!(ET2, "N"),
        EtKind::A => at!(ET2, "A"),
        EtKind::D if r.len > 3 => at!(ET2, "Ds"),
        EtKind::D => at!(ET2, "D"),
        EtKind::U => at!(ET2, "U"),
        EtKind::M => at!(ET2, "M"),
        EtKind::E => at!(ET2, "E"),
        EtKind::W => at!(ET2, "W"),
        EtKind::T => at!(ET2, "T"),
        EtKind::H => at!(ET2, "H"),
        EtKind::X => at!(ET2, "X"),
    }
}

fn jvm<'a>(line: &'a [u8], out: &mut Fields<'a>) -> usize {
    match jvm_line::parse(line) {
        Ok(Parsed::Canonical(r)) | Ok(Parsed::Spelled(r)) => {
            out.push(Value::I64(r.time));
            for f in r.kind.fields() {
                out.push(match f {
                    JvmField::Thread => Value::I64(r.thread),
                    JvmField::Class => Value::Bytes(r.class),
                    JvmField::Method => Value::Bytes(r.method),
                    JvmField::Object => Value::I64(r.object),
                });
            }
            JvmKind::ALL.iter().position(|&k| k == r.kind).unwrap_or(0)
        }
        Err(_) => {
            out.push(Value::Bytes(line));
            at!(JVM, "verbatim")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Parser; 7] = [
        Parser::Mtrace,
        Parser::MemoryReplay,
        Parser::WeeAlloc,
        Parser::MallocBench,
        Parser::Et2,
        Parser::Et3,
        Parser::Jvm,
    ];

    #[test]
    fn every_record_type_fits_and_names_its_fields_once() {
        for p in ALL {
            for t in p.types() {
                assert!(
                    t.fields.len() <= super::super::value::MAX_FIELDS,
                    "{}",
                    t.name
                );
                let mut names: Vec<_> = t.fields.iter().map(|f| &f.name).collect();
                names.sort();
                names.dedup();
                assert_eq!(names.len(), t.fields.len(), "{}", t.name);
            }
        }
    }

    /// The DTD of a built-in format's records (`dtds/records/`), by its file name.
    fn shipped(file: &str) -> &'static str {
        match file {
            "mtrace.dtd" => include_str!("../../../dtds/records/mtrace.dtd"),
            "memory-replay.dtd" => include_str!("../../../dtds/records/memory-replay.dtd"),
            "wee-alloc.dtd" => include_str!("../../../dtds/records/wee-alloc.dtd"),
            "malloc-bench.dtd" => include_str!("../../../dtds/records/malloc-bench.dtd"),
            "et2.dtd" => include_str!("../../../dtds/records/et2.dtd"),
            "et3.dtd" => include_str!("../../../dtds/records/et3.dtd"),
            "jvm.dtd" => include_str!("../../../dtds/records/jvm.dtd"),
            _ => panic!("no {file} in dtds/records/"),
        }
    }

    /// The records of a DTD as the tables spell them: name, then each field with its type,
    /// a byte string's length field left out (the text form and the line patterns imply it);
    /// an integer is `I64` when the DTD's line pattern spells it signed.
    fn dtd_table(text: &str, file: &str) -> Vec<(String, Vec<(String, FieldType)>)> {
        let (schema, lines) = match metatf_dtd::parse_schema_with_lines(text, file) {
            Ok(parsed) => parsed,
            Err(d) => panic!("{file}: {d}"),
        };
        assert!(schema.sections.is_empty(), "{file}: records in a section");
        schema
            .global_records
            .iter()
            .filter(|r| !["comment", "section", "metadata"].contains(&r.name.as_str()))
            .map(|r| {
                let pattern = lines.records.iter().find(|l| l.name == r.name);
                let signed = |i: usize| {
                    pattern.is_some_and(|p| {
                        p.pieces.iter().any(|piece| {
                            matches!(piece, metatf_dtd::lines::LinePiece::Number { field, spelling }
                                if *field == i && spelling.signed)
                        })
                    })
                };
                let lengths: Vec<u16> = r
                    .fields
                    .iter()
                    .filter_map(|f| match f.kind {
                        metatf_dtd::FieldKind::Bytes { length_position } => Some(length_position),
                        _ => None,
                    })
                    .collect();
                let fields = r
                    .fields
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.position != 0 && !lengths.contains(&f.position))
                    .map(|(i, f)| {
                        let ty = match f.kind {
                            metatf_dtd::FieldKind::Bytes { .. } => Bytes,
                            metatf_dtd::FieldKind::Scalar { .. } if signed(i) => I64,
                            metatf_dtd::FieldKind::Scalar { .. } => U64,
                            _ => {
                                panic!("{file}: {}.{} is neither number nor bytes", r.name, f.name)
                            }
                        };
                        (f.name.clone(), ty)
                    })
                    .collect();
                (r.name.clone(), fields)
            })
            .collect()
    }

    #[test]
    fn every_table_is_its_formats_dtd() {
        let formats = [
            (Parser::Mtrace, "mtrace.dtd"),
            (Parser::MemoryReplay, "memory-replay.dtd"),
            (Parser::WeeAlloc, "wee-alloc.dtd"),
            (Parser::MallocBench, "malloc-bench.dtd"),
            (Parser::Et2, "et2.dtd"),
            (Parser::Et3, "et3.dtd"),
            (Parser::Jvm, "jvm.dtd"),
        ];
        for (p, file) in formats {
            let table: Vec<(String, Vec<(String, FieldType)>)> = p
                .types()
                .into_iter()
                .map(|t| {
                    let fields = t.fields.into_iter().map(|f| (f.name, f.ty)).collect();
                    (t.name, fields)
                })
                .collect();
            assert_eq!(table, dtd_table(shipped(file), file), "{file}");
        }
    }

    #[test]
    fn lines_parse_into_their_types_and_values() {
        let mut f = Fields::new();
        let t = Parser::Mtrace.parse(b"@ ./a.out:[0x4005d6] + 0x1a2b 0x20\n", &mut f);
        assert_eq!(Parser::Mtrace.types()[t].name, "malloc");
        assert_eq!(
            f.as_slice(),
            &[
                Value::Bytes(b"./a.out:[0x4005d6]"),
                Value::U64(0x1a2b),
                Value::U64(0x20)
            ]
        );
        let mut f = Fields::new();
        let t = Parser::MemoryReplay.parse(b"12: realloc 0x20 0x10 48", &mut f);
        assert_eq!(Parser::MemoryReplay.types()[t].name, "realloc");
        assert_eq!(
            f.as_slice(),
            &[
                Value::U64(12),
                Value::U64(0x20),
                Value::U64(0x10),
                Value::U64(48)
            ]
        );
        let mut f = Fields::new();
        let t = Parser::Et3.parse(b"not a record\n", &mut f);
        assert_eq!(Parser::Et3.types()[t].name, "verbatim");
        let mut f = Fields::new();
        let t = Parser::WeeAlloc.parse(b"junk", &mut f);
        assert_eq!(Parser::WeeAlloc.types()[t].name, "verbatimLast");
    }

    #[test]
    fn elephant_tracks_records_have_the_types_of_their_letters() {
        let lines: [(&[u8], &str); 11] = [
            (b"N 1 2 3 4 5 6", "N"),
            (b"A 1 2 3 4 5 6", "A"),
            (b"D 1 2 3", "D"),
            (b"D 1 2 3 4", "Ds"),
            (b"U 1 2 3 4", "U"),
            (b"M 1 2 3", "M"),
            (b"E 1 2", "E"),
            (b"W 1 2 3", "W"),
            (b"T 1 2 3 4", "T"),
            (b"H 1 2 3 4", "H"),
            (b"X 1 2 3 4", "X"),
        ];
        for (line, name) in lines {
            let (EtLine::Canonical(r) | EtLine::Spelled(r)) = et_line::classify(line) else {
                panic!("{}", String::from_utf8_lossy(line));
            };
            for p in [Parser::Et2, Parser::Et3] {
                let mut f = Fields::new();
                let t = et_record(&r, &mut f);
                assert_eq!(p.types()[t].name, name);
                assert_eq!(f.as_slice().len(), r.len);
            }
        }
    }
}

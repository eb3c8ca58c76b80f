//! The records of `mtrace`, `memory-replay` and `memory-replay-zip` files straight from the
//! model's decoder (a zip's from the `memory-replay` container nested in it): its
//! typed records are handed on as they are, never printed and parsed back (the text round
//! trip was half the reading time of an export); lines the encoder stored as text are parsed
//! as the format's line parser parses them, so both paths give the same records.

use std::ops::Range;

use metatf::container::Block;

use super::builtin;
use super::value::{Fields, Item, Record};
use super::Visitor;
use crate::format::FormatError;
use crate::formats::memory_replay::records as replay;
use crate::formats::memory_replay::zip as replay_zip;
use crate::formats::mtrace::records as mtrace;
use crate::seek::ReadSeek;
use crate::shared::container::entries::EntrySink;

/// Visits records `range` of the `mtrace` file `input`.
pub(crate) fn read_mtrace(
    input: &mut dyn ReadSeek,
    name: &str,
    range: Range<u64>,
    visitor: &mut Visitor<'_>,
) -> Result<u64, FormatError> {
    mtrace::visit_records(input, name, range, &mut |_| {}, &mut Visit(visitor))
}

/// Visits records `range` of the `memory-replay` file `input`.
pub(crate) fn read_memory_replay(
    input: &mut dyn ReadSeek,
    name: &str,
    range: Range<u64>,
    visitor: &mut Visitor<'_>,
) -> Result<u64, FormatError> {
    replay::visit_records(input, name, range, &mut |_| {}, &mut Visit(visitor))
}

/// Visits records `range` of the `memory-replay-zip` file `input`: the records of the
/// `memory-replay` container nested in it (the archive's entry), whose blocks are the ones met.
pub(crate) fn read_memory_replay_zip(
    input: &mut dyn ReadSeek,
    name: &str,
    range: Range<u64>,
    visitor: &mut Visitor<'_>,
) -> Result<u64, FormatError> {
    replay_zip::with_nested(input, name, &mut |nested, nested_name| {
        replay::visit_records(
            nested,
            nested_name,
            range.clone(),
            &mut |_| {},
            &mut Visit(visitor),
        )
    })
}

/// Hands each record, typed, to the visitor.
struct Visit<'v, 'w>(&'v mut Visitor<'w>);

impl Visit<'_, '_> {
    fn block(&mut self, block: &Block) -> Result<(), FormatError> {
        (self.0)(Item::Block {
            index: block.index,
            first_record: block.first_record,
            record_count: block.record_count,
        })
    }

    fn record(
        &mut self,
        index: u64,
        record_type: usize,
        fields: &Fields<'_>,
    ) -> Result<(), FormatError> {
        (self.0)(Item::Record(Record {
            index,
            record_type,
            values: fields.as_slice(),
        }))
    }
}

impl<'e> EntrySink<mtrace::Entry<'e>> for Visit<'_, '_> {
    fn block(&mut self, block: &Block) -> Result<(), FormatError> {
        Visit::block(self, block)
    }

    #[inline]
    fn entry(&mut self, index: u64, entry: mtrace::Entry<'e>) -> Result<(), FormatError> {
        let mut fields = Fields::new();
        let record_type = match entry {
            mtrace::Entry::Op(op) => builtin::mtrace_op(&op, &mut fields),
            mtrace::Entry::Start => builtin::mtrace_start(),
            mtrace::Entry::End => builtin::mtrace_end(),
            mtrace::Entry::Text { line, newline } => builtin::mtrace(line, !newline, &mut fields),
        };
        self.record(index, record_type, &fields)
    }
}

impl<'e> EntrySink<replay::Entry<'e>> for Visit<'_, '_> {
    fn block(&mut self, block: &Block) -> Result<(), FormatError> {
        Visit::block(self, block)
    }

    #[inline]
    fn entry(&mut self, index: u64, entry: replay::Entry<'e>) -> Result<(), FormatError> {
        let mut fields = Fields::new();
        let record_type = match entry {
            replay::Entry::Line(l) => builtin::replay_action(&l, &mut fields),
            replay::Entry::Text { line, newline } => {
                builtin::memory_replay(line, !newline, &mut fields)
            }
        };
        self.record(index, record_type, &fields)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    use std::io::{Cursor, Read};
    use std::path::PathBuf;

    use super::super::builtin::Parser;
    use super::super::framing::RecordSink;
    use super::super::value::Value;
    use super::*;
    use crate::format::DecodeOptions;

    fn corpus(path: &str) -> Option<PathBuf> {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/corpus")
            .join(path);
        if p.exists() {
            Some(p)
        } else {
            println!("skipped: no corpus file {}", p.display());
            None
        }
    }

    /// One fingerprint per item: a block's number and records, or a record's number, type
    /// and values.
    fn fingerprint(item: &Item<'_>) -> u64 {
        let mut h = DefaultHasher::new();
        match item {
            Item::Block {
                index,
                first_record,
                record_count,
            } => (0u8, index, first_record, record_count).hash(&mut h),
            Item::Record(r) => {
                (1u8, r.index, r.record_type).hash(&mut h);
                for v in r.values {
                    match v {
                        Value::Null => 0u8.hash(&mut h),
                        Value::U64(n) => (1u8, n).hash(&mut h),
                        Value::I64(n) => (2u8, n).hash(&mut h),
                        Value::Bytes(b) => (3u8, b).hash(&mut h),
                    }
                }
            }
        }
        h.finish()
    }

    /// The items of records `range` of `bin` as the format's range decoder prints them and
    /// its line parser parses them back.
    fn text_path(bin: &[u8], parser: Parser, range: Range<u64>) -> Vec<u64> {
        let mut input = Cursor::new(bin);
        let file = super::super::RecordFile::open(&mut input, "t").unwrap();
        let format = crate::by_name(file.format()).unwrap();
        let mut seen = Vec::new();
        let mut visitor = |item: Item<'_>| {
            seen.push(fingerprint(&item));
            Ok(())
        };
        let mut sink = RecordSink::new(parser, range.start, file.blocks(), &mut visitor);
        let options = DecodeOptions {
            input_name: "t".into(),
            ..DecodeOptions::default()
        };
        format
            .decode_records(&mut input, &mut sink, &options, range.clone(), &mut |_| {})
            .unwrap()
            .unwrap();
        sink.finish(range.start).unwrap();
        seen
    }

    /// The same, as the model's decoder hands them over.
    fn typed_path(bin: &[u8], parser: Parser, range: Range<u64>) -> Vec<u64> {
        let mut seen = Vec::new();
        let mut visitor = |item: Item<'_>| {
            seen.push(fingerprint(&item));
            Ok(())
        };
        let mut input = Cursor::new(bin);
        match parser {
            Parser::Mtrace => read_mtrace(&mut input, "t", range, &mut visitor),
            _ => read_memory_replay(&mut input, "t", range, &mut visitor),
        }
        .unwrap();
        seen
    }

    /// Both paths give the same items, for the whole file and for ranges across the first
    /// block boundary and at the end.
    fn same_records(format: &str, parser: Parser, text: &[u8]) {
        let mut bin = Vec::new();
        crate::by_name(format)
            .unwrap()
            .encode(
                &mut &text[..],
                &mut bin,
                &crate::format::EncodeOptions {
                    keep_bad_lines: true,
                    ..Default::default()
                },
            )
            .unwrap();
        let whole = typed_path(&bin, parser, 0..u64::MAX);
        let by_text = text_path(&bin, parser, 0..u64::MAX);
        assert!(whole.len() > 100_000, "{} items", whole.len());
        assert_eq!(whole.len(), by_text.len());
        if let Some(i) = (0..whole.len()).find(|&i| whole[i] != by_text[i]) {
            panic!("{format}: item {i} differs between the typed and the text path");
        }
        let mut input = Cursor::new(&bin[..]);
        let file = super::super::RecordFile::open(&mut input, "t").unwrap();
        let blocks = file.blocks();
        let total = blocks.last().map_or(0, |b| b.first_record + b.record_count);
        let mut ranges = vec![total - 3..total + 10, 5..6];
        if let Some(b) = blocks.get(1) {
            ranges.push(b.first_record - 4..b.first_record + 4);
        }
        for range in ranges {
            assert_eq!(
                typed_path(&bin, parser, range.clone()),
                text_path(&bin, parser, range.clone()),
                "{format}: records {range:?}"
            );
        }
    }

    #[test]
    fn mtrace_records_from_the_model_are_those_of_its_text() {
        let Some(path) = corpus("malloc/glibc-mtrace/perl-hash.mtrace.zst") else {
            return;
        };
        let text = zstd::decode_all(std::fs::File::open(path).unwrap()).unwrap();
        same_records("mtrace", Parser::Mtrace, &text);
    }

    #[test]
    fn memory_replay_records_from_the_model_are_those_of_its_text() {
        let Some(path) = corpus("malloc/android/systemui.zip") else {
            return;
        };
        let mut archive = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
        let mut text = Vec::new();
        archive.by_index(0).unwrap().read_to_end(&mut text).unwrap();
        same_records("memory-replay", Parser::MemoryReplay, &text);
    }

    #[test]
    fn memory_replay_zip_records_from_the_nested_model_are_those_of_its_text() {
        let Some(path) = corpus("malloc/android/systemui.zip") else {
            return;
        };
        let zip = std::fs::read(path).unwrap();
        let mut bin = Vec::new();
        crate::by_name(crate::formats::memory_replay::zip::FORMAT)
            .unwrap()
            .encode(&mut &zip[..], &mut bin, &Default::default())
            .unwrap();
        // The records only: the typed path's blocks are the nested container's, the text
        // path's the outer file's one block.
        let typed = |range: Range<u64>| {
            let (mut records, mut blocks) = (Vec::new(), Vec::new());
            let mut input = Cursor::new(&bin[..]);
            read_memory_replay_zip(&mut input, "t", range, &mut |item| {
                match item {
                    Item::Record(_) => records.push(fingerprint(&item)),
                    Item::Block { first_record, .. } => blocks.push(first_record),
                }
                Ok(())
            })
            .unwrap();
            (records, blocks)
        };
        let text = |range: Range<u64>| {
            let mut input = Cursor::new(&bin[..]);
            let file = super::super::RecordFile::open(&mut input, "t").unwrap();
            let mut records = Vec::new();
            let mut visitor = |item: Item<'_>| {
                if let Item::Record(_) = item {
                    records.push(fingerprint(&item));
                }
                Ok(())
            };
            let mut sink = RecordSink::new(
                Parser::MemoryReplay,
                range.start,
                file.blocks(),
                &mut visitor,
            );
            let options = DecodeOptions {
                input_name: "t".into(),
                ..DecodeOptions::default()
            };
            crate::by_name(file.format())
                .unwrap()
                .decode_records(&mut input, &mut sink, &options, range.clone(), &mut |_| {})
                .unwrap()
                .unwrap();
            sink.finish(range.start).unwrap();
            records
        };
        let (whole, blocks) = typed(0..u64::MAX);
        assert_eq!(whole.len(), 786_454, "systemui's records");
        assert_eq!(
            blocks.first(),
            Some(&0),
            "the nested container's blocks are met"
        );
        assert!(whole == text(0..u64::MAX), "the whole file differs");
        let total = whole.len() as u64;
        let mut ranges = vec![5..6, total / 2 - 4..total / 2 + 4, total - 3..total + 10];
        if let Some(&b) = blocks.get(1) {
            ranges.push(b - 4..b + 4);
        }
        for range in ranges {
            assert_eq!(
                typed(range.clone()).0,
                text(range.clone()),
                "records {range:?}"
            );
        }
    }

    #[test]
    fn lines_kept_as_text_are_parsed_as_the_text_path_parses_them() {
        // Lines that are not canonical mtrace or memory_replay, and a last line without `\n`.
        let mut mtrace = b"= Start\n".to_vec();
        let mut replay = Vec::new();
        for i in 0..120_000u64 {
            mtrace.extend(format!("@ ./a:[0x{:x}] + 0x{:x} 0x20\n", i % 7, 0x1000 + i).bytes());
            replay.extend(format!("{}: malloc 0x{:x} {}\n", 10 + i % 3, 0x1000 + i, i).bytes());
            if i % 40_000 == 7 {
                mtrace.extend_from_slice(b"not a line of mtrace\n");
                replay.extend_from_slice(b"not a line of memory_replay\n");
            }
        }
        mtrace.extend_from_slice(b"= End\nlast");
        replay.extend_from_slice(b"last");
        same_records("mtrace", Parser::Mtrace, &mtrace);
        same_records("memory-replay", Parser::MemoryReplay, &replay);
    }
}

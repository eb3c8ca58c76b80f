//! Records out of every file hatf writes: a streaming reader of typed records.
//!
//! A file's records are the ones its DTD in `dtds/` names — for an `mtrace` file `malloc`,
//! `free`, `reallocOld`, `reallocNew` with their call site, address and size; for Elephant
//! Tracks `N`, `A`, `M`, `E`, `U`, `W`, `D`, ...; for a file described only by its own DTD,
//! that DTD's records. They come one at a time to a visitor, block by block, in memory that does
//! not grow with the trace, and a range `A..B` reads only the blocks that hold it (through the
//! file's index) where the format's blocks decode on their own.
//!
//! Nothing here decodes a layout again: the records of Elephant Tracks, `mtrace`,
//! `memory-replay` and `memory-replay-zip` files are the typed records their model's decoder
//! hands over; the other built-in formats' records are what their own range decoder gives back
//! (the text of each record), cut and parsed by the format's own line parser as they arrive; a
//! DTD-only file goes through the universal reader.
//!
//! ```
//! use std::io::Cursor;
//! use hatf::records::{Item, RecordFile, Value};
//!
//! // Encode a small glibc mtrace log, then read its records back.
//! let text = b"= Start\n@ ./app:[0x401136] + 0x5581a0 0x20\n@ ./app:[0x40114f] - 0x5581a0\n= End\n";
//! let mut file = Vec::new();
//! hatf::by_name("mtrace").unwrap()
//!     .encode(&mut &text[..], &mut file, &Default::default())?;
//!
//! let mut input = Cursor::new(file);
//! let records = RecordFile::open(&mut input, "log.hatf")?;
//! let mut freed = Vec::new();
//! records.read(&mut input, "log.hatf", 0..u64::MAX, &mut |item| {
//!     if let Item::Record(r) = item {
//!         let t = &records.types()[r.record_type];
//!         if t.name == "free" {
//!             let at = t.fields.iter().position(|f| f.name == "address").unwrap();
//!             if let Value::U64(address) = r.values[at] {
//!                 freed.push(address);
//!             }
//!         }
//!     }
//!     Ok(())
//! })?;
//! assert_eq!(freed, vec![0x5581a0]);
//! # Ok::<(), hatf::FormatError>(())
//! ```

mod alloc_model;
mod builtin;
mod et_model;
mod framing;
mod stored;
mod text_line;
mod universal;
mod value;

use std::ops::Range;

use metatf::container::{load_index, ContainerReader, IndexEntry, PROPERTY_LAYOUT};

pub use text_line::text_line;
pub use value::{FieldSpec, FieldType, Item, Record, RecordType, Value};

use crate::format::{DecodeOptions, FormatError};
use crate::seek::ReadSeek;
use builtin::Parser;
use framing::RecordSink;

/// What receives the records: called with each [`Item`] in file order; an error stops the
/// reading and is returned by [`RecordFile::read`].
pub type Visitor<'a> = dyn FnMut(Item<'_>) -> Result<(), FormatError> + 'a;

/// How a file's records are read.
enum Source {
    /// A built-in format's range decoder, its text parsed by the format's parser (Elephant
    /// Tracks, `mtrace`, `memory-replay` and `memory-replay-zip`: their model's records, see
    /// [`et_model`] and [`alloc_model`]).
    Builtin(Parser),
    /// A built-in format's file that keeps its archive byte for byte (see [`stored`]).
    Stored(Parser),
    /// The universal reader, with the DTD's record types.
    Universal(universal::Types),
}

/// A binary trace opened for reading its records.
pub struct RecordFile {
    format: String,
    dtd: String,
    types: Vec<RecordType>,
    source: Source,
    blocks: Vec<IndexEntry>,
}

impl RecordFile {
    /// Reads the header (and the index, where the file has one) of the binary trace `input`,
    /// named `name` in errors. An error says why a file's records cannot be read.
    pub fn open(input: &mut dyn ReadSeek, name: &str) -> Result<RecordFile, FormatError> {
        let fail = |message: String| FormatError {
            file: name.to_string(),
            position: String::new(),
            message,
        };
        let rewind = |input: &mut dyn ReadSeek| {
            input
                .seek(std::io::SeekFrom::Start(0))
                .map(|_| ())
                .map_err(|e| fail(format!("cannot seek: {e}")))
        };
        rewind(input)?;
        let reader = ContainerReader::new(&mut *input).map_err(|e| fail(e.to_string()))?;
        let header = reader.header().clone();
        let dtd = if header.dtd.is_empty() {
            shipped_dtd(reader.dtd_reference(), &header.format)
        } else {
            header.dtd.clone()
        };
        drop(reader);
        rewind(input)?;
        let format = header.format.clone();
        let builtin = Parser::of(&format).filter(|_| header.model_layout().is_some());
        let stored = header.property(PROPERTY_LAYOUT) == Some(stored::ORIGINAL_BYTES);
        let (source, types, blocks) = match builtin {
            Some(parser) if stored => (Source::Stored(parser), parser.types(), Vec::new()),
            Some(parser) => {
                // Blocks only mark where row groups may end; a file without a usable index
                // still reads, as one stretch.
                let blocks = load_index(&mut *input)
                    .map(|(entries, _)| entries)
                    .unwrap_or_default();
                rewind(input)?;
                (Source::Builtin(parser), parser.types(), blocks)
            }
            None => {
                if let Some(layout) = header.model_layout() {
                    return Err(fail(format!(
                        "the `{format}` records of layout `{layout}` are not known to this hatf"
                    )));
                }
                let schema = metatf::dtd::parse_schema(&header.dtd, "<embedded DTD>")
                    .map_err(|d| fail(format!("the embedded DTD does not parse: {d}")))?;
                let types = universal::Types::of(&schema);
                let list = types.types.clone();
                (Source::Universal(types), list, Vec::new())
            }
        };
        Ok(RecordFile {
            format,
            dtd,
            types,
            source,
            blocks,
        })
    }

    /// The format stored in the file's header (`mtrace`, `et3`, ..., or a DTD's own name).
    pub fn format(&self) -> &str {
        &self.format
    }

    /// True when the file is read through its DTD alone (the universal reader), not through a
    /// built-in format's decoder.
    pub fn read_through_dtd(&self) -> bool {
        matches!(self.source, Source::Universal(_))
    }

    /// The file's DTD: the one it carries, or, for a file that refers to a DTD shipped with
    /// hatf (the built-in formats do), that DTD's text from `dtds/`.
    pub fn dtd(&self) -> &str {
        &self.dtd
    }

    /// Every record type a record of this file can have; [`Record::record_type`] indexes it.
    pub fn types(&self) -> &[RecordType] {
        &self.types
    }

    /// The file's blocks, from its index, in order: a block's number is its position (empty
    /// when the file has no index, or is read through its DTD, whose blocks are met as they
    /// come).
    pub fn blocks(&self) -> &[IndexEntry] {
        &self.blocks
    }

    /// True when each of [`RecordFile::blocks`] decodes on its own, so that reading the
    /// records of one block (a range within it) costs that block alone: the block-indexed
    /// models of Elephant Tracks, `mtrace` and `memory-replay`. Readers on several threads,
    /// each with its own handle on the file, may then read different blocks at once.
    pub fn blocks_read_alone(&self) -> bool {
        let alone = match self.source {
            Source::Builtin(Parser::Et2 | Parser::Et3 | Parser::Mtrace) => true,
            // Not a `memory-replay-zip` file, whose reading first finds the container nested
            // in its archive.
            Source::Builtin(Parser::MemoryReplay) => {
                self.format == crate::formats::memory_replay::FORMAT
            }
            _ => false,
        };
        alone && !self.blocks.is_empty()
    }

    /// Visits records `range` (counted from 0, `end` exclusive, clipped to the trace) of
    /// `input`, the file [`RecordFile::open`] opened, with the [`Item::Block`] of each block
    /// before its records; returns how many records were visited. An error of the visitor
    /// that names no position is given the block and record it was visiting.
    pub fn read(
        &self,
        input: &mut dyn ReadSeek,
        name: &str,
        range: Range<u64>,
        visitor: &mut Visitor<'_>,
    ) -> Result<u64, FormatError> {
        // Only a block is followed; a record's number is taken from it when it fails.
        let mut block = None;
        self.read_items(input, name, range, &mut |item| {
            if let Item::Block { index, .. } = item {
                block = Some(index);
            }
            visitor(item).map_err(|e| name_position(e, block, &item))
        })
    }

    /// [`RecordFile::read`] without naming the visitor's errors.
    fn read_items(
        &self,
        input: &mut dyn ReadSeek,
        name: &str,
        range: Range<u64>,
        visitor: &mut Visitor<'_>,
    ) -> Result<u64, FormatError> {
        input
            .seek(std::io::SeekFrom::Start(0))
            .map_err(|e| FormatError {
                file: name.to_string(),
                position: String::new(),
                message: format!("cannot seek: {e}"),
            })?;
        match &self.source {
            Source::Universal(types) => universal::read(input, name, types, range, visitor),
            _ if range.start >= range.end => Ok(0),
            Source::Builtin(Parser::Et2 | Parser::Et3) => {
                et_model::read(input, name, range, visitor)
            }
            Source::Builtin(Parser::Mtrace) => {
                alloc_model::read_mtrace(input, name, range, visitor)
            }
            Source::Builtin(Parser::MemoryReplay)
                if self.format == crate::formats::memory_replay::FORMAT =>
            {
                alloc_model::read_memory_replay(input, name, range, visitor)
            }
            // A `memory-replay-zip` file nests a `memory-replay` container among the archive's
            // parts: its records are that container's.
            Source::Builtin(Parser::MemoryReplay)
                if self.format == crate::formats::memory_replay::zip::FORMAT =>
            {
                alloc_model::read_memory_replay_zip(input, name, range, visitor)
            }
            Source::Stored(parser) => {
                let format = self.builtin_format(name)?;
                stored::read(input, name, format, *parser, range, visitor)
            }
            Source::Builtin(parser) => {
                let format = self.builtin_format(name)?;
                let options = DecodeOptions {
                    input_name: name.to_string(),
                    ..DecodeOptions::default()
                };
                let mut sink = RecordSink::new(*parser, range.start, &self.blocks, visitor);
                let decoded =
                    format.decode_records(input, &mut sink, &options, range.clone(), &mut |_| {});
                match decoded {
                    None => Err(FormatError {
                        file: name.to_string(),
                        position: String::new(),
                        message: format!("`{}` files cannot be read by record", self.format),
                    }),
                    Some(Err(e)) => Err(sink.failure.take().unwrap_or(e)),
                    Some(Ok(_)) => sink.finish(range.start),
                }
            }
        }
    }

    fn builtin_format(&self, name: &str) -> Result<&'static dyn crate::TraceFormat, FormatError> {
        crate::by_name(&self.format).ok_or_else(|| FormatError {
            file: name.to_string(),
            position: String::new(),
            message: format!("no format `{}` in this hatf", self.format),
        })
    }
}

/// `e`, an error of the visitor of `item` in block `block`, with that position when it names
/// none.
fn name_position(mut e: FormatError, block: Option<u64>, item: &Item<'_>) -> FormatError {
    if e.position.is_empty() {
        let block = block.map(|b| format!("block {b}"));
        let record = match item {
            Item::Record(r) => Some(format!("record {}", r.index)),
            Item::Block { .. } => None,
        };
        e.position = [block, record]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
    }
    e
}

/// The text of the shipped DTD a file refers to (by identity, else by its format's name:
/// `memory-replay-zip` is described by `memory-replay.dtd`); empty when there is none.
fn shipped_dtd(reference: Option<metatf::container::DtdIdentity>, format: &str) -> String {
    let by_name = || {
        let base = format.strip_suffix("-zip").unwrap_or(format);
        crate::dtds::KNOWN
            .iter()
            .find(|(file, _)| file.strip_suffix(".dtd") == Some(base))
            .map(|(_, text)| *text)
    };
    reference
        .and_then(crate::dtds::by_identity)
        .or_else(by_name)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(position: &str) -> FormatError {
        FormatError {
            file: "t".into(),
            position: position.into(),
            message: "stopped".into(),
        }
    }

    fn opened(format: &str, text: &[u8]) -> RecordFile {
        let mut file = Vec::new();
        crate::by_name(format)
            .unwrap()
            .encode(&mut &text[..], &mut file, &Default::default())
            .unwrap();
        RecordFile::open(&mut std::io::Cursor::new(file), "t").unwrap()
    }

    #[test]
    fn only_block_indexed_models_say_their_blocks_read_alone() {
        let mtrace = opened(
            "mtrace",
            b"= Start\n@ ./app:[0x401136] + 0x5581a0 0x20\n@ ./app:[0x40114f] - 0x5581a0\n= End\n",
        );
        assert!(!mtrace.blocks().is_empty());
        assert!(mtrace.blocks_read_alone());
        // wee_alloc's records are cut from its range decoder's text, whose blocks are not
        // known to decode on their own.
        let wee = opened("wee-alloc", b"Alloc(1),\nFree(0),\n");
        assert!(!wee.blocks_read_alone());
    }

    #[test]
    fn a_visitor_error_is_named_by_the_block_and_record_it_was_visiting() {
        let block = Item::Block {
            index: 2,
            first_record: 70,
            record_count: 30,
        };
        let record = Item::Record(Record {
            index: 75,
            record_type: 0,
            values: &[],
        });
        assert_eq!(
            name_position(error(""), None, &record).position,
            "record 75"
        );
        assert_eq!(
            name_position(error(""), Some(2), &block).position,
            "block 2"
        );
        assert_eq!(
            name_position(error(""), Some(2), &record).position,
            "block 2 record 75"
        );
        // A position the error names already is kept.
        assert_eq!(
            name_position(error("byte 9"), Some(2), &record).position,
            "byte 9"
        );
    }
}

//! Writing and reading the blocks of an allocation-trace container: one section per stream,
//! each compressed on its own.

use std::io::{Read, Write};

use metatf::container::{
    Block, Codec, ContainerHeader, ContainerReader, ContainerWriter, SectionData,
};

use crate::format::{Compression, EncodeOptions, FormatError};

/// Default zstd level for the `auto` encoding: the streams are small, so a high level is cheap.
pub const DEFAULT_ZSTD_LEVEL: i32 = 19;
/// Default zstd level of the encoders that ask for it ([`BlockWriter::fast_level`]), those of
/// the allocation model's layout `alloc-model-4`: since the model packs each record's symbols
/// into one shape, level 3 already finds what is left to find in the shapes, while level 19
/// costs several times the parsing of the records (`--level 19` still gives the smallest
/// files).
pub const FAST_ZSTD_LEVEL: i32 = 3;
/// Blocks whose streams total at most this many bytes, written at the default level (small
/// traces, where the size target is hardest), store their sections with the context-mixing
/// codec 3 instead of zstd: it learns from the first byte on, where zstd pays for its frame and
/// tables (on a python mtrace log of a few thousand records, about a fifth smaller than
/// zstd). It codes about 2 MB/s each way, so the bound keeps its cost per block under
/// about 30 ms; larger blocks keep zstd, which decodes hundreds of times faster.
pub const CONTEXT_MIX_BLOCK: usize = 64 << 10;
/// [`CONTEXT_MIX_BLOCK`] for the first block of the encoders at [`FAST_ZSTD_LEVEL`], whose
/// sections then use the light context mixer (codec 4): traces this small (a few thousand
/// records) still need a context mixer to stay under half the size of the best general-purpose
/// compressor, which zstd at any level does not reach on them, while a block of twice that is
/// well under it at level 3, where even the light mixer would cost more time than it saves.
/// The light mixer, not codec 3, because it codes such blocks almost as small in a fraction of
/// codec 3's time.
pub const FAST_CONTEXT_MIX_BLOCK: usize = 32 << 10;
/// Streams shorter than this are stored uncompressed.
pub const SMALL_STREAM: usize = 24;

/// The `layout` property of the files of the allocation model: each block starts a fresh
/// model (prediction state, site strings, thread ids), so any block decodes without the blocks
/// before it and memory is bounded by the block size; allocations at addresses that are still
/// live are flagged, so decoders keep no address map; each record's small symbols are one
/// shape id ([`crate::shared::allocation_model::packing::record_shapes`]).
pub const LAYOUT: &str = "alloc-model-4";

/// Checks that `header`'s file has the allocation model's layout ([`LAYOUT`]); an error naming
/// `file` for any other.
pub fn check_layout(header: &ContainerHeader, file: &str) -> Result<(), FormatError> {
    super::layout::require(header, file, LAYOUT, "")
}

/// Lines per block of the text formats the allocation model encodes: bounds memory whatever
/// the trace length.
pub const MODEL_BLOCK_RECORDS: u64 = 1 << 20;
/// Bytes of verbatim lines that also end such a block early.
pub const BLOCK_VERBATIM_BYTES: usize = 64 << 20;

/// Lines per block: [`MODEL_BLOCK_RECORDS`], or fewer in tests so that blocks end inside
/// chunks.
pub fn model_block_records() -> u64 {
    #[cfg(test)]
    if let Some(b) = crate::shared::allocation::encode_checks::block_records_for_tests() {
        return b;
    }
    MODEL_BLOCK_RECORDS
}

/// The header properties every allocation-model file carries.
pub fn model_properties() -> Vec<(String, String)> {
    auto_header("", "", LAYOUT, []).properties
}

/// The header of a file of `format` (records described by `dtd`) that a format's own encoding
/// (`auto`) wrote in layout `layout`: the properties `encoding` = `auto` and the layout, in that
/// order, then `more`.
pub fn auto_header(
    dtd: &str,
    format: &str,
    layout: &str,
    more: impl IntoIterator<Item = (String, String)>,
) -> ContainerHeader {
    let own = [
        ("encoding".to_string(), "auto".to_string()),
        (
            metatf::container::PROPERTY_LAYOUT.to_string(),
            layout.to_string(),
        ),
    ];
    ContainerHeader {
        dtd: dtd.to_string(),
        format: format.to_string(),
        properties: own.into_iter().chain(more).collect(),
    }
}

/// Turns a container error into a format error naming the file.
pub fn container_error(file: &str, e: metatf::Error) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: String::new(),
        message: e.to_string(),
    }
}

/// The error of `block` of `file` as a whole (its sections, its rebuilt bytes).
pub fn block_error(file: &str, block: &Block, message: String) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: format!("block {}", block.index),
        message,
    }
}

/// The error of record `record` (counted in the trace, not the block) of `block` of `file`:
/// every decoder that decodes a block record by record names a failure this way.
pub fn record_error(file: &str, block: &Block, record: u64, message: String) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: format!("block {} record {record}", block.index),
        message,
    }
}

/// Checks that a decoder found `done` records in `block`, as many as its header says; the
/// error names the record after the last one found.
pub fn check_record_count(file: &str, block: &Block, done: u64) -> Result<(), FormatError> {
    if done == block.record_count {
        return Ok(());
    }
    Err(record_error(
        file,
        block,
        block.first_record + done,
        format!(
            "the block holds {done} records, its header says {}",
            block.record_count
        ),
    ))
}

/// Writes blocks of streams with the codec and level chosen in the options.
pub struct BlockWriter<W: Write> {
    inner: ContainerWriter<W>,
    codec: Codec,
    level: i32,
    /// True when the level came from the options (`--level`), which then hold for every block.
    level_chosen: bool,
    /// True when default-level blocks use [`FAST_ZSTD_LEVEL`] (and the context mixer only
    /// for a small first block).
    fast: bool,
    /// True until the first block is written: a small first block is a small trace (blocks
    /// end at a fixed record count), where a small last block of a long trace is not.
    first_block: bool,
    file: String,
}

impl<W: Write> BlockWriter<W> {
    /// Writes the header.
    pub fn new(
        out: W,
        header: &ContainerHeader,
        options: &EncodeOptions,
    ) -> Result<Self, FormatError> {
        let (codec, level) = match options.compression {
            Compression::None => (Codec::None, 0),
            Compression::Gzip => (Codec::Gzip, options.level.unwrap_or(9)),
            Compression::Zstd => (Codec::Zstd, options.level.unwrap_or(DEFAULT_ZSTD_LEVEL)),
        };
        let mut inner = ContainerWriter::new(out, header)
            .map_err(|e| container_error(&options.input_name, e))?;
        inner.set_threads(options.threads);
        Ok(BlockWriter {
            inner,
            codec,
            level,
            level_chosen: options.level.is_some(),
            fast: false,
            first_block: true,
            file: options.input_name.clone(),
        })
    }

    /// Asks for the default policy of the text encoders: with no level chosen in the options,
    /// zstd blocks are compressed at [`FAST_ZSTD_LEVEL`].
    pub fn fast_level(&mut self) {
        self.fast = true;
    }

    /// The level of the blocks.
    fn level_now(&self) -> i32 {
        if self.fast && !self.level_chosen && self.codec == Codec::Zstd {
            FAST_ZSTD_LEVEL
        } else {
            self.level
        }
    }

    /// The codec of a section of `len` bytes in a block of `block_len` bytes of streams
    /// compressed at `level`.
    fn codec_for(&self, len: usize, block_len: usize, level: i32) -> Codec {
        if len < SMALL_STREAM {
            // A compressed frame costs more than it saves on a few bytes.
            Codec::None
        } else if self.codec != Codec::Zstd || self.level_chosen {
            self.codec
        } else if self.fast && self.first_block && block_len <= FAST_CONTEXT_MIX_BLOCK {
            Codec::LightContextMix
        } else if level == DEFAULT_ZSTD_LEVEL && block_len <= CONTEXT_MIX_BLOCK {
            Codec::ContextMix
        } else {
            self.codec
        }
    }

    /// The sections of the non-empty `streams` of a block of `block_len` bytes of streams, at
    /// the level of the block about to be written.
    fn sections<'s>(&self, streams: &[(u8, &'s [u8])], block_len: usize) -> Vec<SectionData<'s>> {
        let level = self.level_now();
        streams
            .iter()
            .filter(|(_, b)| !b.is_empty())
            .map(|&(number, bytes)| SectionData {
                number,
                element_width: 1,
                codec: self.codec_for(bytes.len(), block_len, level),
                level,
                bytes,
            })
            .collect()
    }

    /// Writes one block of `records` records; empty streams are left out.
    pub fn block(&mut self, records: u64, streams: &[(u8, &[u8])]) -> Result<(), FormatError> {
        let block_len: usize = streams.iter().map(|(_, b)| b.len()).sum();
        let sections = self.sections(streams, block_len);
        self.inner
            .write_block(records, &sections)
            .map_err(|e| container_error(&self.file, e))?;
        self.first_block = false;
        Ok(())
    }

    /// Starts compressing `streams`, some of the next block's (empty ones are left out), on
    /// the container writer's worker threads, before [`BlockWriter::block`] writes the block
    /// with the same streams among its others (see `ContainerWriter::compress_ahead`). Does
    /// nothing when the codec of a stream could still depend on the block's other streams
    /// (the context mixers are chosen for small blocks only, and these streams alone do not
    /// show the block is too large for them), nor with one thread.
    pub fn block_ahead(&mut self, streams: &[(u8, &[u8])]) -> Result<(), FormatError> {
        let known_len: usize = streams.iter().map(|(_, b)| b.len()).sum();
        if known_len <= CONTEXT_MIX_BLOCK.max(FAST_CONTEXT_MIX_BLOCK) {
            return Ok(());
        }
        // The block holds more than `known_len` bytes, so the codec of each section is that
        // of any block of its size.
        let sections = self.sections(streams, known_len);
        self.inner
            .compress_ahead(&sections)
            .map_err(|e| container_error(&self.file, e))
    }

    /// The input's name, for errors.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Asks for the compact container form when the file has one (see
    /// [`ContainerWriter::prefer_compact`]).
    pub fn prefer_compact(&mut self) {
        self.inner.prefer_compact();
    }

    /// Names the thread ids of the next block's records, for formats whose records have
    /// threads (the container's index lists them).
    pub fn set_block_threads(&mut self, threads: &[u64]) {
        self.inner.set_block_threads(threads);
    }

    /// Writes the index and trailer.
    pub fn finish(self) -> Result<(), FormatError> {
        let mut out = self
            .inner
            .finish()
            .map_err(|e| container_error(&self.file, e))?;
        out.flush().map_err(|e| FormatError {
            file: self.file.clone(),
            position: String::new(),
            message: format!("cannot write the output: {e}"),
        })
    }
}

/// Opens a container and checks that it holds `format`.
pub fn open<R: Read>(
    input: R,
    format: &str,
    file: &str,
) -> Result<ContainerReader<R>, FormatError> {
    let reader = ContainerReader::new(input).map_err(|e| container_error(file, e))?;
    if reader.header().format != format {
        return Err(FormatError {
            file: file.to_string(),
            position: String::new(),
            message: format!(
                "this file holds `{}`, not `{format}`",
                reader.header().format
            ),
        });
    }
    Ok(reader)
}

/// The bytes of section `number` in `block`, empty when the block has none.
pub fn section(block: &Block, number: u8) -> &[u8] {
    block
        .section(number)
        .map_or(&[][..], |s| s.bytes.as_slice())
}

/// An I/O error while writing decoded text.
pub fn write_error(file: &str, e: std::io::Error) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: String::new(),
        message: format!("cannot write the output: {e}"),
    }
}

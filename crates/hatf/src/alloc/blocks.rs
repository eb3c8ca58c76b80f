//! Writing and reading the blocks of an allocation-trace container: one section per stream,
//! each compressed on its own.

use std::io::{Read, Write};

use metatf::container::{
    Block, Codec, ContainerHeader, ContainerReader, ContainerWriter, SectionData,
};

use crate::alloc::model::Layout;
use crate::format::{Compression, EncodeOptions, FormatError};

/// Default zstd level for the `auto` encoding: the streams are small, so a high level is cheap.
pub const DEFAULT_ZSTD_LEVEL: i32 = 19;
/// Default zstd level, for the encoders that ask for it
/// ([`BlockWriter::fast_level_for_long_traces`]), once a trace has reached a full block of
/// records: level 19 costs about a second of CPU per million records (several times the cost
/// of parsing them), level 3 about a hundredth, for files about half as large again (still
/// well under half of `xz -9`'s on the corpus traces this long). Traces shorter than a block,
/// where time hardly matters and the size target is tightest, keep [`DEFAULT_ZSTD_LEVEL`].
pub const LONG_TRACE_ZSTD_LEVEL: i32 = 3;
/// Blocks whose streams total at most this many bytes, written at the default level (small
/// traces, where the size target is hardest), store their sections with the context-mixing
/// codec 3 instead of zstd: it learns from the first byte on, where zstd pays for its frame and
/// tables (measured on a fresh 7,146-record python mtrace log, 42 KB of streams: 10,675 bytes
/// against 13,136). It codes about 2 MB/s each way, so the bound keeps its cost per block under
/// about 30 ms; larger blocks keep zstd, which decodes hundreds of times faster.
pub const CONTEXT_MIX_BLOCK: usize = 64 << 10;
/// Streams shorter than this are stored uncompressed.
pub const SMALL_STREAM: usize = 24;

/// The `layout` property of files whose blocks each start a fresh model (prediction state,
/// site strings, thread ids): any block decodes without the blocks before it, and memory is
/// bounded by the block size; allocations at addresses that are still live are flagged, so
/// decoders keep no address map. What the encoders write.
pub const LAYOUT: &str = "alloc-model-3";
/// The `layout` property of files like [`LAYOUT`] but without the flags; still decoded.
pub const LAYOUT_UNFLAGGED: &str = "alloc-model-2";
/// The `layout` property of older files whose model state carried from block to block; still
/// decoded, from the first block on.
pub const LAYOUT_CARRIED: &str = "alloc-model-1";

/// How the model runs over the blocks of `header`'s file ([`LAYOUT`], [`LAYOUT_UNFLAGGED`] or
/// [`LAYOUT_CARRIED`]); an error naming `file` for any other layout.
pub fn model_layout(header: &ContainerHeader, file: &str) -> Result<Layout, FormatError> {
    match header.property(metatf::container::PROPERTY_LAYOUT) {
        Some(LAYOUT) => Ok(Layout::FreshFlagged),
        Some(LAYOUT_UNFLAGGED) => Ok(Layout::Fresh),
        Some(LAYOUT_CARRIED) => Ok(Layout::Carried),
        other => Err(FormatError {
            file: file.to_string(),
            position: String::new(),
            message: format!(
                "layout {other:?} is not one this hatf decodes (`{LAYOUT}`, \
                 `{LAYOUT_UNFLAGGED}` or `{LAYOUT_CARRIED}`)"
            ),
        }),
    }
}

/// True when the blocks of `header`'s file each start a fresh model; false for
/// [`LAYOUT_CARRIED`]; an error naming `file` for a layout that is not the model's.
pub fn independent_blocks(header: &ContainerHeader, file: &str) -> Result<bool, FormatError> {
    model_layout(header, file).map(Layout::independent)
}

/// The header properties every allocation-model file carries.
pub fn model_properties() -> Vec<(String, String)> {
    vec![
        ("encoding".to_string(), "auto".to_string()),
        (
            metatf::container::PROPERTY_LAYOUT.to_string(),
            LAYOUT.to_string(),
        ),
    ]
}

/// Turns a container error into a format error naming the file.
pub fn container_error(file: &str, e: metatf::Error) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: String::new(),
        message: e.to_string(),
    }
}

/// Writes blocks of streams with the codec and level chosen in the options.
pub struct BlockWriter<W: Write> {
    inner: ContainerWriter<W>,
    codec: Codec,
    level: i32,
    /// True when the level came from the options (`--level`), which then hold for every block.
    level_chosen: bool,
    /// Records from which on default-level blocks use [`LONG_TRACE_ZSTD_LEVEL`], if asked.
    long_trace: Option<u64>,
    /// Records in the blocks written so far.
    records: u64,
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
            long_trace: None,
            records: 0,
            file: options.input_name.clone(),
        })
    }

    /// Asks for the default policy of the text encoders: with no level chosen in the options,
    /// zstd blocks are compressed at [`LONG_TRACE_ZSTD_LEVEL`] once the trace has `records`
    /// records (counting the block's own), so a trace's level depends on the trace alone.
    pub fn fast_level_for_long_traces(&mut self, records: u64) {
        self.long_trace = Some(records);
    }

    /// The level for a block ending after `self.records` records.
    fn level_now(&self) -> i32 {
        match self.long_trace {
            Some(from)
                if !self.level_chosen && self.codec == Codec::Zstd && self.records >= from =>
            {
                LONG_TRACE_ZSTD_LEVEL
            }
            _ => self.level,
        }
    }

    /// The codec of a section of `len` bytes in a block of `block_len` bytes of streams
    /// compressed at `level`.
    fn codec_for(&self, len: usize, block_len: usize, level: i32) -> Codec {
        if len < SMALL_STREAM {
            // A compressed frame costs more than it saves on a few bytes.
            Codec::None
        } else if self.codec == Codec::Zstd
            && !self.level_chosen
            && level == DEFAULT_ZSTD_LEVEL
            && block_len <= CONTEXT_MIX_BLOCK
        {
            Codec::ContextMix
        } else {
            self.codec
        }
    }

    /// Writes one block of `records` records; empty streams are left out.
    pub fn block(&mut self, records: u64, streams: &[(u8, &[u8])]) -> Result<(), FormatError> {
        self.records = self.records.saturating_add(records);
        let level = self.level_now();
        let block_len: usize = streams.iter().map(|(_, b)| b.len()).sum();
        let sections: Vec<SectionData<'_>> = streams
            .iter()
            .filter(|(_, b)| !b.is_empty())
            .map(|&(number, bytes)| SectionData {
                number,
                element_width: 1,
                codec: self.codec_for(bytes.len(), block_len, level),
                level,
                bytes,
            })
            .collect();
        self.inner
            .write_block(records, &sections)
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

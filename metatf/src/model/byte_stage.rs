//! The byte-stream stage: a modelled block whose symbols (record indices, hit indices, ranks
//! and residuals, byte strings) are stored as bytes in four streams compressed with zstd,
//! instead of being range-coded with adaptive models. The predictors and their choice are the
//! same as the range-coded stage's; only the last step differs. Why: the range-coded stage
//! spends most of a decode in its adaptive models (a binary decision at a time, several
//! counters per value), while most values of a trace are hits whose symbols repeat in long
//! runs that an LZ coder takes whole; storing the symbols as bytes decodes several times
//! faster, at a size close to the range-coded stage's on traces whose values the predictors
//! mostly hit. Layout: docs/FORMAT.md §7, "The byte-stream stage".

use super::coders::Models;
use super::engine::Engine;
use super::flat::FlatBlock;
use super::streams::string_key;
use super::walk::Side;
use crate::universal::plan::Catalog;
use crate::varint::{put_u64, Cursor};

/// First byte of a block coded by this stage (a range-coded block starts with its tag
/// context's order, at most 8, or with `FF` when its tables are packed).
pub(crate) const MARK: u8 = 0xFE;

/// Which stage a writer codes its modelled blocks with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stage {
    /// Each block coded by both stages, the smaller kept: the range coder's adaptive models
    /// win on byte strings and irregular values, the byte streams where the symbols repeat
    /// in long runs (a program's loops), which zstd's matches take whole.
    #[default]
    Smallest,
    /// Adaptive binary range coding of every symbol.
    Range,
    /// Symbols as bytes in four zstd-compressed streams: decodes several times faster.
    Bytes,
}

/// Header property that asks a writer for a stage ([`STAGE_RANGE`] or [`STAGE_BYTES`];
/// without it, [`Stage::Smallest`]). A reader needs no property: each block says how it is
/// coded.
pub const PROPERTY_STAGE: &str = "model-stage";
/// Value of [`PROPERTY_STAGE`] for [`Stage::Range`].
pub const STAGE_RANGE: &str = "range";
/// Value of [`PROPERTY_STAGE`] for [`Stage::Bytes`].
pub const STAGE_BYTES: &str = "bytes";

impl Stage {
    /// The stage a writer's header property [`PROPERTY_STAGE`] asks for.
    pub(crate) fn of_property(value: Option<&str>) -> Stage {
        match value {
            Some(STAGE_BYTES) => Stage::Bytes,
            Some(STAGE_RANGE) => Stage::Range,
            _ => Stage::Smallest,
        }
    }
}

/// zstd level of the streams: what `zstd -19` uses, as the streams are small beside the
/// text (a few bytes a record) and the writer's choice of predictors costs far more.
const LEVEL: i32 = 19;
/// Most bits of the zstd hash and chain tables (the window takes 3 more): level 19's own (up
/// to 2^24 chain entries, 64 MiB) would take the writer past its memory bound.
const TABLE_LOG: u32 = 20;
/// Stream bytes a block may decompress to beyond [`RAW_PER_STORED_BYTE`] per stored byte,
/// all four together: a reader allocates no more than the block justifies.
const RAW_FLOOR: u64 = 16 << 20;
/// Stream bytes per stored byte of the block a reader accepts beyond [`RAW_FLOOR`].
const RAW_PER_STORED_BYTE: u64 = 1024;
/// Codec byte of a stream stored as it is.
const STORED: u8 = 0;
/// Codec byte of a stream stored as one zstd frame.
const ZSTD: u8 = 1;

/// The four streams of a block, in their order in the file.
#[derive(Default)]
pub(crate) struct Streams4 {
    /// A varint per record: its index in its scope's record list.
    tags: Vec<u8>,
    /// A byte per scalar value: its hit index.
    hits: Vec<u8>,
    /// Varints: each rank or residual that follows a hit index, and the metadata records'
    /// counts and fields.
    numbers: Vec<u8>,
    /// The byte strings, back to back.
    strings: Vec<u8>,
}

impl Streams4 {
    fn all(&self) -> [&Vec<u8>; 4] {
        [&self.tags, &self.hits, &self.numbers, &self.strings]
    }

    /// Appends the four streams to `out`, each as its codec byte, raw length, stored length
    /// and stored bytes; gives the raw lengths' sum, which [`fits`] must accept for the whole
    /// block.
    pub(crate) fn write(&self, out: &mut Vec<u8>) -> u64 {
        let mut raw = 0u64;
        let mut zstd = compressor();
        let mut report = Vec::new();
        for s in self.all() {
            let packed = zstd
                .as_mut()
                .and_then(|z| z.compress(s).ok())
                .filter(|z| z.len() < s.len());
            let (codec, stored) = match &packed {
                Some(z) => (ZSTD, &z[..]),
                None => (STORED, &s[..]),
            };
            report.push(format!("{} of {}", stored.len(), s.len()));
            out.push(codec);
            put_u64(out, s.len() as u64);
            put_u64(out, stored.len() as u64);
            out.extend_from_slice(stored);
            raw += s.len() as u64;
        }
        if super::report::Costs::wanted(0).is_some() {
            // Beside the range coder's report of the same block (`super::report`).
            eprintln!(
                "byte-stream stage, bytes stored of the stream's: tags {}, hits {}, numbers {}, strings {}",
                report[0], report[1], report[2], report[3]
            );
        }
        raw
    }
}

/// The streams' compressor ([`LEVEL`], [`TABLE_LOG`]); `None` if zstd refuses it (the
/// streams are then stored as they are).
fn compressor() -> Option<zstd::bulk::Compressor<'static>> {
    use zstd::zstd_safe::CParameter;
    let mut c = zstd::bulk::Compressor::new(LEVEL).ok()?;
    for p in [
        CParameter::WindowLog(TABLE_LOG + 3),
        CParameter::HashLog(TABLE_LOG),
        CParameter::ChainLog(TABLE_LOG),
    ] {
        c.set_parameter(p).ok()?;
    }
    Some(c)
}

/// Most stream bytes a block of `stored` bytes may decompress to.
fn raw_limit(stored: u64) -> u64 {
    RAW_FLOOR.saturating_add(stored.saturating_mul(RAW_PER_STORED_BYTE))
}

/// Whether streams of `raw` bytes in all may be stored in a block of `block_len` bytes: a
/// reader refuses more ([`RAW_FLOOR`], [`RAW_PER_STORED_BYTE`]).
pub(crate) fn fits(raw: u64, block_len: usize) -> bool {
    raw <= raw_limit(block_len as u64)
}

/// Reads the four streams at the start of `bytes`, which is the whole rest of a block of
/// `block_len` bytes.
pub(super) fn read_streams(bytes: &[u8], block_len: usize) -> Result<[Vec<u8>; 4], String> {
    let mut c = Cursor::new(bytes, "byte-stream stage");
    let names = ["tags", "hits", "numbers", "strings"];
    let mut left = raw_limit(block_len as u64);
    let mut out: [Vec<u8>; 4] = Default::default();
    for (i, name) in names.iter().enumerate() {
        let codec = c.byte()?;
        let raw = c.u64()?;
        let stored = c.u64()?;
        if raw > left {
            return Err(format!(
                "stream `{name}` claims {raw} bytes, more than the block can hold"
            ));
        }
        left -= raw;
        let data =
            c.take(usize::try_from(stored).map_err(|_| format!("stream `{name}` too long"))?)?;
        let raw = raw as usize;
        out[i] = match codec {
            STORED if data.len() == raw => data.to_vec(),
            STORED => {
                return Err(format!(
                    "stored stream `{name}` of {stored} bytes claims {raw}"
                ))
            }
            ZSTD => {
                let d = zstd::bulk::decompress(data, raw)
                    .map_err(|e| format!("stream `{name}`: {e}"))?;
                if d.len() != raw {
                    return Err(format!(
                        "stream `{name}` holds {} bytes, not the {raw} it claims",
                        d.len()
                    ));
                }
                d
            }
            other => return Err(format!("stream `{name}` has unknown codec {other}")),
        };
    }
    if !c.is_empty() {
        return Err(format!("{} bytes after the last stream", c.remaining()));
    }
    Ok(out)
}

/// The writer's side: every item of the block becomes bytes of its stream.
pub(crate) struct ByteEncode {
    pub(crate) engine: Engine,
    pub(crate) models: Models,
    pub(crate) out: Streams4,
}

impl ByteEncode {
    pub(crate) fn tag(&mut self, catalog: &Catalog, scope: usize, t: u64) -> Result<(), String> {
        let symbol = self.models.tag_symbol(catalog, scope, t)?;
        put_u64(&mut self.out.tags, u64::from(symbol));
        Ok(())
    }

    pub(crate) fn scalar(&mut self, s: usize, v: u64) {
        let (hit, payload) = self.models.plain_symbol(&self.engine, s, v);
        // Hit indices are below 8: a list holds at most five predictors (FORMAT.md §7).
        self.out.hits.push(hit as u8);
        if let Some(p) = payload {
            put_u64(&mut self.out.numbers, p);
        }
        self.engine.observe(s, v);
    }

    pub(crate) fn bytes(&mut self, b: &[u8], key: Option<usize>) {
        self.out.strings.extend_from_slice(b);
        if let Some(k) = key {
            self.engine.observe(k, string_key(b));
        }
    }

    pub(crate) fn meta(&mut self, v: u64) {
        put_u64(&mut self.out.numbers, v);
    }
}

/// The reader's side: the block's items from its four streams.
pub(crate) struct ByteDecode {
    output: FlatBlock,
    engine: Engine,
    models: Models,
    streams: [Vec<u8>; 4],
    /// Read positions in the four streams.
    at: [usize; 4],
    budget: u64,
    /// First word of the record being decoded out of walking order.
    base: usize,
}

const TAGS: usize = 0;
const HITS: usize = 1;
const NUMBERS: usize = 2;
const STRINGS: usize = 3;

impl ByteDecode {
    /// A decoder of the streams in `bytes` (the block after its tables and the 0 byte), the
    /// block being `block_len` bytes long and holding `records` records.
    pub(crate) fn new(
        engine: Engine,
        models: Models,
        bytes: &[u8],
        block_len: usize,
        records: u64,
    ) -> Result<ByteDecode, String> {
        let streams = read_streams(bytes, block_len)?;
        let raw: u64 = streams.iter().map(|s| s.len() as u64).sum();
        Ok(ByteDecode {
            output: FlatBlock::default(),
            engine,
            models,
            streams,
            at: [0; 4],
            // Each field takes at least one byte of some stream, except hits' values, whose
            // records each take a tag byte: fields and string bytes cannot outnumber these.
            budget: raw.saturating_mul(64).saturating_add(records),
            base: 0,
        })
    }

    /// The decoded block and the engine (whose lists go on to the next block).
    pub(crate) fn finish(self) -> (FlatBlock, Engine) {
        (self.output, self.engine)
    }

    fn cursor(&self, i: usize) -> Cursor<'_> {
        let name = ["tags", "hits", "numbers", "strings"][i];
        Cursor::starting_at(&self.streams[i], self.at[i], name)
    }

    fn varint(&mut self, i: usize) -> Result<u64, String> {
        let mut c = self.cursor(i);
        let v = c.u64()?;
        self.at[i] = c.position();
        Ok(v)
    }

    fn value(&mut self, s: usize) -> Result<u64, String> {
        let hit = *self.streams[HITS]
            .get(self.at[HITS])
            .ok_or("stream `hits` ends early")?;
        self.at[HITS] += 1;
        let (streams, at) = (&self.streams, &mut self.at);
        let v = self
            .models
            .plain_value(&self.engine, s, usize::from(hit), || {
                let mut c = Cursor::starting_at(&streams[NUMBERS], at[NUMBERS], "numbers");
                let p = c.u64()?;
                at[NUMBERS] = c.position();
                Ok(p)
            })?;
        self.engine.observe(s, v);
        Ok(v)
    }
}

impl Side for ByteDecode {
    fn tag(&mut self, catalog: &Catalog, scope: usize) -> Result<u64, String> {
        let symbol = self.varint(TAGS)?;
        let symbol = u32::try_from(symbol).map_err(|_| format!("record index {symbol}"))?;
        let t = self.models.tag_of(catalog, scope, symbol)?;
        self.output.words.push(t);
        Ok(t)
    }

    fn scalar(&mut self, s: usize) -> Result<u64, String> {
        let v = self.value(s)?;
        self.output.words.push(v);
        Ok(v)
    }

    fn open(&mut self, n: usize) -> Result<(), String> {
        self.base = self.output.words.len();
        self.output.words.resize(self.base + n, 0);
        Ok(())
    }

    fn scalar_at(&mut self, s: usize, slot: usize) -> Result<u64, String> {
        let v = self.value(s)?;
        let w = self
            .output
            .words
            .get_mut(self.base + slot)
            .ok_or("field outside its record")?;
        *w = v;
        Ok(v)
    }

    fn close(&mut self, _: usize) {}

    fn bytes(&mut self, _field: u64, len: u64, key: Option<usize>) -> Result<(), String> {
        let len = usize::try_from(len).map_err(|_| "string too long".to_string())?;
        let mut c = Cursor::starting_at(&self.streams[STRINGS], self.at[STRINGS], "strings");
        let b = c.take(len)?;
        self.output.bytes.extend_from_slice(b);
        if let Some(k) = key {
            self.engine.observe(k, string_key(b));
        }
        self.at[STRINGS] += len;
        Ok(())
    }

    fn meta_count(&mut self) -> Result<u64, String> {
        let n = self.varint(NUMBERS)?;
        self.output.words.push(n);
        Ok(n)
    }

    fn meta_value(&mut self, _i: u64) -> Result<u64, String> {
        let v = self.varint(NUMBERS)?;
        self.output.words.push(v);
        Ok(v)
    }

    fn end_record(&mut self) {
        self.engine.end_record();
        self.output.records += 1;
    }

    fn budget(&mut self) -> &mut u64 {
        &mut self.budget
    }
}

/// Whether every stream was read to its end: bytes left over mean a damaged block.
impl ByteDecode {
    pub(crate) fn check_end(&self) -> Result<(), String> {
        for (i, name) in ["tags", "hits", "numbers", "strings"].iter().enumerate() {
            let left = self.streams[i].len() - self.at[i].min(self.streams[i].len());
            if left > 0 {
                return Err(format!("stream `{name}` has {left} bytes no record reads"));
            }
        }
        Ok(())
    }
}

//! Container → text for glibc `mtrace` logs.

use std::io::{BufWriter, Read, Write};
use std::ops::Range;

use metatf::container::Block;

use super::kinds::{self, MtraceKinds};
use super::line::{self, Op, OpLine};
use super::{FORMAT, STRINGS, VERBATIM};
use crate::alloc::blocks::{self, container_error, write_error};
use crate::alloc::model::{stream, Cursors, State};
use crate::alloc::varint::Cursor;
use crate::format::{DecodeOptions, FormatError};
use crate::seek::{self, Note};

/// What decoding carries from record to record: the model and the call-site strings by site id
/// (`None` is "no caller"). Reset at each block of files whose blocks are independent.
struct Decoder<'f> {
    file: &'f str,
    independent: bool,
    state: State,
    callers: Vec<Option<Vec<u8>>>,
    text: Vec<u8>,
}

impl Decoder<'_> {
    /// Decodes every record of `block`, writing the text of those numbered `keep` (counted from
    /// the block's first record) to `out`.
    fn block(
        &mut self,
        block: &Block,
        keep: Range<u64>,
        out: &mut dyn Write,
    ) -> Result<(), FormatError> {
        if self.independent {
            self.state = State::for_block();
            self.callers.clear();
        }
        let file = self.file;
        let at = |rec: u64, msg: String| FormatError {
            file: file.to_string(),
            position: format!("block {} record {}", block.index, rec),
            message: msg,
        };
        let model: [&[u8]; stream::COUNT] =
            std::array::from_fn(|i| blocks::section(block, i as u8));
        let mut c = Cursors::new(model);
        let mut strings = Cursor::new(blocks::section(block, STRINGS), "strings");
        let mut verbatim = Cursor::new(blocks::section(block, VERBATIM), "verbatim");
        let mut k = 0u64;
        let text = &mut self.text;
        while let Some(kind) = c.next_kind() {
            let rec = block.first_record + k;
            let kind = kind.map_err(|m| at(rec, m))?;
            let r = self
                .state
                .decode(&MtraceKinds, kind, &mut c)
                .map_err(|m| at(rec, m))?;
            let mark = text.len();
            let op = match kind {
                kinds::START => {
                    text.extend_from_slice(b"= Start\n");
                    None
                }
                kinds::END => {
                    text.extend_from_slice(b"= End\n");
                    None
                }
                kinds::VERBATIM | kinds::VERBATIM_UNTERMINATED => {
                    let n = verbatim.u64().map_err(|m| at(rec, m))?;
                    let n =
                        usize::try_from(n).map_err(|_| at(rec, "verbatim line too long".into()))?;
                    text.extend_from_slice(verbatim.take(n).map_err(|m| at(rec, m))?);
                    if kind == kinds::VERBATIM {
                        text.push(b'\n');
                    }
                    None
                }
                kinds::MALLOC => Some(Op::Malloc),
                kinds::FREE => Some(Op::Free),
                kinds::REALLOC_OLD => Some(Op::ReallocOld),
                kinds::REALLOC_NEW => Some(Op::ReallocNew),
                k => return Err(at(rec, format!("unknown record kind {k}"))),
            };
            if let Some(op) = op {
                let site = r.site as usize;
                if site == self.callers.len() {
                    let n = strings.u64().map_err(|m| at(rec, m))?;
                    let s = match n {
                        0 => None,
                        n => {
                            let n = usize::try_from(n - 1)
                                .map_err(|_| at(rec, "caller string too long".into()))?;
                            Some(strings.take(n).map_err(|m| at(rec, m))?.to_vec())
                        }
                    };
                    self.callers.push(s);
                }
                let caller = self
                    .callers
                    .get(site)
                    .ok_or_else(|| at(rec, format!("unknown call site {site}")))?;
                line::render(
                    &OpLine {
                        caller: caller.as_deref(),
                        op,
                        addr: r.addr,
                        size: r.size,
                    },
                    text,
                );
            }
            if !keep.contains(&k) {
                // Decoded for the model's sake only.
                text.truncate(mark);
            }
            k += 1;
            if text.len() >= 1 << 20 {
                out.write_all(text).map_err(|e| write_error(file, e))?;
                text.clear();
            }
        }
        if k != block.record_count {
            return Err(at(
                block.first_record + k,
                format!(
                    "the block holds {k} records, its header says {}",
                    block.record_count
                ),
            ));
        }
        out.write_all(text).map_err(|e| write_error(file, e))?;
        text.clear();
        Ok(())
    }
}

fn decoder<'f>(
    header: &metatf::container::ContainerHeader,
    file: &'f str,
) -> Result<Decoder<'f>, FormatError> {
    Ok(Decoder {
        file,
        independent: blocks::independent_blocks(header, file)?,
        state: State::new(),
        callers: Vec::new(),
        text: Vec::with_capacity(1 << 20),
    })
}

/// Reads a container written by the `mtrace` encoder and writes the log back; returns the
/// number of lines written.
pub fn decode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut reader = blocks::open(input, FORMAT, file)?;
    reader.set_threads(options.threads);
    let mut d = decoder(reader.header(), file)?;
    let mut out = BufWriter::with_capacity(1 << 20, output);
    let mut lines = 0u64;
    while let Some(block) = reader.next_block().map_err(|e| container_error(file, e))? {
        d.block(&block, 0..u64::MAX, &mut out)?;
        lines += block.record_count;
    }
    out.flush().map_err(|e| write_error(file, e))?;
    Ok(lines)
}

/// Decodes only records `first..end` (see [`crate::seek::decode_records`]).
pub fn decode_records(
    input: &mut dyn seek::ReadSeek,
    output: &mut dyn Write,
    options: &DecodeOptions,
    first: u64,
    end: u64,
    note: Note<'_>,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut out = BufWriter::with_capacity(1 << 20, output);
    let mut d: Option<Decoder<'_>> = None;
    let written = seek::decode_records(
        input,
        &[FORMAT],
        file,
        first,
        end,
        note,
        &mut |header| blocks::independent_blocks(header, file),
        &mut |header, block, keep| {
            if d.is_none() {
                d = Some(decoder(header, file)?);
            }
            match d.as_mut() {
                Some(d) => d.block(block, keep, &mut out),
                None => Ok(()),
            }
        },
    )?;
    out.flush().map_err(|e| write_error(file, e))?;
    Ok(written)
}

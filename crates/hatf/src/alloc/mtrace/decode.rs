//! Container → text for glibc `mtrace` logs.
//!
//! The model decodes each block into batches of typed records ([`crate::alloc::model::pipeline`],
//! on a worker thread when there are threads to spare); this file prints them, a batch at a
//! time, into one text buffer that is written out in large pieces.

use std::io::{BufWriter, Read, Write};
use std::ops::Range;

use metatf::container::Block;

use super::kinds::{self, MtraceKinds};
use super::{FORMAT, STRINGS, VERBATIM};
use crate::alloc::blocks::{self, write_error};
use crate::alloc::model::pipeline::{self, BlockModel, Drain, RecordSink};
use crate::alloc::model::ModelRecord;
use crate::alloc::text_num::hex_left;
use crate::alloc::text_out::{copy_spilling, Filled, TextOut};
use crate::alloc::varint::Cursor;
use crate::format::{DecodeOptions, FormatError};
use crate::seek::{self, Note};

/// Bytes of text the buffer starts with room for: the lines between two flush points
/// ([`pipeline::flush_point`]); it grows for longer ones.
const TEXT_ROOM: usize = 1 << 20;

/// The printed prefix (`@ CALLER `, or nothing for "no caller") of each call site, by site id,
/// in one buffer followed by [`PAD`] bytes, so prefixes can be copied in fixed-length moves.
struct Callers {
    text: Vec<u8>,
    /// Site `i` is `text[ends[i - 1]..ends[i]]` (from 0 for site 0).
    ends: Vec<usize>,
}

/// Bytes after the last prefix, so that a prefix shorter than 64 bytes is copied with one
/// 64-byte move (see [`copy_spilling`]).
const PAD: usize = 64;

impl Default for Callers {
    fn default() -> Self {
        Callers {
            text: vec![0; PAD],
            ends: Vec::new(),
        }
    }
}

impl Callers {
    fn clear(&mut self) {
        *self = Callers::default();
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn push(&mut self, caller: Option<&[u8]>) {
        self.text.truncate(self.text.len() - PAD);
        if let Some(c) = caller {
            self.text.extend_from_slice(b"@ ");
            self.text.extend_from_slice(c);
            self.text.push(b' ');
        }
        self.ends.push(self.text.len());
        self.text.extend_from_slice(&[0; PAD]);
    }

    /// Site `site`'s prefix and the bytes after it (at least [`PAD`]), and the prefix length.
    #[inline]
    fn get(&self, site: usize) -> Option<(&[u8], usize)> {
        let end = *self.ends.get(site)?;
        let start = match site {
            0 => 0,
            _ => self.ends[site - 1],
        };
        Some((&self.text[start..], end - start))
    }
}

/// Appends `0x` and the hex digits of `v` at `t[at..]` (with 16 bytes of room after); returns
/// the new end.
#[inline]
fn put_0x(t: &mut [u8], at: usize, v: u64) -> usize {
    let (digits, n) = hex_left(v);
    t[at..at + 2].copy_from_slice(b"0x");
    t[at + 2..at + 18].copy_from_slice(&digits);
    at + 2 + n
}

/// Longest line after the caller: op, space, `0x` and 16 digits, space, `0x` and 16 digits,
/// newline; rounded up for the spill of the last number.
const TAIL: usize = 48;

/// Appends the line glibc prints for an operation (`op` is `+ - < >`) at a site whose prefix
/// is `prefix` (with its padding) of `len` bytes, as [`super::line::render`] does.
#[inline]
fn render_op(out: &mut TextOut, prefix: &[u8], len: usize, op: u8, addr: u64, size: Option<u64>) {
    let room = out.room(len + PAD + TAIL);
    copy_spilling(room, prefix, len);
    let t = &mut room[len..len + TAIL];
    t[0] = op;
    t[1] = b' ';
    let mut n = if addr == 0 {
        t[2..7].copy_from_slice(b"(nil)");
        7
    } else {
        put_0x(t, 2, addr)
    };
    if let Some(size) = size {
        t[n] = b' ';
        n = if size == 0 {
            t[n + 1] = b'0';
            n + 2
        } else {
            put_0x(t, n + 1, size)
        };
    }
    t[n] = b'\n';
    out.advance(len + n + 1);
}

/// Prints decoded records as `mtrace` text.
struct TextSink<'f, 'o> {
    file: &'f str,
    out: Drain<'o>,
    independent: bool,
    callers: Callers,
    /// Where the block's call-site strings and verbatim lines have been read up to.
    strings_at: usize,
    verbatim_at: usize,
    /// The records of each block (counted from its first) whose text is written.
    keep: Range<u64>,
    text: TextOut,
}

impl<'f, 'o> TextSink<'f, 'o> {
    fn new(file: &'f str, out: Drain<'o>, independent: bool) -> Self {
        TextSink {
            file,
            out,
            independent,
            callers: Callers::default(),
            strings_at: 0,
            verbatim_at: 0,
            keep: 0..u64::MAX,
            text: TextOut::new(TEXT_ROOM),
        }
    }

    /// Prints `records` (when `print`, and as far as `keep` says) or only follows them: what
    /// [`RecordSink::records`] does but flush, leaving any text of a failed batch.
    fn print(
        &mut self,
        block: &Block,
        first: u64,
        records: &[ModelRecord],
        print: bool,
    ) -> Result<(), FormatError> {
        let file = self.file;
        let at = |k: u64, msg: String| FormatError {
            file: file.to_string(),
            position: format!("block {} record {}", block.index, block.first_record + k),
            message: msg,
        };
        let mut strings =
            Cursor::starting_at(blocks::section(block, STRINGS), self.strings_at, "strings");
        let mut verbatim = Cursor::starting_at(
            blocks::section(block, VERBATIM),
            self.verbatim_at,
            "verbatim",
        );
        let text = &mut self.text;
        for (k, r) in (first..).zip(records) {
            let keep = print && self.keep.contains(&k);
            let (op, size) = match r.kind {
                kinds::MALLOC => (b'+', Some(r.size)),
                kinds::FREE => (b'-', None),
                kinds::REALLOC_OLD => (b'<', None),
                kinds::REALLOC_NEW => (b'>', Some(r.size)),
                kinds::START | kinds::END => {
                    if keep {
                        text.push(if r.kind == kinds::START {
                            b"= Start\n"
                        } else {
                            b"= End\n"
                        });
                    }
                    continue;
                }
                kinds::VERBATIM | kinds::VERBATIM_UNTERMINATED => {
                    let n = verbatim.u64().map_err(|m| at(k, m))?;
                    let n =
                        usize::try_from(n).map_err(|_| at(k, "verbatim line too long".into()))?;
                    let line = verbatim.take(n).map_err(|m| at(k, m))?;
                    if keep {
                        text.push(line);
                        if r.kind == kinds::VERBATIM {
                            text.push(b"\n");
                        }
                    }
                    continue;
                }
                kind => return Err(at(k, format!("unknown record kind {kind}"))),
            };
            let site = r.site as usize;
            if site == self.callers.len() {
                // The first use of a site: its string is next in the strings stream.
                let n = strings.u64().map_err(|m| at(k, m))?;
                let caller = match n {
                    0 => None,
                    n => {
                        let n = usize::try_from(n - 1)
                            .map_err(|_| at(k, "caller string too long".into()))?;
                        Some(strings.take(n).map_err(|m| at(k, m))?)
                    }
                };
                self.callers.push(caller);
            }
            let (prefix, len) = self
                .callers
                .get(site)
                .ok_or_else(|| at(k, format!("unknown call site {site}")))?;
            if keep {
                render_op(text, prefix, len, op, r.addr, size);
            }
        }
        self.strings_at = strings.position();
        self.verbatim_at = verbatim.position();
        Ok(())
    }
}

impl RecordSink for TextSink<'_, '_> {
    fn block_start(&mut self, _block: &Block) -> Result<(), FormatError> {
        if self.independent {
            self.callers.clear();
        }
        self.strings_at = 0;
        self.verbatim_at = 0;
        Ok(())
    }

    fn records(
        &mut self,
        block: &Block,
        first: u64,
        records: &[ModelRecord],
        print: bool,
    ) -> Result<(), FormatError> {
        let start = self.text.len();
        if let Err(e) = self.print(block, first, records, print) {
            self.text.truncate(start);
            return Err(e);
        }
        if pipeline::flush_point(first + records.len() as u64) {
            self.flush()?;
        }
        Ok(())
    }

    fn take_printed(&mut self, text: Filled) {
        self.out.take_printed(&mut self.text, text);
    }

    fn flush(&mut self) -> Result<(), FormatError> {
        self.out
            .drain(&mut self.text)
            .map_err(|e| write_error(self.file, e))
    }

    fn block_end(&mut self, _block: &Block) -> Result<(), FormatError> {
        self.flush()
    }
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
    let layout = blocks::model_layout(reader.header(), file)?;
    let independent = layout.independent();
    // No buffer of its own: the text goes out in pieces of hundreds of kilobytes.
    let lines = pipeline::decode_blocks(
        &mut reader,
        &MtraceKinds,
        layout,
        options.threads,
        file,
        output,
        &|drain| Box::new(TextSink::new(file, drain, independent)),
    )?;
    output.flush().map_err(|e| write_error(file, e))?;
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
    let mut out = BufWriter::with_capacity(1 << 16, output);
    let mut sink = TextSink::new(file, Drain::Direct(&mut out), false);
    let mut model: Option<BlockModel> = None;
    let written = seek::decode_records(
        input,
        &[FORMAT],
        file,
        first,
        end,
        note,
        &mut |header| blocks::independent_blocks(header, file),
        &mut |header, block, keep| {
            let model = match model.as_mut() {
                Some(m) => m,
                None => {
                    let layout = blocks::model_layout(header, file)?;
                    sink.independent = layout.independent();
                    model.insert(BlockModel::new(layout))
                }
            };
            sink.keep = keep;
            model.block(&MtraceKinds, block, file, &mut sink)
        },
    )?;
    drop(sink);
    out.flush().map_err(|e| write_error(file, e))?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::mtrace::line::{render, Op, OpLine};

    #[test]
    fn render_op_prints_what_line_render_prints() {
        let values = [
            0u64,
            1,
            0xf,
            0x10,
            0xeb8,
            0x55d2_1555_94a0,
            u64::MAX,
            1 << 63,
        ];
        for op in [Op::Malloc, Op::Free, Op::ReallocOld, Op::ReallocNew] {
            for caller in [None, Some(&b"perl:(perl_alloc+10)[0x6f930]"[..])] {
                for addr in values {
                    for size in values {
                        let line = OpLine {
                            caller,
                            op,
                            addr,
                            size: if op.has_size() { size } else { 0 },
                        };
                        let mut want = Vec::new();
                        render(&line, &mut want);
                        let mut callers = Callers::default();
                        callers.push(Some(b"x"));
                        callers.push(caller);
                        let (prefix, len) = callers.get(1).unwrap();
                        let mut got = TextOut::new(0);
                        got.push(b"before\n");
                        let size = op.has_size().then_some(size);
                        render_op(&mut got, prefix, len, op.char(), addr, size);
                        let mut back = Vec::new();
                        got.write_to(&mut back).unwrap();
                        assert_eq!(back[..7], *b"before\n");
                        assert_eq!(back[7..], want);
                    }
                }
            }
        }
    }

    /// Encodes `text` with `format` and decodes it on two threads with the worker printing
    /// as each `pattern` says; every decode must give `text` back.
    fn check_sharing(format: &dyn crate::format::TraceFormat, text: &[u8]) {
        let options = crate::format::EncodeOptions {
            input_name: "t".into(),
            keep_bad_lines: true,
            ..crate::format::EncodeOptions::default()
        };
        let mut bin = Vec::new();
        format.encode(&mut &text[..], &mut bin, &options).unwrap();
        for pattern in [
            0,
            u64::MAX,
            0x5555_5555_5555_5555,
            0x0f0f_3c3c_00ff_ff00,
            0x9e37_79b9_7f4a_7c15,
        ] {
            let mut reader = blocks::open(&bin[..], FORMAT, "t").unwrap();
            let layout = blocks::model_layout(reader.header(), "t").unwrap();
            let mut out = Vec::new();
            let records = pipeline::decode_blocks_sharing(
                &mut reader,
                &MtraceKinds,
                layout,
                "t",
                &mut out,
                &|drain| Box::new(TextSink::new("t", drain, layout.independent())),
                pattern,
            )
            .unwrap();
            assert!(records > 8 * pipeline::BATCH as u64);
            assert!(out == text, "pattern {pattern:#x}: text differs");
        }
    }

    /// A small xorshift generator for test traces.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn any_sharing_of_the_printing_between_threads_gives_the_text_back() {
        let mut text = b"= Start\n".to_vec();
        let (mut x, mut live) = (0x9e37_79b9_7f4a_7c15u64, Vec::new());
        for i in 0..40_000u64 {
            let r = next(&mut x);
            // New call sites keep appearing, so both sinks read the strings stream throughout.
            let site = match r % 50 {
                0 => String::new(),
                c => format!("@ ./prog:[{:#x}] ", 0x4000 + c * 16 + i / 5_000),
            };
            if !r.is_multiple_of(3) || live.is_empty() {
                let a = 0x5555_0000 + i * 0x40;
                live.push(a);
                text.extend(format!("{site}+ {a:#x} {:#x}\n", r % 300 + 1).bytes());
            } else {
                let a = live.swap_remove((r >> 20) as usize % live.len());
                text.extend(format!("{site}- {a:#x}\n").bytes());
            }
            if i.is_multiple_of(7_919) {
                text.extend_from_slice(b"a line that is not mtrace\n");
            }
        }
        text.extend_from_slice(b"= End\n");
        check_sharing(&super::super::Mtrace, &text);
    }
}

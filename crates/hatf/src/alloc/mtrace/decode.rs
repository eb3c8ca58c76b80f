//! Container → text for glibc `mtrace` logs.

use std::io::{BufWriter, Read, Write};

use super::kinds::{self, MtraceKinds};
use super::line::{self, Op, OpLine};
use super::{FORMAT, STRINGS, VERBATIM};
use crate::alloc::blocks::{self, container_error, write_error};
use crate::alloc::model::{stream, Cursors, State};
use crate::alloc::varint::Cursor;
use crate::format::{DecodeOptions, FormatError};

/// Reads a container written by the `mtrace` encoder and writes the log back; returns the
/// number of lines written.
pub fn decode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut reader = blocks::open(input, FORMAT, file)?;
    let mut out = BufWriter::with_capacity(1 << 20, output);
    let mut state = State::new();
    // Call-site strings by site id; `None` is "no caller".
    let mut callers: Vec<Option<Vec<u8>>> = Vec::new();
    let mut lines = 0u64;
    let mut text = Vec::with_capacity(1 << 20);
    while let Some(block) = reader.next_block().map_err(|e| container_error(file, e))? {
        let at = |rec: u64, msg: String| FormatError {
            file: file.to_string(),
            position: format!("block {} record {}", block.index, rec),
            message: msg,
        };
        let model: [&[u8]; stream::COUNT] =
            std::array::from_fn(|i| blocks::section(&block, i as u8));
        let mut c = Cursors::new(model);
        let mut strings = Cursor::new(blocks::section(&block, STRINGS), "strings");
        let mut verbatim = Cursor::new(blocks::section(&block, VERBATIM), "verbatim");
        let mut rec = block.first_record;
        while let Some(kind) = c.next_kind() {
            let kind = kind.map_err(|m| at(rec, m))?;
            let r = state
                .decode(&MtraceKinds, kind, &mut c)
                .map_err(|m| at(rec, m))?;
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
                if site == callers.len() {
                    let n = strings.u64().map_err(|m| at(rec, m))?;
                    let s = match n {
                        0 => None,
                        n => {
                            let n = usize::try_from(n - 1)
                                .map_err(|_| at(rec, "caller string too long".into()))?;
                            Some(strings.take(n).map_err(|m| at(rec, m))?.to_vec())
                        }
                    };
                    callers.push(s);
                }
                let caller = callers
                    .get(site)
                    .ok_or_else(|| at(rec, format!("unknown call site {site}")))?;
                line::render(
                    &OpLine {
                        caller: caller.as_deref(),
                        op,
                        addr: r.addr,
                        size: r.size,
                    },
                    &mut text,
                );
            }
            rec += 1;
            lines += 1;
            if text.len() >= 1 << 20 {
                out.write_all(&text).map_err(|e| write_error(file, e))?;
                text.clear();
            }
        }
    }
    out.write_all(&text).map_err(|e| write_error(file, e))?;
    out.flush().map_err(|e| write_error(file, e))?;
    Ok(lines)
}

//! Text → container for glibc `mtrace` logs.

use crate::alloc::fast_hash::FastMap;
use std::io::{Read, Write};

use metatf::container::ContainerHeader;

use super::kinds::{self, MtraceKinds};
use super::line::{self, Line, Op};
use super::{DTD, FORMAT, STRINGS, VERBATIM};
use crate::alloc::blocks::BlockWriter;
use crate::alloc::model::{stream, ModelRecord, State, Streams};
use crate::alloc::text_lines::{bad_line_unless_kept, for_each_raw_line};
use crate::alloc::varint::put_u64;
use crate::format::{EncodeOptions, EncodeReport, FormatError};

/// Lines per block: bounds memory whatever the trace length.
pub const BLOCK_RECORDS: u64 = 1 << 20;
/// Verbatim bytes that also end a block early.
const BLOCK_VERBATIM_BYTES: usize = 64 << 20;

/// Everything the encoder keeps between lines.
struct Encoder {
    state: State,
    streams: Streams,
    strings: Vec<u8>,
    verbatim: Vec<u8>,
    callers: FastMap<Vec<u8>, u32>,
    no_caller: Option<u32>,
    records: u64,
    scratch: Vec<u8>,
}

impl Encoder {
    fn verbatim(&mut self, text: &[u8], terminated: bool) {
        let kind = if terminated {
            kinds::VERBATIM
        } else {
            kinds::VERBATIM_UNTERMINATED
        };
        put_u64(&mut self.verbatim, text.len() as u64);
        self.verbatim.extend_from_slice(text);
        self.model(ModelRecord {
            kind,
            ..ModelRecord::default()
        });
    }

    fn model(&mut self, r: ModelRecord) {
        self.state.encode(&MtraceKinds, &r, &mut self.streams);
        self.records += 1;
    }

    fn site(&mut self, caller: Option<&[u8]>) -> u32 {
        let known = match caller {
            Some(c) => self.callers.get(c).copied(),
            None => self.no_caller,
        };
        if let Some(id) = known {
            return id;
        }
        let id = self.callers.len() as u32 + u32::from(self.no_caller.is_some());
        match caller {
            Some(c) => {
                put_u64(&mut self.strings, c.len() as u64 + 1);
                self.strings.extend_from_slice(c);
                self.callers.insert(c.to_vec(), id);
            }
            None => {
                // An absent caller is its own site, distinct from every `@ ` caller.
                put_u64(&mut self.strings, 0);
                self.no_caller = Some(id);
            }
        }
        id
    }
}

/// Reads an `mtrace` log and writes the container.
pub fn encode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let header = ContainerHeader {
        dtd: DTD.to_string(),
        format: FORMAT.to_string(),
        properties: crate::alloc::blocks::model_properties(),
    };
    let mut out = BlockWriter::new(output, &header, options)?;
    let mut enc = Encoder {
        state: State::for_block(),
        streams: Streams::default(),
        strings: Vec::new(),
        verbatim: Vec::new(),
        callers: FastMap::default(),
        no_caller: None,
        records: 0,
        scratch: Vec::new(),
    };
    let mut report = EncodeReport::default();
    let lines = for_each_raw_line(input, file, |line_no, raw| {
        report.input_bytes += raw.len() as u64;
        let terminated = raw.last() == Some(&b'\n');
        let text = if terminated {
            &raw[..raw.len() - 1]
        } else {
            raw
        };
        if !terminated {
            // Only the last line can lack its `\n`; store it as is.
            enc.verbatim(text, false);
        } else {
            // A `\r` before the `\n` is not glibc's; parse without it and let the re-rendering
            // check below keep such a line verbatim.
            let core = text.strip_suffix(b"\r").unwrap_or(text);
            match line::parse(core) {
                Ok(Line::Marker(m)) if m == b"Start" && core == text => enc.model(ModelRecord {
                    kind: kinds::START,
                    ..ModelRecord::default()
                }),
                Ok(Line::Marker(m)) if m == b"End" && core == text => enc.model(ModelRecord {
                    kind: kinds::END,
                    ..ModelRecord::default()
                }),
                Ok(Line::Marker(_)) => enc.verbatim(text, true),
                Ok(Line::Op(op)) => {
                    enc.scratch.clear();
                    line::render(&op, &mut enc.scratch);
                    if enc.scratch != raw {
                        // Parses, but glibc would have printed it differently (CRLF, case,
                        // padding): keep the exact bytes.
                        enc.verbatim(text, true);
                    } else {
                        let site = enc.site(op.caller);
                        let kind = match op.op {
                            Op::Malloc => kinds::MALLOC,
                            Op::Free => kinds::FREE,
                            Op::ReallocOld => kinds::REALLOC_OLD,
                            Op::ReallocNew => kinds::REALLOC_NEW,
                        };
                        enc.model(ModelRecord {
                            kind,
                            site,
                            size: op.size,
                            addr: op.addr,
                            old: 0,
                            extra: 0,
                        });
                    }
                }
                Err(e) => {
                    if !options.keep_bad_lines {
                        return Err(bad_line_unless_kept(
                            file, line_no, e.column, &e.message, text,
                        ));
                    }
                    report.bad_lines += 1;
                    enc.verbatim(text, true);
                }
            }
        }
        if enc.records >= BLOCK_RECORDS || enc.verbatim.len() >= BLOCK_VERBATIM_BYTES {
            flush(&mut enc, &mut out)?;
        }
        Ok(())
    })?;
    flush(&mut enc, &mut out)?;
    out.finish()?;
    report.records = lines;
    Ok(report)
}

fn flush<W: Write>(enc: &mut Encoder, out: &mut BlockWriter<W>) -> Result<(), FormatError> {
    if enc.records == 0 {
        return Ok(());
    }
    let mut streams: Vec<(u8, &[u8])> = enc
        .streams
        .bytes
        .iter()
        .enumerate()
        .map(|(i, b)| (i as u8, b.as_slice()))
        .collect();
    streams.push((STRINGS, &enc.strings));
    streams.push((VERBATIM, &enc.verbatim));
    debug_assert_eq!(stream::COUNT, enc.streams.bytes.len());
    out.block(enc.records, &streams)?;
    enc.streams.clear();
    enc.strings.clear();
    enc.verbatim.clear();
    enc.records = 0;
    // Each block starts a fresh model, so any block decodes on its own and the state (the
    // live blocks above all) never holds more than one block's worth.
    enc.state = State::for_block();
    enc.callers.clear();
    enc.no_caller = None;
    Ok(())
}

//! `memory_replay` dumps as AOSP ships them: a zip holding one text file.
//!
//! The corpus zips were written by Info-ZIP `zip` 3.0 (Unix, deflate). Its deflate output is not
//! reproduced by zlib at any level 1–9 (the streams differ from the second byte), so this encoding takes the first entry's deflate stream apart with preflate
//! (as for malloc-bench): the bytes before and after it as they are, preflate's reconstruction
//! data, and the text encoded by the `memory-replay` encoding (its container, nested as one
//! section). Encoding rebuilds the archive from the parts and compares; when anything fails
//! (not deflate, text that does not parse, a rebuild that differs) the archive's bytes are
//! stored as they are (property `deflate = original-bytes`). Statistics and events inflate the
//! entry.

use std::io::{Read, Write};

use metatf::container::{Codec, ContainerWriter, SectionData, PROPERTY_LAYOUT};

use super::{encode, line, MemoryReplay};
use crate::format::{DecodeOptions, EncodeOptions, EncodeReport, FormatError};
use crate::seek::{Note, ReadSeek, Window};
use crate::shared::archive::deflate::gzip_split::{self, Piece};
use crate::shared::archive::deflate::piece_stream::PieceReader;
use crate::shared::archive::rebuilt_check::{self, CORRECTIONS, HEAD, TAIL};
use crate::shared::archive::zip_entry::{self, Wanted};
use crate::shared::container::blocks::{self, container_error, write_error};
use crate::shared::format_parts::FormatParts;

/// Value of the `layout` property when the entry was taken apart: section 1 lists the deflate
/// stream's pieces ([`gzip_split::encode_pieces`]; one piece for the whole
/// stream when preflate cannot take it in pieces). Encoding analyses the stream a piece at a
/// time while the entry's text streams into the `memory-replay` encoder, and decoding rebuilds
/// each piece as the decoder's text completes it, so neither holds the whole text.
pub const LAYOUT: &str = "memory-replay-zip-preflate-2";
/// Sections: [`rebuilt_check::HEAD`], [`rebuilt_check::CORRECTIONS`] (the deflate stream's
/// pieces and preflate's reconstruction data for each), [`rebuilt_check::TAIL`], then the
/// entry's text as a `memory-replay` container.
const NESTED: u8 = 3;

/// Format id stored in the container header.
pub const FORMAT: &str = "memory-replay-zip";

/// True when `head` is a zip whose first entry is `memory_replay` text.
pub fn detect(head: &[u8]) -> bool {
    let Some(text) = zip_entry::entry_start(head, Wanted::FirstFile) else {
        return false;
    };
    let mut lines = text.split(|&b| b == b'\n');
    matches!(lines.next(), Some(l) if line::parse(l).is_ok())
}

/// Encodes the archive: taken apart and modelled when that gives it back exactly, else its bytes.
pub fn encode(
    input: &mut (dyn Read + Send),
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let take_apart = |z: &[u8]| {
        take_apart(z, options).map_err(|why| {
            format!("the entry's deflate stream could not be rebuilt exactly: {why}")
        })
    };
    zip_entry::encode_archive(
        FORMAT,
        super::DTD,
        input,
        output,
        options,
        take_apart,
        |z, parts, output| {
            let Parts {
                data_at,
                corrections,
                used,
                nested,
                report,
            } = parts;
            let header =
                rebuilt_check::header(super::DTD, FORMAT, LAYOUT, rebuilt_check::property(z));
            let section = |number, codec, bytes| SectionData {
                number,
                element_width: 1,
                codec,
                level: blocks::DEFAULT_ZSTD_LEVEL,
                bytes,
            };
            let sections = [
                section(HEAD, Codec::Zstd, &z[..data_at]),
                section(CORRECTIONS, Codec::Zstd, &corrections[..]),
                section(TAIL, Codec::Zstd, &z[data_at + used..]),
                section(NESTED, Codec::None, &nested[..]),
            ];
            let mut w =
                ContainerWriter::new(output, &header).map_err(|e| container_error(file, e))?;
            w.write_block(1, &sections)
                .map_err(|e| container_error(file, e))?;
            let out = w.finish().map_err(|e| container_error(file, e))?;
            out.flush().map_err(|e| write_error(file, e))?;
            Ok(report)
        },
    )
}

/// An archive taken apart.
struct Parts {
    /// Offset of the entry's data.
    data_at: usize,
    /// The deflate stream's pieces ([`gzip_split::encode_pieces`]).
    corrections: Vec<u8>,
    /// Length of the deflate stream.
    used: usize,
    /// The text encoded as a `memory-replay` container.
    nested: Vec<u8>,
    report: EncodeReport,
}

/// What [`inflate_into_encoder`] learns: the encoder's result, and the piece reader's failure
/// and pieces.
type Inflated = (
    Result<EncodeReport, FormatError>,
    (Option<String>, Result<(Vec<Piece>, usize), String>),
);

/// Encodes the text of `deflate` into `nested` while a second thread inflates it in pieces
/// (analysed in a bounded child process, [`PieceReader`]) and hands the text over through a
/// pipe. The encoder reads its input on worker threads, and the piece reader cannot move
/// between threads, so it stays on a thread of its own. Should the pieces fail, the encoder
/// sees the text end early and its result is to be dropped.
fn inflate_into_encoder(
    deflate: &[u8],
    nested: &mut Vec<u8>,
    options: &EncodeOptions,
) -> Result<Inflated, String> {
    let (mut text, mut to_text) =
        std::io::pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
    std::thread::scope(|scope| {
        let inflater = scope.spawn(move || {
            let mut reader = PieceReader::new(deflate);
            // A failed write means the encoder stopped reading; the reader then says whether
            // it had failed itself, or that its text was not read to the end.
            let _ = std::io::copy(&mut reader, &mut to_text);
            drop(to_text);
            // finish ends the analysing child, which may be ahead of the encoder.
            (reader.failure().map(str::to_string), reader.finish())
        });
        let encoded = encode::encode(&mut text, nested, options);
        // Closing the pipe stops an inflater the encoder left behind.
        drop(text);
        let pieces = inflater
            .join()
            .map_err(|_| "the inflating thread panicked".to_string())?;
        Ok((encoded, pieces))
    })
}

/// Takes `z` apart, checking that every piece rebuilds its deflate bytes exactly: in pieces
/// while the text streams into the encoder, or, when preflate fails on the pieces, as one
/// piece if the text is short enough to hold ([`gzip_split::whole_as_bounded_piece`]). The
/// analysis runs in a child process bounded in memory and time; the entry's local header is
/// read by the zip crate ([`zip_entry::first_local`]).
fn take_apart(z: &[u8], options: &EncodeOptions) -> Result<Parts, String> {
    let entry = zip_entry::first_local(z)?;
    if entry.method != ::zip::CompressionMethod::Deflated {
        return Err(format!(
            "the entry's compression method is {}, not deflate",
            entry.method
        ));
    }
    // The stream runs from the entry's data to where preflate finds its end, whatever the
    // headers say (the archive is kept byte for byte either way); its text is bounded by the
    // analysing child and the piece reader, not by the declared size.
    let data_at = entry.data_start as usize;
    let deflate = &z[data_at..];
    let mut nested = Vec::new();
    let (encoded, (failure, finished)) = inflate_into_encoder(deflate, &mut nested, options)?;
    if let (Err(e), None) = (&encoded, failure) {
        // The text itself does not encode (preflate did not fail): no fallback helps.
        return Err(e.to_string());
    }
    let in_pieces = match finished {
        Ok((pieces, used)) => {
            let report = encoded.map_err(|e| e.to_string())?;
            return Ok(Parts {
                data_at,
                corrections: gzip_split::encode_pieces(&pieces),
                used,
                nested,
                report,
            });
        }
        Err(why) => why,
    };
    drop(nested);
    let (piece, text, used) = gzip_split::whole_after_pieces(deflate, &in_pieces)?;
    let mut nested = Vec::new();
    let report = encode::encode(&mut &text[..], &mut nested, options).map_err(|e| e.to_string())?;
    Ok(Parts {
        data_at,
        corrections: gzip_split::encode_pieces(&[piece]),
        used,
        nested,
        report,
    })
}

/// Writes the archive back: its entry's text decoded from the nested container.
pub fn decode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    rebuilt_check::rebuild(input, output, FORMAT, file, LAYOUT, &mut |b, w| {
        MemoryReplay::DECODE(&mut blocks::section(b, NESTED), w, options).map(|_| ())
    })
}

/// `decode --records A..B`: lines `range` of the archive's entry, its `memory_replay` text (a
/// range of records of an archive is not an archive). The text is nested uncompressed as one
/// section, a `memory-replay` container of its own, so only its header, index and the blocks
/// holding the lines are read, by seeking; the outer section's checksum, which covers all of it,
/// is not checked, but the nested container's own checksums are. A file holding the archive's
/// bytes as they are (its entry could not be taken apart) has no lines to select: an error
/// says so.
pub fn decode_records(
    input: &mut dyn ReadSeek,
    output: &mut dyn Write,
    options: &DecodeOptions,
    range: std::ops::Range<u64>,
    note: Note<'_>,
) -> Result<u64, FormatError> {
    with_nested(input, &options.input_name, &mut |nested, name| {
        let nested_options = DecodeOptions {
            input_name: name.to_string(),
            // The entry's text goes into the archive, not straight into a file.
            positioned: None,
            ..options.clone()
        };
        crate::shared::text::sink::decode_range::<super::decode::Printer>(
            nested,
            output,
            &nested_options,
            range.clone(),
            &mut *note,
        )
    })
}

/// Calls `read` with the archive's entry as the `memory-replay` container nested in the file
/// `input`, and the name to give it in errors: a window of `input` where the container is
/// stored uncompressed (as this hatf writes it), so that a reader of a range of records seeks
/// to the blocks holding them; else the block read whole. A file holding the archive's bytes
/// as they are (its entry could not be taken apart) has no nested container: an error says so.
pub(crate) fn with_nested<T>(
    input: &mut dyn ReadSeek,
    file: &str,
    read: &mut dyn FnMut(&mut dyn ReadSeek, &str) -> Result<T, FormatError>,
) -> Result<T, FormatError> {
    let fail = |message: String| FormatError {
        file: file.to_string(),
        position: String::new(),
        message,
    };
    let mut r = blocks::open(&mut *input, FORMAT, file)?;
    if r.header().property(PROPERTY_LAYOUT) != Some(LAYOUT) {
        let why = r.header().property("deflate-reason").unwrap_or("unknown");
        return Err(fail(format!(
            "this file keeps the archive's bytes as they are (its entry could not be taken \
             apart: {why}), so it has no lines to select; decode the whole file, unzip it, and \
             select the lines from the text"
        )));
    }
    let block = r
        .skip_block()
        .map_err(|e| container_error(file, e))?
        .ok_or_else(|| fail("the file holds no block".to_string()))?;
    let descriptors = r.last_descriptors().to_vec();
    let block_end = r.position();
    drop(r);
    let stored: u64 = descriptors.iter().map(|d| d.stored_len).sum();
    let mut at = block_end - stored;
    let nested = descriptors.iter().find_map(|d| {
        let this = (d.number == NESTED).then_some((at, *d));
        at += d.stored_len;
        this
    });
    let name = format!("{file} (the archive's entry)");
    match nested {
        Some((at, d)) if d.codec == Codec::None => {
            let mut window = Window::new(input, at, d.stored_len)
                .map_err(|e| fail(format!("cannot seek to byte {at}: {e}")))?;
            read(&mut window, &name)
        }
        Some(_) => {
            // Not written by this hatf (the nested container is stored uncompressed): read the
            // block whole and select from the nested container in memory.
            input
                .seek(std::io::SeekFrom::Start(0))
                .map_err(|e| fail(format!("cannot seek to byte 0: {e}")))?;
            let mut r = blocks::open(&mut *input, FORMAT, file)?;
            let b = r
                .next_block()
                .map_err(|e| container_error(file, e))?
                .ok_or_else(|| fail("the file holds no block".to_string()))?;
            let mut nested = std::io::Cursor::new(blocks::section(&b, NESTED));
            read(&mut nested, &name)
        }
        None => Err(FormatError {
            file: file.to_string(),
            position: format!("byte {}", block.offset),
            message: "block 0 has no section holding the archive's entry".to_string(),
        }),
    }
}

/// Inflates the archive's first entry into `sink` (for events and statistics), streamed
/// through the one zip-entry reader ([`zip_entry::with_entry`]): never held whole, and held to
/// the size and CRC-32 its local header declares.
pub fn inflate_entry(
    input: &mut dyn Read,
    name: &str,
    sink: &mut dyn FnMut(&mut dyn Read) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    let mut input = input;
    zip_entry::with_entry(&mut input, Wanted::FirstFile, |_, text| sink(text)).map_err(
        |message| FormatError {
            file: name.to_string(),
            position: String::new(),
            message,
        },
    )?
}

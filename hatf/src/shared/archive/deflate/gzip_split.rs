//! Splitting a gzip file into what a model can compress well (the uncompressed bytes) and the
//! little that is needed to rebuild the original deflate stream exactly (preflate's
//! reconstruction data), for gzip writers that zlib does not reproduce (GNU gzip).
//!
//! The split is only used when rebuilding gives the original bytes back: [`split`] rebuilds
//! and compares before it returns, so a caller that gets `Ok` can store the parts instead of
//! the file.

use preflate_rs::{
    preflate_whole_deflate_stream, recreate_whole_deflate_stream, ExitCode, PreflateConfig,
    PreflateStreamProcessor, RecreateStreamProcessor,
};

use super::preflate_guard::{check_parameters, guarded};

/// Largest uncompressed size handled (above it the caller stores the file as it is): the
/// split holds the whole text in memory.
pub const MAX_TEXT: usize = 512 << 20;

/// A gzip file taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GzipParts {
    /// The bytes before the deflate stream (the gzip header, with its optional fields).
    pub head: Vec<u8>,
    /// preflate's reconstruction data for the deflate stream.
    pub corrections: Vec<u8>,
    /// The uncompressed bytes.
    pub text: Vec<u8>,
    /// The bytes after the deflate stream: CRC-32 and size, and anything that follows.
    pub tail: Vec<u8>,
}

/// Length of the gzip header at the start of `gz` (RFC 1952: fixed 10 bytes, then FEXTRA,
/// FNAME, FCOMMENT, FHCRC as the flags say).
pub fn header_len(gz: &[u8]) -> Result<usize, String> {
    if gz.len() < 10 || gz[0] != 0x1f || gz[1] != 0x8b || gz[2] != 8 {
        return Err("not a gzip file with deflate (magic 1f 8b 08)".to_string());
    }
    let flags = gz[3];
    if flags & 0xe0 != 0 {
        return Err(format!("reserved gzip flag bits set ({flags:#04x})"));
    }
    let mut at = 10usize;
    let short = || "the gzip header is cut short".to_string();
    if flags & 4 != 0 {
        let n = gz.get(at..at + 2).ok_or_else(short)?;
        at += 2 + usize::from(u16::from_le_bytes([n[0], n[1]]));
    }
    for flag in [8u8, 16] {
        if flags & flag != 0 {
            let nul = gz.get(at..).and_then(|r| r.iter().position(|&b| b == 0));
            at += nul.ok_or_else(short)? + 1;
        }
    }
    if flags & 2 != 0 {
        at += 2;
    }
    if at > gz.len() {
        return Err(short());
    }
    Ok(at)
}

/// Splits the first gzip member of `gz`; fails (and the caller stores the file unchanged) when
/// the file is not gzip, its text exceeds [`MAX_TEXT`], or the deflate stream cannot be rebuilt
/// byte for byte.
pub fn split(gz: &[u8]) -> Result<GzipParts, String> {
    let head_len = header_len(gz)?;
    let (corrections, text, used) = split_deflate(&gz[head_len..])?;
    let parts = GzipParts {
        head: gz[..head_len].to_vec(),
        corrections,
        text,
        tail: gz[head_len + used..].to_vec(),
    };
    // Lossless always: the parts are used only if they give the file back.
    if join(&parts.head, &parts.corrections, &parts.text, &parts.tail)? != gz {
        return Err("the rebuilt deflate stream differs from the original".to_string());
    }
    Ok(parts)
}

/// Takes apart the raw deflate stream at the start of `deflate`: preflate's reconstruction data,
/// the uncompressed bytes, and how many bytes of `deflate` the stream takes. The caller must
/// still check that [`join`] gives the input back.
pub fn split_deflate(deflate: &[u8]) -> Result<(Vec<u8>, Vec<u8>, usize), String> {
    let config = PreflateConfig {
        plain_text_limit: MAX_TEXT,
        ..PreflateConfig::default()
    };
    let (result, plain) = guarded("analysing the deflate stream", || {
        preflate_whole_deflate_stream(deflate, &config).map_err(|e| format!("preflate: {e:?}"))
    })?;
    let used = result.compressed_size;
    if used > deflate.len() {
        return Err("preflate reports more deflate bytes than there are".to_string());
    }
    Ok((result.corrections, plain.text().to_vec(), used))
}

/// Rebuilds the file from its parts: `head`, the deflate stream, `tail`.
pub fn join(head: &[u8], corrections: &[u8], text: &[u8], tail: &[u8]) -> Result<Vec<u8>, String> {
    check_parameters(corrections)?;
    let deflate = guarded("rebuilding the deflate stream", || {
        recreate_whole_deflate_stream(text, corrections).map_err(|e| format!("preflate: {e:?}"))
    })?;
    let mut out = Vec::with_capacity(head.len() + deflate.len() + tail.len());
    out.extend_from_slice(head);
    out.extend_from_slice(&deflate);
    out.extend_from_slice(tail);
    Ok(out)
}

/// Deflate bytes handed to preflate at a time by [`split_chunked`]: each piece's tokens and
/// plain text are held only while it is analysed (a piece ends at a deflate block boundary, so
/// a piece may take a little more).
pub const CHUNK_DEFLATE: usize = 256 << 10;

/// Most text in one piece: preflate ends a piece before the deflate block that would take it
/// past this, so a very compressible stream (py-euler-nayuki.trace.gz: 34 MB of text from
/// 300 KB) is still cut into pieces of bounded text. It is above the most text one block of
/// GNU gzip or Info-ZIP can hold (32,767 symbols of at most 258 bytes, 8.45 MB), since a
/// block that alone exceeds it makes the analysis in pieces fail.
pub const PIECE_MAX_TEXT: usize = 9 << 20;

/// One piece of a deflate stream taken apart piece by piece: preflate's reconstruction data for
/// it, and how many bytes of text and of deflate stream it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// preflate's reconstruction data for this piece (the first also holds the parameters).
    pub corrections: Vec<u8>,
    /// Uncompressed bytes the piece rebuilds from.
    pub text_len: u64,
    /// Deflate bytes it rebuilds.
    pub deflate_len: u64,
}

/// Like [`split_deflate`], with preflate's chunked API: the stream is analysed
/// [`CHUNK_DEFLATE`] bytes at a time, so preflate holds one piece's tokens and text (plus its
/// 32 KiB dictionary) instead of the whole stream's. Appends the uncompressed bytes to `text`;
/// returns the pieces and how many bytes of `deflate` the stream takes. The caller must still
/// check that [`join_pieces`] gives the input back.
pub fn split_pieces(deflate: &[u8], text: &mut Vec<u8>) -> Result<(Vec<Piece>, usize), String> {
    let config = PreflateConfig {
        plain_text_limit: PIECE_MAX_TEXT,
        // The caller rebuilds and compares every piece itself.
        verify_compression: false,
        ..PreflateConfig::default()
    };
    guarded("analysing the deflate stream", || {
        let mut p = PreflateStreamProcessor::new(&config);
        let mut pieces = Vec::new();
        let (mut start, mut end) = (0usize, deflate.len().min(CHUNK_DEFLATE));
        while !p.is_done() {
            match p.decompress(&deflate[start..end]) {
                Ok(r) => {
                    let piece = p.plain_text().text();
                    if text.len() + piece.len() > MAX_TEXT {
                        return Err(format!("the text exceeds {MAX_TEXT} bytes"));
                    }
                    text.extend_from_slice(piece);
                    pieces.push(Piece {
                        corrections: r.corrections,
                        text_len: piece.len() as u64,
                        deflate_len: r.compressed_size as u64,
                    });
                    start += r.compressed_size;
                    p.shrink_to_dictionary();
                    end = deflate.len().min(start + CHUNK_DEFLATE);
                }
                // The piece ends inside a deflate block: give it more.
                Err(e) if e.exit_code() == ExitCode::ShortRead && end < deflate.len() => {
                    end = deflate.len().min(end + CHUNK_DEFLATE);
                }
                Err(e) => return Err(format!("preflate: {e:?}")),
            }
            if start > deflate.len() {
                return Err("preflate reports more deflate bytes than there are".to_string());
            }
        }
        Ok((pieces, start))
    })
}

/// Most text a piece may declare: honest pieces hold at most [`PIECE_MAX_TEXT`] bytes, and a
/// stream taken whole at most [`WHOLE_STREAM_MAX_TEXT`].
pub const MAX_PIECE_TEXT: u64 = if PIECE_MAX_TEXT > WHOLE_STREAM_MAX_TEXT {
    PIECE_MAX_TEXT as u64
} else {
    WHOLE_STREAM_MAX_TEXT as u64
};

/// Most deflate bytes a piece of `text_len` bytes of text may declare: twice its text (deflate
/// with a poor Huffman code spends at most 15 bits per literal; writers switch to stored
/// blocks, 5 bytes per 65,535, long before) plus 64 KiB for block headers.
pub const fn max_deflate_len(text_len: u64) -> u64 {
    text_len.saturating_mul(2).saturating_add(64 << 10)
}

/// Checks what piece `k` declares against what a deflate stream can hold, before any of it is
/// rebuilt: the encoder writes only pieces that pass (others are stored as bytes), so every
/// file it writes reads back.
pub fn check_piece(k: usize, p: &Piece) -> Result<(), String> {
    if p.text_len > MAX_PIECE_TEXT {
        return Err(format!(
            "piece {k} declares {} bytes of text, more than the {MAX_PIECE_TEXT} a piece holds",
            p.text_len
        ));
    }
    if p.deflate_len > max_deflate_len(p.text_len) {
        return Err(format!(
            "piece {k} declares {} deflate bytes for {} bytes of text",
            p.deflate_len, p.text_len
        ));
    }
    Ok(())
}

/// Rebuilds the deflate bytes of piece number `k` from its text, with the rebuilder `r` that
/// rebuilt the pieces before it; an error when they are not `p.deflate_len` bytes.
pub fn rebuild_piece(
    r: &mut RecreateStreamProcessor,
    k: usize,
    p: &Piece,
    text: &[u8],
) -> Result<Vec<u8>, String> {
    check_piece(k, p)?;
    // The first piece's reconstruction data starts with the stream's parameters.
    if k == 0 {
        check_parameters(&p.corrections)?;
    }
    let bytes = guarded("rebuilding the deflate stream", || {
        r.recompress(&mut std::io::Cursor::new(text), &p.corrections)
            .map(|(bytes, _)| bytes)
            .map_err(|e| format!("preflate, piece {k}: {e:?}"))
    })?;
    if bytes.len() as u64 != p.deflate_len {
        return Err(format!(
            "piece {k} rebuilds {} deflate bytes, not {}",
            bytes.len(),
            p.deflate_len
        ));
    }
    Ok(bytes)
}

/// Rebuilds the deflate stream piece by piece from `text` and `pieces`, handing each piece's
/// bytes to `sink` as it is made: memory holds one piece, never the whole stream.
pub fn join_pieces(
    text: &[u8],
    pieces: &[Piece],
    sink: &mut dyn FnMut(&[u8]) -> Result<(), String>,
) -> Result<(), String> {
    let total: u64 = pieces.iter().map(|p| p.text_len).sum();
    if total != text.len() as u64 {
        return Err(format!(
            "the pieces cover {total} bytes of text, but there are {}",
            text.len()
        ));
    }
    let mut r = RecreateStreamProcessor::new();
    let mut at = 0usize;
    for (k, p) in pieces.iter().enumerate() {
        let piece = &text[at..at + p.text_len as usize];
        at += p.text_len as usize;
        sink(&rebuild_piece(&mut r, k, p, piece)?)?;
    }
    Ok(())
}

/// Largest text analysed as one whole stream when the analysis in pieces fails (preflate-rs
/// 0.7.6 fails in pieces on some streams it takes whole, e.g. onoro.trace.gz of the corpus):
/// the whole-stream analysis and rebuild hold about three times the text, so this bounds them
/// near 50 MB. A longer stream that fails in pieces is stored as it is.
pub const WHOLE_STREAM_MAX_TEXT: usize = 16 << 20;

/// The whole deflate stream at the start of `deflate` as one piece (its reconstruction data is
/// what [`split_deflate`] gives, which the first piece of a rebuild reads the same way), with
/// its text; at most [`WHOLE_STREAM_MAX_TEXT`] bytes of text. The caller must still check
/// that [`join_pieces`] gives the input back.
pub fn whole_as_piece(deflate: &[u8]) -> Result<(Piece, Vec<u8>), String> {
    let config = PreflateConfig {
        plain_text_limit: WHOLE_STREAM_MAX_TEXT,
        // The caller rebuilds and compares.
        verify_compression: false,
        ..PreflateConfig::default()
    };
    let (result, plain) = guarded("analysing the deflate stream", || {
        preflate_whole_deflate_stream(deflate, &config).map_err(|e| format!("preflate: {e:?}"))
    })?;
    if result.compressed_size > deflate.len() {
        return Err("preflate reports more deflate bytes than there are".to_string());
    }
    let text = plain.text().to_vec();
    let piece = Piece {
        corrections: result.corrections,
        text_len: text.len() as u64,
        deflate_len: result.compressed_size as u64,
    };
    Ok((piece, text))
}

/// [`whole_as_piece`], checked by rebuilding the piece and comparing, in this process.
pub fn whole_as_checked_piece(deflate: &[u8]) -> Result<(Piece, Vec<u8>), String> {
    let (piece, text) = whole_as_piece(deflate)?;
    let mut at = 0usize;
    join_pieces(&text, std::slice::from_ref(&piece), &mut |bytes| {
        if deflate.get(at..at + bytes.len()) != Some(bytes) {
            return Err("the rebuilt deflate stream differs from the original".to_string());
        }
        at += bytes.len();
        Ok(())
    })?;
    if at as u64 != piece.deflate_len {
        return Err("the rebuilt deflate stream is shorter than the original".to_string());
    }
    Ok((piece, text))
}

/// [`whole_as_checked_piece`] in a child process bounded in memory and time where one can be
/// had ([`super::analysis_process::whole_as_piece`]): what the encoder calls on an archive
/// it is given.
pub fn whole_as_bounded_piece(deflate: &[u8]) -> Result<(Piece, Vec<u8>), String> {
    #[cfg(unix)]
    return super::analysis_process::whole_as_piece(deflate);
    #[cfg(not(unix))]
    whole_as_checked_piece(deflate)
}

/// The deflate stream at the start of `deflate` in pieces, with its text (at most
/// [`MAX_TEXT`] bytes) and the deflate bytes it takes, analysed and checked piece by piece in
/// a bounded child process ([`PieceReader`](super::piece_stream::PieceReader)).
pub fn bounded_pieces(deflate: &[u8]) -> Result<(Vec<Piece>, Vec<u8>, usize), String> {
    use std::io::Read;
    let mut r = super::piece_stream::PieceReader::new(deflate);
    let mut text = Vec::new();
    (&mut r)
        .take(MAX_TEXT as u64 + 1)
        .read_to_end(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() > MAX_TEXT {
        return Err(format!("the text exceeds {MAX_TEXT} bytes"));
    }
    let (pieces, used) = r.finish()?;
    if used > deflate.len() {
        return Err(format!(
            "the analysis reports {used} deflate bytes of {}",
            deflate.len()
        ));
    }
    Ok((pieces, text, used))
}

/// Serialises pieces: their count, then for each its text length, deflate length,
/// reconstruction-data length (varints) and reconstruction data.
pub fn encode_pieces(pieces: &[Piece]) -> Vec<u8> {
    use metatf::varint::put_u64;
    let mut out = Vec::new();
    put_u64(&mut out, pieces.len() as u64);
    for p in pieces {
        put_u64(&mut out, p.text_len);
        put_u64(&mut out, p.deflate_len);
        put_u64(&mut out, p.corrections.len() as u64);
        out.extend_from_slice(&p.corrections);
    }
    out
}

/// Reads what [`encode_pieces`] wrote; errors say what is wrong.
pub fn decode_pieces(bytes: &[u8]) -> Result<Vec<Piece>, String> {
    let mut c = metatf::varint::Cursor::new(bytes, "pieces");
    let n = c.u64()?;
    // Every piece takes at least three bytes.
    if n > bytes.len() as u64 / 3 {
        return Err(format!("{n} pieces cannot fit in {} bytes", bytes.len()));
    }
    let mut pieces = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let text_len = c.u64()?;
        let deflate_len = c.u64()?;
        let len = usize::try_from(c.u64()?).map_err(|_| "piece too long".to_string())?;
        pieces.push(Piece {
            corrections: c.take(len)?.to_vec(),
            text_len,
            deflate_len,
        });
    }
    if !c.is_empty() {
        return Err("bytes left over after the pieces".to_string());
    }
    Ok(pieces)
}

/// A gzip file taken apart in pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GzipPieces {
    /// The bytes before the deflate stream.
    pub head: Vec<u8>,
    /// The deflate stream's pieces.
    pub pieces: Vec<Piece>,
    /// The uncompressed bytes.
    pub text: Vec<u8>,
    /// The bytes after the deflate stream.
    pub tail: Vec<u8>,
}

/// [`split`] with [`split_pieces`]; checked by rebuilding every piece and comparing it with
/// the input as it is made.
pub fn split_chunked(gz: &[u8]) -> Result<GzipPieces, String> {
    let head_len = header_len(gz)?;
    let mut text = Vec::new();
    let (pieces, used) = split_pieces(&gz[head_len..], &mut text)?;
    checked_pieces(gz, head_len, pieces, text, used)
}

/// The gzip file taken apart in pieces ([`bounded_pieces`]), or when preflate fails on the
/// pieces, as one piece if its text is at most [`WHOLE_STREAM_MAX_TEXT`] bytes
/// ([`whole_as_bounded_piece`]): analysed and checked in a child process bounded in memory
/// and time, so a hostile file costs the encoder no more than those bounds.
pub fn split_bounded(gz: &[u8]) -> Result<GzipPieces, String> {
    let head_len = header_len(gz)?;
    let deflate = &gz[head_len..];
    let in_pieces = match bounded_pieces(deflate) {
        Ok((pieces, text, used)) => {
            return Ok(GzipPieces {
                head: gz[..head_len].to_vec(),
                pieces,
                text,
                tail: gz[head_len + used..].to_vec(),
            })
        }
        Err(e) => e,
    };
    let (piece, text, used) = whole_after_pieces(deflate, &in_pieces)?;
    Ok(GzipPieces {
        head: gz[..head_len].to_vec(),
        pieces: vec![piece],
        text,
        tail: gz[head_len + used..].to_vec(),
    })
}

/// The deflate stream `deflate` as one piece ([`whole_as_bounded_piece`]) when taking it apart
/// in pieces failed with `in_pieces`: the piece, its text and the deflate bytes it takes; an
/// error says why neither way worked.
pub fn whole_after_pieces(
    deflate: &[u8],
    in_pieces: &str,
) -> Result<(Piece, Vec<u8>, usize), String> {
    let (piece, text) = whole_as_bounded_piece(deflate).map_err(|whole| {
        format!(
            "in pieces: {in_pieces}; as one stream (at most {WHOLE_STREAM_MAX_TEXT} bytes of \
             text): {whole}"
        )
    })?;
    let used = piece.deflate_len as usize;
    if used > deflate.len() {
        return Err(format!(
            "the analysis reports {used} deflate bytes of {}",
            deflate.len()
        ));
    }
    Ok((piece, text, used))
}

/// The parts of `gz` after checking that the pieces rebuild its deflate stream, which starts
/// at `head_len` and takes `used` bytes.
fn checked_pieces(
    gz: &[u8],
    head_len: usize,
    pieces: Vec<Piece>,
    text: Vec<u8>,
    used: usize,
) -> Result<GzipPieces, String> {
    let mut at = head_len;
    join_pieces(&text, &pieces, &mut |bytes| {
        if gz.get(at..at + bytes.len()) != Some(bytes) {
            return Err(format!(
                "the rebuilt deflate stream differs from the original in the {} bytes at {at}",
                bytes.len()
            ));
        }
        at += bytes.len();
        Ok(())
    })?;
    if at != head_len + used {
        return Err("the rebuilt deflate stream is shorter than the original".to_string());
    }
    Ok(GzipPieces {
        head: gz[..head_len].to_vec(),
        pieces,
        text,
        tail: gz[at..].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::GzBuilder::new()
            .filename("x.pb")
            .write(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn zlib_output_splits_and_joins() {
        let data: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 977).to_le_bytes())
            .collect();
        let gz = gzip(&data, 6);
        let p = split(&gz).unwrap();
        assert_eq!(p.text, data);
        assert_eq!(p.tail.len(), 8);
        assert_eq!(header_len(&gz).unwrap(), p.head.len());
        assert!(p.head.ends_with(b"x.pb\0"));
        assert_eq!(join(&p.head, &p.corrections, &p.text, &p.tail).unwrap(), gz);
    }

    #[test]
    fn pieces_split_and_join_byte_for_byte() {
        // Several pieces: more deflate bytes than one chunk.
        let data = super::super::test_data(1, 3_000_000);
        for level in [1, 6, 9] {
            let gz = gzip(&data, level);
            // preflate's chunked analysis fails on some streams the whole-stream one takes
            // (here level 6: "no match found" across a piece boundary); the encoder then
            // falls back to the whole stream (the malloc-bench encoder).
            let Ok(GzipPieces {
                head,
                pieces,
                text,
                tail,
            }) = split_chunked(&gz)
            else {
                assert!(level != 1, "level 1 splits in pieces");
                assert!(split(&gz).is_ok());
                continue;
            };
            assert!(pieces.len() > 1, "level {level}: one piece");
            assert_eq!(text, data);
            assert_eq!(tail.len(), 8);
            let stored = decode_pieces(&encode_pieces(&pieces)).unwrap();
            assert_eq!(stored, pieces);
            let mut back = head.clone();
            join_pieces(&text, &stored, &mut |b| {
                back.extend_from_slice(b);
                Ok(())
            })
            .unwrap();
            back.extend_from_slice(&tail);
            assert!(back == gz, "level {level}: rebuilt file differs");
            // Wrong text gives an error or other bytes, never a panic or the same file.
            let mut wrong = text.clone();
            wrong[100] ^= 1;
            let mut other = head.clone();
            let rebuilt = join_pieces(&wrong, &stored, &mut |b| {
                other.extend_from_slice(b);
                Ok(())
            });
            assert!(rebuilt.is_err() || other != back[..back.len() - 8]);
        }
        assert!(join_pieces(b"abc", &[], &mut |_| Ok(())).is_err());
        assert!(decode_pieces(&[5, 1]).is_err());
        assert!(split_chunked(b"not gzip").is_err());
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(split(b"not gzip").is_err());
        let mut gz = gzip(b"hello hello hello", 9);
        gz.truncate(14);
        assert!(split(&gz).is_err());
        // A damaged deflate stream (invalid block type 3).
        let mut bad = gz[..10].to_vec();
        bad.extend_from_slice(&[0xff, 0xff, 0xff, 0xff]);
        assert!(split(&bad).is_err());
        // Wrong reconstruction data gives an error or some bytes, never a panic.
        let _ = join(&[], b"garbage", b"text", &[]);
        let _ = join(&[], &[], b"text", &[]);
    }
}

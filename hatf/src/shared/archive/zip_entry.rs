//! The one reader of zip archive entries, for every format that keeps a trace in a zip
//! (`memory-replay-zip`, `jvm-zip`, and the records of either kept as original bytes).
//!
//! The zip crate finds an entry (through the central directory of an archive held in memory,
//! or walking the local headers of a stream) and inflates it; every byte of text then goes
//! through [`EntryText`], which holds the entry to the size its header declares: the text
//! stops with an error at the first byte past that size, a shorter text is an error at its
//! end, and so is a CRC-32 other than the header's. A declared size is itself refused before
//! any byte is inflated when the entry's compressed bytes cannot hold it (deflate makes at
//! most [`DEFLATE_MAX_RATIO`] bytes of text per byte), so an entry never yields more than
//! about a thousand times the archive's size, and a reader that streams its text holds none
//! of it whole. An archive is held in memory only up to [`MAX_HELD`] bytes.

use std::io::{self, Cursor, Read, Write};

use crate::format::{EncodeOptions, EncodeReport, FormatError};
use crate::shared::archive::raw_store;

use zip::read::{read_zipfile_from_stream, ZipArchive, ZipFile};
use zip::CompressionMethod;

/// Most bytes of text a deflate stream makes per compressed byte: a match of 258 bytes coded
/// in two bits at best, 1032 : 1.
pub const DEFLATE_MAX_RATIO: u64 = 1032;

/// Largest archive a format takes apart in memory; a larger one is stored as its bytes,
/// streamed.
pub const MAX_HELD: u64 = 1 << 30;

/// Which entry of an archive holds the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted<'a> {
    /// The entry of this name.
    Named(&'a str),
    /// The first entry that is a file (in the central directory's order for an archive in
    /// memory, in the stream's order for a stream).
    FirstFile,
}

/// What an entry's headers say about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry's name.
    pub name: String,
    /// Compression method, as the zip crate names it.
    pub method: CompressionMethod,
    /// Offset of its first compressed byte in the archive (archives in memory only; 0 for a
    /// stream).
    pub data_start: u64,
    /// Its compressed bytes.
    pub compressed_size: u64,
    /// Its bytes of text, as declared.
    pub size: u64,
    /// CRC-32 of its text, as declared.
    pub crc32: u32,
}

impl Entry {
    fn of<R: Read>(f: &ZipFile<'_, R>, data_start: u64) -> Self {
        Entry {
            name: f.name().to_string(),
            method: f.compression(),
            data_start,
            compressed_size: f.compressed_size(),
            size: f.size(),
            crc32: f.crc32(),
        }
    }

    /// Checks the declared size against what the compressed bytes can hold, before anything is
    /// inflated.
    pub fn check(&self) -> Result<(), String> {
        let most = match self.method {
            CompressionMethod::Stored => self.compressed_size,
            CompressionMethod::Deflated => self.compressed_size.saturating_mul(DEFLATE_MAX_RATIO),
            m => {
                return Err(format!(
                    "entry `{}` uses compression {m}, which is not supported (only stored and \
                     deflate)",
                    self.name
                ))
            }
        };
        if self.size > most {
            return Err(format!(
                "entry `{}` declares {} bytes of text, more than its {} compressed bytes can \
                 hold",
                self.name, self.size, self.compressed_size
            ));
        }
        Ok(())
    }

    fn wanted<R: Read>(f: &ZipFile<'_, R>, wanted: Wanted<'_>) -> bool {
        match wanted {
            Wanted::Named(name) => f.name() == name,
            Wanted::FirstFile => f.is_file(),
        }
    }
}

/// An entry's text, held to its declared size and checked against its declared CRC-32.
pub struct EntryText<R> {
    inner: R,
    name: String,
    size: u64,
    crc32: u32,
    read: u64,
    hasher: flate2::Crc,
    /// Why the text is not the entry's, once that is known.
    failed: Option<String>,
}

impl<R: Read> EntryText<R> {
    /// The text `inner` gives of `entry`.
    pub fn new(inner: R, entry: &Entry) -> Self {
        EntryText {
            inner,
            name: entry.name.clone(),
            size: entry.size,
            crc32: entry.crc32,
            read: 0,
            hasher: flate2::Crc::new(),
            failed: None,
        }
    }

    /// Why the text is not what the entry's header declares, when a read found it (an error of
    /// the inner reader is not this reader's).
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// The inner reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    fn fail(&mut self, why: String) -> io::Error {
        self.failed = Some(why.clone());
        io::Error::new(io::ErrorKind::InvalidData, why)
    }

    /// Bytes of text given so far.
    pub fn position(&self) -> u64 {
        self.read
    }
}

impl<R: Read> Read for EntryText<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        // One byte past the declared size is asked for, so a longer text is seen.
        let room = (self.size - self.read).saturating_add(1);
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.read += n as u64;
        if self.read > self.size {
            return Err(self.fail(format!(
                "entry `{}` holds more text than the {} bytes its header declares",
                self.name, self.size
            )));
        }
        self.hasher.update(&buf[..n]);
        if n == 0 {
            if self.read < self.size {
                return Err(self.fail(format!(
                    "entry `{}` ends after {} of the {} bytes its header declares",
                    self.name, self.read, self.size
                )));
            }
            if self.hasher.sum() != self.crc32 {
                return Err(self.fail(format!(
                    "entry `{}`: its text's CRC-32 is {:08x}, its header says {:08x}",
                    self.name,
                    self.hasher.sum(),
                    self.crc32
                )));
            }
        }
        Ok(n)
    }
}

/// Finds `wanted` in `bytes`, an archive held in memory, through its central directory
/// (entries written with a data descriptor included), and hands its header and its text to
/// `f`. The outer error says why the archive or the entry cannot be read; `f`'s result is
/// passed on.
pub fn with_entry_in<T, E>(
    bytes: &[u8],
    wanted: Wanted<'_>,
    f: impl FnOnce(&Entry, &mut dyn Read) -> Result<T, E>,
) -> Result<Result<T, E>, String> {
    let mut a = ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| format!("not a readable zip archive: {e}"))?;
    let index = match wanted {
        Wanted::Named(name) => a.index_for_name(name),
        Wanted::FirstFile => (0..a.len()).find(|&i| a.by_index_raw(i).is_ok_and(|f| f.is_file())),
    }
    .ok_or_else(|| missing(wanted))?;
    let entry = {
        let f = a.by_index_raw(index).map_err(|e| e.to_string())?;
        Entry::of(&f, f.data_start())
    };
    entry.check()?;
    let end = entry.data_start.checked_add(entry.compressed_size);
    if end.is_none_or(|end| end > bytes.len() as u64) {
        return Err(format!(
            "entry `{}`'s compressed bytes run past the end of the archive",
            entry.name
        ));
    }
    let mut text = EntryText::new(a.by_index(index).map_err(|e| e.to_string())?, &entry);
    let result = f(&entry, &mut text);
    Ok(result)
}

/// What the headers of `wanted` in `bytes`, an archive held in memory, say of it (checked as
/// by [`with_entry_in`]), for a caller that reads its compressed bytes itself.
pub fn locate(bytes: &[u8], wanted: Wanted<'_>) -> Result<Entry, String> {
    with_entry_in(bytes, wanted, |entry, _| Ok::<_, String>(entry.clone()))?
}

/// What the first local header of `bytes` says of its entry, with the offset of its data: for
/// an encoder that takes the entry's data from there whatever the sizes say (a cut archive, or
/// one without a central directory, included). Its declared size is not checked here.
pub fn first_local(bytes: &[u8]) -> Result<Entry, String> {
    let mut rest = bytes;
    let file = read_zipfile_from_stream(&mut rest)
        .map_err(|e| format!("not a readable zip archive: {e}"))?
        .ok_or("the archive holds no entry")?;
    let mut entry = Entry::of(&file, 0);
    drop(file);
    // The zip crate read a whole local header at byte 0: its name and extra field follow the
    // 30 fixed bytes.
    let u16_at = |o: usize| u64::from(u16::from_le_bytes([bytes[o], bytes[o + 1]]));
    entry.data_start = 30 + u16_at(26) + u16_at(28);
    Ok(entry)
}

/// Reads the local headers of the archive at the start of `archive` (a stream: no central
/// directory is needed, so a cut archive is read up to its cut), skipping the other entries
/// without inflating them, until `wanted`; hands its header and its text to `f`. Entries
/// written with a data descriptor (no sizes in their local header) cannot be walked this way
/// and are an error.
pub fn with_entry<R: Read, T, E>(
    archive: &mut R,
    wanted: Wanted<'_>,
    f: impl FnOnce(&Entry, &mut dyn Read) -> Result<T, E>,
) -> Result<Result<T, E>, String> {
    loop {
        let file = read_zipfile_from_stream(archive)
            .map_err(|e| format!("not a readable zip archive: {e}"))?
            .ok_or_else(|| missing(wanted))?;
        if !Entry::wanted(&file, wanted) {
            // Dropping a streamed entry skips its compressed bytes.
            continue;
        }
        let entry = Entry::of(&file, 0);
        entry.check()?;
        let mut text = EntryText::new(file, &entry);
        let result = f(&entry, &mut text);
        return Ok(result);
    }
}

fn missing(wanted: Wanted<'_>) -> String {
    match wanted {
        Wanted::Named(name) => format!("the archive has no entry named `{name}`"),
        Wanted::FirstFile => "the archive holds no file".to_string(),
    }
}

/// The first bytes of the text of `wanted` in `head`, the start of an archive (found by walking
/// its local headers), for a format's detection; `None` when `head` does not begin with an
/// archive holding that entry. `head` may end inside the entry: what it gives up to there is
/// enough.
pub fn entry_start(head: &[u8], wanted: Wanted<'_>) -> Option<Vec<u8>> {
    let start = with_entry(&mut &head[..], wanted, |_, text| {
        let mut start = Vec::new();
        let _ = text.take(4096).read_to_end(&mut start);
        Ok::<_, ()>(start)
    });
    match start {
        Ok(Ok(start)) => Some(start),
        _ => None,
    }
}

/// Encodes the zip archive read from `input` as a file of format `format` (DTD `dtd`), the way
/// every zip format does: the archive is held in memory (up to [`MAX_HELD`] bytes), taken
/// apart by `take_apart`, and written from its parts by `write`. An archive too large to hold,
/// or one `take_apart` refuses (its `Err` says why), is stored as its bytes instead
/// ([`raw_store::encode`], the reason in the header), so that any zip is kept. An input that
/// does not start with a local file header is not a zip archive: an error.
pub fn encode_archive<P>(
    format: &str,
    dtd: &str,
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
    take_apart: impl FnOnce(&[u8]) -> Result<P, String>,
    write: impl FnOnce(&[u8], P, &mut dyn Write) -> Result<EncodeReport, FormatError>,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let held = hold(input, file)?;
    let bytes = held.bytes;
    if !bytes.starts_with(b"PK\x03\x04") {
        return Err(FormatError {
            file: file.to_string(),
            position: "byte 0".to_string(),
            message: "not a zip archive (no local file header `PK\\x03\\x04`)".to_string(),
        });
    }
    let parts = if held.more {
        Err(format!(
            "the archive is larger than the {MAX_HELD} bytes taken apart in memory"
        ))
    } else {
        take_apart(&bytes)
    };
    match parts {
        Ok(parts) => {
            let report = write(&bytes, parts, output)?;
            Ok(EncodeReport {
                input_bytes: bytes.len() as u64,
                ..report
            })
        }
        Err(reason) => {
            let mut rest = Cursor::new(bytes).chain(input);
            raw_store::encode(format, dtd, &reason, &mut rest, output, options)
        }
    }
}

/// The start of the input, read into memory up to [`MAX_HELD`] bytes.
pub struct Held {
    /// The bytes read.
    pub bytes: Vec<u8>,
    /// True when the input goes on past them (it was too long to hold).
    pub more: bool,
}

/// Reads `input` into memory, at most [`MAX_HELD`] bytes (one more tells whether it goes on);
/// an error names `file` and the byte where reading failed.
pub fn hold(input: &mut dyn Read, file: &str) -> Result<Held, FormatError> {
    let mut bytes = Vec::new();
    let read = input.take(MAX_HELD + 1).read_to_end(&mut bytes);
    read.map_err(|e| FormatError {
        file: file.to_string(),
        position: format!("byte {}", bytes.len()),
        message: format!("cannot read the input: {e}"),
    })?;
    let more = bytes.len() as u64 > MAX_HELD;
    Ok(Held { bytes, more })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use zip::write::SimpleFileOptions;

    fn archive(entries: &[(&str, &[u8], CompressionMethod)]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, text, method) in entries {
            w.start_file(
                *name,
                SimpleFileOptions::default().compression_method(*method),
            )
            .unwrap();
            w.write_all(text).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    fn read_in(bytes: &[u8], wanted: Wanted<'_>) -> Result<Vec<u8>, String> {
        with_entry_in(bytes, wanted, |_, r| {
            let mut t = Vec::new();
            r.read_to_end(&mut t).map(|_| t)
        })?
        .map_err(|e| e.to_string())
    }

    fn read_stream(bytes: &[u8], wanted: Wanted<'_>) -> Result<Vec<u8>, String> {
        with_entry(&mut &bytes[..], wanted, |_, r| {
            let mut t = Vec::new();
            r.read_to_end(&mut t).map(|_| t)
        })?
        .map_err(|e| e.to_string())
    }

    #[test]
    fn entries_are_found_by_name_or_as_the_first_file_in_memory_and_streamed() {
        let text: Vec<u8> = (0..50_000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let z = archive(&[
            ("other", b"not this", CompressionMethod::Deflated),
            ("trace", &text, CompressionMethod::Deflated),
            ("stored", b"as is", CompressionMethod::Stored),
        ]);
        for read in [read_in, read_stream] {
            assert_eq!(read(&z, Wanted::Named("trace")).unwrap(), text);
            assert_eq!(read(&z, Wanted::FirstFile).unwrap(), b"not this");
            assert_eq!(read(&z, Wanted::Named("stored")).unwrap(), b"as is");
            assert!(read(&z, Wanted::Named("none"))
                .unwrap_err()
                .contains("no entry"));
        }
        let e = with_entry_in(&z, Wanted::Named("trace"), |e, _| Ok::<_, ()>(e.clone()))
            .unwrap()
            .unwrap();
        assert_eq!(e.size, text.len() as u64);
        assert!(z[e.data_start as usize..].len() as u64 >= e.compressed_size);
    }

    /// The offset of the first local header's size fields.
    const SIZES: usize = 18;

    #[test]
    fn text_past_or_short_of_the_declared_size_is_an_error() {
        let text: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let z = archive(&[("trace", &text, CompressionMethod::Deflated)]);
        for (declared, what) in [(99_999u32, "more text"), (100_001, "ends after")] {
            let mut bad = z.clone();
            // The local header's uncompressed size (streamed reading uses it).
            bad[SIZES + 4..SIZES + 8].copy_from_slice(&declared.to_le_bytes());
            let e = read_stream(&bad, Wanted::FirstFile).unwrap_err();
            assert!(e.contains(what), "{e}");
        }
        // A text of the declared size with another CRC-32.
        let mut bad = z.clone();
        bad[14] ^= 1;
        let e = read_stream(&bad, Wanted::FirstFile).unwrap_err();
        assert!(e.contains("CRC") || e.contains("checksum"), "{e}");
    }

    #[test]
    fn a_size_the_compressed_bytes_cannot_hold_is_refused_before_inflating() {
        let z = archive(&[("trace", b"abc", CompressionMethod::Deflated)]);
        let mut bad = z.clone();
        bad[SIZES + 4..SIZES + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = read_stream(&bad, Wanted::FirstFile).unwrap_err();
        assert!(e.contains("can hold"), "{e}");
        let z = archive(&[("trace", b"abc", CompressionMethod::Stored)]);
        let mut bad = z.clone();
        bad[SIZES + 4..SIZES + 8].copy_from_slice(&4u32.to_le_bytes());
        assert!(read_stream(&bad, Wanted::FirstFile)
            .unwrap_err()
            .contains("can hold"));
    }

    #[test]
    fn damaged_archives_are_errors() {
        assert!(read_in(b"PK\x03\x04 not a zip", Wanted::FirstFile).is_err());
        assert!(read_stream(b"PK\x03\x04 not a zip", Wanted::FirstFile).is_err());
        assert!(read_stream(b"", Wanted::FirstFile).is_err());
        // Bytes deflate cannot shrink much, so that half the archive ends inside them.
        let mut x = 7u32;
        let text: Vec<u8> = (0..10_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        let z = archive(&[("trace", &text, CompressionMethod::Deflated)]);
        for cut in [10, 40, z.len() / 2] {
            assert!(
                read_stream(&z[..cut], Wanted::FirstFile).is_err(),
                "cut {cut}"
            );
            assert!(read_in(&z[..cut], Wanted::FirstFile).is_err(), "cut {cut}");
        }
    }

    #[test]
    fn inputs_are_held_up_to_the_limit() {
        let held = hold(&mut &b"PK abc"[..], "t").unwrap();
        assert!(!held.more && held.bytes == b"PK abc");
    }

    #[test]
    fn archives_are_encoded_from_their_parts_or_stored_as_their_bytes() {
        // Any DTD: the stored bytes are no records of it.
        let dtd = crate::formats::memory_replay::DTD;
        let options = EncodeOptions {
            input_name: "t.zip".to_string(),
            ..EncodeOptions::default()
        };
        let zip = archive(&[("trace", b"a\nb\n", CompressionMethod::Deflated)]);
        // Taken apart: `write` gets the archive and the parts, the report its size.
        let mut out = Vec::new();
        let report = encode_archive(
            "f",
            dtd,
            &mut &zip[..],
            &mut out,
            &options,
            |bytes| Ok(bytes.len()),
            |bytes, len, out| {
                assert_eq!((bytes, len), (&zip[..], zip.len()));
                out.write_all(b"parts").unwrap();
                Ok(EncodeReport::default())
            },
        )
        .unwrap();
        assert_eq!(
            (&out[..], report.input_bytes),
            (&b"parts"[..], zip.len() as u64)
        );
        // Refused by `take_apart`: stored as its bytes, with the reason in the header.
        let mut out = Vec::new();
        encode_archive(
            "f",
            dtd,
            &mut &zip[..],
            &mut out,
            &options,
            |_| Err::<(), _>("no reason to".to_string()),
            |_, (), _| unreachable!(),
        )
        .unwrap();
        let mut back = Vec::new();
        raw_store::decode("f", &mut &out[..], &mut back, &Default::default()).unwrap();
        assert_eq!(back, zip);
        let r = crate::shared::container::blocks::open(&out[..], "f", "t").unwrap();
        assert_eq!(r.header().property("deflate-reason"), Some("no reason to"));
        // Not starting with a local file header (an empty archive included): an error.
        let empty = zip::ZipWriter::new(Cursor::new(Vec::new()))
            .finish()
            .unwrap()
            .into_inner();
        for input in [&b"hello"[..], &empty[..]] {
            let e = encode_archive(
                "f",
                dtd,
                &mut &input[..],
                &mut Vec::new(),
                &options,
                |_| Ok(()),
                |_, (), _| unreachable!(),
            )
            .unwrap_err();
            assert_eq!(e.position, "byte 0");
            assert!(e.message.contains("no local file header"), "{}", e.message);
        }
    }
}

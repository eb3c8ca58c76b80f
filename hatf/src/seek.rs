//! `decode --records A..B` for every format with a block model: find the blocks holding the
//! records in the container's index and read only those.
//!
//! When the index is missing, damaged or disagrees with the blocks, it is rebuilt by reading the
//! block headers (the data is skipped) and the caller's `note` is told why, once.

use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

use metatf::container::{load_index, scan_index, Block, ContainerHeader, ContainerReader};

use crate::format::FormatError;

/// Input a range decoder can seek in.
pub trait ReadSeek: Read + Seek {}
impl<T: Read + Seek + ?Sized> ReadSeek for T {}

/// Where a range decoder tells the user that the index was rebuilt.
pub type Note<'a> = &'a mut dyn FnMut(&str);

/// Decodes one block, writing the text of the records numbered `keep` within it (counted from
/// the block's first record, clipped to the block).
pub type BlockDecoder<'a> =
    dyn FnMut(&ContainerHeader, &Block, Range<u64>) -> Result<(), FormatError> + 'a;

/// Decodes records `first..end` (counted from 0, `end` exclusive and clipped to the trace) of a
/// container holding one of `formats`; returns how many were written. Every block decodes on
/// its own, so only the blocks holding the range are read; `check` refuses, from the header,
/// a file this hatf cannot decode.
#[allow(clippy::too_many_arguments)]
pub fn decode_records(
    input: &mut dyn ReadSeek,
    formats: &[&str],
    file: &str,
    first: u64,
    end: u64,
    note: Note<'_>,
    check: &mut dyn FnMut(&ContainerHeader) -> Result<(), FormatError>,
    block: &mut BlockDecoder<'_>,
) -> Result<u64, FormatError> {
    let fail = |position: String, message: String| FormatError {
        file: file.to_string(),
        position,
        message,
    };
    let rewind = |r: &mut dyn ReadSeek| {
        r.seek(SeekFrom::Start(0))
            .map(|_| ())
            .map_err(|e| fail(String::new(), e.to_string()))
    };
    let reader = open(&mut *input, formats, file)?;
    let header = reader.header().clone();
    check(&header)?;
    drop(reader);
    rewind(input)?;
    let (mut entries, why) =
        load_index(&mut *input).map_err(|e| fail(String::new(), e.to_string()))?;
    // An index already rebuilt by scanning is not scanned again.
    let mut rebuilt = why.is_some();
    if let Some(why) = why {
        note(&format!(
            "the index could not be used ({why}); rebuilt it by scanning"
        ));
    }
    rewind(input)?;
    let mut reader = open(&mut *input, formats, file)?;
    // The first record not yet written: after a rebuild, blocks already written are not
    // written again.
    let mut next = first;
    let mut k = 0;
    while k < entries.len() {
        let entry = entries[k];
        if entry.first_record >= end {
            break;
        }
        if entry.first_record.saturating_add(entry.record_count) <= next {
            k += 1;
            continue;
        }
        let read = reader
            .seek_block(k as u64, &entry)
            .and_then(|()| reader.next_block());
        let b = match read {
            Ok(Some(b)) => b,
            // An index that points at the wrong bytes is rebuilt once, then trusted no more.
            Err(e) if !rebuilt => {
                note(&format!(
                    "the index is inconsistent with block {k} ({e}); rebuilt it by scanning"
                ));
                // The file's own index passed its checksum, so only a scan can replace it; a
                // scan stops at damage, and the blocks before it are indexed.
                drop(reader);
                rewind(input)?;
                entries = scan_index(&mut *input)
                    .map_err(|e| fail(String::new(), e.to_string()))?
                    .0;
                rewind(input)?;
                reader = open(&mut *input, formats, file)?;
                rebuilt = true;
                k = 0;
                continue;
            }
            Err(e) => return Err(fail(format!("byte {}", entry.offset), e.to_string())),
            Ok(None) => {
                return Err(fail(
                    format!("byte {}", entry.offset),
                    format!("block {k} of the index is not in the file"),
                ))
            }
        };
        let keep = keep(&b, next, end);
        next = b.first_record + keep.end;
        block(&header, &b, keep)?;
        k += 1;
    }
    Ok(next.saturating_sub(first))
}

/// A part of a seekable input (`len` bytes from `start`) read as if it were a whole file: how a
/// container nested, uncompressed, as one section of another is read by seeking, without
/// reading the rest of the outer file.
pub struct Window<'a> {
    inner: &'a mut dyn ReadSeek,
    start: u64,
    len: u64,
    pos: u64,
}

impl<'a> Window<'a> {
    /// The window `start..start + len` of `inner`.
    pub fn new(inner: &'a mut dyn ReadSeek, start: u64, len: u64) -> std::io::Result<Self> {
        inner.seek(SeekFrom::Start(start))?;
        Ok(Window {
            inner,
            start,
            len,
            pos: 0,
        })
    }
}

impl Read for Window<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.len.saturating_sub(self.pos);
        let want = (buf.len() as u64).min(left) as usize;
        if want == 0 {
            return Ok(0);
        }
        let n = self.inner.read(&mut buf[..want])?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Window<'_> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        }
        .ok_or_else(|| std::io::Error::other("seek before the start of the nested file"))?;
        self.inner
            .seek(SeekFrom::Start(self.start.saturating_add(target)))?;
        self.pos = target;
        Ok(target)
    }
}

/// The records of `b` within `first..end`, counted from the block's first record.
fn keep(b: &Block, first: u64, end: u64) -> Range<u64> {
    let from = first.saturating_sub(b.first_record).min(b.record_count);
    let to = end
        .saturating_sub(b.first_record)
        .min(b.record_count)
        .max(from);
    from..to
}

/// Opens the container and checks that it holds one of `formats`.
fn open<'r>(
    input: &'r mut dyn ReadSeek,
    formats: &[&str],
    file: &str,
) -> Result<ContainerReader<&'r mut dyn ReadSeek>, FormatError> {
    let reader = ContainerReader::new(input).map_err(|e| FormatError {
        file: file.to_string(),
        position: String::new(),
        message: e.to_string(),
    })?;
    let format = &reader.header().format;
    if !formats.contains(&format.as_str()) {
        return Err(FormatError {
            file: file.to_string(),
            position: String::new(),
            message: format!(
                "this file holds format `{format}`, not {}",
                formats
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        });
    }
    Ok(reader)
}

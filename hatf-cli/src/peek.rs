//! Reading a binary trace's header without losing the bytes that were read to get it.

use crate::error::{CliError, CliResult};
use metatf::container::{looks_like_container, Block, ContainerHeader, ContainerReader};
use std::io::{self, Cursor, Read};

/// A reader that remembers every byte it hands out, so they can be replayed.
struct Recording<R> {
    inner: R,
    seen: Vec<u8>,
}

impl<R: Read> Read for Recording<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.seen.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// The bytes already read, replayed in front of the rest of the input.
pub type Replayed<R> = io::Chain<Cursor<Vec<u8>>, R>;

/// Reads the container header of `input` and returns it with a reader over the *whole* input.
pub fn container_header<R: Read>(
    input: R,
    name: &str,
) -> CliResult<(ContainerHeader, Replayed<R>)> {
    let mut recording = Recording {
        inner: input,
        seen: Vec::new(),
    };
    let mut magic = [0u8; 4];
    let got = read_up_to(&mut recording, &mut magic)
        .map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
    if !looks_like_container(&magic[..got]) {
        return Err(CliError::input(format!(
            "{name}: byte 0: not a hatf binary trace (no \\x7fMTF magic); to convert text, use `hatf encode`"
        )));
    }
    // The magic was consumed through `recording`; the container reader must see it again.
    let replay = Cursor::new(magic[..got].to_vec()).chain(&mut recording);
    let header = ContainerReader::new(replay)
        .map_err(|e| CliError::input(format!("{name}: {e}")))?
        .header()
        .clone();
    let Recording { inner, seen } = recording;
    Ok((header, Cursor::new(seen).chain(inner)))
}

/// Reads the container header and the first block of `input` (`None` for a file of no
/// blocks) and returns them with a reader over the *whole* input. Holds one block in memory.
pub fn container_first_block<R: Read>(
    input: R,
    name: &str,
) -> CliResult<(ContainerHeader, Option<Block>, Replayed<R>)> {
    let mut recording = Recording {
        inner: input,
        seen: Vec::new(),
    };
    let mut reader = ContainerReader::new(&mut recording)
        .map_err(|e| CliError::input(format!("{name}: {e}")))?;
    let header = reader.header().clone();
    let block = reader
        .next_block()
        .map_err(|e| CliError::input(format!("{name}: {e}")))?;
    drop(reader);
    let Recording { inner, seen } = recording;
    Ok((header, block, Cursor::new(seen).chain(inner)))
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

//! Rebuilding a deflate stream's pieces in a child process whose memory and processor time
//! the kernel bounds ([`BoundedChild`]).
//!
//! preflate-rs rebuilds a piece from arithmetic-coded corrections that only it reads. Hostile
//! corrections that pass every checksum can make one call loop, adding empty deflate blocks
//! until memory runs out. The child, forked when a stream's first piece is rebuilt, holds the
//! rebuilder's state for the whole stream, reads each piece's text from a socket and writes the
//! rebuilt bytes back; its memory is capped at what it inherited plus [`memory_budget`] of the
//! largest piece, and before each piece its processor time at what it has used plus
//! [`cpu_budget`] of that piece. The budgets follow from the pieces' declared lengths, which
//! [`check_piece`](super::gzip_split::check_piece) bounds before anything is rebuilt.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;

use preflate_rs::RecreateStreamProcessor;

use super::bounded_child::{limit_cpu, BoundedChild};
use super::gzip_split::{rebuild_piece, Piece};

/// Memory a rebuilding child may take beyond what it inherits, for pieces of at most
/// `largest` bytes of text and deflate together: preflate-rs holds a piece's text with its
/// 32 KiB dictionary, the tokens (8 bytes per token at most, one token per text byte), the
/// blocks and the rebuilt bytes, and its hash chains (about 1 MiB for a 32 KiB window).
/// Sixteen bytes per byte covers that with room; a rebuild of the corpus' largest pieces
/// (3.4 MB of text) peaks under a third of its budget.
pub const fn memory_budget(largest: u64) -> u64 {
    (64u64 << 20).saturating_add(largest.saturating_mul(16))
}

/// Processor seconds a rebuilding child may spend on a piece of `text_len` bytes of text: two
/// seconds, and one more per 256 KiB. preflate-rs rebuilds more than 20 MB of text a second in
/// a release build; this leaves room for debug and fuzzing builds, and a hostile piece's
/// loop ends within it.
pub const fn cpu_budget(text_len: u64) -> u64 {
    2 + text_len / (256 << 10)
}

/// A child process rebuilding one stream's pieces, in order.
pub struct Rebuilder {
    child: BoundedChild,
}

impl Rebuilder {
    /// Forks a child that rebuilds `pieces` (each checked by [`check_piece`](super::gzip_split::check_piece)).
    pub fn spawn(pieces: &[Piece]) -> Result<Self, String> {
        let largest = pieces
            .iter()
            .map(|p| p.text_len.saturating_add(p.deflate_len))
            .max()
            .unwrap_or(0);
        Self::spawn_bounded(pieces, memory_budget(largest))
    }

    /// [`Rebuilder::spawn`] with `memory` bytes of private writable memory beyond what the
    /// child inherits.
    fn spawn_bounded(pieces: &[Piece], memory: u64) -> Result<Self, String> {
        let child = BoundedChild::spawn(memory, |socket| serve(socket, pieces))?;
        Ok(Rebuilder { child })
    }

    /// Sends piece `k`'s text to the child and gives back the deflate bytes it rebuilt.
    pub fn rebuild(&mut self, k: usize, p: &Piece, text: &[u8]) -> Result<Vec<u8>, String> {
        let socket = &mut self.child.socket;
        let mut head = [0u8; 9];
        let answered = socket
            .write_all(text)
            .and_then(|()| socket.read_exact(&mut head));
        if answered.is_err() {
            return Err(self.death(k, p));
        }
        let len = u64::from_le_bytes(head[1..].try_into().expect("8 bytes"));
        let most = if head[0] == 0 { p.deflate_len } else { 4096 };
        if len > most {
            return Err(format!(
                "the rebuilding process sent {len} bytes for piece {k}"
            ));
        }
        let mut bytes = vec![0u8; len as usize];
        if socket.read_exact(&mut bytes).is_err() {
            return Err(self.death(k, p));
        }
        match head[0] {
            0 => Ok(bytes),
            _ => Err(String::from_utf8_lossy(&bytes).into_owned()),
        }
    }

    /// Why the child stopped answering during piece `k`.
    fn death(&mut self, k: usize, p: &Piece) -> String {
        let what = format!("rebuilding piece {k} of the deflate stream");
        self.child.death(&what, cpu_budget(p.text_len))
    }
}

/// The child's work: each piece's text in, its rebuilt bytes out (a 0 byte and the length), or
/// an error (a 1 byte, the length and the message) after which it stops.
fn serve(mut socket: UnixStream, pieces: &[Piece]) -> io::Result<()> {
    let mut r = RecreateStreamProcessor::new();
    for (k, p) in pieces.iter().enumerate() {
        let mut text = vec![0u8; p.text_len as usize];
        socket.read_exact(&mut text)?;
        limit_cpu(cpu_budget(p.text_len));
        let (tag, bytes) = match rebuild_piece(&mut r, k, p, &text) {
            Ok(bytes) => (0u8, bytes),
            Err(why) => (1, why.into_bytes().into_iter().take(4096).collect()),
        };
        socket.write_all(&[tag])?;
        socket.write_all(&(bytes.len() as u64).to_le_bytes())?;
        socket.write_all(&bytes)?;
        if tag != 0 {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::archive::deflate::bounded_child::{probe_passed, run_alone};
    use crate::shared::archive::deflate::gzip_split::{split_pieces, whole_as_piece};
    use std::io::Write;

    /// A deflate stream of about 2 MB of text, taken apart: its pieces and text.
    fn sample() -> (Vec<u8>, Vec<Piece>, Vec<u8>) {
        let text: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("{}: malloc 0x{:x} {}\n", i % 7, i * 16, i % 100).into_bytes())
            .collect();
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(1));
        e.write_all(&text).unwrap();
        let z = e.finish().unwrap();
        let mut back = Vec::new();
        let (pieces, used) = split_pieces(&z, &mut back).unwrap();
        assert_eq!(used, z.len());
        assert!(back == text);
        (z, pieces, text)
    }

    /// Rebuilds every piece with `r`.
    fn rebuild_all(r: &mut Rebuilder, pieces: &[Piece], text: &[u8]) -> Result<Vec<u8>, String> {
        let (mut out, mut at) = (Vec::new(), 0usize);
        for (k, p) in pieces.iter().enumerate() {
            let piece = &text[at..at + p.text_len as usize];
            at += p.text_len as usize;
            out.extend(r.rebuild(k, p, piece)?);
        }
        Ok(out)
    }

    #[test]
    fn the_child_rebuilds_the_stream_within_its_budget() {
        let (z, pieces, text) = sample();
        let mut r = Rebuilder::spawn(&pieces).unwrap();
        assert!(rebuild_all(&mut r, &pieces, &text).unwrap() == z);
    }

    #[test]
    fn a_child_over_its_memory_limit_is_an_error_and_this_process_goes_on() {
        if run_alone(
            "HATF_REBUILD_MEMORY_PROBE",
            module_path!(),
            "a_child_over_its_memory_limit_is_an_error_and_this_process_goes_on",
        ) {
            return;
        }
        let (z, _, text) = sample();
        // The stream as one piece, and 1 MiB beyond what the child inherits: less than the
        // piece's text. The child is forked from a new thread, whose allocator arena holds no
        // memory freed earlier (memory the child inherits mapped is not counted again).
        let (piece, _) = whole_as_piece(&z).unwrap();
        let pieces = [piece];
        assert!(pieces[0].text_len > 4 << 20);
        let (mut r, e) = std::thread::scope(|s| {
            s.spawn(|| {
                let mut r = Rebuilder::spawn_bounded(&pieces, 1 << 20).unwrap();
                let e = rebuild_all(&mut r, &pieces, &text).unwrap_err();
                (r, e)
            })
            .join()
            .unwrap()
        });
        assert!(
            e.contains("piece 0") && e.contains("more than its 1 MiB of memory"),
            "{e}"
        );
        // Later calls fail too, and a new child with its budget rebuilds the stream.
        assert!(r
            .rebuild(0, &pieces[0], &text[..pieces[0].text_len as usize])
            .is_err());
        let mut r = Rebuilder::spawn(&pieces).unwrap();
        assert!(rebuild_all(&mut r, &pieces, &text).unwrap() == z);
        probe_passed();
    }

    #[test]
    fn errors_of_the_rebuild_come_back_from_the_child() {
        let (_, pieces, text) = sample();
        let mut r = Rebuilder::spawn(&pieces).unwrap();
        let mut wrong = text[..pieces[0].text_len as usize].to_vec();
        wrong.truncate(wrong.len() / 2);
        wrong.resize(pieces[0].text_len as usize, b'x');
        // Other text rebuilds other bytes (an error) or fails inside preflate: either way an
        // error from the child, not its death.
        let (z, _, _) = sample();
        match r.rebuild(0, &pieces[0], &wrong) {
            Ok(bytes) => assert!(bytes != z[..bytes.len()]),
            Err(e) => assert!(!e.contains("bounded process"), "{e}"),
        }
    }
}

//! Analysing a deflate stream read from a file (does preflate-rs re-create it byte for byte,
//! and from what?) in a child process whose memory and processor time the kernel bounds
//! ([`BoundedChild`]), as decoding bounds the rebuild ([`super::rebuild_process`]).
//!
//! The encoder analyses whatever archive it is given: a hostile deflate stream can make the
//! analysis, or the rebuild that checks it, run as long and take as much memory as it likes.
//! The child inherits the stream with the parent's memory at the fork, analyses it and checks
//! every piece by rebuilding it, and sends each piece with its text over a socket; the parent
//! takes them one at a time. The child may take [`ANALYSIS_MEMORY`] beyond what it inherits,
//! and [`cpu_budget`] of the most text a piece can hold for each analysis step, then
//! `cpu_budget` of the piece's text for its check. A child over a limit is an error, and the
//! caller stores the archive as its bytes.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;

use super::bounded_child::{limit_cpu, BoundedChild};
use super::gzip_split::{
    self, check_piece, max_deflate_len, Piece, MAX_PIECE_TEXT, WHOLE_STREAM_MAX_TEXT,
};
use super::piece_stream::PieceAnalyser;
use super::rebuild_process::{cpu_budget, memory_budget};

/// Memory an analysing child may take beyond what it inherits: what a rebuilding child may
/// for the largest piece a file may declare (its text and deflate bytes), 832 MiB.
pub const ANALYSIS_MEMORY: u64 = memory_budget(MAX_PIECE_TEXT + max_deflate_len(MAX_PIECE_TEXT));

/// Tags of the child's messages.
const PIECE: u8 = 0;
const FAILED: u8 = 1;
const END: u8 = 2;

/// A child process analysing one deflate stream in pieces, sending them in order.
pub struct AnalysisChild {
    child: BoundedChild,
}

impl AnalysisChild {
    /// Forks a child that analyses the deflate stream at the start of `deflate`.
    pub fn spawn(deflate: &[u8]) -> Result<Self, String> {
        Self::spawn_bounded(deflate, ANALYSIS_MEMORY)
    }

    /// [`AnalysisChild::spawn`] with `memory` bytes beyond what the child inherits.
    pub(crate) fn spawn_bounded(deflate: &[u8], memory: u64) -> Result<Self, String> {
        let child = BoundedChild::spawn(memory, |socket| analyse_in_pieces(socket, deflate))?;
        Ok(AnalysisChild { child })
    }

    /// The next piece (number `k`) and its text, or at the end of the stream how many deflate
    /// bytes it takes.
    pub fn next_piece(&mut self, k: usize) -> Result<Result<(Piece, Vec<u8>), usize>, String> {
        let what = format!("analysing piece {k} of the deflate stream");
        let cpu = cpu_budget(MAX_PIECE_TEXT);
        match read_message(&mut self.child.socket) {
            Ok(Message::Piece(piece, text)) => Ok(Ok((piece, text))),
            Ok(Message::End(used)) => Ok(Err(used)),
            Ok(Message::Failed(why)) => Err(why),
            Ok(Message::Bad(why)) => Err(format!("{what}: {why}")),
            Err(_) => Err(self.child.death(&what, cpu)),
        }
    }
}

/// The whole deflate stream at the start of `deflate` as one piece, with its text
/// ([`gzip_split::whole_as_piece`]), analysed and checked by rebuilding in a bounded child
/// (in this process where none can be had).
pub fn whole_as_piece(deflate: &[u8]) -> Result<(Piece, Vec<u8>), String> {
    let mut child =
        match BoundedChild::spawn(ANALYSIS_MEMORY, |socket| analyse_whole(socket, deflate)) {
            Ok(child) => child,
            Err(_) => return gzip_split::whole_as_checked_piece(deflate),
        };
    let what = "analysing the deflate stream as one piece";
    match read_message(&mut child.socket) {
        Ok(Message::Piece(piece, text)) => Ok((piece, text)),
        Ok(Message::Failed(why)) => Err(why),
        Ok(Message::End(_)) => Err(format!("{what}: no piece came")),
        Ok(Message::Bad(why)) => Err(format!("{what}: {why}")),
        Err(_) => Err(child.death(what, cpu_budget(WHOLE_STREAM_MAX_TEXT as u64))),
    }
}

/// In the child: every piece of the stream, then its end, or the failure.
fn analyse_in_pieces(mut socket: UnixStream, deflate: &[u8]) -> io::Result<()> {
    let mut a = PieceAnalyser::new(deflate);
    loop {
        limit_cpu(cpu_budget(MAX_PIECE_TEXT));
        match a.next_piece(&mut |text_len| limit_cpu(cpu_budget(text_len))) {
            Ok(Some((piece, text))) => send_piece(&mut socket, &piece, &text)?,
            Ok(None) => {
                socket.write_all(&[END])?;
                return socket.write_all(&(a.used() as u64).to_le_bytes());
            }
            Err(why) => return send_failure(&mut socket, &why),
        }
    }
}

/// In the child: the stream as one piece, or the failure.
fn analyse_whole(mut socket: UnixStream, deflate: &[u8]) -> io::Result<()> {
    limit_cpu(cpu_budget(WHOLE_STREAM_MAX_TEXT as u64));
    match gzip_split::whole_as_checked_piece(deflate) {
        Ok((piece, text)) => send_piece(&mut socket, &piece, &text),
        Err(why) => send_failure(&mut socket, &why),
    }
}

fn send_piece(socket: &mut UnixStream, p: &Piece, text: &[u8]) -> io::Result<()> {
    socket.write_all(&[PIECE])?;
    for n in [p.text_len, p.deflate_len, p.corrections.len() as u64] {
        socket.write_all(&n.to_le_bytes())?;
    }
    socket.write_all(&p.corrections)?;
    socket.write_all(text)
}

fn send_failure(socket: &mut UnixStream, why: &str) -> io::Result<()> {
    let why = &why.as_bytes()[..why.len().min(4096)];
    socket.write_all(&[FAILED])?;
    socket.write_all(&(why.len() as u64).to_le_bytes())?;
    socket.write_all(why)
}

/// What the child said.
enum Message {
    Piece(Piece, Vec<u8>),
    End(usize),
    Failed(String),
    /// A message no child of this hatf sends (lengths out of range).
    Bad(String),
}

fn u64_from(socket: &mut UnixStream) -> io::Result<u64> {
    let mut b = [0u8; 8];
    socket.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// Reads one message; its lengths are checked before anything is allocated for it.
fn read_message(socket: &mut UnixStream) -> io::Result<Message> {
    let mut tag = [0u8; 1];
    socket.read_exact(&mut tag)?;
    match tag[0] {
        PIECE => {
            let (text_len, deflate_len, corrections) =
                (u64_from(socket)?, u64_from(socket)?, u64_from(socket)?);
            let mut piece = Piece {
                corrections: Vec::new(),
                text_len,
                deflate_len,
            };
            if let Err(why) = check_piece(0, &piece) {
                return Ok(Message::Bad(why));
            }
            if corrections > max_deflate_len(MAX_PIECE_TEXT) {
                return Ok(Message::Bad(format!(
                    "{corrections} bytes of reconstruction data"
                )));
            }
            piece.corrections = vec![0u8; corrections as usize];
            socket.read_exact(&mut piece.corrections)?;
            let mut text = vec![0u8; text_len as usize];
            socket.read_exact(&mut text)?;
            Ok(Message::Piece(piece, text))
        }
        END => Ok(Message::End(
            usize::try_from(u64_from(socket)?).unwrap_or(usize::MAX),
        )),
        FAILED => {
            let len = u64_from(socket)?.min(4096);
            let mut why = vec![0u8; len as usize];
            socket.read_exact(&mut why)?;
            Ok(Message::Failed(String::from_utf8_lossy(&why).into_owned()))
        }
        t => Ok(Message::Bad(format!("a message of unknown kind {t}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::archive::deflate::bounded_child::{probe_passed, run_alone};
    use crate::shared::archive::deflate::piece_stream::PieceReader;

    /// A deflate stream of about 2.5 MB of text from flate2 at `level`, and the text.
    fn sample(level: u32) -> (Vec<u8>, Vec<u8>) {
        let text: Vec<u8> = (0..250_000u32)
            .flat_map(|i| format!("{}: malloc 0x{:x} {}\n", i % 7, i * 16, i % 100).into_bytes())
            .collect();
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(&text).unwrap();
        (e.finish().unwrap(), text)
    }

    #[test]
    fn the_child_analyses_the_stream_as_this_process_would() {
        let (z, text) = sample(1);
        let mut with_tail = z.clone();
        with_tail.extend_from_slice(b"tail");
        let mut child = PieceReader::new(&with_tail);
        let mut got = Vec::new();
        child.read_to_end(&mut got).unwrap();
        assert!(got == text);
        let mut here = PieceReader::in_process(&with_tail);
        std::io::copy(&mut here, &mut std::io::sink()).unwrap();
        assert_eq!(child.finish().unwrap(), here.finish().unwrap());
        let (piece, whole) = whole_as_piece(&with_tail).unwrap();
        assert!(whole == text);
        assert_eq!(piece.deflate_len, z.len() as u64);
        // Not deflate: an error from the child, not its death.
        let e = whole_as_piece(&[0xff; 64]).unwrap_err();
        assert!(!e.contains("bounded process"), "{e}");
        let mut r = PieceReader::new(&[0xff; 64]);
        assert!(std::io::copy(&mut r, &mut std::io::sink()).is_err());
        assert!(r.failure().is_some_and(|e| !e.contains("bounded process")));
    }

    #[test]
    fn a_child_over_its_memory_limit_is_an_error_and_this_process_goes_on() {
        if run_alone(
            "HATF_ANALYSIS_MEMORY_PROBE",
            module_path!(),
            "a_child_over_its_memory_limit_is_an_error_and_this_process_goes_on",
        ) {
            return;
        }
        let (z, text) = sample(1);
        // 1 MiB beyond what the child inherits, less than a piece's text: forked from a new
        // thread, whose allocator arena holds no memory freed earlier.
        let e = std::thread::scope(|s| {
            s.spawn(|| {
                let mut r = PieceReader::with_memory(&z, 1 << 20).unwrap();
                let e = std::io::copy(&mut r, &mut std::io::sink()).unwrap_err();
                assert!(r.finish().is_err());
                e.to_string()
            })
            .join()
            .unwrap()
        });
        assert!(
            e.contains("piece 0") && e.contains("more than its 1 MiB of memory"),
            "{e}"
        );
        // A new child with its budget analyses the stream.
        let mut r = PieceReader::new(&z);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert!(got == text);
        probe_passed();
    }
}

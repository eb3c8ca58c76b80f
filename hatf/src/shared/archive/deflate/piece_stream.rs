//! A deflate stream's text as a stream, taken apart and rebuilt piece by piece
//! ([`gzip_split::Piece`]), so that neither side holds the whole text: [`PieceReader`] gives the
//! text of a deflate stream to a reader-driven encoder (memory_replay's, for a zip entry) while
//! it records the pieces, and [`PieceWriter`] takes the decoded text from a writer-driven
//! decoder and writes the rebuilt deflate bytes as each piece is complete.

use std::io::{self, Read, Write};

use preflate_rs::{ExitCode, PreflateConfig, PreflateStreamProcessor, RecreateStreamProcessor};

#[cfg(unix)]
use super::analysis_process::AnalysisChild;
use super::gzip_split::{check_piece, rebuild_piece, Piece, CHUNK_DEFLATE, PIECE_MAX_TEXT};
use super::preflate_guard::guarded;
#[cfg(unix)]
use super::rebuild_process::Rebuilder;

/// Largest total text a [`PieceReader`] gives: preflate-rs counts positions in `i32`.
pub const MAX_STREAM_TEXT: u64 = (i32::MAX as u64) - (64 << 20);

/// Analyses the deflate stream at the start of `deflate` [`CHUNK_DEFLATE`] bytes at a time,
/// checking each piece by rebuilding it: it holds one piece's text and preflate's state,
/// never the whole text. It runs in this process, unbounded but for the pieces' lengths;
/// [`PieceReader`] runs it in a bounded child process ([`super::analysis_process`]).
pub struct PieceAnalyser<'a> {
    deflate: &'a [u8],
    analyser: PreflateStreamProcessor,
    checker: RecreateStreamProcessor,
    /// Deflate bytes taken by the pieces so far.
    used: usize,
    /// Pieces analysed so far.
    count: usize,
    total: u64,
}

impl<'a> PieceAnalyser<'a> {
    /// An analyser of the deflate stream at the start of `deflate`.
    pub fn new(deflate: &'a [u8]) -> Self {
        let config = PreflateConfig {
            plain_text_limit: PIECE_MAX_TEXT,
            // Each piece is rebuilt and compared here.
            verify_compression: false,
            ..PreflateConfig::default()
        };
        PieceAnalyser {
            deflate,
            analyser: PreflateStreamProcessor::new(&config),
            checker: RecreateStreamProcessor::new(),
            used: 0,
            count: 0,
            total: 0,
        }
    }

    /// Deflate bytes the pieces analysed so far take.
    pub fn used(&self) -> usize {
        self.used
    }

    /// The next piece and its text, checked by rebuilding it; `None` at the end of the stream.
    /// `before_check` runs between the analysis and the rebuild with the text's length (a
    /// bounded child sets its time limit for the rebuild there).
    pub fn next_piece(
        &mut self,
        before_check: &mut dyn FnMut(u64),
    ) -> Result<Option<(Piece, Vec<u8>)>, String> {
        if self.analyser.is_done() {
            return Ok(None);
        }
        let deflate = self.deflate;
        let start = self.used;
        let mut end = deflate.len().min(start + CHUNK_DEFLATE);
        let analyser = &mut self.analyser;
        let (corrections, used, text) = guarded("analysing the deflate stream", || loop {
            match analyser.decompress(&deflate[start..end]) {
                Ok(r) => {
                    let text = analyser.plain_text().text().to_vec();
                    analyser.shrink_to_dictionary();
                    return Ok((r.corrections, r.compressed_size, text));
                }
                // The piece ends inside a deflate block: give it more.
                Err(e) if e.exit_code() == ExitCode::ShortRead && end < deflate.len() => {
                    end = deflate.len().min(end + CHUNK_DEFLATE);
                }
                Err(e) => return Err(format!("preflate: {e:?}")),
            }
        })?;
        if used == 0 || start + used > deflate.len() {
            return Err(format!(
                "preflate reports a piece of {used} deflate bytes at byte {start} of {}",
                deflate.len()
            ));
        }
        self.total += text.len() as u64;
        if self.total > MAX_STREAM_TEXT {
            return Err(format!("the text exceeds {MAX_STREAM_TEXT} bytes"));
        }
        let piece = Piece {
            corrections,
            text_len: text.len() as u64,
            deflate_len: used as u64,
        };
        let k = self.count;
        before_check(piece.text_len);
        let rebuilt = rebuild_piece(&mut self.checker, k, &piece, &text)?;
        if rebuilt[..] != deflate[start..start + used] {
            return Err(format!(
                "piece {k} rebuilds other bytes than the {used} deflate bytes at {start}"
            ));
        }
        self.used += used;
        self.count += 1;
        Ok(Some((piece, text)))
    }
}

/// Where a [`PieceReader`]'s pieces come from.
enum Analysis<'a> {
    /// A child process bounded in memory and time (the deflate stream is read from a file
    /// and may be hostile).
    #[cfg(unix)]
    Child(AnalysisChild),
    /// This process, where no child process can be had.
    Here(Box<PieceAnalyser<'a>>),
}

/// Reads the text of the deflate stream at the start of `deflate`, analysed and checked piece
/// by piece ([`PieceAnalyser`]) in a child process bounded in memory and time, each piece's
/// text handed out as it comes: memory holds one piece's text, never the whole text. After
/// the last byte, [`PieceReader::finish`] gives the pieces.
pub struct PieceReader<'a> {
    analysis: Analysis<'a>,
    pieces: Vec<Piece>,
    /// The current piece's text and how much of it was read.
    text: Vec<u8>,
    at: usize,
    /// True once the stream's last piece came.
    done: bool,
    /// Deflate bytes the stream takes (known when done).
    used: usize,
    /// Why the analysis stopped, when it failed (the reader then returns an error).
    failed: Option<String>,
}

impl<'a> PieceReader<'a> {
    /// A reader of the text of the deflate stream at the start of `deflate`, analysed in a
    /// bounded child process (in this process where none can be had).
    pub fn new(deflate: &'a [u8]) -> Self {
        #[cfg(unix)]
        let analysis = match AnalysisChild::spawn(deflate) {
            Ok(child) => Analysis::Child(child),
            Err(_) => Analysis::Here(Box::new(PieceAnalyser::new(deflate))),
        };
        #[cfg(not(unix))]
        let analysis = Analysis::Here(Box::new(PieceAnalyser::new(deflate)));
        Self::with(analysis)
    }

    /// [`PieceReader::new`] with the analysis in this process.
    pub fn in_process(deflate: &'a [u8]) -> Self {
        Self::with(Analysis::Here(Box::new(PieceAnalyser::new(deflate))))
    }

    /// [`PieceReader::new`] with the child's memory budget given (tests).
    #[cfg(all(unix, test))]
    pub(crate) fn with_memory(deflate: &'a [u8], memory: u64) -> Result<Self, String> {
        let child = AnalysisChild::spawn_bounded(deflate, memory)?;
        Ok(Self::with(Analysis::Child(child)))
    }

    fn with(analysis: Analysis<'a>) -> Self {
        PieceReader {
            analysis,
            pieces: Vec::new(),
            text: Vec::new(),
            at: 0,
            done: false,
            used: 0,
            failed: None,
        }
    }

    /// Takes the next piece into `self.text`; false at the end of the stream.
    fn next_piece(&mut self) -> Result<bool, String> {
        if self.done {
            return Ok(false);
        }
        let next = match &mut self.analysis {
            #[cfg(unix)]
            Analysis::Child(child) => child.next_piece(self.pieces.len())?,
            Analysis::Here(a) => a.next_piece(&mut |_| {})?.ok_or(a.used()),
        };
        match next {
            Ok((piece, text)) => {
                self.pieces.push(piece);
                self.text = text;
                self.at = 0;
                Ok(true)
            }
            Err(used) => {
                self.done = true;
                self.used = used;
                Ok(false)
            }
        }
    }

    /// Why the analysis failed, if it did (a reader that stopped early did not fail).
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// The pieces and how many bytes of `deflate` the stream takes; an error when the analysis
    /// failed or the text was not read to its end.
    pub fn finish(self) -> Result<(Vec<Piece>, usize), String> {
        if let Some(why) = self.failed {
            return Err(why);
        }
        if !self.done || self.at < self.text.len() {
            return Err("the deflate stream's text was not read to its end".to_string());
        }
        Ok((self.pieces, self.used))
    }
}

impl Read for PieceReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(why) = &self.failed {
            return Err(io::Error::other(why.clone()));
        }
        while self.at == self.text.len() {
            match self.next_piece() {
                Ok(true) => {}
                Ok(false) => return Ok(0),
                Err(why) => {
                    self.failed = Some(why.clone());
                    return Err(io::Error::other(why));
                }
            }
        }
        let n = buf.len().min(self.text.len() - self.at);
        buf[..n].copy_from_slice(&self.text[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Where a [`PieceWriter`]'s pieces are rebuilt.
enum Rebuild {
    /// Not yet started: a child process is forked for the first piece.
    NotStarted,
    /// In a child process bounded in memory and time (read from a file, reconstruction data
    /// is hostile until it has rebuilt).
    #[cfg(unix)]
    Child(Rebuilder),
    /// In this process, where no child process can be had.
    Here(Box<RecreateStreamProcessor>),
}

/// Takes a deflate stream's text and writes to `out` the stream that `pieces` rebuild from it,
/// each piece as soon as its text is complete: memory holds one piece's text. Text beyond the
/// pieces' is an error; [`PieceWriter::finish`] checks that every piece was rebuilt. Each
/// piece's declared lengths are checked first ([`check_piece`]), and the rebuilding runs in a
/// child process whose memory and processor time follow from them
/// ([`super::rebuild_process`]).
pub struct PieceWriter<'p, W: Write> {
    pieces: &'p [Piece],
    out: W,
    rebuilder: Rebuild,
    /// The next piece to rebuild, and the text of it so far.
    next: usize,
    text: Vec<u8>,
    /// Why rebuilding failed (then every later write fails).
    failed: Option<String>,
}

impl<'p, W: Write> PieceWriter<'p, W> {
    /// A writer of the stream of `pieces` to `out`.
    pub fn new(pieces: &'p [Piece], out: W) -> Self {
        PieceWriter {
            pieces,
            out,
            rebuilder: Rebuild::NotStarted,
            next: 0,
            text: Vec::new(),
            failed: None,
        }
    }

    /// Checks every piece's declared lengths and starts the rebuilder, before the first text
    /// is taken: no text is held for a piece that cannot be.
    fn start(&mut self) -> Result<(), String> {
        for (k, p) in self.pieces.iter().enumerate() {
            check_piece(k, p)?;
        }
        #[cfg(unix)]
        {
            self.rebuilder = match Rebuilder::spawn(self.pieces) {
                Ok(child) => Rebuild::Child(child),
                Err(_) => Rebuild::Here(Box::new(RecreateStreamProcessor::new())),
            };
        }
        #[cfg(not(unix))]
        {
            self.rebuilder = Rebuild::Here(Box::new(RecreateStreamProcessor::new()));
        }
        Ok(())
    }

    /// Rebuilds piece `k` from its complete text.
    fn rebuild(&mut self, k: usize) -> Result<Vec<u8>, String> {
        let p = &self.pieces[k];
        match &mut self.rebuilder {
            #[cfg(unix)]
            Rebuild::Child(child) => child.rebuild(k, p, &self.text),
            Rebuild::Here(r) => rebuild_piece(r, k, p, &self.text),
            Rebuild::NotStarted => Err("the rebuilder was not started".to_string()),
        }
    }

    /// Rebuilds every piece whose text is complete (also pieces of no text).
    fn rebuild_complete(&mut self) -> io::Result<()> {
        if let Rebuild::NotStarted = self.rebuilder {
            self.start().map_err(|why| {
                self.failed = Some(why.clone());
                io::Error::new(io::ErrorKind::InvalidData, why)
            })?;
        }
        while let Some(p) = self.pieces.get(self.next) {
            if (self.text.len() as u64) < p.text_len {
                return Ok(());
            }
            let bytes = self.rebuild(self.next).map_err(|why| {
                self.failed = Some(why.clone());
                io::Error::new(io::ErrorKind::InvalidData, why)
            })?;
            self.out.write_all(&bytes)?;
            self.text.clear();
            self.next += 1;
        }
        Ok(())
    }

    /// Rebuilds what is left and gives the output back; an error when the text was shorter
    /// than the pieces say.
    pub fn finish(mut self) -> Result<W, String> {
        if let Some(why) = self.failed.take() {
            return Err(why);
        }
        self.rebuild_complete().map_err(|e| e.to_string())?;
        if self.next < self.pieces.len() {
            let want: u64 = self.pieces.iter().map(|p| p.text_len).sum();
            return Err(format!(
                "the text ends inside piece {} of {} (the pieces cover {want} bytes)",
                self.next,
                self.pieces.len()
            ));
        }
        Ok(self.out)
    }
}

impl<W: Write> Write for PieceWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(why) = &self.failed {
            return Err(io::Error::new(io::ErrorKind::InvalidData, why.clone()));
        }
        self.rebuild_complete()?;
        let Some(p) = self.pieces.get(self.next) else {
            let why = "more text than the pieces cover".to_string();
            self.failed = Some(why.clone());
            return Err(io::Error::new(io::ErrorKind::InvalidData, why));
        };
        let room = usize::try_from(p.text_len - self.text.len() as u64).unwrap_or(usize::MAX);
        let n = buf.len().min(room);
        self.text.extend_from_slice(&buf[..n]);
        self.rebuild_complete()?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::archive::deflate::gzip_split;

    /// Raw deflate of `data` by flate2 at `level`.
    fn deflate(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn sample() -> Vec<u8> {
        super::super::test_data(7, 2_500_000)
    }

    #[test]
    fn reader_gives_the_text_and_writer_the_stream() {
        let data = sample();
        let z = deflate(&data, 1);
        let mut with_tail = z.clone();
        with_tail.extend_from_slice(b"tail");
        let mut r = PieceReader::new(&with_tail);
        let mut text = Vec::new();
        // Small reads, as an encoder's buffer would make them.
        let mut buf = [0u8; 1000];
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            text.extend_from_slice(&buf[..n]);
        }
        assert!(text == data);
        let (pieces, used) = r.finish().unwrap();
        assert!(pieces.len() > 1, "one piece");
        assert_eq!(used, z.len());
        // Written in odd-sized parts, the same stream back.
        let mut w = PieceWriter::new(&pieces, Vec::new());
        for part in text.chunks(77_777) {
            w.write_all(part).unwrap();
        }
        assert!(w.finish().unwrap() == z);
        // Too little or too much text is an error.
        let mut w = PieceWriter::new(&pieces, Vec::new());
        w.write_all(&text[..text.len() - 1]).unwrap();
        assert!(w.finish().is_err());
        let mut w = PieceWriter::new(&pieces, Vec::new());
        assert!(w.write_all(&text).is_ok());
        assert!(w.write_all(b"x").is_err());
        // Other text gives an error or other bytes, never a panic or the same stream.
        let mut wrong = text.clone();
        wrong[1_000_000] ^= 1;
        let mut w = PieceWriter::new(&pieces, Vec::new());
        let rebuilt = w.write_all(&wrong).map_err(|e| e.to_string());
        let rebuilt = rebuilt.and_then(|()| w.finish());
        assert!(rebuilt.map_or(true, |b| b != z));
    }

    #[test]
    fn whole_stream_as_one_piece_rebuilds_through_the_writer() {
        let data = sample();
        let z = deflate(&data, 6);
        let (piece, text) = gzip_split::whole_as_piece(&z).unwrap();
        assert!(text == data);
        let pieces = [piece];
        let mut w = PieceWriter::new(&pieces, Vec::new());
        w.write_all(&text).unwrap();
        assert!(w.finish().unwrap() == z);
    }

    #[test]
    fn damaged_streams_are_errors() {
        let mut r = PieceReader::new(&[0xff, 0xff, 0xff, 0xff]);
        assert!(std::io::copy(&mut r, &mut std::io::sink()).is_err());
        assert!(r.finish().is_err());
        let r = PieceReader::new(&[]);
        assert!(r.finish().is_err());
    }
}

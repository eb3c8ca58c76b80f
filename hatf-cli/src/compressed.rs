//! Text traces kept compressed (`.gz`, `.bz2`, `.xz`, `.zst`), recognised by their first bytes,
//! never by their name: Elephant Tracks ships `trace.bz2`, the large ET3 traces are `.zst`.
//!
//! Some formats are themselves compressed files (a malloc-bench `.trace.gz` is a gzip stream that
//! hatf encodes byte for byte); the callers try the formats on the raw bytes first and unwrap
//! only what no format claims.

use std::io::{self, Read};

/// A compression wrapper around a text trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrapper {
    /// gzip (one or more members).
    Gzip,
    /// bzip2 (one or more streams).
    Bzip2,
    /// xz (one or more streams).
    Xz,
    /// Zstandard (one or more frames).
    Zstd,
}

impl Wrapper {
    /// The wrapper whose magic bytes start `head`, if any.
    pub fn detect(head: &[u8]) -> Option<Wrapper> {
        const MAGICS: [(&[u8], Wrapper); 4] = [
            (&[0x1f, 0x8b], Wrapper::Gzip),
            (b"BZh", Wrapper::Bzip2),
            (&[0xfd, b'7', b'z', b'X', b'Z', 0x00], Wrapper::Xz),
            (&[0x28, 0xb5, 0x2f, 0xfd], Wrapper::Zstd),
        ];
        MAGICS
            .iter()
            .find(|(magic, _)| head.starts_with(magic))
            .map(|&(_, w)| w)
    }

    /// The usual name of the compressor, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Wrapper::Gzip => "gzip",
            Wrapper::Bzip2 => "bzip2",
            Wrapper::Xz => "xz",
            Wrapper::Zstd => "zstd",
        }
    }

    /// A reader of the decompressed bytes of `inner`. Concatenated members, streams and frames
    /// are all read (as `zcat`, `bzcat`, `xzcat` and `zstdcat` do), so no text is lost; a
    /// damaged stream is a read error naming the compressor.
    pub fn reader(self, inner: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
        let decoded: Box<dyn Read + Send> = match self {
            Wrapper::Gzip => Box::new(flate2::read::MultiGzDecoder::new(inner)),
            Wrapper::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(inner)),
            Wrapper::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(inner)),
            Wrapper::Zstd => Box::new(zstd::stream::read::Decoder::new(inner)?),
        };
        Ok(Box::new(Named {
            inner: decoded,
            wrapper: self,
        }))
    }
}

/// A binary trace kept compressed (`trace.hatf.gz`): no container starts with a compressor's
/// magic bytes, so an input that does is unwrapped before the container is read. Returns the
/// input unchanged otherwise (its first bytes replayed); an unwrapped input has no known size.
pub fn unwrap_binary(input: crate::io::Input) -> crate::error::CliResult<crate::io::Input> {
    let mut head = [0u8; 6];
    let mut reader = input.reader;
    let mut got = 0;
    while got < head.len() {
        match reader.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(crate::error::CliError::input(format!(
                    "{}: cannot read: {e}",
                    input.name
                )))
            }
        }
    }
    let whole: Box<dyn Read + Send> = Box::new(io::Cursor::new(head[..got].to_vec()).chain(reader));
    let Some(wrapper) = Wrapper::detect(&head[..got]) else {
        return Ok(crate::io::Input {
            reader: whole,
            ..input
        });
    };
    let reader = wrapper
        .reader(whole)
        .map_err(|e| crate::error::CliError::input(format!("{}: {e}", input.name)))?;
    Ok(crate::io::Input {
        reader,
        len: None,
        ..input
    })
}

/// Puts the compressor's name in front of a decompression error.
struct Named {
    inner: Box<dyn Read + Send>,
    wrapper: Wrapper,
}

impl Read for Named {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::Interrupted {
                e
            } else {
                io::Error::new(
                    e.kind(),
                    format!("damaged {} data: {e}", self.wrapper.name()),
                )
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn round_trip(wrapper: Wrapper, packed: Vec<u8>, text: &[u8]) {
        assert_eq!(Wrapper::detect(&packed), Some(wrapper));
        let mut back = Vec::new();
        wrapper
            .reader(Box::new(io::Cursor::new(packed)))
            .unwrap()
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, text);
    }

    #[test]
    fn every_wrapper_is_recognised_and_read_across_concatenated_streams() {
        let text = b"= Start\n@ ./a:[0x1] + 0x10 0x20\n".repeat(50);
        let twice = |pack: &dyn Fn(&[u8]) -> Vec<u8>| {
            let mut v = pack(&text[..700]);
            v.extend(pack(&text[700..]));
            v
        };
        let gz = |t: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(t).unwrap();
            e.finish().unwrap()
        };
        let bz = |t: &[u8]| {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            e.write_all(t).unwrap();
            e.finish().unwrap()
        };
        let xz = |t: &[u8]| {
            let mut e = xz2::write::XzEncoder::new(Vec::new(), 1);
            e.write_all(t).unwrap();
            e.finish().unwrap()
        };
        let zst = |t: &[u8]| zstd::encode_all(t, 1).unwrap();
        round_trip(Wrapper::Gzip, twice(&gz), &text);
        round_trip(Wrapper::Bzip2, twice(&bz), &text);
        round_trip(Wrapper::Xz, twice(&xz), &text);
        round_trip(Wrapper::Zstd, twice(&zst), &text);
    }

    #[test]
    fn text_is_not_taken_for_a_wrapper_and_damage_names_the_compressor() {
        assert_eq!(Wrapper::detect(b"= Start\n"), None);
        assert_eq!(Wrapper::detect(b"BZ"), None);
        let mut damaged = b"BZh9".to_vec();
        damaged.extend([0u8; 64]);
        let mut out = Vec::new();
        let err = Wrapper::Bzip2
            .reader(Box::new(io::Cursor::new(damaged)))
            .unwrap()
            .read_to_end(&mut out)
            .unwrap_err();
        assert!(err.to_string().contains("damaged bzip2 data"), "{err}");
    }
}

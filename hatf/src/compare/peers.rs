//! The general-purpose compressors a user would otherwise run on a trace, with fixed settings.
//! Each is run both ways: the compressed bytes are decompressed again, checked against the
//! input, and both directions are timed.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// Counts bytes written and drops them.
#[derive(Default)]
pub struct CountingSink(pub u64);

impl Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One compressor run both ways: the compressed size and the wall-clock time of each way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Compressed size in bytes.
    pub bytes: u64,
    /// Time to compress.
    pub compress: Duration,
    /// Time to decompress.
    pub decompress: Duration,
}

fn io(e: std::io::Error) -> String {
    e.to_string()
}

/// Compresses with `pack`, decompresses with `unpack`, checks the round trip and times both.
fn round_trip(
    name: &str,
    bytes: &[u8],
    pack: impl FnOnce(&[u8]) -> std::io::Result<Vec<u8>>,
    unpack: impl FnOnce(&[u8], &mut Vec<u8>) -> std::io::Result<()>,
) -> Result<Run, String> {
    let started = Instant::now();
    let packed = pack(bytes).map_err(io)?;
    let compress = started.elapsed();
    let mut back = Vec::with_capacity(bytes.len());
    let started = Instant::now();
    unpack(&packed, &mut back).map_err(io)?;
    let decompress = started.elapsed();
    if back != bytes {
        return Err(format!("{name} did not give back the bytes it was given"));
    }
    Ok(Run {
        bytes: packed.len() as u64,
        compress,
        decompress,
    })
}

/// `gzip -9` (flate2, best compression).
pub fn gzip9(bytes: &[u8]) -> Result<Run, String> {
    round_trip(
        "gzip -9",
        bytes,
        |b| {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            enc.write_all(b)?;
            enc.finish()
        },
        |p, out| flate2::read::GzDecoder::new(p).read_to_end(out).map(drop),
    )
}

/// `zstd -19` (no long window), used for the encodings' own streams.
pub fn zstd19(bytes: &[u8]) -> Result<Run, String> {
    round_trip(
        "zstd -19",
        bytes,
        |b| zstd::stream::encode_all(b, 19),
        |p, out| zstd::stream::Decoder::new(p)?.read_to_end(out).map(drop),
    )
}

/// `zstd -19 --long=27` (long-distance matching, 128 MiB window).
pub fn zstd19_long27(bytes: &[u8]) -> Result<Run, String> {
    round_trip(
        "zstd -19 --long=27",
        bytes,
        |b| {
            let mut enc = zstd::stream::Encoder::new(Vec::new(), 19)?;
            enc.long_distance_matching(true)?;
            enc.window_log(27)?;
            enc.write_all(b)?;
            enc.finish()
        },
        |p, out| {
            let mut dec = zstd::stream::Decoder::new(p)?;
            dec.window_log_max(27)?;
            dec.read_to_end(out).map(drop)
        },
    )
}

/// `xz -9` (liblzma preset 9).
pub fn xz9(bytes: &[u8]) -> Result<Run, String> {
    round_trip(
        "xz -9",
        bytes,
        |b| {
            let mut enc = xz2::write::XzEncoder::new(Vec::new(), 9);
            enc.write_all(b)?;
            enc.finish()
        },
        |p, out| xz2::read::XzDecoder::new(p).read_to_end(out).map(drop),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_peer_gives_back_its_input_smaller() {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| {
                format!("@ ./prog:[0x401136] + {:#x} 0x10\n", 0x5000 + i * 16).into_bytes()
            })
            .collect();
        for (name, run) in [
            ("gzip", gzip9(&text)),
            ("zstd", zstd19(&text)),
            ("zstd long", zstd19_long27(&text)),
            ("xz", xz9(&text)),
        ] {
            let run = run.unwrap();
            assert!(
                run.bytes > 0 && run.bytes * 5 < text.len() as u64,
                "{name}: {run:?}"
            );
        }
    }

    #[test]
    fn empty_input_round_trips() {
        assert!(gzip9(b"").unwrap().bytes > 0);
        assert!(xz9(b"").unwrap().bytes > 0);
    }
}

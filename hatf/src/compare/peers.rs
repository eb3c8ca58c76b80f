//! The general-purpose compressors a user would otherwise run on a trace, with fixed settings.

use std::io::Write;

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

fn io(e: std::io::Error) -> String {
    e.to_string()
}

/// Size after `gzip -9` (flate2, best compression).
pub fn gzip9(bytes: &[u8]) -> Result<u64, String> {
    let mut enc =
        flate2::write::GzEncoder::new(CountingSink::default(), flate2::Compression::best());
    enc.write_all(bytes).map_err(io)?;
    Ok(enc.finish().map_err(io)?.0)
}

/// Size after `zstd -19` (no long window), used for the encodings' own streams.
pub fn zstd19(bytes: &[u8]) -> Result<u64, String> {
    let mut enc = zstd::stream::Encoder::new(CountingSink::default(), 19).map_err(io)?;
    enc.write_all(bytes).map_err(io)?;
    Ok(enc.finish().map_err(io)?.0)
}

/// Size after `zstd -19 --long=27` (long-distance matching, 128 MiB window).
pub fn zstd19_long27(bytes: &[u8]) -> Result<u64, String> {
    let mut enc = zstd::stream::Encoder::new(CountingSink::default(), 19).map_err(io)?;
    enc.long_distance_matching(true).map_err(io)?;
    enc.window_log(27).map_err(io)?;
    enc.write_all(bytes).map_err(io)?;
    Ok(enc.finish().map_err(io)?.0)
}

/// Size after `xz -9` (liblzma preset 9).
pub fn xz9(bytes: &[u8]) -> Result<u64, String> {
    let mut enc = xz2::write::XzEncoder::new(CountingSink::default(), 9);
    enc.write_all(bytes).map_err(io)?;
    Ok(enc.finish().map_err(io)?.0)
}

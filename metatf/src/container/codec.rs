//! Per-section compression codecs.

use serde::Serialize;

use super::contexts::{Compressor, Decompressor};

/// How the bytes of one section of one block are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Codec {
    /// Stored as is (codec byte 0).
    None,
    /// A single gzip member, RFC 1952 (codec byte 1).
    Gzip,
    /// A single Zstandard frame, RFC 8878 (codec byte 2).
    Zstd,
    /// The context-mixing bit coder of [`super::context_mix::v2`] (codec byte 3): smaller than
    /// zstd on short modelled sections, about ten times slower, so only sections of at most
    /// [`CONTEXT_MIX_MAX_SECTION`] bytes use it.
    ContextMix,
    /// The light context mixer of [`super::context_mix::light`] (codec byte 4): within a few
    /// percent of [`Codec::ContextMix`] on the short sections of short traces, in about a sixth
    /// of its time; the same [`CONTEXT_MIX_MAX_SECTION`] bound.
    LightContextMix,
}

/// Largest section (uncompressed) stored with [`Codec::ContextMix`] or
/// [`Codec::LightContextMix`]: larger ones are written
/// with zstd, and a reader refuses a larger claim, so a damaged or hostile file cannot keep the
/// slow coder busy for more than about half a second per section.
pub const CONTEXT_MIX_MAX_SECTION: u64 = 1 << 20;

impl Codec {
    /// The byte that identifies the codec in a section descriptor.
    pub fn code(self) -> u8 {
        match self {
            Codec::None => 0,
            Codec::Gzip => 1,
            Codec::Zstd => 2,
            Codec::ContextMix => 3,
            Codec::LightContextMix => 4,
        }
    }

    /// The codec with the given descriptor byte, if any.
    pub fn from_code(code: u8) -> Option<Codec> {
        match code {
            0 => Some(Codec::None),
            1 => Some(Codec::Gzip),
            2 => Some(Codec::Zstd),
            3 => Some(Codec::ContextMix),
            4 => Some(Codec::LightContextMix),
            _ => None,
        }
    }

    /// The codec's lower-case name (`none`, `gzip`, `zstd`, `cm`, `cm-light`), as used on
    /// command lines.
    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
            Codec::ContextMix => "cm",
            Codec::LightContextMix => "cm-light",
        }
    }

    /// Parses a codec name as printed by [`Codec::name`].
    pub fn from_name(name: &str) -> Option<Codec> {
        [
            Codec::None,
            Codec::Gzip,
            Codec::Zstd,
            Codec::ContextMix,
            Codec::LightContextMix,
        ]
        .into_iter()
        .find(|c| c.name() == name)
    }
}

impl std::fmt::Display for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Compresses `bytes` with `codec` at `level` with a fresh [`Compressor`] (see
/// [`Compressor::compress`]); for one-off compressions such as a header's DTD.
pub(crate) fn compress(codec: Codec, level: i32, bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    Compressor::new().compress(codec, level, bytes)
}

/// The largest zstd window (and so match distance) a section or stream is compressed with:
/// 2^21 bytes. zstd sizes its tables from the window, so at level 19 one compression of a
/// stream of several megabytes would take up to 90 MB; capped, it takes about 35 MB, which is
/// what keeps encoding under 100 MB with a compression running on each of two threads.
/// Streams of at most 2 MiB are compressed exactly as without the cap.
pub const ZSTD_MAX_WINDOW_LOG: u32 = 21;

/// The most output buffer a decompression reserves before the data has produced it (64 MiB).
/// A section's declared length and the size its zstd frame (or gzip trailer) declares bound the
/// first reservation already; this bounds it when both are large claims of a damaged or
/// hostile file, so such a claim costs memory only as far as the data really expands.
pub(crate) const RESERVE_AHEAD: u64 = 64 << 20;

/// One zstd frame of `bytes` at `level`, with the window capped at [`ZSTD_MAX_WINDOW_LOG`].
pub fn zstd_compress(level: i32, bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    Compressor::new().zstd(level, bytes)
}

/// Why a section could not be decompressed.
#[derive(Debug)]
pub(crate) enum DecompressError {
    /// The decompressor rejected the data.
    Invalid(std::io::Error),
    /// The data expands to more than the declared length.
    TooLong,
    /// The data expands to fewer bytes than declared.
    TooShort(u64),
}

/// Decompresses `bytes` into exactly `expected_len` bytes with a fresh [`Decompressor`] (see
/// [`Decompressor::decompress`]). Never produces (or buffers) more than `expected_len + 1`
/// bytes, whatever the compressed data claims.
pub(crate) fn decompress(
    codec: Codec,
    bytes: Vec<u8>,
    expected_len: u64,
) -> Result<Vec<u8>, DecompressError> {
    Decompressor::new().decompress(codec, bytes, expected_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        for codec in [
            Codec::None,
            Codec::Gzip,
            Codec::Zstd,
            Codec::ContextMix,
            Codec::LightContextMix,
        ] {
            let packed = compress(codec, 3, &data).unwrap();
            let back = decompress(codec, packed, data.len() as u64).unwrap();
            assert_eq!(back, data, "{codec}");
            assert_eq!(Codec::from_code(codec.code()), Some(codec));
            assert_eq!(Codec::from_name(codec.name()), Some(codec));
        }
        assert_eq!(Codec::from_code(5), None);
    }

    #[test]
    fn declared_length_bounds_expansion() {
        let data = vec![0u8; 100_000];
        for codec in [Codec::Gzip, Codec::Zstd] {
            let packed = compress(codec, 3, &data).unwrap();
            assert!(matches!(
                decompress(codec, packed.clone(), 10),
                Err(DecompressError::TooLong)
            ));
            assert!(matches!(
                decompress(codec, packed, 200_000),
                Err(DecompressError::TooShort(100_000))
            ));
        }
    }

    #[test]
    fn context_mix_refuses_lengths_it_cannot_hold() {
        // The coders have no end marker (the descriptor's length and checksum stand in for it),
        // so what they can check is that a claimed length is possible at all and within the
        // limit.
        let data = vec![0u8; 100_000];
        for codec in [Codec::ContextMix, Codec::LightContextMix] {
            let packed = compress(codec, 0, &data).unwrap();
            assert!(packed.len() < 100, "{codec}: {} bytes", packed.len());
            assert_eq!(decompress(codec, packed.clone(), 100_000).unwrap(), data);
            assert!(matches!(
                decompress(codec, packed.clone(), 1 << 30),
                Err(DecompressError::Invalid(_))
            ));
            assert!(matches!(
                decompress(codec, vec![1, 2, 3], 1 << 20),
                Err(DecompressError::Invalid(_))
            ));
        }
    }
}

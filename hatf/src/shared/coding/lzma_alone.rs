//! LZMA (the `.lzma` "alone" format: 13-byte header, end marker) for modelled streams whose
//! symbols are not byte-aligned text: literal context and position bits set to 0 suit streams
//! of varints better than xz's text defaults, whose literal contexts assume text, and LZMA's
//! range-coded literals suit such streams better than zstd's.
//!
//! The container has no LZMA codec, so a format that uses this stores the result in a section
//! with codec `none` and says so in its own documentation (docs/FORMAT.md §6.1).

use xz2::stream::{Action, LzmaOptions, Status, Stream};

/// Largest dictionary used (the `xz -9` dictionary).
const MAX_DICT: u32 = 64 << 20;
/// Decoder memory limit: the dictionary plus the coder's state, with room to spare.
const MEMLIMIT: u64 = 256 << 20;

/// Dictionary cap of layouts that bound the encoder's memory: the binary-tree match finder
/// takes about 11.5 bytes per dictionary byte, so 4 MiB keeps it near 50 MB where a 16 MiB
/// dictionary would take far more than an encoder may hold; the cost is a slightly longer
/// stream. Decoders need no setting: the dictionary size is in the stream's header.
pub const BOUNDED_DICT: u32 = 4 << 20;

/// Compresses `data`; the dictionary is the smallest power of two ≥ the input (at least
/// 4 KiB, at most 64 MiB), so small inputs need little memory.
pub fn compress(data: &[u8]) -> Result<Vec<u8>, String> {
    compress_with_dict(data, MAX_DICT)
}

/// [`compress`] with the dictionary at most `max_dict` bytes (at least 4 KiB).
pub fn compress_with_dict(data: &[u8], max_dict: u32) -> Result<Vec<u8>, String> {
    let mut opts = LzmaOptions::new_preset(9).map_err(|e| format!("lzma options: {e}"))?;
    let max_dict = max_dict.clamp(4096, MAX_DICT);
    let dict = u32::try_from(data.len().next_power_of_two())
        .unwrap_or(max_dict)
        .clamp(4096, max_dict);
    opts.dict_size(dict)
        .literal_context_bits(0)
        .literal_position_bits(0)
        .position_bits(0)
        .nice_len(273);
    let stream = Stream::new_lzma_encoder(&opts).map_err(|e| format!("lzma encoder: {e}"))?;
    run(stream, data, "lzma compression")
}

/// Decompresses what [`compress`] wrote; corrupt input is an error, never a panic.
pub fn decompress(data: &[u8]) -> Result<Vec<u8>, String> {
    let stream = Stream::new_lzma_decoder(MEMLIMIT).map_err(|e| format!("lzma decoder: {e}"))?;
    run(stream, data, "lzma stream")
}

fn run(mut stream: Stream, data: &[u8], what: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    loop {
        if out.capacity() - out.len() < 4096 {
            out.reserve(out.capacity().max(1 << 16));
        }
        let consumed = usize::try_from(stream.total_in()).unwrap_or(usize::MAX);
        let rest = data.get(consumed..).unwrap_or(&[]);
        let before = (stream.total_in(), stream.total_out());
        let status = stream
            .process_vec(rest, &mut out, Action::Finish)
            .map_err(|e| format!("{what}: {e}"))?;
        if status == Status::StreamEnd {
            return Ok(out);
        }
        if (stream.total_in(), stream.total_out()) == before && out.len() < out.capacity() {
            return Err(format!("{what}: truncated"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let data: Vec<u8> = (0..100_000u32)
            .map(|i| (i % 251) as u8 ^ (i / 7) as u8)
            .collect();
        let packed = compress(&data).unwrap();
        assert!(packed.len() < data.len() / 4);
        assert_eq!(decompress(&packed).unwrap(), data);
        assert_eq!(
            decompress(&compress(&[]).unwrap()).unwrap(),
            Vec::<u8>::new()
        );
        assert!(decompress(&packed[..packed.len() / 2]).is_err());
        assert!(decompress(b"not lzma at all").is_err());
        // A capped dictionary: the same data back, the cap in the header (bytes 1–4).
        let capped = compress_with_dict(&data, 64 << 10).unwrap();
        assert_eq!(decompress(&capped).unwrap(), data);
        assert_eq!(
            u32::from_le_bytes(capped[1..5].try_into().unwrap()),
            64 << 10
        );
        assert_eq!(
            u32::from_le_bytes(packed[1..5].try_into().unwrap()),
            128 << 10
        );
    }
}

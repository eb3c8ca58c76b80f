//! "Split stream": the columns of simple binary, each its own stream, compressed independently.
//!
//! Streams: `tag` (byte 0 of each 16-byte record), `thread` (bytes 1-3; left out when every byte is
//! 0, as in the paper's single-threaded traces), `size`, `address`, `third` (4 bytes each).

use super::simple;
use super::Stream;
use crate::shared::allocation::event::AllocEvent;

const COLUMNS: [(&str, usize, usize); 5] = [
    ("tag", 0, 1),
    ("thread", 1, 4),
    ("size", 4, 8),
    ("address", 8, 12),
    ("third", 12, 16),
];

/// Encodes events into column streams.
pub fn encode(events: &[AllocEvent]) -> Result<Vec<Stream>, String> {
    let flat = simple::encode(events)?;
    let mut streams = Vec::new();
    for (name, from, to) in COLUMNS {
        let mut col = Vec::with_capacity(flat.len() / simple::RECORD * (to - from));
        for rec in flat.chunks_exact(simple::RECORD) {
            col.extend_from_slice(&rec[from..to]);
        }
        if name == "thread" && col.iter().all(|b| *b == 0) {
            continue;
        }
        streams.push(Stream { name, bytes: col });
    }
    Ok(streams)
}

/// Decodes column streams written by [`encode`].
pub fn decode(streams: &[Stream]) -> Result<Vec<AllocEvent>, String> {
    let tag = streams
        .iter()
        .find(|s| s.name == "tag")
        .ok_or("the tag stream is missing")?;
    let n = tag.bytes.len();
    let mut flat = vec![0u8; n * simple::RECORD];
    for (name, from, to) in COLUMNS {
        let width = to - from;
        let Some(s) = streams.iter().find(|s| s.name == name) else {
            if name == "thread" {
                continue;
            }
            return Err(format!("the {name} stream is missing"));
        };
        if s.bytes.len() != n * width {
            return Err(format!(
                "the {name} stream has {} bytes; {n} records need {}",
                s.bytes.len(),
                n * width
            ));
        }
        for (i, chunk) in s.bytes.chunks_exact(width).enumerate() {
            flat[i * simple::RECORD + from..i * simple::RECORD + to].copy_from_slice(chunk);
        }
    }
    if let Some(s) = streams.iter().find(|s| s.name == "thread") {
        if s.bytes.iter().all(|b| *b == 0) {
            return Err("an all-zero thread stream is written as no stream".into());
        }
    }
    simple::decode(&flat)
}

//! Helpers shared by the hostile-input tests: valid traces of every text format, of any length,
//! and encode/decode through the `TraceFormat` seam.
#![allow(dead_code)]

#[path = "../../../metatf/tests/hostile_support/counting_alloc.rs"]
pub mod counting_alloc;

use metatf::varint::put_u64;
use std::io::Write;

use hatf::by_name;
use hatf::format::{Compression, DecodeOptions, EncodeOptions, FormatError};

/// The text formats with a `TraceFormat` front end.
pub const FORMATS: [&str; 6] = [
    "mtrace",
    "memory-replay",
    "wee-alloc",
    "malloc-bench",
    "et2",
    "et3",
];

/// A protobuf length-delimited field.
fn ld(field: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![(field << 3) | 2];
    put_u64(&mut v, body.len() as u64);
    v.extend_from_slice(body);
    v
}

/// A protobuf message of varint fields 1, 2, ... holding `values`.
fn varints(values: &[u64]) -> Vec<u8> {
    let mut v = vec![];
    for (i, &x) in values.iter().enumerate() {
        v.push((i as u8 + 1) << 3); // wire type 0: varint
        put_u64(&mut v, x);
    }
    v
}

/// A valid trace of `format` with about `n` events (every event kind the format has).
pub fn trace(format: &str, n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut line = |s: String| out.extend_from_slice(s.as_bytes());
    match format {
        "mtrace" => {
            line("= Start\n".into());
            for i in 0..n {
                let a = 0x5500_0000 + 0x40 * (i as u64 / 2);
                match i % 4 {
                    0 => line(format!(
                        "@ ./app:[0x{:x}] + {a:#x} {:#x}\n",
                        0x400 + i % 7,
                        16 + i % 90
                    )),
                    1 => line(format!(
                        "@ ./app:(f+1a)[0x4f2] < {a:#x}\n@ ./app:(f+1a)[0x4f2] > {:#x} 0x20\n",
                        a + 8
                    )),
                    2 => line(format!("@ /lib/libc.so.6:[0x7f1] - {:#x}\n", a + 8)),
                    _ => line(format!(
                        "@ [0x{:x}] + {a:#x} 0x{:x}\n",
                        0x900 + i % 3,
                        i % 40 + 1
                    )),
                }
            }
            line("= End\n".into());
        }
        "memory-replay" => {
            for i in 0..n {
                let t = 100 + i % 3;
                let a = 0x7000 + 0x20 * (i / 2);
                match i % 5 {
                    0 => line(format!("{t}: malloc {a:#x} {}\n", i % 64 + 1)),
                    1 => line(format!("{t}: calloc {a:#x} 3 {}\n", i % 9)),
                    2 => line(format!("{t}: realloc {:#x} {a:#x} {}\n", a + 0x10, i % 50)),
                    3 => line(format!("{t}: memalign {a:#x} 16 {}\n", i % 70)),
                    _ => line(format!("{t}: free {a:#x}\n")),
                }
            }
        }
        "wee-alloc" => {
            for i in 0..n {
                if i % 3 == 2 {
                    line(format!("Free({}),\n", i / 3));
                } else {
                    line(format!("Alloc({}),\n", 8 + i % 100));
                }
            }
        }
        "malloc-bench" => {
            let mut msg = Vec::new();
            for i in 0..n as u64 {
                let body = match i % 2 {
                    0 => ld(1, &varints(&[i / 2, 0x20 + i % 64])),
                    _ => ld(2, &varints(&[i / 2])),
                };
                msg.extend(ld(1, &body));
            }
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&msg).expect("memory");
            return gz.finish().expect("memory");
        }
        "et2" | "et3" => {
            for i in 0..n {
                let obj = 1000 + i / 4;
                match i % 5 {
                    0 => line(format!("N {obj} 16 {} 3 0 77\n", i % 7)),
                    1 => line(format!("M {} {obj} 77\n", i % 11)),
                    2 => line(format!("E {} 77\n", i % 11)),
                    3 if format == "et3" => line(format!("U {obj} {} 4 77\n", obj + 1)),
                    3 => line(format!("U {} {obj} 4 77\n", obj + 1)),
                    _ => line(format!("D {obj} 77 {i}\n")),
                }
            }
        }
        other => panic!("no generator for {other}"),
    }
    out
}

/// Encodes `text` as `format` with `compression`.
pub fn encode(format: &str, text: &[u8], compression: Compression) -> Vec<u8> {
    let f = by_name(format).unwrap_or_else(|| panic!("no format {format}"));
    let options = EncodeOptions {
        compression,
        ..EncodeOptions::default()
    };
    let mut out = Vec::new();
    f.encode(&mut &text[..], &mut out, &options)
        .unwrap_or_else(|e| panic!("{format}: {e}"));
    out
}

/// Decodes `binary` as `format`.
pub fn decode(format: &str, binary: &[u8]) -> Result<Vec<u8>, FormatError> {
    let f = by_name(format).unwrap_or_else(|| panic!("no format {format}"));
    let mut out = Vec::new();
    f.decode(&mut &binary[..], &mut out, &DecodeOptions::default())?;
    Ok(out)
}

/// A small deterministic generator for random positions (no dependency, same on every run).
pub struct Positions(pub u64);

impl Positions {
    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Nanoseconds this thread has spent on a CPU (Linux `schedstat`), or `None` where the kernel
/// does not say. Unlike wall-clock time it does not grow while the thread waits for a core.
pub fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// The least CPU time of three runs of `f` (the least is the run disturbed least).
pub fn least_cpu_ns(mut f: impl FnMut()) -> Option<u64> {
    (0..3)
        .map(|_| {
            let start = thread_cpu_ns()?;
            f();
            Some(thread_cpu_ns()? - start)
        })
        .min()
        .flatten()
}

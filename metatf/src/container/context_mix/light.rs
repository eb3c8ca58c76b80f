//! The light context mixer (docs/FORMAT.md §6.1, "The light context mixer"): container codec 4,
//! for the sections of short traces.
//!
//! Why a third mixer: codec 3 ([`super::v2`]) mixes twelve inputs through two mixers and two
//! probability maps with ten 2^16-slot tables, about 2 MB/s each way plus the page faults of
//! its tables, which makes a short trace take many times as long as `zstd -3` to encode and
//! decode. The streams of such short traces are predicted almost as well from the last two
//! bytes, the byte two back alone and earlier repeats: four contexts, the match model and one
//! mixer code them within a few per cent of version 2, still smaller than `zstd -19`, in a
//! fraction of its time, with tables of at most 576 KiB that start zeroed (so untouched pages cost nothing)
//! and are kept for the thread's next section.
//!
//! Stream: the arithmetic-coded bits (8 per byte, most significant first), with no length in
//! front (the container's descriptor holds it); the coder is version 2's.

use std::cell::Cell;
use std::sync::OnceLock;

use super::v2::{code_bits, decode_bits, squash16, BitModel};
use super::Tables;

/// Slots of the order-1 and the byte-two-back tables: one per (byte, partial byte).
const DIRECT_SLOTS: usize = 1 << 16;
/// Smallest and largest log2 slot count of the hashed order-2 table.
const HASHED_BITS: (u32, u32) = (12, 14);
/// Bytes that must agree before the match model predicts from an earlier occurrence.
const MATCH_MIN: usize = 5;
/// Longest agreement checked when a match candidate is found.
const MATCH_CHECK: usize = 32;
/// Mixer inputs: order 0, order 1, the byte two back, order 2, the match model, a bias.
const INPUTS: usize = 6;
/// Initial mixer weight (1/4 in 16-bit fixed point).
const INITIAL_WEIGHT: i32 = 1 << 14;
/// Bits over which the mixer's extra learning rate halves (as in version 2).
const LEARNING_HALF_LIFE: i64 = 1 << 14;
/// A slot's value at probability ½ with count 0; slots hold their value XOR this, so that a
/// zeroed table (fresh pages from the system, never written until used) is a table of fresh
/// slots.
const FRESH: u32 = 1 << 31;
/// The mixer learns only from bits it missed by at least this much (of 65536): most bits of a
/// modelled stream are predicted almost surely, and skipping their tiny steps saves time
/// without costing bytes (the tiny steps are mostly noise).
const LEARN_FROM_MISS: i32 = 1024;

thread_local! {
    /// The slot table of the last predictor dropped on this thread, for the next one: a
    /// trace's sections are coded one after another on the same few threads, and zeroing a
    /// kept table costs far less than the page faults of a fresh one (about 140 per section).
    static SPARE_SLOTS: Cell<Vec<u32>> = const { Cell::new(Vec::new()) };
}

/// Version 1's stretch and rate tables, made once per process.
fn shared_tables() -> &'static ([i16; 4096], [u32; 256]) {
    static TABLES: OnceLock<([i16; 4096], [u32; 256])> = OnceLock::new();
    TABLES.get_or_init(|| {
        let t = Tables::new();
        let mut stretch = [0i16; 4096];
        stretch.copy_from_slice(&t.stretch);
        (stretch, t.rate)
    })
}

/// A zeroed slot table of `len` entries, reusing this thread's spare one when it is big enough.
fn zeroed_slots(len: usize) -> Vec<u32> {
    let mut slots = SPARE_SLOTS.with(Cell::take);
    if slots.capacity() < len {
        // Fresh zeroed pages: only those the coding touches are ever faulted in.
        return vec![0; len];
    }
    slots.clear();
    slots.resize(len, 0);
    slots
}

/// Moves a slot (22-bit probability << 10 | count) toward `bit` at its count's rate.
#[inline(always)]
fn adapt(slot: u32, bit: u32, rate: &[u32; 256]) -> u32 {
    let n = slot & 1023;
    let p = i64::from(slot >> 10);
    let target = if bit == 1 { (1i64 << 22) - 1 } else { 0 };
    // Counts never pass 255, so the mask only spares a bounds check.
    let p = p + (((target - p) * i64::from(rate[n as usize & 255])) >> 16);
    ((p as u32) << 10) | (n + 1).min(255)
}

/// The bit predictor shared by encoder and decoder.
struct Predictor {
    stretch: &'static [i16; 4096],
    counter_rate: &'static [u32; 256],
    /// Order 0: one slot per partial byte.
    order0: [u32; 256],
    /// Order 1 (`DIRECT_SLOTS`), the byte two back (`DIRECT_SLOTS`), then order 2 hashed
    /// (2^`hashed_bits`), each slot XOR [`FRESH`].
    slots: Vec<u32>,
    hashed_bits: u32,
    /// The last four bytes, the last one lowest.
    history: u32,
    /// Bits of the current byte so far, with a leading 1.
    partial: u32,
    /// First slot of the current nibble's group of 16 in the order-2 table.
    group: usize,
    /// Slot of each table context for the next bit.
    index: [usize; 3],
    inputs: [i32; INPUTS],
    /// Mixer weights, one set per partial byte.
    weights: Box<[[i32; INPUTS]; 256]>,
    /// The mixer's 16-bit probability.
    p: i32,
    /// Mixer learning rate (sixteenths), set at each byte.
    rate: i32,
    /// Bytes coded so far, then the match model's state.
    seen: Vec<u8>,
    /// Position after the last occurrence of each hashed 5-byte string.
    last_seen: Vec<u32>,
    /// Position in `seen` of the byte predicted next (valid when `match_len > 0`).
    match_ptr: usize,
    match_len: usize,
    /// Slot (probability that the predicted bit is right) per match length 0…15.
    hit: [u32; 16],
    /// The bit the match model predicted for the current bit, if any.
    expected: Option<u32>,
}

impl Predictor {
    fn new(len: u64) -> Predictor {
        let hashed_bits = (64 - len.max(1).leading_zeros() + 2).clamp(HASHED_BITS.0, HASHED_BITS.1);
        let (stretch, counter_rate) = shared_tables();
        let mut p = Predictor {
            stretch,
            counter_rate,
            order0: [FRESH; 256],
            slots: zeroed_slots(2 * DIRECT_SLOTS + (1 << hashed_bits)),
            hashed_bits,
            history: 0,
            partial: 1,
            group: 0,
            index: [0; 3],
            inputs: [0; INPUTS],
            weights: Box::new([[INITIAL_WEIGHT; INPUTS]; 256]),
            p: 32768,
            rate: 32,
            seen: Vec::with_capacity(len.min(1 << 24) as usize),
            last_seen: vec![0; 1 << (hashed_bits - 2)],
            match_ptr: 0,
            match_len: 0,
            hit: [3 << 30; 16],
            expected: None,
        };
        p.set_group();
        p.set_indexes();
        p
    }

    /// The order-2 group of 16 slots for the current nibble: the last two bytes and, in the
    /// second nibble, the first nibble's bits, hashed.
    fn set_group(&mut self) {
        let nibble = if self.partial >= 16 { self.partial } else { 0 };
        let key = ((self.history & 0xffff) << 8) | nibble;
        let group = key.wrapping_mul(0x9E37_79B1) >> (32 - (self.hashed_bits - 4));
        self.group = 2 * DIRECT_SLOTS + ((group as usize) << 4);
    }

    fn set_indexes(&mut self) {
        let partial = self.partial as usize;
        let done = 31 - self.partial.leading_zeros();
        let in_nibble = done & 3;
        let slot = ((1u32 << in_nibble) | (self.partial & ((1 << in_nibble) - 1))) as usize;
        self.index = [
            ((self.history as usize & 0xff) << 8) | partial,
            DIRECT_SLOTS | (self.history as usize & 0xff00) | partial,
            self.group + slot,
        ];
    }

    /// Stretched prediction of the match model for the next bit, 0 without one.
    fn match_input(&mut self) -> i32 {
        self.expected = None;
        if self.match_len == 0 {
            return 0;
        }
        let Some(&predicted) = self.seen.get(self.match_ptr) else {
            return 0;
        };
        let done = 31 - self.partial.leading_zeros();
        if (u32::from(predicted) | 256) >> (8 - done) != self.partial {
            // The byte left the repeat: no prediction until the next byte finds one.
            self.match_len = 0;
            return 0;
        }
        let bit = (u32::from(predicted) >> (7 - done)) & 1;
        self.expected = Some(bit);
        let confidence = self.stretch[(self.hit[self.match_len.min(15)] >> 20) as usize];
        if bit == 1 {
            i32::from(confidence)
        } else {
            -i32::from(confidence)
        }
    }

    /// Probability (1…65535, of 65536) that the next bit is 1.
    fn predict(&mut self) -> u32 {
        let stretch = self.stretch;
        let order0 = self.order0[self.partial as usize & 255];
        self.inputs[0] = i32::from(stretch[(order0 >> 20) as usize]);
        for (k, &i) in self.index.iter().enumerate() {
            let slot = self.slots[i] ^ FRESH;
            self.inputs[1 + k] = i32::from(stretch[(slot >> 20) as usize]);
        }
        self.inputs[4] = self.match_input();
        self.inputs[5] = 256; // bias
        let w = &self.weights[self.partial as usize & 255];
        let dot: i64 = self
            .inputs
            .iter()
            .zip(w.iter())
            .map(|(&x, &w)| i64::from(x) * i64::from(w))
            .sum();
        self.p = squash16((dot >> 16).clamp(-4095, 4095) as i32);
        self.p as u32
    }

    fn update(&mut self, bit: u32) {
        let miss = ((bit as i32) << 16) - self.p;
        if miss.abs() >= LEARN_FROM_MISS {
            let err = ((miss >> 4) * self.rate) >> 4;
            let w = &mut self.weights[self.partial as usize & 255];
            for (w, &x) in w.iter_mut().zip(self.inputs.iter()) {
                *w = (*w + ((x * err) >> 9)).clamp(-(1 << 22), 1 << 22);
            }
        }
        let rate = self.counter_rate;
        let o0 = &mut self.order0[self.partial as usize & 255];
        *o0 = adapt(*o0, bit, rate);
        for &i in &self.index {
            self.slots[i] = adapt(self.slots[i] ^ FRESH, bit, rate) ^ FRESH;
        }
        if let Some(expected) = self.expected {
            let slot = &mut self.hit[self.match_len.min(15)];
            *slot = adapt(*slot, u32::from(expected == bit), rate);
        }
        self.partial = (self.partial << 1) | bit;
        if self.partial >= 256 {
            let byte = self.partial as u8;
            self.history = (self.history << 8) | u32::from(byte);
            self.partial = 1;
            self.byte_done(byte);
            let bits = 8 * self.seen.len() as i64;
            self.rate = (8 + 24 * LEARNING_HALF_LIFE / (bits + LEARNING_HALF_LIFE)) as i32;
            self.set_group();
        } else if self.partial >> 4 == 1 {
            self.set_group();
        }
        self.set_indexes();
    }

    /// The match model after each whole byte: follow the repeat, or look one up.
    fn byte_done(&mut self, byte: u8) {
        self.seen.push(byte);
        if self.match_len > 0 && self.seen.get(self.match_ptr) == Some(&byte) {
            self.match_len += 1;
            self.match_ptr += 1;
        } else {
            self.match_len = 0;
        }
        let n = self.seen.len();
        if n < MATCH_MIN {
            return;
        }
        let h = self.seen[n - MATCH_MIN..]
            .iter()
            .fold(0u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
        let slot = (h.wrapping_mul(0x9E37_79B1) >> 16) as usize & (self.last_seen.len() - 1);
        if self.match_len == 0 {
            let candidate = self.last_seen[slot] as usize;
            let mut len = 0;
            while len < MATCH_CHECK
                && len < candidate
                && self.seen[candidate - 1 - len] == self.seen[n - 1 - len]
            {
                len += 1;
            }
            if len >= MATCH_MIN {
                self.match_len = len;
                self.match_ptr = candidate;
            }
        }
        self.last_seen[slot] = u32::try_from(n).unwrap_or(0);
    }
}

impl BitModel for Predictor {
    #[inline]
    fn predict(&mut self) -> u32 {
        Predictor::predict(self)
    }
    #[inline]
    fn update(&mut self, bit: u32) {
        Predictor::update(self, bit);
    }
}

impl Drop for Predictor {
    fn drop(&mut self) {
        let slots = std::mem::take(&mut self.slots);
        SPARE_SLOTS.with(|spare| spare.set(slots));
    }
}

/// Codes `data` with no length in front (the caller stores it).
pub fn encode(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 3 + 16);
    let mut p = Predictor::new(data.len() as u64);
    code_bits(data, &mut p, &mut out);
    out
}

/// Decodes `len` bytes of what [`encode`] wrote. Damaged input gives wrong bytes (the caller's
/// checksum catches them) or an error, never a panic; the caller bounds `len` (see
/// [`super::v2::plausible_length`], which holds for this coder too).
pub fn decode(coded: &[u8], len: u64) -> Result<Vec<u8>, String> {
    let mut p = Predictor::new(len);
    decode_bits(
        coded,
        len,
        &mut p,
        "light context-mixed section is cut short",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator, so the samples need no data files.
    struct Noise(u64);

    impl Noise {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// Site strings as an mtrace log's site stream holds them: a few libraries, a few dozen
    /// functions, varied offsets, each site once.
    fn site_strings() -> Vec<u8> {
        let mut noise = Noise(0x2545_F491_4F6C_DD1D);
        let libraries = [
            "/usr/lib/libpython3.11.so.1.0",
            "/lib/x86_64-linux-gnu/libc.so.6",
        ];
        let mut out = Vec::new();
        for _ in 0..300 {
            let r = noise.next();
            let library = libraries[(r % 2) as usize];
            let function = format!(
                "Py{}_{}",
                ["Object", "Dict", "List", "Unicode"][(r >> 8) as usize % 4],
                ["New", "Malloc", "Resize", "SetItem", "Alloc"][(r >> 16) as usize % 5]
            );
            out.extend_from_slice(
                format!("{library}:({function}+0x{:x})\0", (r >> 24) % 2000).as_bytes(),
            );
        }
        out
    }

    /// Symbol streams with a skewed, context-dependent distribution, the edge lengths, and noise.
    fn samples() -> Vec<Vec<u8>> {
        let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
        let mut last = 0u8;
        let symbols = (0..6_000)
            .map(|_| {
                let r = noise.next();
                last = if r & 3 == 0 {
                    (r >> 8) as u8 % 40
                } else {
                    last.wrapping_add(1) % 40
                };
                last
            })
            .collect();
        vec![
            Vec::new(),
            vec![7u8],
            (0..20_000u32).map(|i| (i % 13) as u8).collect(),
            (0..5_000).map(|_| noise.next() as u8).collect(),
            symbols,
            site_strings(),
        ]
    }

    #[test]
    fn round_trips_and_compresses() {
        for data in samples() {
            let coded = encode(&data);
            assert_eq!(decode(&coded, data.len() as u64).unwrap(), data);
        }
        let periodic: Vec<u8> = (0..20_000u32).map(|i| (i % 13) as u8).collect();
        assert!(encode(&periodic).len() < 300, "{}", encode(&periodic).len());
    }

    #[test]
    fn codes_short_streams_smaller_than_zstd_and_close_to_version_2() {
        // The reason for this coder: on short modelled streams, smaller than zstd at its best
        // level and not far behind version 2.
        for data in samples().into_iter().skip(4) {
            let light = encode(&data).len();
            let v2 = super::super::v2::encode(&data, super::super::v2::CODEC_TABLE_BITS).len();
            let zstd = crate::container::zstd_compress(19, &data).unwrap().len();
            assert!(
                light * 100 <= zstd * 90,
                "light {light} bytes, zstd -19 {zstd}"
            );
            // Here 2 % behind on the symbols, 24 % on the strings, which version 2's longer
            // contexts see better (a real log's site strings: 6 %).
            assert!(
                light * 100 <= v2 * 130,
                "light {light} bytes, version 2 {v2}"
            );
        }
    }

    #[test]
    fn damaged_input_does_not_panic() {
        let data = b"Alloc(1), Free(0), Alloc(1), Free(0), Alloc(2), Free(1), Alloc(1),";
        let coded = encode(data);
        for cut in 0..coded.len() {
            let _ = decode(&coded[..cut], data.len() as u64);
        }
        let mut bad = coded.clone();
        bad[2] ^= 0x55;
        let _ = decode(&bad, data.len() as u64);
        // Noise does not compress: half its code cannot give it back.
        let noise = &samples()[3];
        let coded = encode(noise);
        assert!(coded.len() > 4_000);
        let cut = decode(&coded[..coded.len() / 2], noise.len() as u64);
        assert_eq!(cut.unwrap_err(), "light context-mixed section is cut short");
    }
}

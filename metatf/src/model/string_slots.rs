//! The context slots of the byte-string model (docs/FORMAT.md §7 "Byte strings").
//!
//! Why buckets: a byte is coded as eight bits, each looking up one slot per context. Hashing
//! every bit to its own slot costs a cache miss per context per bit; here a context's hash
//! picks, once per half-byte, a bucket of 16 slots that fills one 64-byte cache line, and the
//! bits of that half-byte index within it (as lpaq does). So a byte touches two lines per
//! context instead of eight.
//!
//! Why the tables grow: a block whose strings are mostly found in the dictionaries codes few
//! bytes bit by bit and needs small tables. Tables start at 2^[`MIN_TABLE_BITS`] slots per
//! context and double as bytes are coded, up to the block's cap. Slot `i` of a table of 2^b
//! slots is picked by the top bits of a hash, so in a table of 2^(b+1) slots the same hash
//! picks `2i` or `2i + 1`: doubling copies each bucket into both of its successors and loses
//! nothing, and the writer and the reader, counting the same bytes, grow at the same byte.
//!
//! Why 16-bit slots: the mixer reads a slot's probability to 12 bits, and a slot's rate stops
//! falling after 11 visits, so a 12-bit probability and a 4-bit count hold what is used. Half
//! the bytes of 32-bit slots halve the tables (the largest allocation of a text trace: 32 MiB
//! at the cap, 16 MiB now) and the cache lines a byte touches.

/// A slot: a 12-bit probability of a 1 << 4 | how often it was seen (at most 15).
pub(crate) type Slot = u16;
/// A fresh slot: probability ½, seen 0 times.
pub(crate) const FRESH: Slot = 1 << 15;

/// Moves a slot toward `bit` by `rate[count]` (of 65536): at least one step of 1/4096 while
/// it is not at the bit, so a context that always sees the same bit reaches 0 or 4095 (with
/// the step rounded down, a 12-bit probability would stop 12 steps short of a 1).
#[inline(always)]
pub(crate) fn adapt(slot: Slot, bit: u32, rate: &[u32; 256]) -> Slot {
    let n = u32::from(slot & 15);
    let p = i32::from(slot >> 4);
    let gap = if bit == 1 { 4095 - p } else { -p };
    let step = ((i64::from(gap) * i64::from(rate[n as usize])) >> 16) as i32;
    let step = if step == 0 { gap.signum() } else { step };
    (((p + step) as u16) << 4) | (n + 1).min(15) as u16
}
/// Fewest and most slots (log2) of each context's table.
pub(crate) const MIN_TABLE_BITS: u32 = 12;
/// See [`MIN_TABLE_BITS`].
pub(crate) const MAX_TABLE_BITS: u32 = 20;
/// The cap the writer picks for a block whose strings, back to back, are `bytes`:
/// [`table_bits`] of the count of their 8-byte windows not seen before in the block (by a
/// 2^18-bit map of window hashes). Why not the string bytes themselves: strings repeated whole
/// are found in the dictionaries and strings repeated in parts by the match model and the
/// long contexts; what the tables must hold grows with the new content, and a block of a
/// million call sites drawn from a few hundred (1.2 million mtrace records: 43 MB of strings,
/// 1,751 distinct windows) needs small tables, not 40 MB.
pub(crate) fn table_cap(bytes: &[u8]) -> u32 {
    const MAP_BITS: u32 = 18;
    let mut seen = vec![0u64; 1 << (MAP_BITS - 6)];
    let mut window = 0u64;
    let mut new = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        window = (window << 8) | u64::from(b);
        if i < 7 {
            continue;
        }
        let k = (window.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - MAP_BITS)) as usize;
        let (word, bit) = (k >> 6, k & 63);
        if seen[word] >> bit & 1 == 0 {
            seen[word] |= 1 << bit;
            new += 1;
        }
    }
    table_bits(new)
}

/// Slots of a bucket (log2): the 15 nodes of a half-byte's binary tree, plus one unused.
const BUCKET_BITS: u32 = 4;

/// The tables hold 2^`GROWTH` times more slots than [`table_bits`] gives for the bytes coded
/// so far. Why so many: a table still small when its first strings are coded keeps their
/// collisions, so the table grows well ahead of the bytes coded, while a short trace still
/// does not pay for a table at the cap from the start.
const GROWTH: u32 = 6;

/// Table bits for `bytes` bytes: two slots per bit, within
/// [`MIN_TABLE_BITS`]..=[`MAX_TABLE_BITS`].
pub(crate) fn table_bits(bytes: usize) -> u32 {
    let want = 64 - (bytes as u64).saturating_mul(16).leading_zeros();
    want.clamp(MIN_TABLE_BITS, MAX_TABLE_BITS)
}

/// Half a cache line of slots.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Bucket([Slot; 1 << BUCKET_BITS]);

/// Where a context's half-byte lives: the index of its bucket.
pub(crate) type BucketAt = usize;

/// The slots of every context: `contexts` tables of 2^`bits` slots, back to back.
pub(crate) struct Slots {
    bits: u32,
    cap: u32,
    contexts: usize,
    buckets: Vec<Bucket>,
    coded: usize,
}

impl Slots {
    /// `contexts` fresh tables of 2^[`MIN_TABLE_BITS`] slots that may grow to 2^`cap`.
    pub(crate) fn new(contexts: usize, cap: u32) -> Slots {
        let cap = cap.clamp(MIN_TABLE_BITS, MAX_TABLE_BITS);
        // Reserve room for the cap: growing then never moves the tables (no second copy in
        // memory), and pages not yet grown into are never touched.
        let mut buckets = Vec::with_capacity(contexts << (cap - BUCKET_BITS));
        buckets.resize(
            contexts << (MIN_TABLE_BITS - BUCKET_BITS),
            Bucket([FRESH; 1 << BUCKET_BITS]),
        );
        Slots {
            bits: MIN_TABLE_BITS,
            cap,
            contexts,
            buckets,
            coded: 0,
        }
    }

    /// The bucket of context `i` whose hash is `hash`.
    #[inline(always)]
    pub(crate) fn bucket(&self, i: usize, hash: u64) -> BucketAt {
        let b = self.bits - BUCKET_BITS;
        (i << b) + (hash >> (64 - b)) as usize
    }

    /// Slot `node` (1–15) of bucket `at`.
    #[inline(always)]
    pub(crate) fn get(&self, at: BucketAt, node: usize) -> Slot {
        self.buckets[at].0[node]
    }

    /// Sets slot `node` of bucket `at`.
    #[inline(always)]
    pub(crate) fn set(&mut self, at: BucketAt, node: usize, v: Slot) {
        self.buckets[at].0[node] = v;
    }

    /// A byte was coded bit by bit: the tables double when the bytes coded so far call for it.
    pub(crate) fn byte_coded(&mut self) {
        self.coded += 1;
        if self.bits < self.cap && table_bits(self.coded << GROWTH) > self.bits {
            self.grow();
        }
    }

    /// Doubles every table in place: bucket `j` of table `i` goes to buckets `2j` and `2j + 1`.
    /// Working from the end, each bucket written lies at or past every one still to be read.
    fn grow(&mut self) {
        let per = 1usize << (self.bits - BUCKET_BITS);
        self.buckets
            .resize(self.contexts * per * 2, Bucket([FRESH; 1 << BUCKET_BITS]));
        for i in (0..self.contexts).rev() {
            for j in (0..2 * per).rev() {
                self.buckets[i * 2 * per + j] = self.buckets[i * per + j / 2];
            }
        }
        self.bits += 1;
    }

    /// Slots per context now (log2).
    #[cfg(test)]
    pub(crate) fn bits(&self) -> u32 {
        self.bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growing_keeps_what_each_hash_finds() {
        let mut s = Slots::new(3, 14);
        let hashes: Vec<u64> = (1..200u64)
            .map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        for (n, &h) in hashes.iter().enumerate() {
            let at = s.bucket(n % 3, h);
            s.set(at, 1 + n % 15, n as Slot);
        }
        // Later writes to a shared bucket win; read back what the small table holds.
        let before: Vec<Slot> = hashes
            .iter()
            .enumerate()
            .map(|(n, &h)| s.get(s.bucket(n % 3, h), 1 + n % 15))
            .collect();
        while s.bits() < 14 {
            s.byte_coded();
        }
        let after: Vec<Slot> = hashes
            .iter()
            .enumerate()
            .map(|(n, &h)| s.get(s.bucket(n % 3, h), 1 + n % 15))
            .collect();
        assert_eq!(before, after);
        assert_eq!(s.buckets.len(), 3 << (14 - BUCKET_BITS));
    }

    #[test]
    fn repeated_strings_ask_for_small_tables() {
        let site = b"perl:(Perl_safesysmalloc+26)[0xf6f96]";
        let repeated = site.repeat(100_000);
        assert_eq!(table_cap(&repeated), MIN_TABLE_BITS);
        let varied: Vec<u8> = (0..200_000u64)
            .flat_map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes())
            .collect();
        assert_eq!(table_cap(&varied), MAX_TABLE_BITS);
    }

    /// Rates as the string model uses them (floor 1/12).
    fn rates() -> [u32; 256] {
        let mut rate = [0u32; 256];
        for (n, r) in rate.iter_mut().enumerate() {
            *r = (65536 * 2 / (2 * n as u32 + 3)).max(65536 / 12);
        }
        rate
    }

    #[test]
    fn a_slot_that_sees_one_bit_reaches_it() {
        let rate = rates();
        for bit in [0u32, 1] {
            let mut s = FRESH;
            let mut seen = Vec::new();
            for _ in 0..400 {
                let next = adapt(s, bit, &rate);
                // Every step moves toward the bit (or stays at it).
                let (p, q) = (s >> 4, next >> 4);
                assert!(if bit == 1 { q >= p } else { q <= p });
                seen.push(next & 15);
                s = next;
            }
            assert_eq!(s >> 4, if bit == 1 { 4095 } else { 0 });
            assert_eq!(seen[..3], [1, 2, 3]);
            assert_eq!(s & 15, 15);
        }
        // A fresh slot moves 2/3 of the way to its first bit (the rate of a count of 0).
        let one = adapt(FRESH, 1, &rate);
        assert_eq!(u32::from(one >> 4), 2048 + ((2047 * 43690) >> 16));
    }

    #[test]
    fn tables_stop_at_the_cap() {
        let mut s = Slots::new(2, 13);
        for _ in 0..100_000 {
            s.byte_coded();
        }
        assert_eq!(s.bits(), 13);
    }
}

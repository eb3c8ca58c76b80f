//! A binary arithmetic coder driven by explicit, structured models: each decision (is this an
//! allocation? is the size one seen before? …) is one bit coded with the adaptive probability
//! of its own context (docs/FORMAT.md §6.1, "The structured bit coding").
//!
//! Why not the context mixer: on a trace of a hundred records the mixer must first learn which
//! byte values mean what, which costs more than the records are worth; a model that already
//! knows the structure pays only for the information. The coder's arithmetic is the context
//! mixer's (32-bit interval, 16-bit probabilities, bytes out as soon as the interval's top byte
//! is settled) so its behaviour is well tested; the end is shorter (the fewest bytes that pin
//! the interval down, trailing zero bytes dropped, since the decoder reads zeros past the end).

/// The adaptive probability that a bit is 1, with the count of bits it learnt from.
#[derive(Debug, Clone, Copy)]
pub struct Bit {
    /// Probability of a 1, in 1/65536, kept in `MIN_P..=65536 - MIN_P`.
    p: u16,
    /// Bits seen, up to [`LIMIT`]: the learning rate is about 1 / (count + 1.5).
    count: u8,
}

/// After this many bits a probability keeps adapting at a fixed rate (about 1/31), so it
/// follows a trace whose statistics drift.
const LIMIT: u8 = 30;
/// The most certain a probability gets (32 / 65536 for the unlikely side): a surprise costs
/// at most 11 bits.
const MIN_P: i32 = 32;

impl Default for Bit {
    fn default() -> Self {
        Bit { p: 32768, count: 0 }
    }
}

impl Bit {
    /// Moves the probability toward `bit` by 2 / (2 × count + 3): the first bit seen moves it
    /// two thirds of the way, as an average over the bits seen so far would.
    fn update(&mut self, bit: bool) {
        let target = if bit { 65535 } else { 0 };
        let p = i32::from(self.p);
        let rate = 2 * 65536 / (2 * i32::from(self.count) + 3);
        let p = p + (((target - p) * rate) >> 16);
        self.p = p.clamp(MIN_P, 65536 - MIN_P) as u16;
        self.count = (self.count + 1).min(LIMIT);
    }
}

/// The split point of `[x1, x2]` for probability `p` (of a 1, in 1/65536).
fn split(x1: u32, x2: u32, p: u16) -> u32 {
    x1 + ((u64::from(x2 - x1) * u64::from(p)) >> 16) as u32
}

/// Codes bits into bytes.
#[derive(Debug)]
pub struct BitEncoder {
    x1: u32,
    x2: u32,
    out: Vec<u8>,
}

impl Default for BitEncoder {
    fn default() -> Self {
        BitEncoder {
            x1: 0,
            x2: u32::MAX,
            out: Vec::new(),
        }
    }
}

impl BitEncoder {
    /// Codes `bit` with the probability `model` gives, then teaches `model` the bit.
    pub fn bit(&mut self, bit: bool, model: &mut Bit) {
        self.code(bit, model.p);
        model.update(bit);
    }

    /// Codes `bit` as equally likely either way (a bit no model predicts).
    pub fn even(&mut self, bit: bool) {
        self.code(bit, 32768);
    }

    fn code(&mut self, bit: bool, p: u16) {
        let mid = split(self.x1, self.x2, p);
        if bit {
            self.x2 = mid;
        } else {
            self.x1 = mid + 1;
        }
        while (self.x1 ^ self.x2) & 0xff00_0000 == 0 {
            self.out.push((self.x2 >> 24) as u8);
            self.x1 <<= 8;
            self.x2 = (self.x2 << 8) | 255;
        }
    }

    /// The coded bytes: the fewest bytes (at least one) of a value inside the final interval
    /// that, padded with zero bytes, stays inside. Since at least one byte follows the last byte
    /// the coding itself produced, a decoder that needs more bytes than are there (beyond
    /// the padding it reads ahead) was asked for more bits than were coded: see
    /// [`BitDecoder::overrun`].
    pub fn finish(mut self) -> Vec<u8> {
        let (x1, x2) = (u64::from(self.x1), u64::from(self.x2));
        for k in 1..=4u32 {
            let unit = 1u64 << (32 - 8 * k);
            let v = x1.div_ceil(unit) * unit;
            if v <= x2 {
                self.out
                    .extend_from_slice(&(v as u32).to_be_bytes()[..k as usize]);
                break;
            }
        }
        self.out
    }
}

/// Reads back the bits a [`BitEncoder`] coded, given the same models in the same order.
/// Damaged bytes give wrong bits, never a panic; bytes past the end read as zero.
#[derive(Debug)]
pub struct BitDecoder<'a> {
    x1: u32,
    x2: u32,
    x: u32,
    coded: &'a [u8],
    at: usize,
}

impl<'a> BitDecoder<'a> {
    /// Starts decoding `coded`.
    pub fn new(coded: &'a [u8]) -> Self {
        let mut d = BitDecoder {
            x1: 0,
            x2: u32::MAX,
            x: 0,
            coded,
            at: 0,
        };
        for _ in 0..4 {
            d.x = (d.x << 8) | d.next_byte();
        }
        d
    }

    fn next_byte(&mut self) -> u32 {
        let b = self.coded.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        u32::from(b)
    }

    /// The next bit, coded with `model`'s probability; teaches `model` the bit.
    pub fn bit(&mut self, model: &mut Bit) -> bool {
        let bit = self.code(model.p);
        model.update(bit);
        bit
    }

    /// The next bit coded by [`BitEncoder::even`].
    pub fn even(&mut self) -> bool {
        self.code(32768)
    }

    fn code(&mut self, p: u16) -> bool {
        let mid = split(self.x1, self.x2, p);
        let bit = self.x <= mid;
        if bit {
            self.x2 = mid;
        } else {
            self.x1 = mid + 1;
        }
        while (self.x1 ^ self.x2) & 0xff00_0000 == 0 {
            self.x1 <<= 8;
            self.x2 = (self.x2 << 8) | 255;
            self.x = (self.x << 8) | self.next_byte();
        }
        bit
    }

    /// Bytes the decoding needed beyond those [`BitEncoder::finish`] wrote (the decoder reads
    /// four ahead, and the encoder's last byte is never needed as a fifth): not 0 means more
    /// bits were decoded than coded, i.e. damage or a record count larger than the truth.
    pub fn overrun(&self) -> usize {
        self.at.saturating_sub(self.coded.len() + 3)
    }
}

/// An adaptive code for unsigned 64-bit numbers that favours small ones: the bit length `n`
/// in unary (one adaptive bit per length), then the bits below the leading one, the two
/// highest with adaptive probabilities per length and the lowest three per position (sizes
/// are often multiples of 4 or 8), the rest as even bits.
#[derive(Debug, Clone)]
pub struct Number {
    unary: [Bit; 65],
    top: [[Bit; 3]; 65],
    low: [Bit; 3],
}

impl Default for Number {
    fn default() -> Self {
        Number {
            unary: [Bit::default(); 65],
            top: [[Bit::default(); 3]; 65],
            low: [Bit::default(); 3],
        }
    }
}

impl Number {
    /// Codes `v`.
    pub fn encode(&mut self, e: &mut BitEncoder, v: u64) {
        let n = (64 - v.leading_zeros()) as usize;
        for i in 0..n {
            e.bit(true, &mut self.unary[i]);
        }
        if n < 64 {
            e.bit(false, &mut self.unary[n]);
        }
        for i in (0..n.saturating_sub(1)).rev() {
            let bit = (v >> i) & 1 == 1;
            match self.model(n, i, v >> (i + 1)) {
                Some(m) => e.bit(bit, m),
                None => e.even(bit),
            }
        }
    }

    /// Reads a number coded by [`Self::encode`].
    pub fn decode(&mut self, d: &mut BitDecoder<'_>) -> u64 {
        let mut n = 0;
        while n < 64 && d.bit(&mut self.unary[n]) {
            n += 1;
        }
        if n == 0 {
            return 0;
        }
        let mut v = 1u64;
        for i in (0..n - 1).rev() {
            let bit = match self.model(n, i, v) {
                Some(m) => d.bit(m),
                None => d.even(),
            };
            v = (v << 1) | u64::from(bit);
        }
        v
    }

    /// The model of bit `i` of an `n`-bit number whose bits above `i` are `above`.
    fn model(&mut self, n: usize, i: usize, above: u64) -> Option<&mut Bit> {
        match n - 1 - i {
            1 => Some(&mut self.top[n][0]),
            2 => Some(&mut self.top[n][1 + (above & 1) as usize]),
            _ if i < 3 => Some(&mut self.low[i]),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_and_numbers_round_trip() {
        let numbers = [
            0u64,
            1,
            2,
            3,
            7,
            8,
            552,
            1 << 40,
            u64::MAX,
            u64::MAX - 1,
            12,
            12,
            12,
        ];
        let mut e = BitEncoder::default();
        let (mut m, mut b) = (Number::default(), Bit::default());
        for (i, &v) in numbers.iter().enumerate() {
            m.encode(&mut e, v);
            e.bit(i % 3 == 0, &mut b);
            e.even(i % 2 == 0);
        }
        let coded = e.finish();
        let mut d = BitDecoder::new(&coded);
        let (mut m, mut b) = (Number::default(), Bit::default());
        for (i, &v) in numbers.iter().enumerate() {
            assert_eq!(m.decode(&mut d), v);
            assert_eq!(d.bit(&mut b), i % 3 == 0);
            assert_eq!(d.even(), i % 2 == 0);
        }
        assert_eq!(d.overrun(), 0);
    }

    #[test]
    fn predictable_bits_cost_little_and_an_empty_code_is_one_byte() {
        let mut e = BitEncoder::default();
        let mut b = Bit::default();
        for _ in 0..10_000 {
            e.bit(true, &mut b);
        }
        let coded = e.finish();
        assert!(coded.len() < 20, "{} bytes", coded.len());
        let mut d = BitDecoder::new(&coded);
        let mut b = Bit::default();
        assert!((0..10_000).all(|_| d.bit(&mut b)));
        assert_eq!(d.overrun(), 0);
        assert_eq!(BitEncoder::default().finish(), [0]);
    }

    #[test]
    fn damaged_bytes_decode_without_panic() {
        let mut d = BitDecoder::new(&[0xff, 0x00, 0x13]);
        let mut m = Number::default();
        for _ in 0..1000 {
            m.decode(&mut d);
            d.even();
        }
        // A thousand even bits cannot come out of three bytes.
        assert!(d.overrun() > 0);
    }
}

//! The binary range coder of the entropy stage (the LZMA design: 32-bit range, carry
//! propagation through a cached byte), coding each bit with a 12-bit probability that the
//! caller's model adapts ([`super::counter`], the byte-string mixer), and its meter: the same
//! models driven without writing bytes, adding up what each bit would cost.

const TOP: u32 = 1 << 24;

/// Bits of precision of a coded probability.
const PROB_BITS: u32 = 12;

/// Fractional bits of a metered cost.
const COST_SHIFT: u32 = 16;

/// -log2(p / 2^PROB_BITS) in 2^-COST_SHIFT bits, for p below 2^PROB_BITS.
fn cost_table() -> &'static [u32; 1 << PROB_BITS] {
    static T: std::sync::OnceLock<[u32; 1 << PROB_BITS]> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut t = [0u32; 1 << PROB_BITS];
        for (p, c) in t.iter_mut().enumerate() {
            let p = (p.max(1) as f64) / f64::from(1u32 << PROB_BITS);
            *c = (-p.log2() * f64::from(1u32 << COST_SHIFT)).round() as u32;
        }
        t
    })
}

/// Writes bits coded with adaptive probabilities, or, made by [`Encoder::meter`], only adds up
/// their cost.
pub(crate) struct Encoder {
    low: u64,
    range: u32,
    cache: u8,
    cache_size: u64,
    out: Vec<u8>,
    /// The meter's table and the cost so far in 2^-[`COST_SHIFT`] bits.
    meter: Option<&'static [u32; 1 << PROB_BITS]>,
    cost: u64,
}

impl Encoder {
    pub(crate) fn new() -> Encoder {
        Encoder {
            low: 0,
            range: u32::MAX,
            cache: 0,
            cache_size: 1,
            out: Vec::new(),
            meter: None,
            cost: 0,
        }
    }

    /// An encoder that writes nothing and counts what each bit costs under its probability:
    /// -log2 of it, rounded to 2^-16 bits. Why not the coder's own length: that depends, in its
    /// last fractions of a bit, on everything coded before (the range's rounding), so the cost
    /// of one stream would change with what else is coded beside it; the metered cost of a
    /// stream depends only on its own bits and models.
    pub(crate) fn meter() -> Encoder {
        Encoder {
            meter: Some(cost_table()),
            ..Encoder::new()
        }
    }

    /// Codes `bit` with a fixed probability `p1` (of 4096) that it is a 1, from a model that
    /// adapts elsewhere (a counter, the byte-string mixer).
    #[inline]
    pub(crate) fn bit_p(&mut self, p1: u32, bit: bool) {
        if let Some(t) = self.meter {
            let p1 = p1.clamp(1, 4095) as usize;
            self.cost += u64::from(if bit { t[p1] } else { t[(1 << PROB_BITS) - p1] });
            return;
        }
        let bound = (self.range >> 12) * (4096 - p1.clamp(1, 4095));
        if bit {
            self.low += u64::from(bound);
            self.range -= bound;
        } else {
            self.range = bound;
        }
        while self.range < TOP {
            self.range <<= 8;
            self.shift_low();
        }
    }

    /// Bits written so far, counting the pending bytes and the part of a byte the range has
    /// narrowed (a meter: the cost counted so far): differences between two calls give the
    /// cost of what was coded in between.
    pub(crate) fn bits(&self) -> f64 {
        if self.meter.is_some() {
            return self.cost as f64 / f64::from(1u32 << COST_SHIFT);
        }
        (self.out.len() as u64 + self.cache_size) as f64 * 8.0 - f64::from(self.range).log2()
    }

    fn shift_low(&mut self) {
        if self.low < 0xFF00_0000 || self.low > 0xFFFF_FFFF {
            let carry = (self.low >> 32) as u8;
            let mut temp = self.cache;
            loop {
                self.out.push(temp.wrapping_add(carry));
                temp = 0xFF;
                self.cache_size -= 1;
                if self.cache_size == 0 {
                    break;
                }
            }
            self.cache = ((self.low >> 24) & 0xFF) as u8;
        }
        self.cache_size += 1;
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }

    /// Flushes the coder and returns the coded bytes.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift_low();
        }
        self.out
    }
}

/// Reads bits written by [`Encoder`]; past the end of its input it reads zero bytes, so damaged
/// input gives wrong symbols (caught by the caller's checks), never a panic.
pub(crate) struct Decoder<'a> {
    code: u32,
    range: u32,
    input: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(input: &'a [u8]) -> Decoder<'a> {
        let mut d = Decoder {
            code: 0,
            range: u32::MAX,
            input,
            at: 1,
        };
        for _ in 0..4 {
            d.code = (d.code << 8) | u32::from(d.byte());
        }
        d
    }

    #[inline]
    fn byte(&mut self) -> u8 {
        let b = self.input.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// How many bytes past the end of the input the decoder has read.
    pub(crate) fn overrun(&self) -> usize {
        self.at.saturating_sub(self.input.len() + 4)
    }

    /// Decodes a bit coded by [`Encoder::bit_p`] with the same `p1`.
    #[inline]
    pub(crate) fn bit_p(&mut self, p1: u32) -> bool {
        let bound = (self.range >> 12) * (4096 - p1.clamp(1, 4095));
        let bit = if self.code < bound {
            self.range = bound;
            false
        } else {
            self.code -= bound;
            self.range -= bound;
            true
        };
        while self.range < TOP {
            self.range <<= 8;
            self.code = (self.code << 8) | u32::from(self.byte());
        }
        bit
    }
}

//! Turns fuzz bytes into choices (like `arbitrary::Unstructured`, but with no dependency, so
//! the stable replay tests can include it): past the end every draw is 0.

/// The unread rest of the fuzz input.
pub struct Draw<'a>(pub &'a [u8]);

impl Draw<'_> {
    /// True when every byte was used.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The next byte.
    pub fn byte(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        b
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n
    }

    /// A value, biased towards the edges that change field widths: small, 2-byte, any, maximum.
    pub fn value(&mut self) -> u64 {
        match self.byte() % 4 {
            0 => u64::from(self.byte() % 4),
            1 => u64::from(self.byte()) << 8 | u64::from(self.byte()),
            2 => (0..8).fold(0, |v, _| v << 8 | u64::from(self.byte())),
            _ => u64::MAX,
        }
    }

    /// Up to `max` bytes.
    pub fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max + 1).min(self.0.len());
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        taken.to_vec()
    }
}

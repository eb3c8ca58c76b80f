//! The state machine of one field: its current width and interpretation, the previous value
//! (for `delta` and `stride`) and the section cursor (for `sectionStride`).
//!
//! A trace keeps one such state per (current section, record tag, field position): a metadata
//! record changes the field of the named record *in the section where the metadata appears*.

use metatf_dtd::Interpretation;

use super::bits::{sign_extend, signed_width, truncate, unsigned_width};
use super::change::{Change, MAX_WIDTH};

/// Elements a value section may be padded with before a `sectionStride` write; a larger jump
/// means the stride is not worth following and the writer switches the field to `none`.
pub const MAX_STRIDE_GAP: u64 = 1 << 20;

/// Read access to the value sections of the current block.
pub trait ValueSource {
    /// The element at `index` of value section `section`, or an error message.
    fn element(&self, section: u8, index: u64) -> Result<u64, String>;
}

/// Write access to the value sections of the block being built.
pub trait ValueSink {
    /// Elements in section `section` so far.
    fn len(&self, section: u8) -> u64;
    /// The element at `index`, if written.
    fn get(&self, section: u8, index: u64) -> Option<u64>;
    /// Index of an element equal to `value`, if any.
    fn find(&self, section: u8, value: u64) -> Option<u64>;
    /// Sets element `index` (`index >= len`), padding with zeros up to it.
    fn put(&mut self, section: u8, index: u64, value: u64);
}

/// Why a value cannot be written under a field's current state; the writer answers with a
/// metadata record and tries again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misfit {
    /// The interpretation is right but the stored value needs this many bytes.
    Width(u8),
    /// The interpretation cannot produce the value (a `default`, `stride` or `sectionStride`
    /// that does not match): switch to `none`.
    Interpretation,
}

/// The current encoding of one scalar field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldState {
    width: u8,
    /// Restored by `none`, `baseOffset` and `delta` after a zero-width interpretation.
    last_width: u8,
    interpretation: Interpretation,
    /// Previous value, for `delta` and `stride`.
    previous: u64,
    /// Next element, for `sectionStride`; block-relative.
    cursor: u64,
}

impl FieldState {
    /// The state a field starts with, from its DTD declaration.
    pub fn new(width: u8, interpretation: Interpretation) -> FieldState {
        let mut s = FieldState {
            width: 0,
            last_width: width,
            interpretation: Interpretation::None,
            previous: 0,
            cursor: 0,
        };
        s.set_interpretation(interpretation);
        if !interpretation.is_zero_width() {
            s.width = width;
        }
        s
    }

    /// Bytes the field currently takes in a record.
    pub fn width(&self) -> u8 {
        self.width
    }

    /// The width `none`, `baseOffset` and `delta` restore after a zero-width interpretation.
    pub fn last_width(&self) -> u8 {
        self.last_width
    }

    /// The current interpretation.
    pub fn interpretation(&self) -> Interpretation {
        self.interpretation
    }

    /// Called at each block start: value sections are block-local, so cursors restart.
    pub fn start_block(&mut self) {
        self.cursor = 0;
    }

    /// Applies a metadata change.
    pub fn apply(&mut self, change: Change) {
        match change {
            Change::Width(w) => {
                debug_assert!(w <= MAX_WIDTH);
                if w != 0 {
                    self.last_width = w;
                }
                // A zero-width interpretation keeps width 0; the width is remembered for later.
                if !self.interpretation.is_zero_width() {
                    self.width = w;
                }
            }
            Change::Interpretation(i) => self.set_interpretation(i),
        }
    }

    fn set_interpretation(&mut self, i: Interpretation) {
        self.interpretation = i;
        match i {
            Interpretation::Delta(initial) | Interpretation::Stride { initial, .. } => {
                self.previous = initial
            }
            Interpretation::SectionStride { .. } => self.cursor = 0,
            _ => {}
        }
        if i.is_zero_width() {
            if self.width != 0 {
                self.last_width = self.width;
            }
            self.width = 0;
        } else if self.width == 0 {
            self.width = self.last_width;
        }
    }

    /// Turns the `width()` stored bytes (already read as an unsigned integer) into the value.
    pub fn decode(&mut self, stored: u64, sections: &dyn ValueSource) -> Result<u64, String> {
        Ok(match self.interpretation {
            Interpretation::None => stored,
            Interpretation::Default(v) => v,
            Interpretation::BaseOffset(base) => base.wrapping_add(sign_extend(stored, self.width)),
            Interpretation::Delta(_) => {
                self.previous = self.previous.wrapping_add(sign_extend(stored, self.width));
                self.previous
            }
            Interpretation::Stride { stride, .. } => {
                self.previous = self.previous.wrapping_add(stride);
                self.previous
            }
            Interpretation::SectionOffset(s) => sections.element(s, stored)?,
            Interpretation::SectionStride { section, stride } => {
                let v = sections.element(section, self.cursor)?;
                self.cursor = self.cursor.saturating_add(stride);
                v
            }
        })
    }

    /// Finds the stored integer (of `width()` bytes) for `value`, updating the state and the
    /// value sections only on success.
    pub fn encode(&mut self, value: u64, sections: &mut dyn ValueSink) -> Result<u64, Misfit> {
        let w = self.width;
        let fits_unsigned = |v: u64| {
            let need = unsigned_width(v);
            if need <= w {
                Ok(v)
            } else {
                Err(Misfit::Width(need))
            }
        };
        let fits_signed = |d: u64| {
            let need = signed_width(d);
            if need <= w {
                Ok(truncate(d, w))
            } else {
                Err(Misfit::Width(need))
            }
        };
        match self.interpretation {
            Interpretation::None => fits_unsigned(value),
            Interpretation::Default(v) => (v == value).then_some(0).ok_or(Misfit::Interpretation),
            Interpretation::BaseOffset(base) => fits_signed(value.wrapping_sub(base)),
            Interpretation::Delta(_) => {
                let stored = fits_signed(value.wrapping_sub(self.previous))?;
                self.previous = value;
                Ok(stored)
            }
            Interpretation::Stride { stride, .. } => {
                if self.previous.wrapping_add(stride) != value {
                    return Err(Misfit::Interpretation);
                }
                self.previous = value;
                Ok(0)
            }
            Interpretation::SectionOffset(s) => {
                let index = sections.find(s, value).unwrap_or(sections.len(s));
                let stored = fits_unsigned(index)?;
                if index == sections.len(s) {
                    sections.put(s, index, value);
                }
                Ok(stored)
            }
            Interpretation::SectionStride { section, stride } => {
                let at = self.cursor;
                match sections.get(section, at) {
                    Some(v) if v == value => {}
                    Some(_) => return Err(Misfit::Interpretation),
                    None if at - sections.len(section) > MAX_STRIDE_GAP => {
                        return Err(Misfit::Interpretation)
                    }
                    None => sections.put(section, at, value),
                }
                self.cursor = at.saturating_add(stride);
                Ok(0)
            }
        }
    }
}

/// Inlinable shortcuts for the typed codec, whose field positions are known at compile time.
/// They cover the interpretations that need no value section and answer exactly as
/// [`FieldState::encode`] and [`FieldState::decode`] do; `None` means "ask the general method"
/// (a value section is involved, or the value does not fit), and then nothing has changed.
impl FieldState {
    /// [`FieldState::encode`] for `none`, `default`, `baseOffset`, `delta` and `stride` when the
    /// value fits; `None` otherwise, leaving the state untouched.
    #[inline]
    pub fn encode_direct(&mut self, value: u64) -> Option<u64> {
        let w = self.width;
        match self.interpretation {
            Interpretation::None => fits_unsigned_direct(value, w),
            Interpretation::Default(v) => (v == value).then_some(0),
            Interpretation::BaseOffset(base) => fits_signed_direct(value.wrapping_sub(base), w),
            Interpretation::Delta(_) => {
                let stored = fits_signed_direct(value.wrapping_sub(self.previous), w)?;
                self.previous = value;
                Some(stored)
            }
            Interpretation::Stride { stride, .. } => {
                if self.previous.wrapping_add(stride) != value {
                    return None;
                }
                self.previous = value;
                Some(0)
            }
            Interpretation::SectionOffset(_) | Interpretation::SectionStride { .. } => None,
        }
    }

    /// [`FieldState::decode`] for the interpretations that read no value section; `None` for
    /// `sectionOffset` and `sectionStride`, leaving the state untouched.
    #[inline]
    pub fn decode_direct(&mut self, stored: u64) -> Option<u64> {
        Some(match self.interpretation {
            Interpretation::None => stored,
            Interpretation::Default(v) => v,
            Interpretation::BaseOffset(base) => base.wrapping_add(sign_extend(stored, self.width)),
            Interpretation::Delta(_) => {
                self.previous = self.previous.wrapping_add(sign_extend(stored, self.width));
                self.previous
            }
            Interpretation::Stride { stride, .. } => {
                self.previous = self.previous.wrapping_add(stride);
                self.previous
            }
            Interpretation::SectionOffset(_) | Interpretation::SectionStride { .. } => return None,
        })
    }

    /// The previous value `delta` and `stride` code against.
    #[inline]
    pub fn previous(&self) -> u64 {
        self.previous
    }

    /// The next element a `sectionStride` field reads or writes (block-relative).
    #[inline]
    pub(crate) fn cursor(&self) -> u64 {
        self.cursor
    }

    /// Sets the `sectionStride` cursor: the typed codec's inline path stores it once a record
    /// is written.
    #[inline]
    pub(crate) fn set_cursor(&mut self, cursor: u64) {
        self.cursor = cursor;
    }

    /// Whether the field's interpretation is `none` (the one writers fall back to).
    #[inline]
    pub(crate) fn is_none(&self) -> bool {
        matches!(self.interpretation, Interpretation::None)
    }

    /// Sets the previous value: the typed codec's inline `delta` and `stride` paths, and their
    /// undo when a record must be written again.
    #[inline]
    pub fn set_previous(&mut self, previous: u64) {
        self.previous = previous;
    }

    /// Whether encoding may change the state (`delta`, `stride`, `sectionStride`), so that a
    /// writer retrying a record must restore it.
    #[inline]
    pub fn is_stateful(&self) -> bool {
        matches!(
            self.interpretation,
            Interpretation::Delta(_)
                | Interpretation::Stride { .. }
                | Interpretation::SectionStride { .. }
        )
    }
}

/// `value` if it fits `width` bytes unsigned (`unsigned_width(value) <= width`).
#[inline]
fn fits_unsigned_direct(value: u64, width: u8) -> Option<u64> {
    let fits = width >= 8 || value >> (u32::from(width) * 8) == 0;
    fits.then_some(value)
}

/// The low `width` bytes of `diff` if it fits them as two's complement
/// (`signed_width(diff) <= width`).
#[inline]
fn fits_signed_direct(diff: u64, width: u8) -> Option<u64> {
    if width >= 8 {
        return Some(diff);
    }
    // Fits iff sign-extending the low `width` bytes gives `diff` back (width 0 holds only 0).
    let kept = truncate(diff, width);
    (sign_extend(kept, width) == diff).then_some(kept)
}

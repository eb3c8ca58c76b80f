//! What generated `encode`/`decode` functions call: one method per field, with the field's
//! ordinal (its index among the record's scalar fields) known at compile time, so no lookup
//! and no dynamic value is needed per field.

use crate::container::ByteOrder;
use crate::error::Error;
use crate::field::bits::{read_uint, sign_extend, truncate};
use crate::field::{FieldState, Misfit, ValueSource};

use super::buf::StreamBuf;
use super::scalar::Scalar;
use crate::universal::values::ValueBuilder as WriteValues;

/// Why encoding a record stopped.
#[derive(Debug)]
pub enum Stop {
    /// The scalar with this ordinal cannot hold its value under the field's current state:
    /// the writer emits a metadata record and encodes the record again.
    Adapt(usize, Misfit),
    /// The record cannot be written (boxed: the common `Ok` path stays two registers wide).
    Fail(Box<Error>),
}

/// Encodes the fields of one record into the record stream.
pub struct Encoder<'a> {
    pub(crate) states: &'a mut [FieldState],
    pub(crate) out: &'a mut StreamBuf,
    /// End of the bytes written so far (the buffer's length is set when the record is done).
    pub(crate) pos: usize,
    /// The record's fields are in the states its fast path was compiled for (big-endian).
    pub(crate) fast: bool,
    pub(crate) values: &'a mut WriteValues,
    pub(crate) order: ByteOrder,
    pub(crate) record: u64,
    pub(crate) name: &'a str,
    /// Undo journal of the record being written, to restore if it must be written again.
    pub(crate) undo: &'a mut Undo,
}

impl Encoder<'_> {
    /// Encodes the scalar field with ordinal `ordinal`.
    #[inline(always)]
    pub fn scalar<S: Scalar>(&mut self, ordinal: usize, value: S) -> Result<(), Stop> {
        self.uint(ordinal, value.to_u64())
    }

    /// Encodes a `vfield`: its length (the scalar with ordinal `ordinal`), then the bytes.
    #[inline(always)]
    pub fn vfield(&mut self, ordinal: usize, data: &[u8]) -> Result<(), Stop> {
        self.uint(ordinal, data.len() as u64)?;
        if !data.is_empty() {
            self.pos = self.out.extend_at(self.pos, data);
        }
        Ok(())
    }

    /// The field's stored integer under its current state, written at the field's width.
    /// The interpretations without a value section are decided inline; value sections and
    /// misfits take the general (out-of-line) path, which answers as the universal writer does.
    #[inline(always)]
    fn uint(&mut self, ordinal: usize, value: u64) -> Result<(), Stop> {
        let Some(state) = self.states.get_mut(ordinal) else {
            return Err(self.out_of_range(ordinal));
        };
        let previous = state.previous();
        let stored = match state.encode_direct(value) {
            Some(stored) => {
                if state.previous() != previous {
                    self.undo.previous.push((ordinal, previous));
                }
                stored
            }
            None => general(state, ordinal, value, self.values, self.undo)?,
        };
        self.pos = self.out.put_at(self.pos, stored, state.width(), self.order);
        Ok(())
    }

    /// Whether every field of the record is in the state the generated fast path was
    /// compiled for ([`super::RecordSpec::layout`]) and the trace is big-endian; generated
    /// code then calls the `fixed_*` methods, else [`Self::scalar`].
    #[inline(always)]
    pub fn fast(&self) -> bool {
        self.fast
    }

    /// Fast path of a `none` field: a value that does not fit goes to the general path, which
    /// reports the misfit.
    #[inline(always)]
    pub fn fixed_none<S: Scalar>(&mut self, ordinal: usize, value: S) -> Result<(), Stop> {
        let v = value.to_u64();
        let Some(state) = self.states.get(ordinal) else {
            return self.uint(ordinal, v);
        };
        let w = state.width();
        if w < 8 && v >> (8 * u32::from(w)) != 0 {
            return self.uint(ordinal, v);
        }
        self.pos = self.out.put_be(self.pos, v, w);
        Ok(())
    }

    /// Fast path of a `default` field whose default is `default`.
    #[inline(always)]
    pub fn fixed_default<S: Scalar>(
        &mut self,
        ordinal: usize,
        default: u64,
        value: S,
    ) -> Result<(), Stop> {
        let v = value.to_u64();
        if v != default {
            return self.uint(ordinal, v);
        }
        Ok(())
    }

    /// Fast path of a `baseOffset` field with base `base`.
    #[inline(always)]
    pub fn fixed_base_offset<S: Scalar>(
        &mut self,
        ordinal: usize,
        base: u64,
        value: S,
    ) -> Result<(), Stop> {
        let v = value.to_u64();
        let Some(state) = self.states.get(ordinal) else {
            return self.uint(ordinal, v);
        };
        let w = state.width();
        let d = v.wrapping_sub(base);
        if !fits_signed(d, w) {
            return self.uint(ordinal, v);
        }
        self.pos = self.out.put_be(self.pos, d, w);
        Ok(())
    }

    /// Fast path of a `delta` field.
    #[inline(always)]
    pub fn fixed_delta<S: Scalar>(&mut self, ordinal: usize, value: S) -> Result<(), Stop> {
        let v = value.to_u64();
        let Some(state) = self.states.get_mut(ordinal) else {
            return self.uint(ordinal, v);
        };
        let w = state.width();
        let previous = state.previous();
        let d = v.wrapping_sub(previous);
        if !fits_signed(d, w) {
            return self.uint(ordinal, v);
        }
        if d != 0 {
            state.set_previous(v);
            self.undo.previous.push((ordinal, previous));
        }
        self.pos = self.out.put_be(self.pos, d, w);
        Ok(())
    }

    /// Fast path of a `stride` field advancing by `stride`.
    #[inline(always)]
    pub fn fixed_stride<S: Scalar>(
        &mut self,
        ordinal: usize,
        stride: u64,
        value: S,
    ) -> Result<(), Stop> {
        let v = value.to_u64();
        let Some(state) = self.states.get_mut(ordinal) else {
            return self.uint(ordinal, v);
        };
        let previous = state.previous();
        if previous.wrapping_add(stride) != v {
            return self.uint(ordinal, v);
        }
        if stride != 0 {
            state.set_previous(v);
            self.undo.previous.push((ordinal, previous));
        }
        Ok(())
    }

    /// Takes fields, not `&self`: an encoder whose address escapes would live in memory
    /// instead of registers.
    #[inline(always)]
    fn out_of_range(&self, ordinal: usize) -> Stop {
        out_of_range(self.record, self.name, ordinal)
    }
}

#[cold]
#[inline(never)]
fn out_of_range(record: u64, name: &str, ordinal: usize) -> Stop {
    Stop::Fail(
        Error::record(
            None,
            record,
            name,
            format!("field ordinal {ordinal} is out of range: generated code and DTD disagree"),
        )
        .into(),
    )
}

/// What a failed attempt at a record changed in the field states, newest last.
#[derive(Default)]
pub(crate) struct Undo {
    /// `(ordinal, previous value)` of `delta`/`stride` fields coded inline.
    pub(crate) previous: Vec<(usize, u64)>,
    /// `(ordinal, whole state)` of fields coded by the general path.
    pub(crate) states: Vec<(usize, FieldState)>,
}

impl Undo {
    pub(crate) fn clear(&mut self) {
        self.previous.clear();
        self.states.clear();
    }

    /// Restores the states of a record whose first state is `states[0]`.
    pub(crate) fn restore(&self, states: &mut [FieldState]) {
        // Each field is coded at most once per attempt, so the two journals never overlap;
        // newest first all the same, so that a field saved twice ends as first saved.
        for &(i, previous) in self.previous.iter().rev() {
            if let Some(s) = states.get_mut(i) {
                s.set_previous(previous);
            }
        }
        for &(i, saved) in self.states.iter().rev() {
            if let Some(s) = states.get_mut(i) {
                *s = saved;
            }
        }
    }
}

/// The general, out-of-line path of [`Encoder::uint`]: value sections and misfits.
#[inline(never)]
fn general(
    state: &mut FieldState,
    ordinal: usize,
    value: u64,
    values: &mut WriteValues,
    undo: &mut Undo,
) -> Result<u64, Stop> {
    if state.is_stateful() {
        undo.states.push((ordinal, *state));
    }
    state
        .encode(value, values)
        .map_err(|m| Stop::Adapt(ordinal, m))
}

/// Decodes the fields of one record from the record stream.
pub struct Decoder<'a> {
    pub(crate) states: &'a mut [FieldState],
    pub(crate) stream: &'a [u8],
    /// Next byte to read (the reader takes it back when the record is done).
    pub(crate) pos: usize,
    /// The record's fields are in the states its fast path was compiled for (big-endian).
    pub(crate) fast: bool,
    pub(crate) values: &'a dyn ValueSource,
    pub(crate) order: ByteOrder,
    pub(crate) record: u64,
    pub(crate) block_offset: u64,
    pub(crate) name: &'a str,
}

/// Where a decoding error happened: copied out of the decoder so that its address does not
/// escape (an escaping decoder would live in memory instead of registers).
#[derive(Clone, Copy)]
struct Place<'a> {
    block_offset: u64,
    record: u64,
    name: &'a str,
}

#[cold]
#[inline(never)]
fn decode_error(at: Place<'_>, field: &str, message: String) -> Error {
    Error::record(
        Some(at.block_offset),
        at.record,
        format!("{}.{field}", at.name),
        message,
    )
}

#[cold]
#[inline(never)]
fn stream_ends(at: Place<'_>, field: &str, n: usize, pos: usize, len: usize) -> Error {
    let left = len.saturating_sub(pos);
    decode_error(
        at,
        field,
        format!("record stream ends: {n} bytes needed at stream byte {pos}, {left} left"),
    )
}

impl Decoder<'_> {
    #[inline(always)]
    fn place(&self) -> Place<'_> {
        Place {
            block_offset: self.block_offset,
            record: self.record,
            name: self.name,
        }
    }

    #[inline(always)]
    fn fail(&self, field: &str, message: String) -> Error {
        decode_error(self.place(), field, message)
    }

    #[inline(always)]
    fn short(&self, n: usize, field: &str) -> Error {
        stream_ends(self.place(), field, n, self.pos, self.stream.len())
    }

    /// The field's value: its stored integer read at the field's width, then interpreted.
    /// Reads one 8-byte window when the stream has one; interpretations without a value
    /// section are decided inline.
    #[inline(always)]
    fn value(&mut self, ordinal: usize, field: &str) -> Result<u64, Error> {
        let Some(state) = self.states.get_mut(ordinal) else {
            return Err(self.fail(
                field,
                format!("field ordinal {ordinal} is out of range: generated code and DTD disagree"),
            ));
        };
        let width = state.width();
        let pos = self.pos;
        let stored = match self.stream.get(pos..pos + 8) {
            Some(window) => {
                let mut word = [0u8; 8];
                word.copy_from_slice(window);
                window_value(word, width, self.order)
            }
            None => match self.stream.get(pos..pos + usize::from(width)) {
                Some(bytes) if width <= 8 => read_uint(bytes, width, self.order),
                _ => return Err(self.short(usize::from(width), field)),
            },
        };
        self.pos = pos + usize::from(width);
        match state.decode_direct(stored) {
            Some(v) => Ok(v),
            None => match state.decode(stored, self.values) {
                Ok(v) => Ok(v),
                Err(m) => Err(self.fail(field, m)),
            },
        }
    }

    /// Decodes the scalar field with ordinal `ordinal` named `field` into its Rust type.
    #[inline(always)]
    pub fn scalar<S: Scalar>(&mut self, ordinal: usize, field: &str) -> Result<S, Error> {
        let v = self.value(ordinal, field)?;
        match S::from_u64(v) {
            Some(s) => Ok(s),
            None => Err(self.fail(field, format!("value {v} does not fit in {}", S::RUST_NAME))),
        }
    }

    /// Decodes a `vfield` whose length is the scalar with ordinal `ordinal`.
    #[inline(always)]
    pub fn vfield(&mut self, ordinal: usize, field: &str) -> Result<Vec<u8>, Error> {
        let len = self.value(ordinal, field)?;
        if len == 0 {
            return Ok(Vec::new());
        }
        let left = self.stream.len().saturating_sub(self.pos) as u64;
        if len > left {
            return Err(self.fail(
                field,
                format!("byte string of {len} bytes, but only {left} bytes remain"),
            ));
        }
        let start = self.pos;
        self.pos += len as usize;
        Ok(self.stream[start..self.pos].to_vec())
    }
}

impl Decoder<'_> {
    /// See [`Encoder::fast`].
    #[inline(always)]
    pub fn fast(&self) -> bool {
        self.fast
    }

    /// The next `width` bytes as a big-endian unsigned integer.
    #[inline(always)]
    fn take_be(&mut self, width: u8, field: &str) -> Result<u64, Error> {
        let w = usize::from(width.min(8));
        let pos = self.pos;
        let v = match self.stream.get(pos..pos + 8) {
            Some(window) => {
                let mut word = [0u8; 8];
                word.copy_from_slice(window);
                // Width 0 shifts by 64: nothing.
                u64::from_be_bytes(word)
                    .checked_shr(64 - 8 * w as u32)
                    .unwrap_or(0)
            }
            None => match self.stream.get(pos..pos + w) {
                Some(bytes) => read_uint(bytes, w as u8, ByteOrder::Big),
                None => return Err(self.short(w, field)),
            },
        };
        self.pos = pos + w;
        Ok(v)
    }

    #[inline(always)]
    fn fit<S: Scalar>(&self, v: u64, field: &str) -> Result<S, Error> {
        match S::from_u64(v) {
            Some(s) => Ok(s),
            None => Err(self.fail(field, format!("value {v} does not fit in {}", S::RUST_NAME))),
        }
    }

    #[inline(always)]
    fn state(&mut self, ordinal: usize, field: &str) -> Result<&mut FieldState, Error> {
        if ordinal >= self.states.len() {
            return Err(self.fail(
                field,
                format!("field ordinal {ordinal} is out of range: generated code and DTD disagree"),
            ));
        }
        Ok(&mut self.states[ordinal])
    }

    /// Fast path of a `none` field.
    #[inline(always)]
    pub fn fixed_none<S: Scalar>(&mut self, ordinal: usize, field: &str) -> Result<S, Error> {
        let w = self.state(ordinal, field)?.width();
        let v = self.take_be(w, field)?;
        self.fit(v, field)
    }

    /// Fast path of a `default` field whose default is `default`.
    #[inline(always)]
    pub fn fixed_default<S: Scalar>(
        &mut self,
        _ordinal: usize,
        default: u64,
        field: &str,
    ) -> Result<S, Error> {
        self.fit(default, field)
    }

    /// Fast path of a `baseOffset` field with base `base`.
    #[inline(always)]
    pub fn fixed_base_offset<S: Scalar>(
        &mut self,
        ordinal: usize,
        base: u64,
        field: &str,
    ) -> Result<S, Error> {
        let w = self.state(ordinal, field)?.width();
        let stored = self.take_be(w, field)?;
        self.fit(base.wrapping_add(sign_extend(stored, w)), field)
    }

    /// Fast path of a `delta` field.
    #[inline(always)]
    pub fn fixed_delta<S: Scalar>(&mut self, ordinal: usize, field: &str) -> Result<S, Error> {
        let w = self.state(ordinal, field)?.width();
        let stored = self.take_be(w, field)?;
        let state = self.state(ordinal, field)?;
        let v = state.previous().wrapping_add(sign_extend(stored, w));
        state.set_previous(v);
        self.fit(v, field)
    }

    /// Fast path of a `stride` field advancing by `stride`.
    #[inline(always)]
    pub fn fixed_stride<S: Scalar>(
        &mut self,
        ordinal: usize,
        stride: u64,
        field: &str,
    ) -> Result<S, Error> {
        let state = self.state(ordinal, field)?;
        let v = state.previous().wrapping_add(stride);
        state.set_previous(v);
        self.fit(v, field)
    }
}

/// Whether `d` fits `width` bytes as two's complement (as `signed_width(d) <= width`).
#[inline(always)]
fn fits_signed(d: u64, width: u8) -> bool {
    width >= 8 || sign_extend(truncate(d, width), width) == d
}

/// The low `width` bytes (0-8) of the integer stored at the start of `word`.
#[inline(always)]
pub(crate) fn window_value(word: [u8; 8], width: u8, order: ByteOrder) -> u64 {
    let bits = u32::from(width.min(8)) * 8;
    match order {
        // Width 0 shifts by 64: nothing.
        ByteOrder::Big => u64::from_be_bytes(word).checked_shr(64 - bits).unwrap_or(0),
        ByteOrder::Little => truncate(u64::from_le_bytes(word), width),
    }
}

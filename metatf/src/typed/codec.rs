//! What generated `encode`/`decode` functions call: one method per field, with the field's
//! ordinal (its index among the record's scalar fields) known at compile time, so no lookup
//! and no dynamic value is needed per field.

use crate::container::ByteOrder;
use crate::error::Error;
use crate::field::bits::{read_uint, sign_extend, unsigned_width};
use crate::field::{FieldState, Misfit, ValueSink, ValueSource, MAX_STRIDE_GAP};
use crate::model::flat::FlatBlock;
use metatf_dtd::Interpretation;

use super::buf::StreamBuf;
use super::scalar::Scalar;
use super::values::{ReadValues, WriteValues};

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
    /// For a trace coded by the model engine: the block's columns, which take every value
    /// as it is (field states play no part; `fast` is false).
    pub(crate) flat: Option<&'a mut FlatBlock>,
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
        if let Some(flat) = self.flat.as_deref_mut() {
            flat.bytes.extend_from_slice(data);
        } else if !data.is_empty() {
            self.pos = self.out.extend_at(self.pos, data);
        }
        Ok(())
    }

    /// The field's stored integer under its current state, written at the field's width.
    /// The interpretations without a value section are decided inline; value sections and
    /// misfits take the general (out-of-line) path, which answers as the universal writer does.
    #[inline(always)]
    fn uint(&mut self, ordinal: usize, value: u64) -> Result<(), Stop> {
        if let Some(flat) = self.flat.as_deref_mut() {
            flat.words.push(value);
            return Ok(());
        }
        let Some(state) = self.states.get_mut(ordinal) else {
            return Err(self.out_of_range(ordinal));
        };
        let previous = state.previous();
        let stored = match state.encode_direct(value) {
            Some(stored) => {
                if state.previous() != previous {
                    self.undo.save_previous(ordinal, previous);
                }
                stored
            }
            None => general(state, ordinal, value, self.values, self.undo)?,
        };
        self.pos = self.out.put_at(self.pos, stored, state.width(), self.order);
        Ok(())
    }

    /// Encodes a repeated field (`n * element`): each element as the scalar with ordinal
    /// `ordinal`, after checking that the count field said `count` of them, as the universal
    /// writer checks.
    pub fn repeated<C: Scalar, S: Scalar>(
        &mut self,
        ordinal: usize,
        count: C,
        items: &[S],
    ) -> Result<(), Stop> {
        if count.to_u64() != items.len() as u64 {
            return Err(Stop::Fail(Box::new(Error::record(
                None,
                self.record,
                self.name,
                format!(
                    "{} repetitions given but the count field says {}",
                    items.len(),
                    count.to_u64()
                ),
            ))));
        }
        for &item in items {
            self.uint(ordinal, item.to_u64())?;
        }
        Ok(())
    }

    /// Whether every field of the record is in the state the generated fast path was
    /// compiled for ([`super::RecordSpec::layout`]) and the trace is big-endian; generated
    /// code then calls the `fixed_*` methods, else [`Self::scalar`].
    #[inline(always)]
    pub fn fast(&self) -> bool {
        self.fast
    }

    /// Whether the record's states number at least `n` (generated code checks this once
    /// per record, so that the per-field checks fold away).
    #[inline(always)]
    pub fn has_states(&self, n: usize) -> bool {
        self.states.len() >= n
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
        if !fits_unsigned(v, w) {
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

    /// Fast path of a `delta` field. Returns the field's new previous value, which generated
    /// code stores with [`Self::set_previous`] once every field of the record is written: a
    /// failed attempt then has changed nothing that must be undone.
    #[inline(always)]
    pub fn fixed_delta<S: Scalar>(&mut self, ordinal: usize, value: S) -> Result<u64, Stop> {
        let v = value.to_u64();
        let Some(state) = self.states.get(ordinal) else {
            return self.uint(ordinal, v).map(|()| v);
        };
        let w = state.width();
        let d = v.wrapping_sub(state.previous());
        if !fits_signed(d, w) {
            // The general path reports the misfit (or codes the value and sets previous).
            return self.uint(ordinal, v).map(|()| v);
        }
        self.pos = self.out.put_be(self.pos, d, w);
        Ok(v)
    }

    /// Stores the previous value a `delta` or `stride` fast path returned.
    #[inline(always)]
    pub fn set_previous(&mut self, ordinal: usize, previous: u64) {
        if let Some(state) = self.states.get_mut(ordinal) {
            state.set_previous(previous);
        }
    }

    /// Fast path of a `vfield` whose length field is `none`.
    #[inline(always)]
    pub fn fixed_vfield(&mut self, ordinal: usize, data: &[u8]) -> Result<(), Stop> {
        self.fixed_none(ordinal, data.len() as u64)?;
        if !data.is_empty() {
            self.pos = self.out.extend_at(self.pos, data);
        }
        Ok(())
    }

    /// Fast path of a `stride` field advancing by `stride`; returns the new previous value
    /// (see [`Self::fixed_delta`]).
    #[inline(always)]
    pub fn fixed_stride<S: Scalar>(
        &mut self,
        ordinal: usize,
        stride: u64,
        value: S,
    ) -> Result<u64, Stop> {
        let v = value.to_u64();
        let Some(state) = self.states.get(ordinal) else {
            return self.uint(ordinal, v).map(|()| v);
        };
        if state.previous().wrapping_add(stride) != v {
            return self.uint(ordinal, v).map(|()| v);
        }
        Ok(v)
    }

    /// Whether the field with ordinal `ordinal` is currently `none`: a metadata record switched
    /// it there (the writer's fallback), and the fast path codes it as such.
    #[inline(always)]
    pub fn is_none(&self, ordinal: usize) -> bool {
        self.states.get(ordinal).is_some_and(FieldState::is_none)
    }

    /// The field's previous value (what a `delta`/`stride` field in state `none` keeps).
    #[inline(always)]
    pub fn previous(&self, ordinal: usize) -> u64 {
        self.states.get(ordinal).map_or(0, FieldState::previous)
    }

    /// The field's `sectionStride` cursor (what a field in state `none` keeps).
    #[inline(always)]
    pub fn cursor(&self, ordinal: usize) -> u64 {
        self.states.get(ordinal).map_or(0, FieldState::cursor)
    }

    /// Fast path of a `sectionOffset` field into section `section`: the value's index in the
    /// section's dictionary, appended if new (the attempt's rollback removes it on a misfit).
    #[inline(always)]
    pub fn fixed_section_offset<S: Scalar>(
        &mut self,
        ordinal: usize,
        section: u8,
        value: S,
    ) -> Result<(), Stop> {
        let v = value.to_u64();
        let Some(state) = self.states.get(ordinal) else {
            return self.uint(ordinal, v);
        };
        let w = state.width();
        let index = self.values.intern(section, v);
        if !fits_unsigned(index, w) {
            return Err(Stop::Adapt(ordinal, Misfit::Width(unsigned_width(index))));
        }
        self.pos = self.out.put_be(self.pos, index, w);
        Ok(())
    }

    /// Fast path of a `sectionStride` field over section `section`: the value is the element at
    /// the cursor (written there if the section is not that long yet). Returns the new cursor,
    /// which generated code stores with [`Self::set_cursor`] once every field is written.
    #[inline(always)]
    pub fn fixed_section_stride<S: Scalar>(
        &mut self,
        ordinal: usize,
        section: u8,
        stride: u64,
        value: S,
    ) -> Result<u64, Stop> {
        let v = value.to_u64();
        let Some(state) = self.states.get(ordinal) else {
            return self.uint(ordinal, v).map(|()| 0);
        };
        let at = state.cursor();
        let len = self.values.len(section);
        if at < len {
            if self.values.get(section, at) != Some(v) {
                return Err(Stop::Adapt(ordinal, Misfit::Interpretation));
            }
        } else if at - len > MAX_STRIDE_GAP {
            return Err(Stop::Adapt(ordinal, Misfit::Interpretation));
        } else {
            self.values.put(section, at, v);
        }
        Ok(at.saturating_add(stride))
    }

    /// Stores the cursor a `sectionStride` fast path returned.
    #[inline(always)]
    pub fn set_cursor(&mut self, ordinal: usize, cursor: u64) {
        if let Some(state) = self.states.get_mut(ordinal) {
            state.set_cursor(cursor);
        }
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

/// What a failed attempt at a record changed in the field states, newest last. One journal
/// in the order of the changes: the elements of a repeated field code the same field several
/// times, partly inline and partly through the general path.
#[derive(Default)]
pub(crate) struct Undo {
    entries: Vec<(usize, Saved)>,
}

/// A field's state before a change.
#[derive(Clone, Copy)]
enum Saved {
    /// Its previous value (a `delta`/`stride` field coded inline).
    Previous(u64),
    /// Its whole state (a field coded by the general path).
    State(FieldState),
}

impl Undo {
    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    #[inline(always)]
    fn save_previous(&mut self, ordinal: usize, previous: u64) {
        self.entries.push((ordinal, Saved::Previous(previous)));
    }

    fn save_state(&mut self, ordinal: usize, state: FieldState) {
        self.entries.push((ordinal, Saved::State(state)));
    }

    /// Restores the states of a record whose first state is `states[0]`: newest first, so
    /// that a field saved several times ends as first saved.
    pub(crate) fn restore(&self, states: &mut [FieldState]) {
        for &(i, saved) in self.entries.iter().rev() {
            if let Some(s) = states.get_mut(i) {
                match saved {
                    Saved::Previous(p) => s.set_previous(p),
                    Saved::State(whole) => *s = whole,
                }
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
    // A dictionary lookup, inserting a new value at once: one hash probe instead of three.
    // A misfit leaves the insertion to the attempt's rollback, as it does other puts.
    if let Interpretation::SectionOffset(section) = state.interpretation() {
        let index = values.intern(section, value);
        return if fits_unsigned(index, state.width()) {
            Ok(index)
        } else {
            Err(Stop::Adapt(ordinal, Misfit::Width(unsigned_width(index))))
        };
    }
    if state.is_stateful() {
        undo.save_state(ordinal, *state);
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
    pub(crate) values: &'a ReadValues,
    pub(crate) order: ByteOrder,
    pub(crate) record: u64,
    pub(crate) block_offset: u64,
    pub(crate) name: &'a str,
    /// For a trace coded by the model engine: the decoded block's columns, read from word
    /// `pos` and byte `byte` on (field states play no part; `fast` is false).
    pub(crate) flat: Option<&'a FlatBlock>,
    pub(crate) byte: usize,
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
        if let Some(flat) = self.flat {
            let Some(&v) = flat.words.get(self.pos) else {
                return Err(self.fail(field, "the block's columns end early".to_string()));
            };
            self.pos += 1;
            return Ok(v);
        }
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
            None => match state.decode(stored, self.values as &dyn ValueSource) {
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

    /// Decodes a repeated field (`n * element`) whose count field holds `count`: that many
    /// elements, each the scalar with ordinal `ordinal`. A count above
    /// [`crate::universal::MAX_LEAVES_PER_RECORD`] is an error, so that a damaged count cannot
    /// make the reader allocate without bound (elements may take no bytes).
    pub fn repeated<C: Scalar, S: Scalar>(
        &mut self,
        ordinal: usize,
        count: C,
        field: &str,
    ) -> Result<Vec<S>, Error> {
        let n = count.to_u64();
        if n > crate::universal::MAX_LEAVES_PER_RECORD as u64 {
            return Err(self.fail(field, format!("repeat count {n} is too large")));
        }
        // Reserve for a plausible count only: a damaged one fails when the bytes run out.
        let mut out = Vec::with_capacity((n as usize).min(4096));
        for _ in 0..n {
            out.push(self.scalar(ordinal, field)?);
        }
        Ok(out)
    }

    /// Decodes a `vfield` whose length is the scalar with ordinal `ordinal`.
    #[inline(always)]
    pub fn vfield(&mut self, ordinal: usize, field: &str) -> Result<Vec<u8>, Error> {
        let len = self.value(ordinal, field)?;
        if let Some(flat) = self.flat {
            let start = self.byte;
            return match usize::try_from(len)
                .ok()
                .and_then(|n| flat.bytes.get(start..start.checked_add(n)?))
            {
                Some(b) => {
                    self.byte = start + b.len();
                    Ok(b.to_vec())
                }
                None => Err(self.fail(
                    field,
                    format!("byte string of {len} bytes, but the block's columns end first"),
                )),
            };
        }
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

    /// See [`Encoder::has_states`].
    #[inline(always)]
    pub fn has_states(&self, n: usize) -> bool {
        self.states.len() >= n
    }

    /// The next `width` bytes as a big-endian unsigned integer.
    #[inline(always)]
    fn take_be(&mut self, width: u8, field: &str) -> Result<u64, Error> {
        let pos = self.pos;
        let v = match self.stream.get(pos..pos + 8) {
            Some(window) => {
                let mut word = [0u8; 8];
                word.copy_from_slice(window);
                // The first `width` bytes rotated to the bottom, the rest masked off.
                u64::from_be_bytes(word).rotate_left(8 * u32::from(width)) & max_of_width(width)
            }
            None => match self.stream.get(pos..pos + usize::from(width)) {
                Some(bytes) if width <= 8 => read_uint(bytes, width, ByteOrder::Big),
                _ => return Err(self.short(usize::from(width), field)),
            },
        };
        self.pos = pos + usize::from(width);
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

    /// Fast path of a `vfield` whose length field is `none`.
    #[inline(always)]
    pub fn fixed_vfield(&mut self, ordinal: usize, field: &str) -> Result<Vec<u8>, Error> {
        let len: u64 = self.fixed_none(ordinal, field)?;
        if len == 0 {
            return Ok(Vec::new());
        }
        let start = self.pos;
        match usize::try_from(len)
            .ok()
            .and_then(|n| self.stream.get(start..start.checked_add(n)?))
        {
            Some(bytes) => {
                self.pos = start + bytes.len();
                Ok(bytes.to_vec())
            }
            None => {
                let left = self.stream.len().saturating_sub(start);
                Err(self.fail(
                    field,
                    format!("byte string of {len} bytes, but only {left} bytes remain"),
                ))
            }
        }
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

    /// See [`Encoder::is_none`].
    #[inline(always)]
    pub fn is_none(&self, ordinal: usize) -> bool {
        self.states.get(ordinal).is_some_and(FieldState::is_none)
    }

    /// Fast path of a `sectionOffset` field into section `section`.
    #[inline(always)]
    pub fn fixed_section_offset<S: Scalar>(
        &mut self,
        ordinal: usize,
        section: u8,
        field: &str,
    ) -> Result<S, Error> {
        let w = self.state(ordinal, field)?.width();
        let stored = self.take_be(w, field)?;
        match self.values.element(section, stored) {
            Ok(v) => self.fit(v, field),
            Err(m) => Err(self.fail(field, m)),
        }
    }

    /// Fast path of a `sectionStride` field over section `section`, advancing by `stride`.
    #[inline(always)]
    pub fn fixed_section_stride<S: Scalar>(
        &mut self,
        ordinal: usize,
        section: u8,
        stride: u64,
        field: &str,
    ) -> Result<S, Error> {
        let at = self.state(ordinal, field)?.cursor();
        let v = match self.values.element(section, at) {
            Ok(v) => v,
            Err(m) => return Err(self.fail(field, m)),
        };
        self.state(ordinal, field)?
            .set_cursor(at.saturating_add(stride));
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

/// The largest unsigned value of each width, so that fit checks are a compare with a table
/// entry instead of width-dependent shifts. Widths are 0-8 (DTD validation and metadata
/// parsing reject more); indexes 9-15 exist so that `width & 15` needs no bounds check, and
/// act as 8.
const MAX_OF_WIDTH: [u64; 16] = [
    0,
    0xff,
    0xffff,
    0xff_ffff,
    0xffff_ffff,
    0xff_ffff_ffff,
    0xffff_ffff_ffff,
    0xff_ffff_ffff_ffff,
    u64::MAX,
    u64::MAX,
    u64::MAX,
    u64::MAX,
    u64::MAX,
    u64::MAX,
    u64::MAX,
    u64::MAX,
];

/// The largest value of `width` bytes (see [`MAX_OF_WIDTH`]).
#[inline(always)]
fn max_of_width(width: u8) -> u64 {
    MAX_OF_WIDTH[usize::from(width & 15)]
}

/// Whether `v` fits `width` bytes unsigned.
#[inline(always)]
fn fits_unsigned(v: u64, width: u8) -> bool {
    v <= max_of_width(width)
}

/// Whether `d` fits `width` bytes as two's complement (as `signed_width(d) <= width`):
/// shifted by half the range, it must fit unsigned (width 0 holds only 0).
#[inline(always)]
fn fits_signed(d: u64, width: u8) -> bool {
    let max = max_of_width(width);
    d.wrapping_add(max - (max >> 1)) <= max
}

/// The low `width` bytes (0-8) of the integer stored at the start of `word`.
#[inline(always)]
pub(crate) fn window_value(word: [u8; 8], width: u8, order: ByteOrder) -> u64 {
    let mask = max_of_width(width);
    match order {
        // The first `width` bytes rotated to the bottom, the rest masked off.
        ByteOrder::Big => u64::from_be_bytes(word).rotate_left(8 * u32::from(width)) & mask,
        ByteOrder::Little => u64::from_le_bytes(word) & mask,
    }
}

#[cfg(test)]
mod tests {
    use super::{fits_signed, fits_unsigned};
    use crate::field::bits::{sign_extend, truncate};

    #[test]
    fn fit_tables_agree_with_the_shift_definitions() {
        // Every power of two, one less and one more, and their negations.
        let samples: Vec<u64> = (0..64).map(|b| 1u64 << b).chain([0, u64::MAX]).collect();
        for &base in &samples {
            for v in [
                base,
                base.wrapping_neg(),
                base.wrapping_sub(1),
                base.wrapping_add(1),
            ] {
                for w in 0..=9u8 {
                    let unsigned = w >= 8 || v >> (8 * u32::from(w)) == 0;
                    assert_eq!(fits_unsigned(v, w), unsigned, "{v:#x} in {w}");
                    let signed = w >= 8 || sign_extend(truncate(v, w), w) == v;
                    assert_eq!(fits_signed(v, w), signed, "{v:#x} in {w} signed");
                }
            }
        }
    }
}

//! What generated `encode`/`decode` functions call: one method per field, with the field's
//! ordinal (its index among the record's scalar fields) known at compile time, so no lookup
//! and no dynamic value is needed per field.

use crate::container::ByteOrder;
use crate::error::Error;
use crate::field::bits::read_uint;
use crate::field::{FieldState, Misfit, ValueSource};

use super::scalar::Scalar;
use crate::universal::values::ValueBuilder as WriteValues;

/// Why encoding a record stopped.
#[derive(Debug)]
pub enum Stop {
    /// The scalar with this ordinal cannot hold its value under the field's current state:
    /// the writer emits a metadata record and encodes the record again.
    Adapt(usize, Misfit),
    /// The record cannot be written.
    Fail(Error),
}

/// Encodes the fields of one record into the record stream.
pub struct Encoder<'a> {
    pub(crate) states: &'a mut [FieldState],
    pub(crate) out: &'a mut Vec<u8>,
    pub(crate) values: &'a mut WriteValues,
    pub(crate) order: ByteOrder,
    pub(crate) record: u64,
    pub(crate) name: &'a str,
}

impl Encoder<'_> {
    /// Encodes the scalar field with ordinal `ordinal`.
    #[inline]
    pub fn scalar<S: Scalar>(&mut self, ordinal: usize, value: S) -> Result<(), Stop> {
        let Some(state) = self.states.get_mut(ordinal) else {
            return Err(Stop::Fail(Error::record(
                None,
                self.record,
                self.name,
                format!("field ordinal {ordinal} is out of range: generated code and DTD disagree"),
            )));
        };
        match state.encode(value.to_u64(), self.values) {
            Ok(stored) => {
                put_uint(self.out, stored, state.width(), self.order);
                Ok(())
            }
            Err(m) => Err(Stop::Adapt(ordinal, m)),
        }
    }

    /// Encodes a `vfield`: its length (the scalar with ordinal `ordinal`), then the bytes.
    #[inline]
    pub fn vfield(&mut self, ordinal: usize, data: &[u8]) -> Result<(), Stop> {
        self.scalar(ordinal, data.len() as u64)?;
        self.out.extend_from_slice(data);
        Ok(())
    }
}

/// Decodes the fields of one record from the record stream.
pub struct Decoder<'a> {
    pub(crate) states: &'a mut [FieldState],
    pub(crate) stream: &'a [u8],
    pub(crate) at: &'a mut usize,
    pub(crate) values: &'a dyn ValueSource,
    pub(crate) order: ByteOrder,
    pub(crate) record: u64,
    pub(crate) block_offset: u64,
    pub(crate) name: &'a str,
}

impl Decoder<'_> {
    fn fail(&self, field: &str, message: impl Into<String>) -> Error {
        Error::record(
            Some(self.block_offset),
            self.record,
            format!("{}.{field}", self.name),
            message,
        )
    }

    fn take(&mut self, n: usize, field: &str) -> Result<&[u8], Error> {
        let left = self.stream.len() - *self.at;
        if left < n {
            return Err(self.fail(
                field,
                format!(
                    "record stream ends: {n} bytes needed at stream byte {}, {left} left",
                    *self.at
                ),
            ));
        }
        let s = &self.stream[*self.at..*self.at + n];
        *self.at += n;
        Ok(s)
    }

    fn value(&mut self, ordinal: usize, field: &str) -> Result<u64, Error> {
        let width = match self.states.get(ordinal) {
            Some(s) => s.width(),
            None => {
                return Err(self.fail(
                    field,
                    format!(
                        "field ordinal {ordinal} is out of range: generated code and DTD disagree"
                    ),
                ))
            }
        };
        let order = self.order;
        let stored = read_uint(self.take(usize::from(width), field)?, width, order);
        let values = self.values;
        let decoded = self.states[ordinal].decode(stored, values);
        decoded.map_err(|m| self.fail(field, m))
    }

    /// Decodes the scalar field with ordinal `ordinal` named `field` into its Rust type.
    #[inline]
    pub fn scalar<S: Scalar>(&mut self, ordinal: usize, field: &str) -> Result<S, Error> {
        let v = self.value(ordinal, field)?;
        S::from_u64(v)
            .ok_or_else(|| self.fail(field, format!("value {v} does not fit in {}", S::RUST_NAME)))
    }

    /// Decodes a `vfield` whose length is the scalar with ordinal `ordinal`.
    #[inline]
    pub fn vfield(&mut self, ordinal: usize, field: &str) -> Result<Vec<u8>, Error> {
        let len = self.value(ordinal, field)?;
        let left = (self.stream.len() - *self.at) as u64;
        if len > left {
            return Err(self.fail(
                field,
                format!("byte string of {len} bytes, but only {left} bytes remain"),
            ));
        }
        Ok(self.take(len as usize, field)?.to_vec())
    }
}

/// Appends the low `width` bytes of `value` one push at a time: for the 0-8 bytes of a field
/// this beats a variable-length slice copy, which is a call to `memmove`.
#[inline]
pub(crate) fn put_uint(out: &mut Vec<u8>, value: u64, width: u8, order: ByteOrder) {
    let w = u32::from(width.min(8));
    match order {
        ByteOrder::Big => {
            for i in (0..w).rev() {
                out.push((value >> (8 * i)) as u8);
            }
        }
        ByteOrder::Little => {
            for i in 0..w {
                out.push((value >> (8 * i)) as u8);
            }
        }
    }
}

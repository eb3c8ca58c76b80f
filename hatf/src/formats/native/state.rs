//! The width and interpretation of each field, as set by metadata records, and how a value is
//! turned into stored bytes and back under them.

use super::codes::{fits_signed, fits_unsigned, signed_width, unsigned_width, Field, Width};

/// An interpretation with its arguments, as carried by `set fieldInterpretation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interpretation {
    /// The stored value is the value.
    None,
    /// The field has width 0 and the value is the argument.
    Default(u64),
    /// Value = base + the signed stored value.
    BaseOffset(u64),
    /// Value = previous value + the signed stored value; the argument is the initial previous value.
    Delta(u64),
    /// Width 0; value = previous value + `stride` (two's complement, arithmetic modulo 2^64).
    Stride {
        /// The previous value for the first record after the metadata record.
        initial: u64,
        /// Added to the previous value.
        stride: u64,
    },
}

/// One metadata record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metadata {
    /// `set fieldSize field width` (4 bytes: 11 1 field width).
    SetSize(Field, Width),
    /// `set fieldInterpretation field interp args` (4, 12 or 20 bytes).
    SetInterpretation(Field, Interpretation),
}

impl Metadata {
    /// Encoded size in bytes.
    pub fn encoded_len(&self) -> usize {
        match self {
            Metadata::SetSize(..) => 4,
            Metadata::SetInterpretation(_, Interpretation::None) => 4,
            Metadata::SetInterpretation(_, Interpretation::Stride { .. }) => 20,
            Metadata::SetInterpretation(..) => 12,
        }
    }
}

/// The live interpretation of one field (arguments and running previous value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Live {
    None,
    Default(u64),
    BaseOffset(u64),
    Delta { prev: u64 },
    Stride { prev: u64, stride: u64 },
}

/// The state of one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldState {
    width: Width,
    last_nonzero: Width,
    live: Live,
}

impl FieldState {
    /// The width in effect.
    pub fn width(&self) -> Width {
        self.width
    }

    /// The width `none`, `baseOffset` and `delta` will restore.
    pub fn last_nonzero_width(&self) -> Width {
        self.last_nonzero
    }

    /// The interpretation in effect, with the running previous value as the argument of
    /// delta and stride.
    pub fn interpretation(&self) -> Interpretation {
        match self.live {
            Live::None => Interpretation::None,
            Live::Default(d) => Interpretation::Default(d),
            Live::BaseOffset(b) => Interpretation::BaseOffset(b),
            Live::Delta { prev } => Interpretation::Delta(prev),
            Live::Stride { prev, stride } => Interpretation::Stride {
                initial: prev,
                stride,
            },
        }
    }
}

/// Why a metadata record cannot be applied.
pub type MetadataError = String;

/// The state of all six fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    fields: [FieldState; 6],
}

impl Default for Config {
    /// Appendix A's default configuration: size 4 none, address 4 none, time/thread/heap/attributes
    /// width 0 default 0. The "last non-zero width" that `none` restores starts at 4 for numeric
    /// fields and at v1 for attributes (attributes are byte strings).
    fn default() -> Self {
        let numeric_default = FieldState {
            width: Width::Fixed(0),
            last_nonzero: Width::Fixed(4),
            live: Live::Default(0),
        };
        let direct4 = FieldState {
            width: Width::Fixed(4),
            last_nonzero: Width::Fixed(4),
            live: Live::None,
        };
        Config {
            fields: [
                direct4,
                direct4,
                numeric_default,
                numeric_default,
                numeric_default,
                FieldState {
                    last_nonzero: Width::V1,
                    ..numeric_default
                },
            ],
        }
    }
}

/// A value that does not fit a field under the current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Misfit;

impl Config {
    /// The state of `field`.
    pub fn field(&self, field: Field) -> &FieldState {
        &self.fields[field as usize]
    }

    /// Applies a metadata record, or says why it is not valid HATF 1.0 here.
    pub fn apply(&mut self, meta: &Metadata) -> Result<(), MetadataError> {
        match *meta {
            Metadata::SetSize(field, width) => {
                let st = &mut self.fields[field as usize];
                let variable = matches!(width, Width::V1 | Width::V2);
                if variable && field != Field::Attributes {
                    return Err(format!(
                        "width v1/v2 (code {}) is legal only for attributes, not {}",
                        width.code(),
                        field.name()
                    ));
                }
                if !width.is_zero() && matches!(st.live, Live::Default(_) | Live::Stride { .. }) {
                    return Err(format!(
                        "{} has a zero-width interpretation (default/stride); set the \
                         interpretation to none, baseOffset or delta before a non-zero width",
                        field.name()
                    ));
                }
                st.width = width;
                if !width.is_zero() {
                    st.last_nonzero = width;
                }
                Ok(())
            }
            Metadata::SetInterpretation(field, interp) => {
                let st = &mut self.fields[field as usize];
                if field == Field::Attributes
                    && !matches!(interp, Interpretation::None | Interpretation::Default(_))
                {
                    return Err(
                        "attributes are byte strings: only none and default apply to them".into(),
                    );
                }
                let (live, width) = match interp {
                    Interpretation::None => (Live::None, st.last_nonzero),
                    Interpretation::Default(d) => (Live::Default(d), Width::Fixed(0)),
                    Interpretation::BaseOffset(b) => (Live::BaseOffset(b), st.last_nonzero),
                    Interpretation::Delta(i) => (Live::Delta { prev: i }, st.last_nonzero),
                    Interpretation::Stride { initial, stride } => (
                        Live::Stride {
                            prev: initial,
                            stride,
                        },
                        Width::Fixed(0),
                    ),
                };
                st.live = live;
                st.width = width;
                Ok(())
            }
        }
    }

    /// Turns the stored bytes (`raw`, big-endian, `width` bytes) of a numeric field into its value.
    pub fn decode_numeric(&mut self, field: Field, raw: u64) -> u64 {
        let st = &mut self.fields[field as usize];
        let w = match st.width {
            Width::Fixed(n) => n,
            Width::V1 | Width::V2 => 8,
        };
        let signed = sign_extend(raw, w);
        match &mut st.live {
            Live::None => raw,
            Live::Default(d) => *d,
            Live::BaseOffset(b) => b.wrapping_add(signed as u64),
            Live::Delta { prev } => {
                *prev = prev.wrapping_add(signed as u64);
                *prev
            }
            Live::Stride { prev, stride } => {
                *prev = prev.wrapping_add(*stride);
                *prev
            }
        }
    }

    /// Turns a numeric value into the bytes to store (as a number of `width` bytes), advancing
    /// delta/stride state, or says it does not fit (state unchanged then).
    pub fn encode_numeric(&mut self, field: Field, value: u64) -> Result<u64, Misfit> {
        let st = &mut self.fields[field as usize];
        let w = match st.width {
            Width::Fixed(n) => n,
            Width::V1 | Width::V2 => return Err(Misfit),
        };
        let mask = if w >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * u32::from(w))) - 1
        };
        match &mut st.live {
            Live::None => fits_unsigned(value, w).then_some(value).ok_or(Misfit),
            Live::Default(d) => (value == *d).then_some(0).ok_or(Misfit),
            Live::BaseOffset(b) => {
                let diff = value.wrapping_sub(*b) as i64;
                fits_signed(diff, w)
                    .then_some(diff as u64 & mask)
                    .ok_or(Misfit)
            }
            Live::Delta { prev } => {
                let diff = value.wrapping_sub(*prev) as i64;
                if fits_signed(diff, w) {
                    *prev = value;
                    Ok(diff as u64 & mask)
                } else {
                    Err(Misfit)
                }
            }
            Live::Stride { prev, stride } => {
                if prev.wrapping_add(*stride) == value {
                    *prev = value;
                    Ok(0)
                } else {
                    Err(Misfit)
                }
            }
        }
    }

    /// The attributes value under a default interpretation, or `None` when attributes are stored.
    pub fn default_attributes(&self) -> Option<Vec<u8>> {
        match self.fields[Field::Attributes as usize].live {
            Live::Default(d) => Some(minimal_be(d)),
            _ => None,
        }
    }

    /// True when `bytes` can be the attributes of the next record without metadata.
    pub fn attributes_fit(&self, bytes: &[u8]) -> bool {
        let st = &self.fields[Field::Attributes as usize];
        match st.live {
            Live::Default(d) => minimal_be(d) == bytes,
            _ => match st.width {
                Width::Fixed(n) => bytes.len() == usize::from(n),
                Width::V1 => bytes.len() <= 0xff,
                Width::V2 => bytes.len() <= 0xffff,
            },
        }
    }

    /// The metadata records that make `value` fit `field`, assuming it does not fit now.
    pub fn fix_numeric(&self, field: Field, value: u64) -> Vec<Metadata> {
        let st = self.field(field);
        let mut out = Vec::new();
        let (live, width) = match st.live {
            Live::Default(_) | Live::Stride { .. } => {
                out.push(Metadata::SetInterpretation(field, Interpretation::None));
                (Live::None, st.last_nonzero)
            }
            live => (live, st.width),
        };
        let needed = match live {
            Live::None => unsigned_width(value),
            Live::BaseOffset(b) => signed_width(value.wrapping_sub(b) as i64),
            Live::Delta { prev } => signed_width(value.wrapping_sub(prev) as i64),
            Live::Default(_) | Live::Stride { .. } => 8,
        };
        let current = match width {
            Width::Fixed(n) => n,
            Width::V1 | Width::V2 => 0,
        };
        if needed > current {
            out.push(Metadata::SetSize(field, Width::Fixed(needed)));
        }
        out
    }

    /// The metadata records that make `bytes` fit the attributes field, assuming they do not now.
    pub fn fix_attributes(&self, bytes: &[u8]) -> Vec<Metadata> {
        // Empty attributes go back to `default 0` (no bytes at all); anything else is stored with
        // `none`, whose 4-byte metadata is cheaper than a 12-byte default for each distinct value.
        if bytes.is_empty() {
            return vec![Metadata::SetInterpretation(
                Field::Attributes,
                Interpretation::Default(0),
            )];
        }
        let st = self.field(Field::Attributes);
        let mut out = Vec::new();
        if !matches!(st.live, Live::None) {
            out.push(Metadata::SetInterpretation(
                Field::Attributes,
                Interpretation::None,
            ));
        }
        let width = if bytes.len() <= 0xff {
            Width::V1
        } else {
            Width::V2
        };
        let restored = if matches!(st.live, Live::None) {
            st.width
        } else {
            st.last_nonzero
        };
        let fits = match restored {
            Width::Fixed(n) => bytes.len() == usize::from(n),
            Width::V1 => bytes.len() <= 0xff,
            Width::V2 => true,
        };
        if !fits {
            out.push(Metadata::SetSize(Field::Attributes, width));
        }
        out
    }
}

/// Sign-extends the low `width` bytes of `raw`.
pub fn sign_extend(raw: u64, width: u8) -> i64 {
    match width {
        0 => 0,
        1..=7 => {
            let shift = 64 - 8 * u32::from(width);
            ((raw << shift) as i64) >> shift
        }
        _ => raw as i64,
    }
}

/// `v` as big-endian bytes without leading zero bytes (0 is the empty string).
pub fn minimal_be(v: u64) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let skip = bytes.iter().take_while(|b| **b == 0).count();
    bytes[skip..].to_vec()
}

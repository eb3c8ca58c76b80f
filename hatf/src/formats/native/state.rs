//! The width and interpretation of each field, as set by metadata records, and how a value is
//! turned into stored bytes and back under them.
//!
//! The five numeric fields are `metatf::field` states: HATF 1.0's interpretations are a subset of
//! the Meta-TF ones with the same arithmetic. What is HATF 1.0's own is kept here: the legal
//! widths (1, 2, 4, 8), the refusal of a non-zero width under a zero-width interpretation, and the
//! attributes field, a byte string with the length-prefixed widths v1/v2.

use metatf::field::{bits, Change, FieldState};

use super::codes::{Field, Width};

/// An interpretation with its arguments, as carried by `set fieldInterpretation`. HATF 1.0's
/// five (codes 0–4) are Meta-TF's with the same meaning and arithmetic, so the one type serves
/// both; the section interpretations Meta-TF adds have no HATF 1.0 code and are refused where
/// metadata is applied ([`Config::apply`]) or written ([`interpretation_code`]).
pub use metatf::dtd::Interpretation;

/// HATF 1.0's code for `interp` (Appendix A: 0 none, 1 default, 2 baseOffset, 3 delta,
/// 4 stride), or why it has none.
pub fn interpretation_code(interp: Interpretation) -> Result<u8, MetadataError> {
    use super::codes::interp as code;
    match interp {
        Interpretation::None => Ok(code::NONE),
        Interpretation::Default(_) => Ok(code::DEFAULT),
        Interpretation::BaseOffset(_) => Ok(code::BASE_OFFSET),
        Interpretation::Delta(_) => Ok(code::DELTA),
        Interpretation::Stride { .. } => Ok(code::STRIDE),
        Interpretation::SectionOffset(_) | Interpretation::SectionStride { .. } => Err(format!(
            "interpretation {interp:?} is Meta-TF's, not HATF 1.0's (codes 0 none .. 4 stride)"
        )),
    }
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

/// The attributes field: a byte string, stored with a fixed length or a v1/v2 length prefix, or
/// absent under `default` (whose argument's minimal big-endian bytes are the attributes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Attributes {
    width: Width,
    /// The width `none` restores.
    last_nonzero: Width,
    /// The argument of `default`, when that is the interpretation.
    default: Option<u64>,
}

/// Why a metadata record cannot be applied.
pub type MetadataError = String;

/// The state of all six fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Size, address, time, thread and heap, indexed by field code.
    numeric: [FieldState; 5],
    attributes: Attributes,
}

impl Default for Config {
    /// Appendix A's default configuration: size 4 none, address 4 none, time/thread/heap/attributes
    /// width 0 default 0. The "last non-zero width" that `none` restores starts at 4 for numeric
    /// fields and at v1 for attributes (attributes are byte strings).
    fn default() -> Self {
        let direct4 = FieldState::new(4, Interpretation::None);
        let default0 = FieldState::new(4, Interpretation::Default(0));
        Config {
            numeric: [direct4, direct4, default0, default0, default0],
            attributes: Attributes {
                width: Width::Fixed(0),
                last_nonzero: Width::V1,
                default: Some(0),
            },
        }
    }
}

impl Config {
    /// The state of numeric `field` (not attributes).
    fn numeric(&self, field: Field) -> &FieldState {
        &self.numeric[usize::from(field.code())]
    }

    /// The width `field` takes in the next record.
    pub fn width(&self, field: Field) -> Width {
        match field {
            Field::Attributes => self.attributes.width,
            _ => Width::Fixed(self.numeric(field).width()),
        }
    }

    /// The width `none`, `baseOffset` and `delta` will restore.
    pub fn last_nonzero_width(&self, field: Field) -> Width {
        match field {
            Field::Attributes => self.attributes.last_nonzero,
            _ => Width::Fixed(self.numeric(field).last_width()),
        }
    }

    /// The interpretation in effect, with the running previous value as the argument of
    /// delta and stride.
    pub fn interpretation(&self, field: Field) -> Interpretation {
        if field == Field::Attributes {
            return self
                .attributes
                .default
                .map_or(Interpretation::None, Interpretation::Default);
        }
        let st = self.numeric(field);
        match st.interpretation() {
            Interpretation::Delta(_) => Interpretation::Delta(st.previous()),
            Interpretation::Stride { stride, .. } => Interpretation::Stride {
                initial: st.previous(),
                stride,
            },
            // The rest carry no running value; `apply` admits no section interpretation.
            other => other,
        }
    }

    /// Applies a metadata record, or says why it is not valid HATF 1.0 here.
    pub fn apply(&mut self, meta: &Metadata) -> Result<(), MetadataError> {
        if let Metadata::SetInterpretation(_, interp) = *meta {
            interpretation_code(interp)?;
        }
        match *meta {
            Metadata::SetSize(Field::Attributes, width) => {
                let st = &mut self.attributes;
                if !width.is_zero() && st.default.is_some() {
                    return Err(zero_width_conflict(Field::Attributes));
                }
                st.width = width;
                if !width.is_zero() {
                    st.last_nonzero = width;
                }
            }
            Metadata::SetSize(field, width) => {
                let Width::Fixed(w) = width else {
                    return Err(format!(
                        "width v1/v2 (code {}) is legal only for attributes, not {}",
                        width.code(),
                        field.name()
                    ));
                };
                let st = &mut self.numeric[usize::from(field.code())];
                if w != 0 && st.interpretation().is_zero_width() {
                    return Err(zero_width_conflict(field));
                }
                st.apply(Change::Width(w));
            }
            Metadata::SetInterpretation(Field::Attributes, interp) => {
                let st = &mut self.attributes;
                match interp {
                    Interpretation::None => {
                        st.default = None;
                        st.width = st.last_nonzero;
                    }
                    Interpretation::Default(d) => {
                        st.default = Some(d);
                        st.width = Width::Fixed(0);
                    }
                    _ => {
                        return Err(
                            "attributes are byte strings: only none and default apply to them"
                                .into(),
                        )
                    }
                }
            }
            Metadata::SetInterpretation(field, interp) => {
                self.numeric[usize::from(field.code())].apply(Change::Interpretation(interp));
            }
        }
        Ok(())
    }

    /// Turns the stored bytes (`raw`, big-endian, `width` bytes) of a numeric field into its value.
    pub fn decode_numeric(&mut self, field: Field, raw: u64) -> u64 {
        // Every HATF 1.0 interpretation reads no value section, so the direct path answers.
        self.numeric[usize::from(field.code())]
            .decode_direct(raw)
            .unwrap_or(raw)
    }

    /// Turns a numeric value into the bytes to store (as a number of `width` bytes), advancing
    /// delta/stride state, or `None` when it does not fit (state unchanged then).
    pub fn encode_numeric(&mut self, field: Field, value: u64) -> Option<u64> {
        self.numeric[usize::from(field.code())].encode_direct(value)
    }

    /// The attributes value under a default interpretation, or `None` when attributes are stored.
    pub fn default_attributes(&self) -> Option<Vec<u8>> {
        self.attributes.default.map(minimal_be)
    }

    /// True when `bytes` can be the attributes of the next record without metadata.
    pub fn attributes_fit(&self, bytes: &[u8]) -> bool {
        let st = &self.attributes;
        match st.default {
            Some(d) => minimal_be(d) == bytes,
            None => match st.width {
                Width::Fixed(n) => bytes.len() == usize::from(n),
                Width::V1 => bytes.len() <= 0xff,
                Width::V2 => bytes.len() <= 0xffff,
            },
        }
    }

    /// The metadata records that make `value` fit numeric `field`, assuming it does not fit now.
    pub fn fix_numeric(&self, field: Field, value: u64) -> Vec<Metadata> {
        let st = self.numeric(field);
        let mut out = Vec::new();
        let (interp, width) = if st.interpretation().is_zero_width() {
            out.push(Metadata::SetInterpretation(field, Interpretation::None));
            (Interpretation::None, st.last_width())
        } else {
            (st.interpretation(), st.width())
        };
        let needed = match interp {
            Interpretation::None => Width::fixed_for(bits::unsigned_width(value)),
            Interpretation::BaseOffset(b) => {
                Width::fixed_for(bits::signed_width(value.wrapping_sub(b)))
            }
            Interpretation::Delta(_) => {
                Width::fixed_for(bits::signed_width(value.wrapping_sub(st.previous())))
            }
            _ => 8,
        };
        if needed > width {
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
        let st = &self.attributes;
        let mut out = Vec::new();
        if st.default.is_some() {
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
        let restored = if st.default.is_none() {
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

/// The refusal of a non-zero width while `field` is absent from records.
fn zero_width_conflict(field: Field) -> MetadataError {
    format!(
        "{} has a zero-width interpretation (default/stride); set the interpretation to none, \
         baseOffset or delta before a non-zero width",
        field.name()
    )
}

/// `v` as big-endian bytes without leading zero bytes (0 is the empty string).
pub fn minimal_be(v: u64) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let skip = bytes.iter().take_while(|b| **b == 0).count();
    bytes[skip..].to_vec()
}

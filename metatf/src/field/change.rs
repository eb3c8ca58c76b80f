//! What a metadata record changes: a field's width or its interpretation, and the property
//! codes and values that encode the change (Appendix B table, decision 2 of the project).

use metatf_dtd::Interpretation;

/// One property change carried by a metadata record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Property 0: set the field's width in bytes (0–8).
    Width(u8),
    /// Properties 1–7: set the field's interpretation.
    Interpretation(Interpretation),
}

/// Largest width a field may have (decision 3: wider values use byte strings).
pub const MAX_WIDTH: u8 = 8;

impl Change {
    /// The metadata `property` code.
    pub fn property_code(&self) -> u8 {
        match self {
            Change::Width(_) => 0,
            Change::Interpretation(i) => i.property_code(),
        }
    }

    /// The 8-byte values that follow the property code (0, 1 or 2 of them).
    pub fn values(&self) -> Vec<u64> {
        match *self {
            Change::Width(w) => vec![u64::from(w)],
            Change::Interpretation(i) => match i {
                Interpretation::None => vec![],
                Interpretation::Default(v)
                | Interpretation::BaseOffset(v)
                | Interpretation::Delta(v) => vec![v],
                Interpretation::SectionOffset(s) => vec![u64::from(s)],
                Interpretation::Stride { initial, stride } => vec![initial, stride],
                Interpretation::SectionStride { section, stride } => {
                    vec![u64::from(section), stride]
                }
            },
        }
    }

    /// How many 8-byte values follow `property` in a metadata record, or `None` for an unknown
    /// property code.
    pub fn value_count(property: u8) -> Option<usize> {
        match property {
            1 => Some(0),
            0 | 2..=5 => Some(1),
            6 | 7 => Some(2),
            _ => None,
        }
    }

    /// Builds the change from a property code and its values; the error says what is wrong.
    pub fn from_parts(property: u8, values: &[u64]) -> Result<Change, String> {
        let want = Change::value_count(property)
            .ok_or_else(|| format!("unknown metadata property code {property} (0-7 exist)"))?;
        if values.len() != want {
            return Err(format!(
                "property {} takes {want} value(s), not {}",
                property_name(property),
                values.len()
            ));
        }
        let section = |v: u64| -> Result<u8, String> {
            match u8::try_from(v) {
                Ok(s) if s >= 1 => Ok(s),
                _ => Err(format!("section number {v} is outside 1-255")),
            }
        };
        Ok(match property {
            0 => match u8::try_from(values[0]) {
                Ok(w) if w <= MAX_WIDTH => Change::Width(w),
                _ => return Err(format!("width {} exceeds {MAX_WIDTH} bytes", values[0])),
            },
            1 => Change::Interpretation(Interpretation::None),
            2 => Change::Interpretation(Interpretation::BaseOffset(values[0])),
            3 => Change::Interpretation(Interpretation::Delta(values[0])),
            4 => Change::Interpretation(Interpretation::Default(values[0])),
            5 => Change::Interpretation(Interpretation::SectionOffset(section(values[0])?)),
            6 => Change::Interpretation(Interpretation::Stride {
                initial: values[0],
                stride: values[1],
            }),
            _ => Change::Interpretation(Interpretation::SectionStride {
                section: section(values[0])?,
                stride: values[1],
            }),
        })
    }
}

/// The name the text form uses for a property code.
pub fn property_name(code: u8) -> &'static str {
    match code {
        0 => "width",
        1 => "none",
        2 => "baseOffset",
        3 => "delta",
        4 => "default",
        5 => "sectionOffset",
        6 => "stride",
        7 => "sectionStride",
        _ => "unknown",
    }
}

/// The property code for a name printed by [`property_name`].
pub fn property_code(name: &str) -> Option<u8> {
    (0..=7).find(|&c| property_name(c) == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_survives_its_encoding() {
        let changes = [
            Change::Width(8),
            Change::Width(0),
            Change::Interpretation(Interpretation::None),
            Change::Interpretation(Interpretation::BaseOffset(u64::MAX)),
            Change::Interpretation(Interpretation::Delta(7)),
            Change::Interpretation(Interpretation::Default(9)),
            Change::Interpretation(Interpretation::SectionOffset(255)),
            Change::Interpretation(Interpretation::Stride {
                initial: 1,
                stride: 2,
            }),
            Change::Interpretation(Interpretation::SectionStride {
                section: 3,
                stride: 4,
            }),
        ];
        for c in changes {
            let code = c.property_code();
            assert_eq!(Change::from_parts(code, &c.values()), Ok(c));
            assert_eq!(property_code(property_name(code)), Some(code));
        }
        assert!(Change::from_parts(0, &[9]).is_err());
        assert!(Change::from_parts(5, &[0]).is_err());
        assert!(Change::from_parts(6, &[1]).is_err());
        assert!(Change::from_parts(8, &[]).is_err());
    }
}

//! Every interpretation at every width: encode then decode gives the value back, misfits are
//! reported instead of truncating, and metadata changes follow the project's decisions.

use std::collections::BTreeMap;

use metatf_dtd::Interpretation;

use super::*;

/// Value sections as plain vectors, for both directions.
#[derive(Default, Clone)]
struct Sections(BTreeMap<u8, Vec<u64>>);

impl ValueSource for Sections {
    fn element(&self, section: u8, index: u64) -> Result<u64, String> {
        self.0
            .get(&section)
            .and_then(|v| v.get(index as usize))
            .copied()
            .ok_or_else(|| format!("no element {index} in section {section}"))
    }
}

impl ValueSink for Sections {
    fn len(&self, section: u8) -> u64 {
        self.0.get(&section).map_or(0, |v| v.len() as u64)
    }
    fn get(&self, section: u8, index: u64) -> Option<u64> {
        self.0.get(&section)?.get(index as usize).copied()
    }
    fn find(&self, section: u8, value: u64) -> Option<u64> {
        self.0
            .get(&section)?
            .iter()
            .position(|&v| v == value)
            .map(|i| i as u64)
    }
    fn put(&mut self, section: u8, index: u64, value: u64) {
        let v = self.0.entry(section).or_default();
        v.resize(index as usize, 0);
        v.push(value);
    }
}

/// Encodes `values` (widening on `Misfit::Width`, failing on `Misfit::Interpretation`), then
/// decodes the stored integers with a fresh state and checks the values come back.
fn round_trip(width: u8, i: Interpretation, values: &[u64]) -> Result<Vec<u64>, Misfit> {
    let mut enc = FieldState::new(width, i);
    let mut dec = FieldState::new(width, i);
    let mut sections = Sections::default();
    let mut stored = vec![];
    for &v in values {
        let s = loop {
            let before = enc;
            match enc.encode(v, &mut sections) {
                Ok(s) => break s,
                Err(Misfit::Width(w)) => {
                    assert_eq!(enc, before, "state changed on a misfit");
                    assert!(w > enc.width() && w <= 8);
                    enc.apply(Change::Width(w));
                    stored.push(Err(w));
                }
                Err(m) => return Err(m),
            }
        };
        assert!(
            bits::unsigned_width(s) <= enc.width(),
            "stored {s} exceeds width"
        );
        stored.push(Ok(s));
    }
    let mut out = vec![];
    for s in stored {
        match s {
            Ok(s) => out.push(dec.decode(s, &sections).unwrap()),
            Err(w) => dec.apply(Change::Width(w)),
        }
    }
    assert_eq!(out, values);
    Ok(out)
}

const VALUES: [u64; 8] = [0, 1, 255, 256, 70000, u64::MAX, 5, 1 << 40];

#[test]
fn none_base_offset_delta_and_section_offset_round_trip_at_every_width() {
    for width in 0..=8 {
        for i in [
            Interpretation::None,
            Interpretation::BaseOffset(1000),
            Interpretation::Delta(3),
            Interpretation::SectionOffset(4),
        ] {
            assert!(round_trip(width, i, &VALUES).is_ok(), "{i:?} width {width}");
        }
    }
}

#[test]
fn zero_width_interpretations_round_trip_matching_values() {
    assert!(round_trip(4, Interpretation::Default(7), &[7, 7, 7]).is_ok());
    let s = Interpretation::Stride {
        initial: 10,
        stride: u64::MAX - 1,
    };
    // First value is initial + stride (decision 1); stride -2 wraps.
    assert!(round_trip(0, s, &[8, 6, 4]).is_ok());
    let ss = Interpretation::SectionStride {
        section: 2,
        stride: 3,
    };
    assert!(round_trip(0, ss, &[5, 6, 7, 8]).is_ok());
    let repeat = Interpretation::SectionStride {
        section: 2,
        stride: 0,
    };
    assert!(round_trip(0, repeat, &[9, 9, 9]).is_ok());
}

#[test]
fn mismatches_ask_for_another_interpretation() {
    assert_eq!(
        round_trip(0, Interpretation::Default(7), &[7, 8]),
        Err(Misfit::Interpretation)
    );
    let s = Interpretation::Stride {
        initial: 0,
        stride: 4,
    };
    assert_eq!(round_trip(0, s, &[4, 9]), Err(Misfit::Interpretation));
    let repeat = Interpretation::SectionStride {
        section: 2,
        stride: 0,
    };
    assert_eq!(round_trip(0, repeat, &[9, 8]), Err(Misfit::Interpretation));
}

#[test]
fn signed_values_are_twos_complement_in_the_width() {
    let mut s = FieldState::new(1, Interpretation::BaseOffset(100));
    let mut sections = Sections::default();
    assert_eq!(s.encode(99, &mut sections), Ok(0xff));
    assert_eq!(s.encode(227, &mut sections), Ok(127));
    assert_eq!(s.encode(228, &mut sections), Err(Misfit::Width(2)));
    assert_eq!(s.encode(100u64.wrapping_sub(28), &mut sections), Ok(0xe4));
    assert_eq!(s.decode(0x80, &sections), Ok(100u64.wrapping_sub(128)));
    let mut d = FieldState::new(2, Interpretation::Delta(1000));
    assert_eq!(d.decode(0xfffe, &sections), Ok(998));
    assert_eq!(d.decode(0x0005, &sections), Ok(1003));
}

#[test]
fn zero_width_interpretations_remember_the_last_width() {
    let mut s = FieldState::new(4, Interpretation::None);
    s.apply(Change::Interpretation(Interpretation::Default(0)));
    assert_eq!(s.width(), 0);
    s.apply(Change::Width(2)); // remembered, not applied, while default holds
    assert_eq!(s.width(), 0);
    s.apply(Change::Interpretation(Interpretation::Delta(5)));
    assert_eq!(s.width(), 2);
    s.apply(Change::Interpretation(Interpretation::Stride {
        initial: 1,
        stride: 1,
    }));
    s.apply(Change::Interpretation(Interpretation::None));
    assert_eq!(s.width(), 2);
}

#[test]
fn section_reads_out_of_range_are_errors() {
    let mut s = FieldState::new(1, Interpretation::SectionOffset(3));
    let sections = Sections::default();
    assert!(s.decode(0, &sections).unwrap_err().contains("section 3"));
}

#[test]
fn block_start_restarts_section_cursors() {
    let ss = Interpretation::SectionStride {
        section: 1,
        stride: 1,
    };
    let mut s = FieldState::new(0, ss);
    let mut sections = Sections::default();
    s.encode(10, &mut sections).unwrap();
    s.encode(11, &mut sections).unwrap();
    s.start_block();
    assert_eq!(s.decode(0, &sections), Ok(10));
}

//! "HATF best": HATF 1.0 with metadata records placed by the heuristics of the paper's section 3.3.
//!
//! For each planned field (size, address, thread) and each record, the planner compares a few
//! candidate settings over the next [`HORIZON`] records, counting metadata bytes, field bytes and
//! an estimated cost for leaving the setting again, and keeps the cheapest:
//! - size: direct with the narrowest of 1/2/4/8 bytes (the paper's "Small Size"), default over runs
//!   of equal sizes ("Same Size");
//! - address: direct, `baseOffset` with 1- or 2-byte offsets (the paper's), 4-byte offsets (our
//!   addition: 64-bit addresses need 8 bytes direct, and a heap fits in ±2 GiB), and `stride`;
//! - thread: direct or default over runs of one thread.
//!
//! Candidates are only evaluated when a cheap test on the next record says they could pay, and a
//! zero-width setting (default/stride) or a base offset that still fits is kept without evaluation,
//! so planning is linear in the trace. The writer adds whatever metadata a value still needs.

use metatf::field::bits;

use crate::formats::native::codes::{Field, Width};
use crate::formats::native::model::event_to_record;
use crate::formats::native::record::{DataRecord, Slot};
use crate::formats::native::state::{Config, Interpretation, Metadata};
use crate::formats::native::{NativeError, NativeWriter};
use crate::shared::allocation::event::AllocEvent;

/// The HATF 1.0 width `v` needs stored directly.
fn hatf10_width(v: u64) -> u8 {
    Width::fixed_for(bits::unsigned_width(v))
}

/// Records looked ahead when comparing settings.
pub const HORIZON: usize = 48;

/// Estimated bytes to go back to direct after a zero-width or offset setting stops fitting.
const EXIT_COST: usize = 8;

/// Values of `field` in `r`, in layout order (0, 1 or 2 of them).
fn values(r: &DataRecord, field: Field) -> ([u64; 2], usize) {
    let mut out = [0u64; 2];
    let mut n = 0;
    for &slot in r.kind.layout() {
        if slot != Slot::Attributes && slot.field() == field && n < 2 {
            out[n] = r.get(slot);
            n += 1;
        }
    }
    (out, n)
}

/// Bytes the values of `r` take under `cfg` (advancing it), or `None` when they do not fit.
fn encoded_cost(cfg: &mut Config, field: Field, r: &DataRecord) -> Option<usize> {
    let (vals, n) = values(r, field);
    let Width::Fixed(w) = cfg.width(field) else {
        return None;
    };
    for v in &vals[..n] {
        cfg.encode_numeric(field, *v)?;
    }
    Some(n * usize::from(w))
}

/// Cost of `metas` followed by the records from `start` over the horizon.
fn horizon_cost(
    base: &Config,
    metas: &[Metadata],
    field: Field,
    records: &[DataRecord],
    start: usize,
) -> Option<usize> {
    let mut cfg = base.clone();
    let mut cost = 0;
    for m in metas {
        cfg.apply(m).ok()?;
        cost += m.encoded_len();
    }
    let mut seen = 0;
    let mut i = start;
    let mut first = true;
    while i < records.len() && seen < HORIZON {
        let r = &records[i];
        i += 1;
        let (vals, n) = values(r, field);
        if n == 0 {
            continue;
        }
        seen += 1;
        match encoded_cost(&mut cfg, field, r) {
            Some(c) => cost += c,
            None if first => return None,
            None => {
                // Leave the setting: estimate the rest at direct width.
                cost += EXIT_COST;
                for r in records[i - 1..].iter().take(HORIZON - seen + 1) {
                    let (vals, n) = values(r, field);
                    cost += vals[..n]
                        .iter()
                        .map(|v| usize::from(hatf10_width(*v)))
                        .sum::<usize>();
                }
                let _ = vals;
                return Some(cost);
            }
        }
        first = false;
    }
    Some(cost)
}

/// Metadata that moves `field` from `cfg` to direct storage of width `w`.
fn to_direct(cfg: &Config, field: Field, w: u8) -> Vec<Metadata> {
    let mut out = Vec::new();
    let restored = if cfg.interpretation(field) == Interpretation::None {
        cfg.width(field)
    } else {
        out.push(Metadata::SetInterpretation(field, Interpretation::None));
        cfg.last_nonzero_width(field)
    };
    if restored != Width::Fixed(w) {
        out.push(Metadata::SetSize(field, Width::Fixed(w)));
    }
    out
}

/// Metadata for `baseOffset base` with width `w`.
fn to_base(cfg: &Config, field: Field, base: u64, w: u8) -> Vec<Metadata> {
    let mut out = vec![Metadata::SetInterpretation(
        field,
        Interpretation::BaseOffset(base),
    )];
    if cfg.last_nonzero_width(field) != Width::Fixed(w) {
        out.push(Metadata::SetSize(field, Width::Fixed(w)));
    }
    out
}

/// The planner's memory per field.
#[derive(Default, Clone, Copy)]
struct Seen {
    prev: Option<u64>,
}

/// Chooses the metadata to emit before record `i` for `field`.
fn plan_field(
    cfg: &Config,
    field: Field,
    records: &[DataRecord],
    i: usize,
    seen: &Seen,
) -> Vec<Metadata> {
    let (vals, n) = values(&records[i], field);
    if n == 0 {
        return Vec::new();
    }
    let v0 = vals[0];
    let current = cfg.interpretation(field);
    let fits_now = encoded_cost(&mut cfg.clone(), field, &records[i]).is_some();
    if fits_now && current != Interpretation::None {
        return Vec::new();
    }
    // The next record that has this field, for the cheap tests.
    let next = records[i + 1..]
        .iter()
        .map(|r| values(r, field))
        .find(|(_, n)| *n > 0)
        .map(|(v, _)| v[0]);
    let mut candidates: Vec<Vec<Metadata>> = Vec::new();
    if fits_now {
        candidates.push(Vec::new());
    }
    let need = vals[..n]
        .iter()
        .map(|v| hatf10_width(*v))
        .max()
        .unwrap_or(1);
    for w in [1u8, 2, 4, 8] {
        if w >= need {
            let m = to_direct(cfg, field, w);
            if !m.is_empty() || !fits_now {
                candidates.push(m);
            }
        }
    }
    if matches!(field, Field::Size | Field::Thread) && n == 1 && next == Some(v0) {
        candidates.push(vec![Metadata::SetInterpretation(
            field,
            Interpretation::Default(v0),
        )]);
    }
    if field == Field::Address {
        if let (Some(prev), Some(nx)) = (seen.prev, next) {
            let stride = v0.wrapping_sub(prev);
            if n == 1 && nx.wrapping_sub(v0) == stride {
                candidates.push(vec![Metadata::SetInterpretation(
                    field,
                    Interpretation::Stride {
                        initial: prev,
                        stride,
                    },
                )]);
            }
        }
        if let Some(nx) = next {
            let d = bits::signed_width(nx.wrapping_sub(v0));
            for w in [1u8, 2, 4] {
                if d <= w {
                    candidates.push(to_base(cfg, field, v0, w));
                }
            }
        }
    }
    let mut best: Option<(usize, Vec<Metadata>)> = None;
    for c in candidates {
        if let Some(cost) = horizon_cost(cfg, &c, field, records, i) {
            let better = match &best {
                Some((b, _)) => cost < *b,
                None => true,
            };
            if better {
                best = Some((cost, c));
            }
        }
    }
    best.map(|(_, m)| m).unwrap_or_default()
}

/// Writes events as HATF best into `writer` (a plain or a split-address writer).
pub fn write<W: std::io::Write>(
    events: &[AllocEvent],
    writer: &mut NativeWriter<W>,
) -> Result<(), NativeError> {
    let records: Vec<DataRecord> = events.iter().map(event_to_record).collect();
    let mut seen = [Seen::default(); 3];
    const PLANNED: [Field; 3] = [Field::Size, Field::Address, Field::Thread];
    for i in 0..records.len() {
        for (k, field) in PLANNED.into_iter().enumerate() {
            let metas = plan_field(writer.config(), field, &records, i, &seen[k]);
            for m in &metas {
                writer.write_metadata(m)?;
            }
        }
        writer.write_data(&records[i])?;
        for (k, field) in PLANNED.into_iter().enumerate() {
            let (vals, n) = values(&records[i], field);
            if n > 0 {
                seen[k].prev = Some(vals[n - 1]);
            }
        }
    }
    Ok(())
}

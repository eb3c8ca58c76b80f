//! The order in which a record's fields are coded. A predictor may read the values of fields
//! coded before it in the same record (a `key` or keyed `reuse` of a field sees that field's
//! value in this record), so coding a record's cheap fields first lets its expensive ones be
//! predicted from them: an allocation's size before its address makes the address's freed-block
//! lists keyed by the size. The writer chooses the order per block and writes it after the
//! model table ([`write_orders`]); the reader takes it as written.

use super::choice::get_varint;
use super::streams::Streams;
use crate::container::PutLe;
use crate::universal::plan::{Builtin, Catalog, Leaf, RecordPlan};

/// The coding order of one record's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecordOrder {
    /// Indices into the record's leaves (its fields after the tag), in coding order.
    pub(crate) leaves: Vec<usize>,
    /// Per leaf: the index of its value among the record's scalar values in walking order
    /// (where the flat block holds it); unused for byte strings.
    pub(crate) slot: Vec<usize>,
    /// Scalar fields of the record.
    pub(crate) scalars: usize,
}

/// The coding order of every record plan of a block; `None`: the walking order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Orders {
    per_plan: Vec<Option<RecordOrder>>,
}

/// Most records an order table names (more than any DTD has plans is an error anyway).
const MAX_ORDER_ENTRIES: u64 = 1 << 16;

impl Orders {
    /// Every record in walking order.
    pub(crate) fn plain(catalog: &Catalog) -> Orders {
        Orders {
            per_plan: vec![None; catalog.plans().len()],
        }
    }

    /// The order of plan `plan`, when it is not the walking order.
    #[inline]
    pub(crate) fn of(&self, plan: usize) -> Option<&RecordOrder> {
        self.per_plan.get(plan)?.as_ref()
    }

    /// Codes plan `plan` in `order`.
    #[cfg(test)]
    pub(crate) fn set(&mut self, plan: usize, order: RecordOrder) {
        self.per_plan[plan] = Some(order);
    }

    /// Whether every record is coded in walking order.
    pub(crate) fn is_plain(&self) -> bool {
        self.per_plan.iter().all(Option::is_none)
    }

    /// One line per reordered record, for the cost report.
    pub(crate) fn describe(&self, catalog: &Catalog) -> Vec<String> {
        let plans = catalog.plans();
        self.per_plan
            .iter()
            .enumerate()
            .filter_map(|(p, o)| {
                let o = o.as_ref()?;
                let names: Vec<&str> = o
                    .leaves
                    .iter()
                    .map(|&i| plans[p].leaves[i].name())
                    .collect();
                Some(format!("{}: {}", plans[p].name, names.join(", ")))
            })
            .collect()
    }
}

/// Checks that `leaves` is an order the engine can code `plan` in: a permutation of its leaves,
/// each byte string after its length field and the byte strings in walking order (they are
/// read and written back to back), in an ordinary record without repeated groups (whose
/// element values interleave with the record's). Returns the order with its value slots.
pub(crate) fn check(plan: &RecordPlan, leaves: &[usize]) -> Result<RecordOrder, String> {
    if plan.builtin != Builtin::No {
        return Err(format!("{} is a built-in record", plan.name));
    }
    let n = plan.leaves.len();
    let mut slot = vec![0; n];
    let mut scalars = 0;
    for (i, leaf) in plan.leaves.iter().enumerate() {
        match leaf {
            Leaf::Scalar { .. } => {
                slot[i] = scalars;
                scalars += 1;
            }
            Leaf::Bytes { .. } => {}
            Leaf::Repeated { .. } => {
                return Err(format!("{} has a repeated group", plan.name));
            }
        }
    }
    if leaves.len() != n {
        return Err(format!(
            "{} has {n} fields, the order lists {}",
            plan.name,
            leaves.len()
        ));
    }
    let mut done = vec![false; n];
    let mut last_bytes = None;
    for &i in leaves {
        if i >= n || std::mem::replace(&mut done[i], true) {
            return Err(format!(
                "{}: the order repeats or exceeds field {i}",
                plan.name
            ));
        }
        if let Leaf::Bytes {
            length_position,
            name,
        } = &plan.leaves[i]
        {
            let length_done = plan.leaves.iter().zip(&done).any(|(l, &d)| {
                d && matches!(l, Leaf::Scalar { position, .. } if position == length_position)
            });
            if !length_done {
                return Err(format!("{}: {name} comes before its length", plan.name));
            }
            if last_bytes.is_some_and(|b| b > i) {
                return Err(format!("{}: byte strings out of order", plan.name));
            }
            last_bytes = Some(i);
        }
    }
    Ok(RecordOrder {
        leaves: leaves.to_vec(),
        slot,
        scalars,
    })
}

/// Serialises the order table: nothing when every record keeps its walking order, else
/// `varint m` (m ≥ 1) and per reordered record `varint scope, varint tag, varint count,
/// count × varint leaf index`.
pub(crate) fn write_orders(catalog: &Catalog, orders: &Orders) -> Vec<u8> {
    let mut out = Vec::new();
    let entries: Vec<(usize, &RecordOrder)> = orders
        .per_plan
        .iter()
        .enumerate()
        .filter_map(|(p, o)| Some((p, o.as_ref()?)))
        .collect();
    if entries.is_empty() {
        return out;
    }
    out.put_varint(entries.len() as u64);
    for (p, o) in entries {
        let plan = &catalog.plans()[p];
        out.put_varint(plan.scope as u64);
        out.put_varint(plan.tag);
        out.put_varint(o.leaves.len() as u64);
        for &i in &o.leaves {
            out.put_varint(i as u64);
        }
    }
    out
}

/// Reads what [`write_orders`] wrote. The range-coded records that follow start with a zero
/// byte (the range coder's first byte always is), so a zero or the end means no order table.
pub(crate) fn read_orders(
    catalog: &Catalog,
    input: &[u8],
    at: &mut usize,
) -> Result<Orders, String> {
    let mut orders = Orders::plain(catalog);
    if input.get(*at).is_none_or(|&b| b == 0) {
        return Ok(orders);
    }
    let m = get_varint(input, at).ok_or("order table: entry count cut short")?;
    if m > MAX_ORDER_ENTRIES || m > catalog.plans().len() as u64 {
        return Err(format!(
            "order table: {m} entries for {} records",
            catalog.plans().len()
        ));
    }
    for e in 0..m {
        let end = || format!("order table: entry {e} is cut short");
        let scope = get_varint(input, at).ok_or_else(end)?;
        let tag = get_varint(input, at).ok_or_else(end)?;
        let p = usize::try_from(scope)
            .ok()
            .and_then(|s| catalog.plan_in_scope(s, tag))
            .filter(|&p| catalog.plans()[p].scope as u64 == scope)
            .ok_or_else(|| {
                format!("order table: entry {e} names no record (scope {scope}, tag {tag})")
            })?;
        let plan = &catalog.plans()[p];
        let count = get_varint(input, at).ok_or_else(end)?;
        if count != plan.leaves.len() as u64 {
            return Err(format!(
                "order table: entry {e} orders {count} fields of {}, which has {}",
                plan.name,
                plan.leaves.len()
            ));
        }
        let mut leaves = Vec::with_capacity(plan.leaves.len());
        for _ in 0..count {
            let i = get_varint(input, at).ok_or_else(end)?;
            leaves.push(usize::try_from(i).unwrap_or(usize::MAX));
        }
        let order = check(plan, &leaves).map_err(|m| format!("order table: entry {e}: {m}"))?;
        if orders.per_plan[p].replace(order).is_some() {
            return Err(format!("order table: entry {e} repeats {}", plan.name));
        }
    }
    Ok(orders)
}

/// The writer's proposal: each record's scalar fields from the cheapest to the dearest by
/// `bits` (per stream, coded in walking order), each byte string right after its length
/// field, so that the fields predicted well from their own past come first and can key the
/// others. Records the order cannot apply to, or that it would leave as they are, keep the
/// walking order.
pub(crate) fn propose(catalog: &Catalog, streams: &Streams, bits: &[f64]) -> Orders {
    let mut orders = Orders::plain(catalog);
    for (p, plan) in catalog.plans().iter().enumerate() {
        let cost = |leaf: &Leaf| match leaf {
            Leaf::Scalar { position, .. } => streams
                .of(p, *position)
                .and_then(|s| bits.get(s).copied())
                .unwrap_or(0.0),
            _ => 0.0,
        };
        let mut scalars: Vec<usize> = (0..plan.leaves.len())
            .filter(|&i| matches!(plan.leaves[i], Leaf::Scalar { .. }))
            .collect();
        scalars.sort_by(|&a, &b| cost(&plan.leaves[a]).total_cmp(&cost(&plan.leaves[b])));
        let mut leaves = Vec::with_capacity(plan.leaves.len());
        for &i in &scalars {
            leaves.push(i);
            if let Leaf::Scalar { position, .. } = &plan.leaves[i] {
                leaves.extend((0..plan.leaves.len()).filter(|&j| {
                    matches!(&plan.leaves[j], Leaf::Bytes { length_position, .. } if length_position == position)
                }));
            }
        }
        if leaves.len() != plan.leaves.len() || leaves.iter().enumerate().all(|(k, &i)| k == i) {
            continue;
        }
        if let Ok(o) = check(plan, &leaves) {
            orders.per_plan[p] = Some(o);
        }
    }
    orders
}

//! The split streams: one per scalar field of every record plan, numbered in catalog order
//! (plans in [`Catalog::plans`] order, fields in the order a record is walked), then one
//! *string key* per byte-string field: a stream that is never coded but takes the hash of each
//! string the field holds ([`string_key`]), so that a value can be predicted in the context of
//! a string (a size by its call site).

use crate::universal::plan::{Builtin, Catalog, Leaf};

/// What the engine knows about one stream.
pub(crate) struct StreamInfo {
    pub(crate) plan: usize,
    pub(crate) position: u16,
    pub(crate) name: String,
    pub(crate) scope: usize,
}

/// Field position naming the string key of the byte string whose length is at position `p`:
/// `STRING_KEY_POSITION + p` (in the model table and the tag context).
pub(crate) const STRING_KEY_POSITION: u16 = 1 << 15;

/// The value a string key takes for the string `bytes`: 64-bit FNV-1a.
pub(crate) fn string_key(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// Every stream, and the stream of each (plan, field position).
pub(crate) struct Streams {
    /// The coded streams, then the string keys.
    pub(crate) info: Vec<StreamInfo>,
    by_plan: Vec<Vec<Option<usize>>>,
    /// Number of coded streams (the string keys follow them).
    coded: usize,
    /// Per string key: its plan and the position of its string's length.
    keys: Vec<(usize, u16)>,
    /// Per coded stream: the field hash of the string it is the length of, when that string
    /// may be coded with its end ([`Streams::endable`]).
    endable: Vec<Option<u64>>,
}

impl Streams {
    pub(crate) fn new(catalog: &Catalog) -> Streams {
        let mut s = Streams {
            info: Vec::new(),
            by_plan: Vec::new(),
            coded: 0,
            keys: Vec::new(),
            endable: Vec::new(),
        };
        for (pi, plan) in catalog.plans().iter().enumerate() {
            let mut row = Vec::new();
            if plan.builtin != Builtin::Metadata {
                s.add(pi, plan.scope, &plan.leaves, &mut row);
            }
            s.by_plan.push(row);
        }
        s.coded = s.info.len();
        s.endable = vec![None; s.coded];
        for (pi, plan) in catalog.plans().iter().enumerate() {
            if plan.builtin != Builtin::Metadata {
                for (p, name) in endable_lengths(&plan.leaves) {
                    if let Some(e) = s.of(pi, p).and_then(|i| s.endable.get_mut(i)) {
                        *e = Some(super::strings::field_id(name));
                    }
                }
            }
        }
        for (pi, plan) in catalog.plans().iter().enumerate() {
            if plan.builtin != Builtin::Metadata {
                s.add_keys(pi, plan.scope, &plan.leaves);
            }
        }
        s
    }

    fn add_keys(&mut self, plan: usize, scope: usize, leaves: &[Leaf]) {
        for leaf in leaves {
            match leaf {
                Leaf::Bytes {
                    name,
                    length_position,
                } => {
                    if *length_position < STRING_KEY_POSITION
                        && self.string_key_of(plan, *length_position).is_none()
                    {
                        self.keys.push((plan, *length_position));
                        self.info.push(StreamInfo {
                            plan,
                            position: STRING_KEY_POSITION + length_position,
                            name: name.clone(),
                            scope,
                        });
                    }
                }
                Leaf::Repeated { element, .. } => self.add_keys(plan, scope, element),
                Leaf::Scalar { .. } => {}
            }
        }
    }

    /// The string key of the byte string of plan `plan` whose length is at `length_position`.
    #[inline]
    pub(crate) fn string_key_of(&self, plan: usize, length_position: u16) -> Option<usize> {
        self.keys
            .iter()
            .position(|&k| k == (plan, length_position))
            .map(|i| self.coded + i)
    }

    /// Whether stream `s` is the length of a byte string that may be coded with its end
    /// instead (docs/FORMAT.md §7, "Strings with their ends"): a field of the record itself
    /// (not of a repeated group) that is the length of exactly one string of the record, also
    /// outside any group, and neither a count nor another string's length.
    pub(crate) fn endable(&self, s: usize) -> bool {
        self.string_of(s).is_some()
    }

    /// Per stream: whether it is [`Streams::endable`] (every length coded with its string).
    pub(crate) fn all_ends(&self) -> Vec<bool> {
        (0..self.len()).map(|s| self.endable(s)).collect()
    }

    /// The field hash of the string whose length is stream `s`, if [`Streams::endable`].
    pub(crate) fn string_of(&self, s: usize) -> Option<u64> {
        self.endable.get(s).copied().flatten()
    }

    /// Whether stream `s` is a string key (never coded).
    pub(crate) fn is_string_key(&self, s: usize) -> bool {
        s >= self.coded
    }

    /// Number of streams with a history: the coded ones and the string keys.
    pub(crate) fn with_keys(&self) -> usize {
        self.info.len()
    }

    fn add(&mut self, plan: usize, scope: usize, leaves: &[Leaf], row: &mut Vec<Option<usize>>) {
        for leaf in leaves {
            match leaf {
                Leaf::Scalar { position, name, .. } => {
                    let p = usize::from(*position);
                    if row.len() <= p {
                        row.resize(p + 1, None);
                    }
                    if row[p].is_none() {
                        row[p] = Some(self.info.len());
                        self.info.push(StreamInfo {
                            plan,
                            position: *position,
                            name: name.clone(),
                            scope,
                        });
                    }
                }
                Leaf::Bytes { .. } => {}
                Leaf::Repeated { element, .. } => self.add(plan, scope, element, row),
            }
        }
    }

    /// The stream of the scalar at `position` of plan `plan`.
    #[inline]
    pub(crate) fn of(&self, plan: usize, position: u16) -> Option<usize> {
        if position >= STRING_KEY_POSITION {
            return self.string_key_of(plan, position - STRING_KEY_POSITION);
        }
        *self.by_plan.get(plan)?.get(usize::from(position))?
    }

    /// Number of coded streams (numbered from 0; the string keys come after).
    pub(crate) fn len(&self) -> usize {
        self.coded
    }

    /// The streams that end the objects stream `s` creates, for `reuse`: fields of the same
    /// name and scope in another record whose field names are a strict subset of the names
    /// in `s`'s record. A record that only names an object (a free, an end) ends it; a
    /// record with the same fields as another (one access kind beside another) ends nothing.
    pub(crate) fn enders(&self, s: usize) -> Vec<usize> {
        if self.is_string_key(s) {
            return Vec::new();
        }
        let me = &self.info[s];
        let names = |plan: usize| -> Vec<&str> {
            self.info[..self.coded]
                .iter()
                .filter(|i| i.plan == plan)
                .map(|i| i.name.as_str())
                .collect()
        };
        let mine = names(me.plan);
        (0..self.coded)
            .filter(|&t| {
                let o = &self.info[t];
                if o.scope != me.scope || o.plan == me.plan || o.name != me.name {
                    return false;
                }
                let theirs = names(o.plan);
                theirs.len() < mine.len() && theirs.iter().all(|n| mine.contains(n))
            })
            .collect()
    }

    /// The fields named like stream `s` in the other records of its scope (string keys
    /// neither have nor are peers): the references a `recent` list of `s` follows. Fields of one
    /// name in different records name the same kind of thing (an object, a method).
    pub(crate) fn peers(&self, s: usize) -> Vec<usize> {
        if self.is_string_key(s) {
            return Vec::new();
        }
        let me = &self.info[s];
        (0..self.coded)
            .filter(|&t| {
                let o = &self.info[t];
                o.scope == me.scope && o.plan != me.plan && o.name == me.name
            })
            .collect()
    }
}

/// The positions of the top-level scalars of `leaves` that are the length of exactly one
/// top-level byte string and used for nothing else ([`Streams::endable`]), with that string's
/// field name.
fn endable_lengths(leaves: &[Leaf]) -> Vec<(u16, &str)> {
    // Every use of a position as a length or a count, at any depth.
    fn uses(leaves: &[Leaf], out: &mut Vec<u16>) {
        for leaf in leaves {
            match leaf {
                Leaf::Bytes {
                    length_position, ..
                } => out.push(*length_position),
                Leaf::Repeated {
                    count_position,
                    element,
                    ..
                } => {
                    out.push(*count_position);
                    uses(element, out);
                }
                Leaf::Scalar { .. } => {}
            }
        }
    }
    let mut used = Vec::new();
    uses(leaves, &mut used);
    let top: Vec<u16> = leaves
        .iter()
        .filter_map(|l| match l {
            Leaf::Scalar { position, .. } => Some(*position),
            _ => None,
        })
        .collect();
    leaves
        .iter()
        .filter_map(|l| match l {
            Leaf::Bytes {
                length_position,
                name,
            } => Some((*length_position, name.as_str())),
            _ => None,
        })
        .filter(|(p, _)| {
            *p < STRING_KEY_POSITION
                && top.contains(p)
                && used.iter().filter(|&u| u == p).count() == 1
        })
        .collect()
}

//! The split streams: one per scalar field of every record plan, numbered in catalog order
//! (plans in [`Catalog::plans`] order, fields in the order a record is walked).

use crate::universal::plan::{Builtin, Catalog, Leaf};

/// What the engine knows about one stream.
pub(crate) struct StreamInfo {
    pub(crate) plan: usize,
    pub(crate) position: u16,
    pub(crate) name: String,
    pub(crate) scope: usize,
}

/// Every stream, and the stream of each (plan, field position).
pub(crate) struct Streams {
    pub(crate) info: Vec<StreamInfo>,
    by_plan: Vec<Vec<Option<usize>>>,
}

impl Streams {
    pub(crate) fn new(catalog: &Catalog) -> Streams {
        let mut s = Streams {
            info: Vec::new(),
            by_plan: Vec::new(),
        };
        for (pi, plan) in catalog.plans().iter().enumerate() {
            let mut row = Vec::new();
            if plan.builtin != Builtin::Metadata {
                s.add(pi, plan.scope, &plan.leaves, &mut row);
            }
            s.by_plan.push(row);
        }
        s
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
        *self.by_plan.get(plan)?.get(usize::from(position))?
    }

    pub(crate) fn len(&self) -> usize {
        self.info.len()
    }

    /// The streams that end the objects stream `s` creates, for `reuse`: fields of the same
    /// name and scope in another record whose field names are a strict subset of the names
    /// in `s`'s record. A record that only names an object (a free, an end) ends it; a
    /// record with the same fields as another (one access kind beside another) ends nothing.
    pub(crate) fn enders(&self, s: usize) -> Vec<usize> {
        let me = &self.info[s];
        let names = |plan: usize| -> Vec<&str> {
            self.info
                .iter()
                .filter(|i| i.plan == plan)
                .map(|i| i.name.as_str())
                .collect()
        };
        let mine = names(me.plan);
        (0..self.len())
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
}

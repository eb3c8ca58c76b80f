//! Where a modelled block's bytes go: the coded size of every stream, of the tags, the byte
//! strings and the metadata, printed to standard error when the environment variable
//! [`REPORT_VARIABLE`] is set. A diagnostic for tuning the engine on real traces; it changes
//! nothing in the file.

use super::choice::Choice;
use super::streams::Streams;
use super::strings::EndStats;
use crate::universal::plan::Catalog;

/// Environment variable that turns the report on (any value).
pub(crate) const REPORT_VARIABLE: &str = "METATF_MODEL_REPORT";

/// Bits spent per item class while coding one block.
pub(crate) struct Costs {
    /// Per stream.
    pub(crate) streams: Vec<f64>,
    pub(crate) tags: f64,
    pub(crate) strings: f64,
    /// The byte strings' bits per field hash ([`super::strings::field_id`]).
    pub(crate) fields: Vec<(u64, f64)>,
    /// Per field hash, what its strings coded with their ends spent ([`EndStats`]).
    pub(crate) ends: Vec<(u64, EndStats)>,
    pub(crate) meta: f64,
}

impl Costs {
    /// No bits yet, for `streams` streams.
    pub(crate) fn new(streams: usize) -> Costs {
        Costs {
            streams: vec![0.0; streams],
            tags: 0.0,
            strings: 0.0,
            fields: Vec::new(),
            ends: Vec::new(),
            meta: 0.0,
        }
    }

    /// Adds `bits` to the strings of field `field`.
    pub(crate) fn add_string(&mut self, field: u64, bits: f64) {
        self.strings += bits;
        match self.fields.iter_mut().find(|(f, _)| *f == field) {
            Some((_, b)) => *b += bits,
            None => self.fields.push((field, bits)),
        }
    }

    /// A report for `streams` streams if the environment asks for one.
    pub(crate) fn wanted(streams: usize) -> Option<Costs> {
        std::env::var_os(REPORT_VARIABLE).map(|_| Costs::new(streams))
    }

    /// Prints the costs in bytes, largest stream first, with each stream's predictors.
    pub(crate) fn print(&self, catalog: &Catalog, streams: &Streams, choices: &[Choice]) {
        let bytes = |bits: f64| bits / 8.0;
        let total = self.tags + self.strings + self.meta + self.streams.iter().sum::<f64>();
        eprintln!(
            "model block: {:.0} bytes: tags {:.0}, byte strings {:.0}, metadata {:.0}",
            bytes(total),
            bytes(self.tags),
            bytes(self.strings),
            bytes(self.meta)
        );
        let mut fields = self.fields.clone();
        fields.sort_by(|a, b| b.1.total_cmp(&a.1));
        for (f, bits) in fields {
            let name = catalog
                .plans()
                .iter()
                .flat_map(|p| &p.leaves)
                .find_map(|l| match l {
                    crate::universal::plan::Leaf::Bytes { name, .. }
                        if super::strings::field_id(name) == f =>
                    {
                        Some(name.as_str())
                    }
                    _ => None,
                })
                .unwrap_or("?");
            eprintln!("  {:>10.0}  string {name}", bytes(bits));
        }
        let mut order: Vec<usize> = (0..self.streams.len()).collect();
        order.sort_by(|&a, &b| self.streams[b].total_cmp(&self.streams[a]));
        let name = |s: usize| {
            let i = &streams.info[s];
            format!("{}.{}", catalog.plans()[i.plan].name, i.name)
        };
        for s in order {
            if self.streams[s] < 8.0 {
                continue;
            }
            let c = &choices[s];
            let spec = |p: &super::predict::Spec| {
                if p.kind.arg_is_stream() {
                    format!("{}({})", p.kind.name(), name(p.arg as usize))
                } else {
                    format!("{}({})", p.kind.name(), p.arg)
                }
            };
            let list: Vec<String> = c.list.iter().map(spec).collect();
            eprintln!(
                "  {:>10.0}  {}: primary {}, list [{}]",
                bytes(self.streams[s]),
                name(s),
                spec(&c.primary),
                list.join(", ")
            );
        }
    }
}

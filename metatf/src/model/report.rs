//! Where a modelled block's bytes go: the coded size of every stream, of the tags, the byte
//! strings and the metadata, printed to standard error when the environment variable
//! [`REPORT_VARIABLE`] is set. A diagnostic for tuning the engine on real traces; it changes
//! nothing in the file.

use super::choice::Choice;
use super::streams::Streams;
use crate::universal::plan::Catalog;

/// Environment variable that turns the report on (any value).
pub(crate) const REPORT_VARIABLE: &str = "METATF_MODEL_REPORT";

/// Bits spent per item class while coding one block.
pub(crate) struct Costs {
    /// Per stream.
    pub(crate) streams: Vec<f64>,
    pub(crate) tags: f64,
    pub(crate) strings: f64,
    pub(crate) meta: f64,
}

impl Costs {
    /// No bits yet, for `streams` streams.
    pub(crate) fn new(streams: usize) -> Costs {
        Costs {
            streams: vec![0.0; streams],
            tags: 0.0,
            strings: 0.0,
            meta: 0.0,
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

//! `hatf validate` for allocation traces: double frees, frees and reallocs of blocks that were
//! never allocated, allocations of blocks still live, and blocks still live at the end (leaks).
//!
//! Memory is the live set plus a bounded window of recent frees: a free of a block that is not
//! live is called a double free when the window still holds its first free, and a free of an
//! unknown block otherwise, so a trace of any length is checked in bounded memory.

use std::collections::{HashMap, VecDeque};
use std::io::Read;

use crate::format::{At, FormatError, Problem, ProblemSink};
use crate::shared::allocation::event::{AllocEvent, AllocKind};
use crate::shared::allocation::placed::{ForEachPlacedEvent, Place};

/// How many recent frees are remembered to tell a double free from a free of an unknown block.
const RECENT_FREES: usize = 1 << 20;

/// How a format identifies blocks, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockNames {
    /// Blocks are addresses, printed in hex (mtrace, memory_replay).
    Address,
    /// Blocks are allocation ids, and the event address is the id plus 1 (malloc-bench).
    Id,
    /// Blocks are numbered by allocation from 0, and the event address is the number plus 1
    /// (wee_alloc's `Free(i)`).
    Index,
}

impl BlockNames {
    fn show(self, block: u64) -> String {
        match self {
            BlockNames::Address => format!("block {block:#x}"),
            BlockNames::Id => format!("block id {}", block.wrapping_sub(1)),
            BlockNames::Index => format!("allocation {}", block.wrapping_sub(1)),
        }
    }
}

fn place(at: At) -> String {
    match at {
        At::Line(n) => format!("line {n}"),
        At::Record(n) => format!("record {n}"),
    }
}

/// Frees remembered in the order they happened, the oldest forgotten first.
#[derive(Default)]
struct RecentFrees {
    at: HashMap<u64, At>,
    order: VecDeque<u64>,
}

impl RecentFrees {
    fn insert(&mut self, block: u64, at: At) {
        if self.at.insert(block, at).is_none() {
            self.order.push_back(block);
        }
        if self.order.len() > RECENT_FREES {
            if let Some(oldest) = self.order.pop_front() {
                self.at.remove(&oldest);
            }
        }
    }

    fn forget(&mut self, block: u64) {
        // Its entry in `order` stays until it reaches the front; removing it there is harmless.
        self.at.remove(&block);
    }
}

/// The checks, fed one placed event at a time.
pub struct Checker<'r> {
    names: BlockNames,
    /// Live block → where it was allocated and its size.
    live: HashMap<u64, (At, u64)>,
    freed: RecentFrees,
    report: ProblemSink<'r>,
}

impl<'r> Checker<'r> {
    /// A checker that hands problems to `report`.
    pub fn new(names: BlockNames, report: ProblemSink<'r>) -> Self {
        Checker {
            names,
            live: HashMap::new(),
            freed: RecentFrees::default(),
            report,
        }
    }

    fn problem(&mut self, at: At, kind: &'static str, message: String) {
        (self.report)(Problem { at, kind, message });
    }

    /// Checks one event.
    pub fn add(&mut self, place: Place<'_>, e: &AllocEvent) {
        let at = place.at;
        match e.kind {
            AllocKind::Malloc | AllocKind::Calloc | AllocKind::Memalign => {
                self.allocated(at, e.address, e.size)
            }
            AllocKind::Free => {
                if e.address != 0 {
                    self.released(at, e.address, "free");
                }
            }
            AllocKind::Realloc => {
                if e.old_address != 0 {
                    self.released(at, e.old_address, "realloc");
                }
                self.allocated(at, e.address, e.size);
            }
            AllocKind::CreateThread | AllocKind::DestroyThread => {}
        }
    }

    fn allocated(&mut self, at: At, block: u64, size: u64) {
        if block == 0 {
            return;
        }
        self.freed.forget(block);
        if let Some((born, _)) = self.live.insert(block, (at, size)) {
            let message = format!(
                "{} is allocated again while live (allocated on {}, never freed)",
                self.names.show(block),
                place(born)
            );
            self.problem(at, "allocation-of-live", message);
        }
    }

    /// `free` or `realloc` of `block`.
    fn released(&mut self, at: At, block: u64, by: &'static str) {
        if self.live.remove(&block).is_some() {
            self.freed.insert(block, at);
            return;
        }
        let shown = self.names.show(block);
        match (self.freed.at.get(&block).copied(), by) {
            (Some(first), "free") => self.problem(
                at,
                "double-free",
                format!("double free of {shown} (freed on {})", place(first)),
            ),
            (Some(first), _) => self.problem(
                at,
                "realloc-of-freed",
                format!("realloc of {shown}, freed on {}", place(first)),
            ),
            (None, "free") => self.problem(
                at,
                "free-of-unknown",
                format!("free of {shown}, which was never allocated"),
            ),
            (None, _) => self.problem(
                at,
                "realloc-of-unknown",
                format!("realloc of {shown}, which was never allocated"),
            ),
        }
    }

    /// Reports every block still live, in the order they were allocated.
    pub fn finish(mut self) {
        let mut leaks: Vec<(At, u64, u64)> = self
            .live
            .drain()
            .map(|(block, (at, size))| (at, block, size))
            .collect();
        leaks.sort_unstable();
        for (at, block, size) in leaks {
            let message = format!(
                "leak: {} of {size} bytes is never freed",
                self.names.show(block)
            );
            self.problem(at, "leak", message);
        }
    }
}

/// Checks the trace `for_each` reads from `input`, handing every problem to `report`.
pub fn validate(
    for_each: ForEachPlacedEvent,
    names: BlockNames,
    input: &mut dyn Read,
    input_name: &str,
    report: ProblemSink<'_>,
) -> Result<(), FormatError> {
    let mut checker = Checker::new(names, report);
    for_each(input, input_name, &mut |p, e| checker.add(p, &e))?;
    checker.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(events: &[(AllocKind, u64, u64)]) -> Vec<(u64, &'static str)> {
        let mut found = Vec::new();
        let mut sink = |p: Problem| found.push((p.at.number(), p.kind));
        let mut c = Checker::new(BlockNames::Address, &mut sink);
        for (i, &(kind, address, old_address)) in events.iter().enumerate() {
            let e = AllocEvent {
                address,
                old_address,
                size: 8,
                ..AllocEvent::new(kind)
            };
            let p = Place {
                at: At::Line(i as u64 + 1),
                site: None,
            };
            c.add(p, &e);
        }
        c.finish();
        found
    }

    #[test]
    fn each_kind_of_problem_is_found_where_it_happens() {
        use AllocKind::*;
        let found = run(&[
            (Malloc, 0x10, 0),
            (Free, 0x10, 0),
            (Free, 0x10, 0),
            (Free, 0x20, 0),
            (Realloc, 0x30, 0x40),
            (Malloc, 0x30, 0),
            (Realloc, 0x50, 0x10),
        ]);
        assert_eq!(
            found,
            vec![
                (3, "double-free"),
                (4, "free-of-unknown"),
                (5, "realloc-of-unknown"),
                (6, "allocation-of-live"),
                (7, "realloc-of-freed"),
                (6, "leak"),
                (7, "leak"),
            ]
        );
    }

    #[test]
    fn reused_addresses_are_not_problems() {
        use AllocKind::*;
        let found = run(&[
            (Malloc, 0x10, 0),
            (Free, 0x10, 0),
            (Malloc, 0x10, 0),
            (Realloc, 0x10, 0x10),
            (Free, 0x10, 0),
            (Free, 0, 0),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn old_frees_are_forgotten_beyond_the_window() {
        let mut recent = RecentFrees::default();
        for b in 0..RECENT_FREES as u64 + 1 {
            recent.insert(b, At::Line(b));
        }
        assert!(!recent.at.contains_key(&0));
        assert!(recent.at.contains_key(&1));
    }
}

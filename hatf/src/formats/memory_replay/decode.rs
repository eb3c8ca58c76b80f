//! Container → text for Android `memory_replay` dumps.
//!
//! The model decodes each block into batches of typed records ([`crate::shared::allocation_model::threads::decode_pipeline`],
//! on a worker thread when there are threads to spare); this file prints them, a batch at a
//! time, into one text buffer that is written out in large pieces.

use std::ops::Range;

use super::line::Action;
#[cfg(test)]
use super::line::ReplayLine;
use super::model::{self, ReplayKinds};
use super::{FORMAT, THREADS, VERBATIM};
use crate::format::FormatError;
use crate::shared::allocation_model::ModelRecord;
use crate::shared::container::block_cursors::{BlockCursors, SideStreams};
use crate::shared::text::numbers::put_dec;
use crate::shared::text::out::{put, put_decimal, put_hex, window, TextOut, Window, WINDOW};
use crate::shared::text::sink::BatchPrinter;

/// Longest line: a 20-digit thread id, `: thread_done 0x` (the longest action), 16 digits, then
/// two numbers of up to 20 digits (or `0x` and 16) with their spaces, and the newline.
const LONGEST_LINE: usize = 20 + 2 + 14 + 16 + 2 * 21 + 1;

/// How the line of a record of one kind code is printed: its action's text (`ACTION 0x`,
/// padded for a fixed-length copy) and that text's length (0 for a kind with no action), and
/// what follows the pointer. [`Printer`] keeps one per kind code, so that a line takes one
/// table entry where finding its action and then the action's text were two `match`es a line.
#[derive(Debug, Clone, Copy)]
struct LineKind {
    name: [u8; 16],
    len: u8,
    /// Whether ` SIZE` ends the line (all but `free` and `thread_done`).
    sized: bool,
    /// What comes between the pointer and the size.
    middle: Middle,
}

/// What a line prints between its pointer and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Middle {
    /// Nothing (`malloc`, and the lines with no size).
    Nothing,
    /// ` 0xOLD` (`realloc`).
    Old,
    /// ` EXTRA` (`calloc`, `memalign`).
    Extra,
}

impl LineKind {
    /// The entry of a kind code that has no action.
    const NONE: LineKind = LineKind {
        name: [0; 16],
        len: 0,
        sized: false,
        middle: Middle::Nothing,
    };

    /// The entry of the kind code of `action`.
    fn of(action: Action) -> LineKind {
        let (name, len) = action_text(action);
        let (sized, middle) = match action {
            Action::Free | Action::ThreadDone => (false, Middle::Nothing),
            Action::Malloc => (true, Middle::Nothing),
            Action::Realloc => (true, Middle::Old),
            Action::Calloc | Action::Memalign => (true, Middle::Extra),
        };
        LineKind {
            name: *name,
            len: len as u8,
            sized,
            middle,
        }
    }
}

/// The [`LineKind`] of every kind code.
fn line_kinds() -> [LineKind; 256] {
    let mut t = [LineKind::NONE; 256];
    for (kind, entry) in t.iter_mut().enumerate() {
        if let Some(action) = model::action(kind as u8) {
            *entry = LineKind::of(action);
        }
    }
    t
}

/// `ACTION 0x` as printed before the pointer, padded for a fixed-length copy, and its length.
fn action_text(action: Action) -> (&'static [u8; 16], usize) {
    match action {
        Action::Malloc => (b"malloc 0x\0\0\0\0\0\0\0", 9),
        Action::Calloc => (b"calloc 0x\0\0\0\0\0\0\0", 9),
        Action::Memalign => (b"memalign 0x\0\0\0\0\0", 11),
        Action::Realloc => (b"realloc 0x\0\0\0\0\0\0", 10),
        Action::Free => (b"free 0x\0\0\0\0\0\0\0\0\0", 7),
        Action::ThreadDone => (b"thread_done 0x\0\0", 14),
    }
}

/// A thread's line prefix (`TID: `) at the start, padded, and its length in the last byte: a
/// thread id is printed once, when its thread first appears, and each line copies its prefix
/// with one fixed-length move.
type Prefix = [u8; 32];

/// The prefix of the lines of thread `tid`.
fn prefix(tid: u64) -> Prefix {
    let mut p = [0u8; 32];
    let n = put_dec(&mut p, 0, tid);
    p[n..n + 2].copy_from_slice(b": ");
    p[31] = (n + 2) as u8;
    p
}

/// The prefix of the thread of site `site` (record `k`), which has none in `tids` yet: the
/// next thread id of `cursors` when `site` is the next one. Out of line, as a thread appears
/// a few hundred times a trace: inlined, it would make the loop store the site and the
/// record number on the stack at every line.
#[cold]
#[inline(never)]
fn new_thread<'t>(
    tids: &'t mut Vec<Prefix>,
    site: usize,
    cursors: &mut BlockCursors<'_, '_>,
    k: u64,
) -> Result<&'t Prefix, FormatError> {
    if site != tids.len() {
        return Err(cursors.at(k, format!("unknown thread {site}")));
    }
    tids.push(prefix(next_thread(cursors, k)?));
    Ok(&tids[site])
}

/// The block's side streams: thread ids and verbatim lines.
pub(super) const SIDE_STREAMS: SideStreams = SideStreams {
    own: THREADS,
    own_name: "threads",
    verbatim: VERBATIM,
};

/// The id of the next new thread, first seen at record `k`.
pub(super) fn next_thread(cursors: &mut BlockCursors<'_, '_>, k: u64) -> Result<u64, FormatError> {
    cursors.own.u64().map_err(|m| cursors.at(k, m))
}

/// Appends the line of `l`, as [`line::render`] prints it, written in place.
#[cfg(test)]
fn render(out: &mut TextOut, l: &ReplayLine) {
    // The record the encoder makes of the line.
    let r = model::record_of(l, 0);
    let room = out.room(WINDOW);
    let n = render_record(window(room, 0), &prefix(l.tid), &LineKind::of(l.action), &r);
    out.advance(n);
}

// Every line fits a window with its offsets as `u8`s.
const _: () = assert!(LONGEST_LINE < 256);

/// Writes the line of record `r`, whose kind prints as `kind` (one with an action), of the
/// thread whose prefix is `prefix`, at the start of window `w`: what [`line::render`] prints
/// for the line the record was made from (malloc: `size`; calloc and memalign: `extra`,
/// `size`; realloc: `old`, `size`). Returns its length.
#[inline(always)]
fn render_record(w: &mut Window, prefix: &Prefix, kind: &LineKind, r: &ModelRecord) -> usize {
    put(w, 0, prefix);
    let n = prefix[31];
    put(w, n, &kind.name);
    let mut n = put_hex(w, n.wrapping_add(kind.len), r.addr);
    // Tests of two fields rather than a `match` on one tail enum: a match compiles to a jump
    // table (five instructions a line, an indirect jump among them), where a free takes one
    // test. Tests of one enum's order become a jump table too, and packing name, length and
    // flags into 16 bytes to copy at once makes registers run short, so the loop spills.
    if kind.sized {
        if kind.middle != Middle::Nothing {
            if kind.middle == Middle::Old {
                put(w, n, b" 0x");
                n = put_hex(w, n.wrapping_add(3), r.old);
            } else {
                put(w, n, b" ");
                n = put_decimal(w, n.wrapping_add(1), r.extra);
            }
        }
        put(w, n, b" ");
        n = put_decimal(w, n.wrapping_add(1), r.size);
    }
    put(w, n, b"\n");
    usize::from(n) + 1
}

/// Prints decoded records as `memory_replay` text.
pub(super) struct Printer {
    /// Line prefix (thread id) by site id.
    tids: Vec<Prefix>,
    /// How each kind code prints.
    kinds: [LineKind; 256],
}

impl Default for Printer {
    fn default() -> Self {
        Printer {
            tids: Vec::new(),
            kinds: line_kinds(),
        }
    }
}

impl BatchPrinter for Printer {
    const FORMAT: &'static str = FORMAT;
    type Kinds = ReplayKinds;
    const KINDS: ReplayKinds = ReplayKinds;
    const SIDE_STREAMS: SideStreams = SIDE_STREAMS;

    fn block_start(&mut self) {
        self.tids.clear();
    }

    #[inline(always)]
    fn print_run<const ALL: bool>(
        &mut self,
        text: &mut TextOut,
        cursors: &mut BlockCursors<'_, '_>,
        first: u64,
        records: &[ModelRecord],
        keep_range: &Range<u64>,
    ) -> Result<(), FormatError> {
        let Self { tids, kinds } = self;
        // Room for every line of the batch and a window, taken once; a verbatim line (rare)
        // ends a run.
        let batch_room = records.len() * LONGEST_LINE + WINDOW;
        let mut room = text.room(batch_room);
        let mut used = 0;
        for (k, r) in (first..).zip(records) {
            let keep = ALL || keep_range.contains(&k);
            let kind = &kinds[usize::from(r.kind)];
            if kind.len > 0 {
                let site = r.site as usize;
                let prefix = match tids.get(site) {
                    Some(p) => p,
                    None => new_thread(tids, site, cursors, k)?,
                };
                if keep {
                    used += render_record(window(room, used), prefix, kind, r);
                }
            } else if r.kind == model::VERBATIM || r.kind == model::VERBATIM_UNTERMINATED {
                let line = cursors.verbatim_line(k)?;
                if keep {
                    text.push_line_after(used, line, r.kind == model::VERBATIM);
                    room = text.room(batch_room);
                    used = 0;
                }
            } else {
                return Err(cursors.at(k, format!("unknown record kind {}", r.kind)));
            }
        }
        text.advance(used);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::line;
    use super::*;
    use crate::shared::allocation_model::threads::decode_pipeline;
    use crate::shared::text::sink::TextSink;

    #[test]
    fn render_prints_what_line_render_prints() {
        // Every length boundary of the decimal printer (the table below 1000, eight digits at
        // once below 10^8, the loop above) and of the hex one.
        let values = [
            0u64,
            1,
            9,
            10,
            99,
            100,
            999,
            1000,
            9999,
            10_000,
            99_999_999,
            100_000_000,
            0xf,
            0x10,
            0xffff_ffff,
            0x1_0000_0000,
            0xb602_7400,
            u64::MAX,
            1 << 63,
        ];
        let actions = [
            Action::Malloc,
            Action::Calloc,
            Action::Memalign,
            Action::Realloc,
            Action::Free,
            Action::ThreadDone,
        ];
        for action in actions {
            for tid in [0u64, 9, 10, 186, 99_999_999, 100_000_000, u64::MAX] {
                for (i, &v) in values.iter().enumerate() {
                    for (j, &a) in values.iter().enumerate() {
                        let l = ReplayLine {
                            tid,
                            action,
                            ptr: v,
                            a,
                            b: values[(i + j) % values.len()],
                        };
                        let mut want = b"x\n".to_vec();
                        line::render(&l, &mut want);
                        let mut got = TextOut::new(0);
                        got.push(b"x\n");
                        render(&mut got, &l);
                        let mut back = Vec::new();
                        got.write_to(&mut back).unwrap();
                        assert_eq!(back, want);
                    }
                }
            }
        }
    }

    #[test]
    fn every_kind_code_prints_as_its_action() {
        let table = line_kinds();
        for kind in 0..=255u8 {
            let entry = &table[usize::from(kind)];
            match model::action(kind) {
                Some(action) => {
                    let (name, len) = action_text(action);
                    assert_eq!((&entry.name, usize::from(entry.len)), (name, len));
                    assert_eq!(model::of(action), kind);
                }
                None => assert_eq!(entry.len, 0, "kind {kind}"),
            }
        }
    }

    /// A small xorshift generator for test traces.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn any_sharing_of_the_printing_between_threads_gives_the_text_back() {
        let mut text = Vec::new();
        let (mut x, mut live) = (0x2545_f491_4f6c_dd1du64, Vec::new());
        for i in 0..40_000u64 {
            let r = next(&mut x);
            // New threads keep appearing, so both sinks read the threads stream throughout.
            let tid = 100 + r % 7 + i / 3_000 * 10;
            if !r.is_multiple_of(3) || live.is_empty() {
                let a = 0xb600_0000 + i * 0x40;
                live.push(a);
                text.extend(format!("{tid}: malloc {a:#x} {}\n", r % 300 + 1).bytes());
            } else {
                let a = live.swap_remove((r >> 20) as usize % live.len());
                text.extend(format!("{tid}: free {a:#x}\n").bytes());
            }
            if i.is_multiple_of(7_919) {
                text.extend_from_slice(b"a line that is not memory_replay\n");
            }
        }
        decode_pipeline::check_sharing(
            &super::super::MemoryReplay,
            &ReplayKinds,
            &|drain| Box::new(TextSink::<Printer>::new("t", drain)),
            &text,
        );
    }
}

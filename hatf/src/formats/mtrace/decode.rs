//! Container → text for glibc `mtrace` logs.
//!
//! The model decodes each block into batches of typed records ([`crate::shared::allocation_model::threads::decode_pipeline`],
//! on a worker thread when there are threads to spare); this file prints them, a batch at a
//! time, into one text buffer that is written out in large pieces.

use std::ops::Range;

use super::model::{self, MtraceKinds};
use super::{FORMAT, STRINGS, VERBATIM};
use crate::format::FormatError;
use crate::shared::allocation_model::ModelRecord;
use crate::shared::container::block_cursors::{BlockCursors, SideStreams};
use crate::shared::text::out::{put, put_hex, put_hex_short, window, TextOut, Window, WINDOW};
use crate::shared::text::sink::BatchPrinter;

/// The printed prefix (`@ CALLER `, or nothing for "no caller") of each call site, by site id:
/// each in a fixed slot of [`SLOT`] bytes, so that a line finds its prefix with one bounds
/// check and copies it with one fixed-length move, and the window after it needs no check of
/// its own (prefixes in one buffer, found by two offsets, would take eight checks a line).
/// A longer prefix (hardly any trace has one) is kept apart.
#[derive(Default)]
pub(super) struct Callers {
    slots: Vec<Slot>,
    /// The prefixes of [`SLOT`] bytes or more, by site id, in the order the sites came.
    long: Vec<(usize, Vec<u8>)>,
}

/// Bytes of a prefix slot: room for the caller prefixes of ordinary programs (a symbol with
/// an offset, or a path and an address); a longer one is printed the slow way.
const SLOT: usize = 128;

/// A prefix in its slot: its bytes, then zeros (copied along, and overwritten by the rest of
/// the line); `len` is its length, [`LONG`] for a prefix kept in [`Callers::long`].
#[derive(Clone, Copy)]
pub(super) struct Slot {
    text: [u8; SLOT],
    len: u8,
}

/// [`Slot::len`] of a prefix of [`SLOT`] bytes or more.
const LONG: u8 = u8::MAX;
// A slot's length is taken as `len & (SLOT - 1)`.
const _: () = assert!(SLOT.is_power_of_two() && SLOT < LONG as usize);

impl Callers {
    pub(super) fn clear(&mut self) {
        self.slots.clear();
        self.long.clear();
    }

    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    fn push(&mut self, caller: Option<&[u8]>) {
        let mut prefix = Vec::new();
        if let Some(c) = caller {
            prefix.extend_from_slice(b"@ ");
            prefix.extend_from_slice(c);
            prefix.push(b' ');
        }
        let mut slot = Slot {
            text: [0; SLOT],
            len: LONG,
        };
        if prefix.len() < SLOT {
            slot.text[..prefix.len()].copy_from_slice(&prefix);
            slot.len = prefix.len() as u8;
        } else {
            self.long.push((self.slots.len(), prefix));
        }
        self.slots.push(slot);
    }

    /// The prefix of site `site`, one of [`SLOT`] bytes or more.
    #[cold]
    pub(super) fn long(&self, site: usize) -> &[u8] {
        match self.long.binary_search_by_key(&site, |&(s, _)| s) {
            Ok(i) => &self.long[i].1,
            Err(_) => unreachable!("a site with a long prefix has it kept"),
        }
    }

    /// The caller of site `site` (`None` within for a site without one), if the site is
    /// known: its prefix without `@ ` and the space after it.
    pub(super) fn caller(&self, site: usize) -> Option<Option<&[u8]>> {
        let slot = self.slots.get(site)?;
        let prefix = match slot.len {
            LONG => self.long(site),
            n => &slot.text[..usize::from(n)],
        };
        // An empty prefix (no caller) has no range 2..len-1.
        Some(prefix.get(2..prefix.len().saturating_sub(1)))
    }

    /// Site `site`'s prefix, for a test.
    #[cfg(test)]
    fn prefix(&self, site: usize) -> &[u8] {
        let slot = &self.slots[site];
        match slot.len {
            LONG => self.long(site),
            n => &slot.text[..usize::from(n)],
        }
    }
}

/// How the records of one kind code print: for an operation, its `op`, a space and `0x` (one
/// 4-byte store), and whether a size follows the address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LineKind {
    head: [u8; 4],
    pub(super) what: What,
}

/// What a record of one kind code is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum What {
    /// An operation without a size (`-`, `<`).
    Op,
    /// An operation with a size (`+`, `>`).
    SizedOp,
    /// `= Start`.
    Start,
    /// `= End`.
    End,
    /// A verbatim line followed by `\n`.
    Verbatim,
    /// The last line of the log, verbatim and without `\n`.
    VerbatimUnterminated,
    /// No record has this kind code.
    Unknown,
}

/// The [`LineKind`] of every kind code: one table entry and one test a record for the
/// operations (nearly every record), where a `match` on the kind was a jump through a table.
pub(super) fn line_kinds() -> [LineKind; 256] {
    let entry = |op: u8, what| LineKind {
        head: [op, b' ', b'0', b'x'],
        what,
    };
    let mut t = [entry(0, What::Unknown); 256];
    t[usize::from(model::MALLOC)] = entry(b'+', What::SizedOp);
    t[usize::from(model::FREE)] = entry(b'-', What::Op);
    t[usize::from(model::REALLOC_OLD)] = entry(b'<', What::Op);
    t[usize::from(model::REALLOC_NEW)] = entry(b'>', What::SizedOp);
    t[usize::from(model::START)] = entry(0, What::Start);
    t[usize::from(model::END)] = entry(0, What::End);
    t[usize::from(model::VERBATIM)] = entry(0, What::Verbatim);
    t[usize::from(model::VERBATIM_UNTERMINATED)] = entry(0, What::VerbatimUnterminated);
    t
}

/// Longest line after the caller: op, space, `0x` and 16 digits, space, `0x` and 16 digits,
/// newline.
const TAIL: usize = 4 + 16 + 3 + 16 + 1;

// The tail fits a window with its offsets as `u8`s.
const _: () = assert!(TAIL < 256);

/// Room a line of [`render_line`] takes: its prefix slot and the window of its tail.
const LINE: usize = SLOT + WINDOW;

/// Writes the part of an operation's line after its caller at the start of `w`, as
/// [`super::line::render`] prints it: `head` (the op, a space and `0x`), the address, and the
/// size when there is one. Returns the length.
#[inline(always)]
fn render_tail(w: &mut Window, head: [u8; 4], addr: u64, size: Option<u64>) -> u8 {
    put(w, 0, &head);
    let mut n = if addr == 0 {
        put(w, 2, b"(nil)");
        7
    } else {
        put_hex(w, 4, addr)
    };
    if let Some(size) = size {
        if size == 0 {
            put(w, n, b" 0");
            n = n.wrapping_add(2);
        } else {
            put(w, n, b" 0x");
            n = put_hex_short(w, n.wrapping_add(3), size);
        }
    }
    put(w, n, b"\n");
    n.wrapping_add(1)
}

/// Writes the line of an operation whose caller's prefix is in `slot` (one shorter than
/// [`SLOT`] bytes) at the start of `line` (see [`render_tail`]). Returns the length.
#[inline(always)]
fn render_line(
    line: &mut [u8; LINE],
    slot: &Slot,
    head: [u8; 4],
    addr: u64,
    size: Option<u64>,
) -> usize {
    // Shorter than `SLOT` (the caller checked that the prefix is in its slot): masked, the
    // compiler knows that too, so the window below needs no check (one instruction a line,
    // where taking the smaller of it and `SLOT` was three).
    let len = usize::from(slot.len) & (SLOT - 1);
    // One fixed-length move for the prefixes of nearly every line; the bytes past the prefix
    // are overwritten by the tail (a loop of varying length was a mispredicted branch a line).
    if len <= 64 {
        line[..64].copy_from_slice(&slot.text[..64]);
    } else {
        line[..SLOT].copy_from_slice(&slot.text);
    }
    let w = window(&mut line[len..], 0);
    len + usize::from(render_tail(w, head, addr, size))
}

/// Prints decoded records as `mtrace` text.
pub(super) struct Printer {
    callers: Callers,
    /// How each kind code prints.
    kinds: [LineKind; 256],
}

/// Room taken from the text buffer at a time for a batch's lines: more is taken when a line
/// might not fit in what is left, so the test per line is one comparison.
const BATCH_ROOM: usize = 1 << 16;
const _: () = assert!(BATCH_ROOM >= LINE);

impl Default for Printer {
    fn default() -> Self {
        Printer {
            callers: Callers::default(),
            kinds: line_kinds(),
        }
    }
}

impl BatchPrinter for Printer {
    const FORMAT: &'static str = FORMAT;
    type Kinds = MtraceKinds;
    const KINDS: MtraceKinds = MtraceKinds;
    const SIDE_STREAMS: SideStreams = SIDE_STREAMS;

    fn block_start(&mut self) {
        self.callers.clear();
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
        let Self { callers, kinds } = self;
        // Lines are printed into `rest`, the room after the `used` bytes of text printed so
        // far, taken from the buffer a batch at a time.
        let mut rest = text.room(BATCH_ROOM);
        let mut used = 0;
        for (k, r) in (first..).zip(records) {
            let keep = ALL || keep_range.contains(&k);
            let LineKind { head, what } = kinds[usize::from(r.kind)];
            if what > What::SizedOp {
                let (line, newline) = other_line(cursors, k, what, r.kind)?;
                if keep {
                    text.push_line_after(used, line, newline);
                    rest = text.room(BATCH_ROOM);
                    used = 0;
                }
                continue;
            }
            let site = r.site as usize;
            let slot = match callers.slots.get(site) {
                Some(s) => s,
                None => new_site(cursors, k, callers, site)?,
            };
            if !keep {
                continue;
            }
            let size = (what == What::SizedOp).then_some(r.size);
            if slot.len == LONG {
                text.advance(used);
                print_long(text, callers.long(site), head, r.addr, size);
                rest = text.room(BATCH_ROOM);
                used = 0;
                continue;
            }
            if rest.len() < LINE {
                text.advance(used);
                rest = text.room(BATCH_ROOM);
                used = 0;
            }
            let (line, _) = rest
                .split_first_chunk_mut()
                .expect("room for a line is taken before printing it");
            let n = render_line(line, slot, head, r.addr, size);
            used += n;
            rest = &mut std::mem::take(&mut rest)[n..];
        }
        text.advance(used);
        Ok(())
    }
}

/// Appends the line of an operation whose caller's prefix, `prefix`, is longer than a slot
/// (see [`render_tail`]).
#[cold]
#[inline(never)]
fn print_long(text: &mut TextOut, prefix: &[u8], head: [u8; 4], addr: u64, size: Option<u64>) {
    text.push(prefix);
    let n = render_tail(window(text.room(WINDOW), 0), head, addr, size);
    text.advance(usize::from(n));
}

/// The block's side streams: call-site strings and verbatim lines.
pub(super) const SIDE_STREAMS: SideStreams = SideStreams {
    own: STRINGS,
    own_name: "strings",
    verbatim: VERBATIM,
};

/// Reads the string of the first use of call site `site` (record `k`), which must be the
/// next new one, into `callers`; returns its slot.
#[cold]
#[inline(never)]
pub(super) fn new_site<'c>(
    cursors: &mut BlockCursors<'_, '_>,
    k: u64,
    callers: &'c mut Callers,
    site: usize,
) -> Result<&'c Slot, FormatError> {
    if site != callers.len() {
        return Err(cursors.at(k, format!("unknown call site {site}")));
    }
    // Its string is next in the strings stream.
    let n = cursors.own.u64().map_err(|m| cursors.at(k, m))?;
    let caller = match n {
        0 => None,
        n => {
            let n = usize::try_from(n - 1)
                .map_err(|_| cursors.at(k, "caller string too long".into()))?;
            Some(cursors.own.take(n).map_err(|m| cursors.at(k, m))?)
        }
    };
    callers.push(caller);
    Ok(&callers.slots[site])
}

/// The text of record `k` of kind `kind`, one that is not an operation (`what`): a
/// marker or a verbatim line; and whether a newline follows it.
#[cold]
#[inline(never)]
pub(super) fn other_line<'a>(
    cursors: &mut BlockCursors<'a, '_>,
    k: u64,
    what: What,
    kind: u8,
) -> Result<(&'a [u8], bool), FormatError> {
    match what {
        What::Start => Ok((b"= Start\n", false)),
        What::End => Ok((b"= End\n", false)),
        What::Verbatim | What::VerbatimUnterminated => {
            let line = cursors.verbatim_line(k)?;
            Ok((line, what == What::Verbatim))
        }
        _ => Err(cursors.at(k, format!("unknown record kind {kind}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::mtrace::line::{render, Op, OpLine};
    use crate::shared::allocation_model::threads::decode_pipeline::{self, RecordSink};
    use crate::shared::text::sink::TextSink;
    use metatf::container::Block;

    #[test]
    fn render_op_prints_what_line_render_prints() {
        // Every length boundary of the short-number table (below 0x100) and the hex printer.
        let values = [
            0u64,
            1,
            0xf,
            0x10,
            0xff,
            0x100,
            0xeb8,
            0xffff_ffff,
            0x1_0000_0000,
            0x55d2_1555_94a0,
            u64::MAX,
            1 << 63,
        ];
        // Prefixes (`@ `, the caller, a space) of every length around the fixed-length copies'
        // (64 and 128 bytes) and the loop's steps, and longer.
        let long: Vec<u8> = (0..1000).map(|i| b'a' + (i % 26) as u8).collect();
        let mut callers_of = vec![None, Some(&b"perl:(perl_alloc+10)[0x6f930]"[..])];
        for len in [
            3, 4, 31, 32, 33, 45, 61, 62, 63, 64, 65, 77, 125, 126, 127, 128, 129, 130, 131, 143,
            144, 145, 200, 1000,
        ] {
            callers_of.push(Some(&long[..len - 3]));
        }
        let kind_of = |op| match op {
            Op::Malloc => model::MALLOC,
            Op::Free => model::FREE,
            Op::ReallocOld => model::REALLOC_OLD,
            Op::ReallocNew => model::REALLOC_NEW,
        };
        let table = line_kinds();
        for op in [Op::Malloc, Op::Free, Op::ReallocOld, Op::ReallocNew] {
            for &caller in &callers_of {
                for addr in values {
                    for size in values {
                        let line = OpLine {
                            caller,
                            op,
                            addr,
                            size: if op.has_size() { size } else { 0 },
                        };
                        let mut want = Vec::new();
                        render(&line, &mut want);
                        let mut callers = Callers::default();
                        callers.push(Some(b"x"));
                        callers.push(caller);
                        let prefix = callers.prefix(1).to_vec();
                        assert_eq!(prefix.is_empty(), caller.is_none());
                        // The line as the sink prints it: from its kind code's entry, after
                        // text already printed.
                        let LineKind { head, what } = table[usize::from(kind_of(op))];
                        assert_eq!(what == What::SizedOp, op.has_size());
                        let size = (what == What::SizedOp).then_some(size);
                        let mut text = TextOut::new(0);
                        text.push(b"before\n");
                        let slot = &callers.slots[1];
                        if slot.len == LONG {
                            print_long(&mut text, callers.long(1), head, addr, size);
                        } else {
                            let room = text.room(LINE);
                            room.fill(b'#');
                            let (line, _) = room.split_first_chunk_mut().unwrap();
                            let n = render_line(line, slot, head, addr, size);
                            text.advance(n);
                        }
                        let mut got = Vec::new();
                        text.write_to(&mut got).unwrap();
                        assert_eq!(got[..7], *b"before\n");
                        assert_eq!(got[7..], want);
                    }
                }
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

    /// A sink that panics on the first batch of a block's records after `after` records when
    /// `armed`, and is `inner` otherwise.
    struct Panicking<'a> {
        inner: Box<dyn RecordSink + 'a>,
        armed: bool,
        after: u64,
    }
    impl RecordSink for Panicking<'_> {
        fn block_start(&mut self, block: &Block) -> Result<(), FormatError> {
            self.inner.block_start(block)
        }
        fn records(
            &mut self,
            block: &Block,
            first: u64,
            records: &[ModelRecord],
            print: bool,
        ) -> Result<(), FormatError> {
            assert!(
                !(self.armed && first >= self.after),
                "a sink panics on purpose"
            );
            self.inner.records(block, first, records, print)
        }
        fn take_printed(&mut self, text: crate::shared::text::out::Filled) {
            self.inner.take_printed(text)
        }
        fn flush(&mut self) -> Result<(), FormatError> {
            self.inner.flush()
        }
        fn block_end(&mut self, block: &Block) -> Result<(), FormatError> {
            self.inner.block_end(block)
        }
    }

    /// A text sink that panics after `after` records if it is the worker's sink of two
    /// threads or the only one.
    fn panicking(drain: decode_pipeline::Drain<'_>, after: u64) -> Box<dyn RecordSink + '_> {
        let armed = !matches!(drain, decode_pipeline::Drain::Gather(_));
        let inner = Box::new(TextSink::<Printer>::new("t", drain));
        Box::new(Panicking {
            inner,
            armed,
            after,
        })
    }

    #[test]
    fn a_panic_while_decoding_is_the_error_of_its_block_on_any_thread_count() {
        use crate::format::TraceFormat;
        let mut text = Vec::new();
        for i in 0..(4 * decode_pipeline::BATCH as u64) {
            text.extend(format!("+ {:#x} 0x10\n", 0x5555_0000 + i * 0x40).bytes());
        }
        let options = crate::format::EncodeOptions {
            input_name: "t".into(),
            ..crate::format::EncodeOptions::default()
        };
        let mut bin = Vec::new();
        super::super::Mtrace
            .encode(&mut &text[..], &mut bin, &options)
            .unwrap();
        let after = 2 * decode_pipeline::BATCH as u64;
        for threads in [1, 2] {
            let mut reader = crate::shared::container::blocks::open(&bin[..], FORMAT, "t").unwrap();
            let mut out = Vec::new();
            let e = decode_pipeline::decode_blocks(
                &mut reader,
                &MtraceKinds,
                threads,
                "t",
                &mut out,
                &|drain| panicking(drain, after),
            )
            .unwrap_err();
            assert!(
                e.message.contains("failed unexpectedly"),
                "{threads} threads: {e:?}"
            );
            assert_eq!(
                e.position,
                format!("block 0 record {after}"),
                "{threads} threads"
            );
            assert!(out.len() < text.len(), "{threads} threads");
            assert!(text.starts_with(&out), "{threads} threads");
        }
    }

    #[test]
    fn any_sharing_of_the_printing_between_threads_gives_the_text_back() {
        let mut text = b"= Start\n".to_vec();
        let (mut x, mut live) = (0x9e37_79b9_7f4a_7c15u64, Vec::new());
        for i in 0..40_000u64 {
            let r = next(&mut x);
            // New call sites keep appearing, so both sinks read the strings stream throughout.
            let site = match r % 50 {
                0 => String::new(),
                c => format!("@ ./prog:[{:#x}] ", 0x4000 + c * 16 + i / 5_000),
            };
            if !r.is_multiple_of(3) || live.is_empty() {
                let a = 0x5555_0000 + i * 0x40;
                live.push(a);
                text.extend(format!("{site}+ {a:#x} {:#x}\n", r % 300 + 1).bytes());
            } else {
                let a = live.swap_remove((r >> 20) as usize % live.len());
                text.extend(format!("{site}- {a:#x}\n").bytes());
            }
            if i.is_multiple_of(7_919) {
                text.extend_from_slice(b"a line that is not mtrace\n");
            }
        }
        text.extend_from_slice(b"= End\n");
        decode_pipeline::check_sharing(
            &super::super::Mtrace,
            &MtraceKinds,
            &|drain| Box::new(TextSink::<Printer>::new("t", drain)),
            &text,
        );
    }
}

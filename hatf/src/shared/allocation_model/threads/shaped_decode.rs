//! The threaded decode of shaped files (layout `alloc-model-4`, what the encoders write): a
//! pipeline of three stages on two threads. The caller's thread reads the blocks and runs the
//! model's site half (shapes, sites, sizes, extra values) a few batches ahead; the worker runs
//! the address half over each batch; the caller's thread then prints and writes the batches,
//! the printing shared with the worker as in `decode_worker.rs`.
//!
//! Why: with the whole model on the worker, the worker limits a memory-replay decode and the
//! caller's thread waits for it about a third of the time: the address half is about twice
//! the work of the site half. The site half needs nothing from the address half, so it can
//! run ahead of it.
//!
//! Each half keeps its state from block to block on its own thread. The caller's thread sends
//! each batch with the site half's verdict when it ends the block there: the end of the block
//! (the shape table checked) or the error of the record after the batch. The worker decodes
//! the addresses of the batch and reports the first error in record order (an address error
//! comes before the site half's), then the free stream's end check, as one thread does.
//!
//! That pays only while the caller's thread has time to spare. Writing `mtrace` text out
//! keeps it busy (the write alone costs about as much as the worker's address half and
//! printing), and there the worker would wait for the site half about a quarter of its time,
//! which makes the decode slower than without the split. So only front ends whose text is
//! quick to print start here ([`crate::shared::allocation_model::KindTable::sites_ahead`]: memory_replay; even with the
//! move below, mtrace decodes slower split than whole), and even then the caller's thread
//! compares
//! the threads' CPU times in each block every [`WINDOW`] batches, and once the worker's has
//! been clearly the smaller ([`BUSY`]) twice in a row, the site half moves to the worker with
//! where it stopped reading, and the rest of the file decodes as in `decode_worker.rs`. (The
//! worker prints a batch whenever it has used less CPU time than the caller's thread, so it
//! stays the less busy one only when it waits for the site half: on memory_replay traces the
//! worker's CPU time is well above the caller's, on mtrace traces well below.)
//!
//! Memory stays bounded: [`DEPTH`] batch vectors go round, and the messages the worker sends
//! back wait in a queue of [`decode_worker::QUEUED`].

use std::io::{Read, Write};
use std::sync::mpsc;
use std::sync::Arc;

use metatf::container::{Block, ContainerReader};

use crate::format::FormatError;
use crate::shared::allocation_model::packing::record_shapes::{
    self, Entry, FreeValues, ShapePlace, ShapeReader,
};
use crate::shared::allocation_model::prediction::site_and_address::{decode_sites, SiteHalf};
use crate::shared::allocation_model::threads::decode_pipeline::{
    decode_batches, panicked, stopped, BlockModel, Drain, Feeder, SinkMaker, Stop, BATCH,
};
use crate::shared::allocation_model::threads::decode_worker::{
    self, model_blocks, Busy, Printer, WorkerOut, WorkerText,
};
use crate::shared::allocation_model::{stream, Cursors, KindTable, ModelRecord, State};
use crate::shared::container::blocks;
use crate::shared::threads::spin_recv::recv_counted;
use crate::shared::threads::worker_pool::caught;
use metatf::varint::Cursor;

/// Batches whose site half the caller's thread may have decoded before the sink took them:
/// enough that the worker finds the next batch waiting while the caller's thread prints one
/// and decodes the sites of another; deeper only holds more batches in memory.
const DEPTH: usize = 4;

/// A batch of records whose site half is decoded, for the worker.
struct Sited {
    /// The records, with their kinds, sites, sizes and extra values.
    records: Vec<ModelRecord>,
    /// The shape of each record.
    entries: Vec<Entry>,
    /// `None` when the block has more records; else how the site half ended the block: the
    /// shape table was read to its end, or the error of the record after these.
    end: Option<Result<(), String>>,
}

/// What the caller's thread sends the worker: each block, then its batches; or once the site
/// half has moved to the worker, the rest of the block and the blocks after it.
enum Work {
    Block(Arc<Block>),
    Batch(Sited),
    /// The site half, for the rest of the block.
    Sites(Box<SitesPlace>),
}

/// The site half of a decode and where it stopped in its block: what the worker needs to
/// carry on from there.
struct SitesPlace {
    sites: SiteHalf,
    shapes: ShapePlace,
    /// How far each stream of [`SITE_STREAMS`] was read.
    read: [usize; SITE_STREAMS.len()],
}

/// The streams the site half reads (in a shaped block most of them are in the shapes).
const SITE_STREAMS: [u8; 6] = [
    stream::KIND,
    stream::SITE,
    stream::SITE_MISS,
    stream::SIZE,
    stream::SIZE_MISS,
    stream::EXTRA,
];

/// Batches between two comparisons of the threads' CPU times in a block, and the share of
/// the caller's (numerator, denominator) below which the worker's makes the site half move.
const WINDOW: u32 = 16;
const BUSY: (u64, u64) = (7, 8);

impl From<Arc<Block>> for Work {
    fn from(block: Arc<Block>) -> Self {
        Work::Block(block)
    }
}

/// The vectors the worker gives back to the caller's thread that the sink does not: those of
/// the shapes, and those of batches left empty. Once the worker runs the whole model, the
/// vectors of the batches the sink took go the other way (`recycle`).
struct Spares<R, E, C> {
    records: R,
    entries: E,
    recycle: C,
}

/// The worker's ends of [`Spares`].
type SpareSenders = Spares<
    mpsc::Sender<Vec<ModelRecord>>,
    mpsc::Sender<Vec<Entry>>,
    mpsc::Receiver<Vec<ModelRecord>>,
>;
/// The caller's ends of [`Spares`].
type SpareReceivers = Spares<
    mpsc::Receiver<Vec<ModelRecord>>,
    mpsc::Receiver<Vec<Entry>>,
    mpsc::Sender<Vec<ModelRecord>>,
>;

/// [`crate::shared::allocation_model::threads::decode_worker::decode_blocks`] for a shaped file: decodes every remaining block
/// of `reader` into the sinks `make_sink` makes, the site half on the caller's thread and the
/// address half on a worker; returns the number of records.
pub(in crate::internal::shared::allocation_model) fn decode_blocks<
    'a,
    R: Read,
    K: KindTable + Sync + ?Sized,
>(
    reader: &mut ContainerReader<R>,
    kinds: &K,
    file: &str,
    output: &'a mut dyn Write,
    make_sink: &SinkMaker<'a>,
    busy: &Busy,
) -> Result<u64, FormatError> {
    std::thread::scope(|scope| {
        let (work_tx, work_rx) = mpsc::channel::<Work>();
        let (records_tx, records_rx) = mpsc::channel::<Vec<ModelRecord>>();
        let (entries_tx, entries_rx) = mpsc::channel::<Vec<Entry>>();
        let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<ModelRecord>>();
        let (worker_text, caller_text) = decode_worker::text_sides(output);
        scope.spawn(move || {
            let WorkerText { drain, to_caller } = worker_text;
            let mut sink = make_sink(Drain::HandOff(drain));
            let mut out = WorkerOut::new(sink.as_mut(), &to_caller, busy);
            let spares = Spares {
                records: records_tx,
                entries: entries_tx,
                recycle: recycle_rx,
            };
            worker(kinds, &work_rx, &mut out, &spares);
        });
        let mut sink = make_sink(Drain::Gather(caller_text.drain));
        let printer = Printer::new(sink.as_mut(), caller_text.from_worker, busy, file);
        let spares = Spares {
            records: records_rx,
            entries: entries_rx,
            recycle: recycle_tx,
        };
        // The channel ends are moved in, so they close when this returns, even early: the
        // worker then stops at its next send or receive and the scope can join it.
        drive(reader, kinds, printer, work_tx, spares, busy)
    })
}

/// The worker: the address half of every batch it is handed, in order; prints those it has
/// time for and sends every batch on. Once it is handed the site half, the whole model.
fn worker<K: KindTable + ?Sized>(
    kinds: &K,
    work: &mpsc::Receiver<Work>,
    out: &mut WorkerOut<'_>,
    spares: &SpareSenders,
) {
    let mut model = BlockModel::new();
    loop {
        let Some(Work::Block(block)) = receive(work, out) else {
            return;
        };
        model.state().addrs.clear_for_block();
        out.block_start(&block);
        let (result, whole) = caught(
            || Ok(addresses(kinds, &mut model, &block, work, out, spares)),
            panicked,
        )
        .unwrap_or_else(|stop| (Err(stop), false));
        if !out.block_end(&block, result) {
            return;
        }
        if whole {
            break;
        }
    }
    let blocks = work.iter().map_while(|w| match w {
        Work::Block(block) => Some(block),
        Work::Batch(_) | Work::Sites(_) => None,
    });
    model_blocks(kinds, &mut model, blocks, out, &spares.recycle);
}

/// The worker's next piece of work; `None` once the caller's thread has stopped.
fn receive(work: &mpsc::Receiver<Work>, out: &mut WorkerOut<'_>) -> Option<Work> {
    // Polled first, so that the caller's thread need not wake the worker up (see
    // `spin_recv.rs`).
    let (got, waited) = recv_counted(work, |_| {});
    out.polled(waited.unwrap_or(0));
    got.ok()
}

/// The address half of the batches of `block`, each handed over as it is done, until the
/// site half's end of the block: why the block ended, and true when the site half came over
/// (the worker then decoded the rest of the block with the whole model).
fn addresses<K: KindTable + ?Sized>(
    kinds: &K,
    model: &mut BlockModel,
    block: &Block,
    work: &mpsc::Receiver<Work>,
    out: &mut WorkerOut<'_>,
    spares: &SpareSenders,
) -> (Result<(), Stop>, bool) {
    let mut c = record_shapes::block_cursors(block);
    loop {
        let batch = match receive(work, out) {
            Some(Work::Batch(batch)) => batch,
            Some(Work::Sites(place)) => {
                let state = model.state();
                state.sites = place.sites;
                carry_on(&mut c, block, place.shapes, &place.read);
                let mut batch = Vec::new();
                let result = decode_batches(state, kinds, &mut c, &mut batch, &mut |b| {
                    out.swap_over(block, b, &spares.recycle)
                });
                return (result, true);
            }
            Some(Work::Block(_)) | None => return (Err(Stop::Sink(stopped(""))), false),
        };
        let Sited {
            mut records,
            entries,
            end,
        } = batch;
        let Some(shapes) = c.shapes.as_mut() else {
            return (Err(Stop::Sink(stopped(""))), false);
        };
        let frees = shapes.frees();
        let addrs = &mut model.state().addrs;
        let (done, bad) = addrs.decode_chunk(kinds, &entries, &mut records, frees, &mut c.c);
        records.truncate(done);
        // The caller's thread may have stopped; then the vector is simply dropped.
        let _ = spares.entries.send(entries);
        let end = match bad {
            Some(bad) => Some(Err(*bad)),
            None => end.map(|e| e.and_then(|()| FreeValues::finish(&c.c[stream::FREE as usize]))),
        };
        if records.is_empty() {
            let _ = spares.records.send(records);
        } else if let Err(e) = out.hand_over(block, records) {
            return (Err(Stop::Sink(e)), false);
        }
        if let Some(end) = end {
            return (end.map_err(Stop::Model), false);
        }
    }
}

/// Moves the worker's cursors `c` over `block` to where the site half stopped: `shapes`, and
/// `read` bytes into each of the [`SITE_STREAMS`].
fn carry_on<'b>(c: &mut Cursors<'b>, block: &'b Block, shapes: ShapePlace, read: &[usize]) {
    for (&s, &at) in SITE_STREAMS.iter().zip(read) {
        let bytes = blocks::section(block, s);
        c.c[usize::from(s)] = Cursor::starting_at(bytes, at, stream::NAMES[usize::from(s)]);
    }
    if let Some(reader) = &mut c.shapes {
        reader.carry_on(block, shapes);
    }
}

/// The caller's side: reads the blocks, runs their site half a few batches ahead of the
/// worker, and gives the batches the worker sends back to the sink (to print or to follow);
/// once the site half has moved to the worker, does what `decode_worker.rs` does.
fn drive<R: Read, K: KindTable + ?Sized>(
    reader: &mut ContainerReader<R>,
    kinds: &K,
    mut printer: Printer<'_>,
    work: mpsc::Sender<Work>,
    spares: SpareReceivers,
    busy: &Busy,
) -> Result<u64, FormatError> {
    let file = printer.file;
    let (mut sites, _) = State::for_decoding().split();
    let mut feeder = Feeder::new(reader, work.clone());
    let mut watch = Watch::new(busy);
    // The batch vectors that go round (empty ones allocate nothing).
    let mut free: Vec<Vec<ModelRecord>> = (0..DEPTH).map(|_| Vec::new()).collect();
    'blocks: while let Some(block) = feeder.next(file) {
        printer.blocks.push_back(Arc::clone(&block));
        sites.clear();
        let mut sited = SiteCursor::new(&block, file)?;
        watch.restart();
        loop {
            // A vector for the next batch; while none is free, the sink takes the batches
            // the worker has done.
            let mut records = loop {
                if let Some(v) = free.pop().or_else(|| spares.records.try_recv().ok()) {
                    break v;
                }
                if let Some(v) = printer.next()? {
                    free.push(v);
                }
            };
            if watch.hand_over(&printer) {
                let place = sited.place(std::mem::take(&mut sites));
                // The worker decodes the rest of the file; the vectors are its spares.
                for v in free.drain(..).chain(Some(records)) {
                    let _ = spares.recycle.send(v);
                }
                if work.send(Work::Sites(Box::new(place))).is_err() {
                    break 'blocks;
                }
                return decode_worker::drive(feeder, &mut printer, &spares.recycle);
            }
            let mut entries = spares.entries.try_recv().unwrap_or_default();
            let end = sited.batch(&mut sites, kinds, &mut records, &mut entries);
            let (last, failed) = (end.is_some(), matches!(end, Some(Err(_))));
            let batch = Sited {
                records,
                entries,
                end,
            };
            // The worker stops after an error, which it sends before its channel closes: the
            // sink takes that below.
            if work.send(Work::Batch(batch)).is_err() || failed {
                break 'blocks;
            }
            if last {
                break;
            }
        }
    }
    while !printer.blocks.is_empty() {
        printer.next()?;
    }
    feeder.finish(file, printer.records)
}

/// Says when the site half should move to the worker: when, at two checks in a row (every
/// [`WINDOW`] batches of a block), the worker has used less than [`BUSY`] of the CPU time the
/// caller's thread used since the block's first batches. (CPU time, not time spent waiting,
/// which on a loaded machine also grows while a thread waits for a processor. Since the
/// block's start, and twice, so that another program that takes a processor for a few
/// milliseconds does not move the site half, which would make that decode a sixth slower; the
/// time of each window alone varies along the trace, so a check of one window alone would
/// move it too.)
struct Watch<'b> {
    busy: &'b Busy,
    /// Batches since the block started, and in all (for [`Busy::hand_over_at`]).
    batches: u32,
    total: u64,
    /// The threads' CPU times when the block's first batches were decoded.
    caller: u64,
    worker: u64,
    /// True when the worker was the less busy one at the last check.
    idle: bool,
}

impl<'b> Watch<'b> {
    fn new(busy: &'b Busy) -> Self {
        Watch {
            busy,
            batches: 0,
            total: 0,
            caller: 0,
            worker: 0,
            idle: false,
        }
    }

    /// Starts counting for a new block (the time its reading took is not counted: the
    /// worker waits meanwhile, whichever thread runs the site half).
    fn restart(&mut self) {
        self.batches = 0;
        self.idle = false;
    }

    /// Starts counting the threads' CPU times.
    fn start_counting(&mut self, printer: &Printer<'_>) {
        self.caller = printer.cpu();
        self.worker = self.busy.worker_cpu();
    }

    /// Called before the site half of each batch: true when it should move to the worker
    /// instead.
    fn hand_over(&mut self, printer: &Printer<'_>) -> bool {
        self.total += 1;
        if let Some(at) = self.busy.hand_over_at {
            return self.total > at;
        }
        self.batches += 1;
        // Counted from the batch the caller's thread decodes once its first vectors are all
        // in use, not from the block's first, while only it has work: each thread's time then
        // covers about the same batches.
        let ahead = DEPTH as u32;
        if self.batches == ahead {
            self.start_counting(printer);
        }
        if self.batches <= ahead || !(self.batches - ahead).is_multiple_of(WINDOW) {
            return false;
        }
        let caller = printer.cpu().saturating_sub(self.caller);
        let worker = self.busy.worker_cpu().saturating_sub(self.worker);
        let was_idle = self.idle;
        self.idle = worker.saturating_mul(BUSY.1) < caller.saturating_mul(BUSY.0);
        was_idle && self.idle
    }
}

/// The site half's read cursors over one shaped block.
struct SiteCursor<'b> {
    shapes: ShapeReader<'b>,
    c: [Cursor<'b>; stream::COUNT],
}

impl<'b> SiteCursor<'b> {
    /// Cursors over `block`, of the file named `file`.
    fn new(block: &'b Block, file: &str) -> Result<Self, FormatError> {
        match record_shapes::block_cursors(block) {
            crate::shared::allocation_model::Cursors {
                c,
                shapes: Some(shapes),
            } => Ok(SiteCursor { shapes, c }),
            _ => Err(FormatError {
                file: file.to_string(),
                position: String::new(),
                message: "internal error: a shaped decode of a block without shapes".to_string(),
            }),
        }
    }

    /// Where the site half stopped, with its state `sites`.
    fn place(self, sites: SiteHalf) -> SitesPlace {
        SitesPlace {
            sites,
            read: SITE_STREAMS.map(|s| self.c[usize::from(s)].position()),
            shapes: self.shapes.place(),
        }
    }

    /// Decodes the site half of the next batch into `records` and `entries` (emptied first):
    /// `None` when the block has more records, else how it ended (see [`Sited::end`]).
    fn batch<K: KindTable + ?Sized>(
        &mut self,
        sites: &mut SiteHalf,
        kinds: &K,
        records: &mut Vec<ModelRecord>,
        entries: &mut Vec<Entry>,
    ) -> Option<Result<(), String>> {
        records.clear();
        entries.clear();
        let shapes = &mut self.shapes;
        match decode_sites(sites, kinds, shapes, &mut self.c, records, entries, BATCH) {
            Ok(true) => None,
            Ok(false) => Some(shapes.finish_table()),
            Err(m) => Some(Err(m)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{DecodeOptions, EncodeOptions, TraceFormat};
    use crate::formats::mtrace::{self, Mtrace};
    use crate::shared::allocation_model::threads::decode_worker::HAND_OVER_AT;
    use crate::shared::container::blocks::BlockWriter;
    use metatf::container::{ContainerHeader, ContainerReader};

    /// An `mtrace` log of `lines` operations: call sites that keep appearing, frees of live
    /// blocks of any age, of blocks never allocated, and allocations at scattered addresses.
    fn log(lines: u64) -> Vec<u8> {
        let mut text = b"= Start\n".to_vec();
        let (mut x, mut live) = (0x2545_f491_4f6c_dd1du64, Vec::new());
        for i in 0..lines {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let site = format!("@ ./prog:[{:#x}] ", 0x4000 + x % 40 * 16 + i / 3_000);
            if x % 5 < 3 || live.is_empty() {
                let a = 0x5555_0000 + (x >> 20) % 50_000 * 0x40;
                live.push(a);
                text.extend(format!("{site}+ {a:#x} {:#x}\n", x % 300 + 1).bytes());
            } else if x % 5 == 3 {
                let a = live.swap_remove((x >> 24) as usize % live.len());
                text.extend(format!("{site}- {a:#x}\n").bytes());
            } else {
                text.extend(format!("{site}- {:#x}\n", 0x7000_0000 + (x >> 30) % 999 * 16).bytes());
            }
        }
        text.extend_from_slice(b"= End\n");
        text
    }

    /// The only block of `bin` written `copies` times (blocks of a shaped file decode on their
    /// own), the last copy's sections passed through `damage` (section number, bytes).
    fn copied(bin: &[u8], copies: usize, damage: &dyn Fn(u8, &mut Vec<u8>)) -> Vec<u8> {
        let mut r = ContainerReader::new(bin).expect("a container");
        // The DTD is stored by reference: the writer needs its text again.
        let header = ContainerHeader {
            dtd: mtrace::DTD.to_string(),
            ..r.header().clone()
        };
        let block = r.next_block().expect("reads").expect("a block");
        let mut out = Vec::new();
        let mut w = BlockWriter::new(&mut out, &header, &EncodeOptions::default()).expect("header");
        for copy in 1..=copies {
            let mut sections: Vec<(u8, Vec<u8>)> = block
                .sections
                .iter()
                .map(|s| (s.number, s.bytes.clone()))
                .collect();
            if copy == copies {
                for (n, bytes) in &mut sections {
                    damage(*n, bytes);
                }
            }
            let sections: Vec<(u8, &[u8])> = sections.iter().map(|(n, b)| (*n, &b[..])).collect();
            w.block(block.record_count, &sections).expect("block");
        }
        w.finish().expect("finish");
        out
    }

    /// Decodes `bin` on `threads` threads, the site half moving to the worker before batch
    /// `at` (`None`: when the worker's waiting says): the text written and the error, if any.
    fn decode(bin: &[u8], threads: usize, at: Option<u64>) -> (Vec<u8>, Result<u64, String>) {
        HAND_OVER_AT.with(|h| h.set(at));
        let mut out = Vec::new();
        let options = DecodeOptions {
            input_name: "t".into(),
            threads,
            ..DecodeOptions::default()
        };
        let r = Mtrace.decode(&mut &bin[..], &mut out, &options);
        HAND_OVER_AT.with(|h| h.set(None));
        (out, r.map_err(|e| e.to_string()))
    }

    /// What a damage does to a section (its number, its bytes).
    type Damage = Box<dyn Fn(u8, &mut Vec<u8>)>;

    /// Damages that make the site half fail (a site-miss stream cut short, a bad shape id),
    /// the address half (address-miss and free-miss streams cut short), both, and the checks
    /// at the end of a block (bytes left in the shape table or the free stream).
    fn damages() -> Vec<(&'static str, Damage)> {
        let cut = |s: u8, keep: usize| -> Damage {
            Box::new(move |n, b| {
                if n == s {
                    b.truncate(b.len() * keep / 8);
                }
            })
        };
        let longer = |s: u8| -> Damage {
            Box::new(move |n, b| {
                if n == s {
                    b.push(0);
                }
            })
        };
        vec![
            ("none", Box::new(|_, _| {})),
            ("site misses", cut(stream::SITE_MISS, 4)),
            ("address misses", cut(stream::ADDR_MISS, 3)),
            ("free misses", cut(stream::FREE_MISS, 5)),
            (
                "site and address misses",
                Box::new(|n, b| {
                    if n == stream::SITE_MISS || n == stream::ADDR_MISS {
                        b.truncate(b.len() / 2);
                    }
                }),
            ),
            (
                "address and site misses",
                Box::new(|n, b| match n {
                    stream::SITE_MISS => b.truncate(b.len() / 4),
                    stream::ADDR_MISS => b.truncate(b.len() / 2),
                    _ => {}
                }),
            ),
            (
                "shape id",
                Box::new(|n, b| {
                    if n == record_shapes::SHAPES {
                        let i = b.len() * 2 / 3;
                        b[i..i + 3].copy_from_slice(&[0xff, 0xff, 0x7f]);
                    }
                }),
            ),
            ("free stream left over", longer(stream::FREE)),
            ("table left over", longer(record_shapes::SHAPE_TABLE)),
            (
                "both left over",
                Box::new(|n, b| {
                    if n == stream::FREE || n == record_shapes::SHAPE_TABLE {
                        b.push(0);
                    }
                }),
            ),
        ]
    }

    #[test]
    fn errors_and_the_text_before_them_are_those_of_one_thread_wherever_the_site_half_runs() {
        let text = log(30_000);
        let mut bin = Vec::new();
        Mtrace
            .encode(&mut &text[..], &mut bin, &EncodeOptions::default())
            .expect("encodes");
        // Every stream damaged below has bytes to damage.
        let block = ContainerReader::new(&bin[..])
            .unwrap()
            .next_block()
            .unwrap()
            .unwrap();
        for n in [
            stream::SITE_MISS,
            stream::ADDR_MISS,
            stream::FREE_MISS,
            stream::FREE,
        ] {
            assert!(
                blocks::section(&block, n).len() > 8,
                "stream {n} is nearly empty"
            );
        }
        for (what, damage) in damages() {
            let damaged = copied(&bin, 2, damage.as_ref());
            let (want_text, want) = decode(&damaged, 1, None);
            if what == "none" {
                assert_eq!(want, Ok(2 * 30_002));
                assert!(want_text == [&text[..], &text[..]].concat());
            } else {
                let e = want.as_ref().expect_err(what);
                assert!(e.starts_with("t:block 1 record "), "{what}: {e}");
            }
            for at in [
                Some(u64::MAX),
                Some(0),
                Some(1),
                Some(5),
                Some(17),
                Some(20),
                None,
            ] {
                let (got_text, got) = decode(&damaged, 2, at);
                assert_eq!(got, want, "{what}, hand-over {at:?}");
                assert!(
                    got_text == want_text,
                    "{what}, hand-over {at:?}: text differs"
                );
            }
        }
    }
}

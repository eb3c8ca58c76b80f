//! A Parquet export whose row groups are made on several threads, one block of the trace each.
//!
//! Where each block of a file decodes on its own ([`RecordFile::blocks_read_alone`]), a row
//! group needs nothing from the others: a thread reads the records of the next block not yet
//! taken (through its own handle on the file), builds its batches and encodes them into the
//! row group's column chunks, and this thread appends the finished row groups to the file in
//! order. The threads meet once a block, not once a batch, so a thread that the machine holds
//! back delays no other. The file is byte for byte the one [`super::run`]'s pipeline writes:
//! the same batches, cut at the same rows, go to the same column writers.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

use hatf::records::{Item, RecordFile};
use hatf::FormatError;
use indicatif::ProgressBar;
use parquet::arrow::arrow_writer::ArrowColumnChunk;

use super::columns::{Plan, Rows};
use super::parquet_table::{Groups, ParquetTable};
use super::{BATCH_ROWS, MAX_GROUP_ROWS};

/// Finished row groups waiting for the ones before them, at most, a thread: bounds the memory
/// when one block takes much longer than those after it.
const AHEAD_PER_THREAD: usize = 2;

/// Read-ahead of each thread's handle on the file.
const READ_AHEAD: usize = 1 << 16;

/// The records of one block within the range exported, and the number of its first row group.
struct Job {
    records: Range<u64>,
    first_group: usize,
}

/// The jobs of records `range` of a file whose index is `blocks`: one a block that holds any
/// of them, its row groups numbered as [`super::run`] cuts them (a block's records, at most
/// [`MAX_GROUP_ROWS`] a group).
fn jobs(records: &RecordFile, range: &Range<u64>) -> Vec<Job> {
    let mut jobs = Vec::new();
    let mut groups = 0usize;
    for b in records.blocks() {
        let start = b.first_record.max(range.start);
        let end = b.first_record.saturating_add(b.record_count).min(range.end);
        if start >= end {
            continue;
        }
        jobs.push(Job {
            records: start..end,
            first_group: groups,
        });
        groups += usize::try_from(end - start)
            .unwrap_or(usize::MAX)
            .div_ceil(MAX_GROUP_ROWS);
    }
    jobs
}

/// True when [`export`] can write the records `range` of `records`: its blocks decode on their
/// own, there are several to share and more than one thread to share them.
pub fn fits(records: &RecordFile, range: &Range<u64>, threads: usize) -> bool {
    threads > 1 && records.blocks_read_alone() && jobs(records, range).len() > 1
}

/// Exports records `range` of `records` (read from `file`, named `name`) into `table` on
/// `threads` threads; returns how many records were written.
#[allow(clippy::too_many_arguments)]
pub fn export<W: Write + Send>(
    records: &RecordFile,
    file: &File,
    name: &str,
    range: Range<u64>,
    plan: &Plan,
    table: &mut ParquetTable<W>,
    threads: usize,
    spinner: Option<&ProgressBar>,
) -> Result<u64, String> {
    let jobs = jobs(records, &range);
    let groups = table.groups();
    let next = AtomicUsize::new(0);
    let count = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    // Row groups appended so far, which lets a thread take a job that far ahead.
    let appended = (Mutex::new(0usize), Condvar::new());
    let ahead = threads * AHEAD_PER_THREAD;
    let (done_tx, done_rx) = mpsc::channel::<(usize, Result<Vec<Vec<ArrowColumnChunk>>, String>)>();
    let work = || {
        let mut input = BufReader::with_capacity(READ_AHEAD, At { file, at: 0 });
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(k) else { return };
            {
                let (lock, wake) = &appended;
                let Ok(mut done) = lock.lock() else { return };
                while k >= *done + ahead && !stop.load(Ordering::Relaxed) {
                    done = match wake.wait(done) {
                        Ok(d) => d,
                        Err(_) => return,
                    };
                }
            }
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let encoded = encode_block(records, &mut input, name, job, plan, &groups, &|n| {
                let before = count.fetch_add(n, Ordering::Relaxed);
                if let Some(s) = spinner {
                    if (before + n) >> 16 != before >> 16 {
                        s.set_message(format!("exporting: {} records", before + n));
                    }
                }
            });
            if done_tx.send((k, encoded)).is_err() {
                return;
            }
        }
    };
    let result = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(jobs.len()))
            .map(|_| scope.spawn(work))
            .collect();
        let mut waiting = BTreeMap::new();
        let mut written = Ok(());
        for k in 0..jobs.len() {
            let encoded = loop {
                if let Some(e) = waiting.remove(&k) {
                    break e;
                }
                match done_rx.recv() {
                    Ok((j, e)) => {
                        waiting.insert(j, e);
                    }
                    Err(_) => break Err("a block's encoding thread failed".to_string()),
                }
            };
            written = encoded.and_then(|groups| {
                groups
                    .into_iter()
                    .try_for_each(|chunks| table.append(chunks))
            });
            if written.is_err() {
                break;
            }
            let (lock, wake) = &appended;
            if let Ok(mut done) = lock.lock() {
                *done = k + 1;
            }
            wake.notify_all();
        }
        // An error stops the threads at their next block; their work is not waited for.
        stop.store(true, Ordering::Relaxed);
        appended.1.notify_all();
        drop(done_rx);
        for w in workers {
            if w.join().is_err() && written.is_ok() {
                written = Err("a block's encoding thread failed".to_string());
            }
        }
        written
    });
    result.map(|()| count.into_inner())
}

/// The row groups of `job`'s records, read from `input` and encoded by `groups`; `progress`
/// is told of each batch's rows.
fn encode_block(
    records: &RecordFile,
    input: &mut BufReader<At<'_>>,
    name: &str,
    job: &Job,
    plan: &Plan,
    groups: &Groups,
    progress: &dyn Fn(u64),
) -> Result<Vec<Vec<ArrowColumnChunk>>, String> {
    let mut rows = Rows::new(plan, BATCH_ROWS);
    let mut finished = Vec::new();
    let mut group = groups.start(job.first_group)?;
    let mut group_rows = 0usize;
    let failed = |message: String| FormatError {
        file: String::new(),
        position: String::new(),
        message,
    };
    // The table's own errors are kept apart: the reader names the record it stopped at.
    let mut writer_error = None;
    let read = records.read(input, name, job.records.clone(), &mut |item| {
        let Item::Record(r) = item else {
            return Ok(());
        };
        rows.push(plan, r.index, r.record_type, r.values);
        if rows.len() < BATCH_ROWS {
            return Ok(());
        }
        let batch = rows.len();
        let end_group = group_rows + batch >= MAX_GROUP_ROWS;
        let wrote = group.write(&rows.finish(plan)).and_then(|()| {
            if end_group {
                let next = groups.start(job.first_group + finished.len() + 1)?;
                finished.push(std::mem::replace(&mut group, next).finish()?);
            }
            Ok(())
        });
        group_rows = if end_group { 0 } else { group_rows + batch };
        progress(batch as u64);
        wrote.map_err(|e| {
            writer_error = Some(e.clone());
            failed(e)
        })
    });
    if let Some(e) = writer_error {
        return Err(e);
    }
    read.map_err(|e| e.to_string())?;
    if rows.len() > 0 {
        let batch = rows.len();
        group.write(&rows.finish(plan))?;
        group_rows += batch;
        progress(batch as u64);
    }
    if group_rows > 0 {
        finished.push(group.finish()?);
    }
    Ok(finished)
}

/// A handle on a file with a position of its own: several threads read the same file at once
/// through positioned reads, none moving another's place.
struct At<'f> {
    file: &'f File,
    at: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = read_at(self.file, buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl Seek for At<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let at = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::Current(d) => self.at.checked_add_signed(d),
            SeekFrom::End(d) => self.file.metadata()?.len().checked_add_signed(d),
        };
        self.at = at.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "seek before the file's start")
        })?;
        Ok(self.at)
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

//! The Parquet table, its columns encoded on two threads.
//!
//! Encoding a batch into Parquet (dictionaries, definition levels, statistics, zstd) costs more
//! CPU than decoding its records, most of all for a table of many mostly-null columns, where
//! it would be the slower of the export's two threads. The columns of a row group are independent, so each batch's
//! columns are shared between the writer thread and a helper, each taking the next column not
//! yet taken; a row group's column chunks are then appended in schema order, as Parquet's own
//! writer would write them. The file is byte for byte what one thread writes.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::ArrayRef;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

/// A Parquet file being written, row group by row group.
pub struct ParquetTable<W: Write + Send> {
    schema: SchemaRef,
    file: SerializedFileWriter<W>,
    factory: Arc<ArrowRowGroupWriterFactory>,
    /// The column writers of the row group being written; empty between row groups.
    columns: Vec<Mutex<ArrowColumnWriter>>,
    /// Row groups written so far.
    groups: usize,
    /// Threads that encode columns (1 on a machine with one CPU).
    threads: usize,
}

impl<W: Write + Send> ParquetTable<W> {
    /// Starts a Parquet file of `schema` on `out`, written with `properties`.
    pub fn new(out: W, schema: SchemaRef, properties: WriterProperties) -> Result<Self, String> {
        // Parquet's own writer converts the schema and stores it (`ARROW:schema`) in the
        // footer; its lower-level halves then write the row groups.
        let writer = ArrowWriter::try_new(out, schema.clone(), Some(properties))
            .map_err(|e| e.to_string())?;
        let (file, factory) = writer.into_serialized_writer().map_err(|e| e.to_string())?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
        Ok(ParquetTable {
            schema,
            file,
            factory: Arc::new(factory),
            columns: Vec::new(),
            groups: 0,
            threads,
        })
    }

    /// Writes one batch of rows, one array a column in the schema's order.
    pub fn write(&mut self, arrays: &[ArrayRef]) -> Result<(), String> {
        if self.columns.is_empty() {
            self.columns = self
                .factory
                .create_column_writers(self.groups)
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(Mutex::new)
                .collect();
        }
        // The table's columns are flat: each array is one leaf, one column writer.
        let mut leaves = Vec::with_capacity(arrays.len());
        for (field, array) in self.schema.fields().iter().zip(arrays) {
            leaves.extend(compute_leaves(field, array).map_err(|e| e.to_string())?);
        }
        if leaves.len() != self.columns.len() {
            return Err(format!(
                "{} columns given for a table of {}",
                leaves.len(),
                self.columns.len()
            ));
        }
        let columns = &self.columns;
        share(columns.len(), self.threads, |i| {
            let mut writer = columns[i]
                .lock()
                .map_err(|_| "a column encoder failed".to_string())?;
            writer.write(&leaves[i]).map_err(|e| e.to_string())
        })
    }

    /// Closes the row group of the rows written since the last one (none: nothing to close).
    pub fn end_group(&mut self) -> Result<(), String> {
        if self.columns.is_empty() {
            return Ok(());
        }
        // Closing a column chunk compresses its last page and writes its dictionary: shared
        // as well.
        let writers: Vec<Mutex<Option<ArrowColumnWriter>>> = std::mem::take(&mut self.columns)
            .into_iter()
            .map(|m| Mutex::new(m.into_inner().ok()))
            .collect();
        let chunks: Vec<Mutex<Option<ArrowColumnChunk>>> =
            writers.iter().map(|_| Mutex::new(None)).collect();
        share(writers.len(), self.threads, |i| {
            let failed = || "a column encoder failed".to_string();
            let writer = writers[i].lock().map_err(|_| failed())?.take();
            let chunk = writer
                .ok_or_else(failed)?
                .close()
                .map_err(|e| e.to_string())?;
            *chunks[i].lock().map_err(|_| failed())? = Some(chunk);
            Ok(())
        })?;
        let mut group = self.file.next_row_group().map_err(|e| e.to_string())?;
        for chunk in chunks {
            let chunk = chunk
                .into_inner()
                .ok()
                .flatten()
                .ok_or_else(|| "a column chunk is missing".to_string())?;
            chunk
                .append_to_row_group(&mut group)
                .map_err(|e| e.to_string())?;
        }
        group.close().map_err(|e| e.to_string())?;
        self.groups += 1;
        Ok(())
    }

    /// What makes row groups on other threads, to be given back to [`ParquetTable::append`].
    pub fn groups(&self) -> Groups {
        Groups {
            schema: self.schema.clone(),
            factory: self.factory.clone(),
        }
    }

    /// Appends row group `chunks` (one a column, in schema order), encoded by a [`Group`]
    /// of [`ParquetTable::groups`], after the row groups written so far.
    pub fn append(&mut self, chunks: Vec<ArrowColumnChunk>) -> Result<(), String> {
        self.end_group()?;
        let mut group = self.file.next_row_group().map_err(|e| e.to_string())?;
        for chunk in chunks {
            chunk
                .append_to_row_group(&mut group)
                .map_err(|e| e.to_string())?;
        }
        group.close().map_err(|e| e.to_string())?;
        self.groups += 1;
        Ok(())
    }

    /// Closes the last row group and writes the footer.
    pub fn close(mut self) -> Result<(), String> {
        self.end_group()?;
        self.file.close().map(|_| ()).map_err(|e| e.to_string())
    }
}

/// Makes the row groups of a [`ParquetTable`] on any thread: each is encoded on its own,
/// the column writers of the table's properties, and appended in order by the table.
#[derive(Clone)]
pub struct Groups {
    schema: SchemaRef,
    factory: Arc<ArrowRowGroupWriterFactory>,
}

impl Groups {
    /// Starts row group number `ordinal` of the file.
    pub fn start(&self, ordinal: usize) -> Result<Group, String> {
        let columns = self
            .factory
            .create_column_writers(ordinal)
            .map_err(|e| e.to_string())?;
        Ok(Group {
            schema: self.schema.clone(),
            columns,
        })
    }
}

/// One row group being encoded, on the thread that owns it.
pub struct Group {
    schema: SchemaRef,
    columns: Vec<ArrowColumnWriter>,
}

impl Group {
    /// Encodes one batch of rows, one array a column in the schema's order.
    pub fn write(&mut self, arrays: &[ArrayRef]) -> Result<(), String> {
        let mut columns = self.columns.iter_mut();
        for (field, array) in self.schema.fields().iter().zip(arrays) {
            for leaf in compute_leaves(field, array).map_err(|e| e.to_string())? {
                let writer = columns
                    .next()
                    .ok_or_else(|| "more columns given than the table has".to_string())?;
                writer.write(&leaf).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    /// The encoded row group: its column chunks, for [`ParquetTable::append`].
    pub fn finish(self) -> Result<Vec<ArrowColumnChunk>, String> {
        self.columns
            .into_iter()
            .map(|w| w.close().map_err(|e| e.to_string()))
            .collect()
    }
}

/// Runs `job(i)` for every `i` in `0..n` on `threads` threads (this one and helpers), each
/// taking the next `i` not yet taken, so a slow column does not hold up the others; returns
/// the first error.
fn share(
    n: usize,
    threads: usize,
    job: impl Fn(usize) -> Result<(), String> + Sync,
) -> Result<(), String> {
    let next = AtomicUsize::new(0);
    let work = || -> Result<(), String> {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return Ok(());
            }
            job(i)?;
        }
    };
    if threads < 2 || n < 2 {
        return work();
    }
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut result = work();
        for helper in helpers {
            let theirs = helper
                .join()
                .unwrap_or_else(|_| Err("a column encoder failed".to_string()));
            result = result.and(theirs);
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray, UInt64Array};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    /// Three batches of a small table, `index` counting from `from`.
    fn batches(from: u64) -> Vec<Vec<ArrayRef>> {
        (0..3u64)
            .map(|b| {
                let rows = 100 + 50 * b;
                let first = from + b * 1000;
                let index: ArrayRef = Arc::new(UInt64Array::from_iter_values(first..first + rows));
                let size: ArrayRef = Arc::new(Int64Array::from_iter(
                    (0..rows).map(|i| (i % 3 != 0).then_some(i as i64 * 7 - 300)),
                ));
                let name: ArrayRef = Arc::new(StringArray::from_iter(
                    (0..rows).map(|i| (i % 5 != 0).then(|| format!("site{}", i % 11))),
                ));
                vec![index, size, name]
            })
            .collect()
    }

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("index", DataType::UInt64, false),
            Field::new("size", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
        ]))
    }

    #[test]
    fn row_groups_encoded_on_other_threads_make_the_same_file() {
        let properties = || WriterProperties::builder().build();
        let mut one = Vec::new();
        let mut table = ParquetTable::new(&mut one, schema(), properties()).unwrap();
        for group in 0..2 {
            for batch in batches(group * 10_000) {
                table.write(&batch).unwrap();
            }
            table.end_group().unwrap();
        }
        table.close().unwrap();

        let mut many = Vec::new();
        let mut table = ParquetTable::new(&mut many, schema(), properties()).unwrap();
        let groups = table.groups();
        // Row group 1 is encoded before row group 0, each on a thread of its own.
        let encoded: Vec<_> = std::thread::scope(|scope| {
            let jobs: Vec<_> = [1u64, 0]
                .into_iter()
                .map(|k| {
                    let groups = groups.clone();
                    scope.spawn(move || {
                        let mut group = groups.start(k as usize).unwrap();
                        for batch in batches(k * 10_000) {
                            group.write(&batch).unwrap();
                        }
                        group.finish().unwrap()
                    })
                })
                .collect();
            jobs.into_iter().map(|j| j.join().unwrap()).collect()
        });
        for chunks in encoded.into_iter().rev() {
            table.append(chunks).unwrap();
        }
        table.close().unwrap();
        assert!(one.len() > 1000);
        assert_eq!(one, many);
    }

    #[test]
    fn every_job_runs_once_whatever_the_threads() {
        for threads in [1, 2, 3] {
            let done: Vec<AtomicUsize> = (0..15).map(|_| AtomicUsize::new(0)).collect();
            share(done.len(), threads, |i| {
                done[i].fetch_add(1, Ordering::Relaxed);
                Ok(())
            })
            .unwrap();
            assert!(done.iter().all(|d| d.load(Ordering::Relaxed) == 1));
        }
    }

    #[test]
    fn an_error_of_any_job_is_returned() {
        let result = share(15, 2, |i| {
            if i == 11 {
                Err(format!("column {i}"))
            } else {
                Ok(())
            }
        });
        assert_eq!(result, Err("column 11".to_string()));
    }
}

//! The table file being written: Parquet, Arrow IPC or CSV, from batches of arrays.

use std::io::Write;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use super::parquet_table::ParquetTable;
use crate::args::TableFormat;

/// The table being written.
pub struct Table<'w> {
    schema: SchemaRef,
    writer: TableWriter<'w>,
}

enum TableWriter<'w> {
    Parquet(ParquetTable<&'w mut (dyn Write + Send)>),
    Arrow(arrow_ipc::writer::FileWriter<&'w mut (dyn Write + Send)>),
    Csv(arrow_csv::Writer<&'w mut (dyn Write + Send)>),
}

/// Bytes of a column chunk's dictionary before its values are written without one (Parquet's
/// default is 1 MiB): a column of mostly distinct values (addresses) stops filling a dictionary
/// that does not pay, while threads, sizes, sites, types and names fit many times over.
const DICTIONARY_BYTES: usize = 256 << 10;

/// Values a column writer takes at a time (Parquet's default is 1,024): one batch of the
/// export at once, so page-size checks and level runs are per batch rather than per thousand
/// values, with pages still cut at the same size.
const WRITE_BATCH_ROWS: usize = 8192;

/// Columns of addresses and object ids, written as plain values without a dictionary. Their
/// values are many (an address or object a few records long) and come back in runs that zstd
/// finds in the plain values but not in dictionary indexes, so the files are smaller without
/// one, and the writer does not intern each value.
const IDENTITIES: [&str; 4] = ["address", "old_address", "obj", "value"];

/// How the Parquet file is written: zstd at its fastest level, and statistics per column
/// chunk of the numeric columns (enough for engines to skip row groups by address, size or
/// time). The record number goes in as deltas (a run of consecutive numbers costs next to
/// nothing) and without a dictionary, which a column of distinct values would only fill and
/// drop; so do addresses and object ids ([`IDENTITIES`]). The other columns keep the default
/// dictionary, which suits their few threads, sizes, sites and record names. The text columns
/// (call sites, names, record types) have no
/// statistics: their minimum and maximum compared every value as a string, a tenth of the
/// time of an mtrace export, for bounds no query of a trace filters on.
fn parquet_properties(schema: &SchemaRef) -> WriterProperties {
    let metadata = schema
        .metadata()
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    let index = ColumnPath::from("index");
    let mut b = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        // Row groups are cut by the caller, at block boundaries, not by the writer.
        .set_max_row_group_row_count(None)
        .set_max_row_group_bytes(None)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_dictionary_page_size_limit(DICTIONARY_BYTES)
        .set_write_batch_size(WRITE_BATCH_ROWS)
        .set_column_dictionary_enabled(index.clone(), false)
        .set_column_encoding(index, Encoding::DELTA_BINARY_PACKED)
        .set_key_value_metadata(Some(metadata));
    for name in IDENTITIES {
        if schema.field_with_name(name).is_ok() {
            b = b.set_column_dictionary_enabled(ColumnPath::from(name), false);
        }
    }
    for field in schema.fields() {
        if field.data_type() == &DataType::Utf8 {
            b = b.set_column_statistics_enabled(
                ColumnPath::from(field.name().as_str()),
                EnabledStatistics::None,
            );
        }
    }
    b.build()
}

impl<'w> Table<'w> {
    /// Starts a table of `schema` in format `to` on `out`.
    pub fn new(
        to: TableFormat,
        out: &'w mut (dyn Write + Send),
        schema: SchemaRef,
    ) -> Result<Self, String> {
        let err = |e: String| format!("cannot start the table: {e}");
        let writer = match to {
            TableFormat::Parquet => TableWriter::Parquet(
                ParquetTable::new(out, schema.clone(), parquet_properties(&schema)).map_err(err)?,
            ),
            TableFormat::Arrow => TableWriter::Arrow(
                arrow_ipc::writer::FileWriter::try_new(out, &schema)
                    .map_err(|e| err(e.to_string()))?,
            ),
            TableFormat::Csv => TableWriter::Csv(arrow_csv::Writer::new(out)),
        };
        Ok(Table { schema, writer })
    }

    /// Writes one batch of rows.
    pub fn write(&mut self, arrays: Vec<ArrayRef>) -> Result<(), String> {
        let batch = RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| e.to_string())?;
        match &mut self.writer {
            TableWriter::Parquet(w) => w.write(batch.columns()),
            TableWriter::Arrow(w) => w.write(&batch).map_err(|e| e.to_string()),
            TableWriter::Csv(w) => w.write(&batch).map_err(|e| e.to_string()),
        }
    }

    /// The Parquet table, when the table is one.
    pub fn parquet(&mut self) -> Option<&mut ParquetTable<&'w mut (dyn Write + Send)>> {
        match &mut self.writer {
            TableWriter::Parquet(w) => Some(w),
            TableWriter::Arrow(_) | TableWriter::Csv(_) => None,
        }
    }

    /// Closes the Parquet row group of the rows written so far (other tables have none).
    pub fn end_group(&mut self) -> Result<(), String> {
        match &mut self.writer {
            TableWriter::Parquet(w) => w.end_group(),
            TableWriter::Arrow(_) | TableWriter::Csv(_) => Ok(()),
        }
    }

    /// Ends the table (the Parquet footer, the Arrow file's end) and flushes it.
    pub fn close(self) -> Result<(), String> {
        match self.writer {
            TableWriter::Parquet(w) => w.close(),
            TableWriter::Arrow(mut w) => w.finish().map_err(|e| e.to_string()),
            TableWriter::Csv(w) => {
                let inner = w.into_inner();
                inner.flush().map_err(|e| e.to_string())
            }
        }
    }
}

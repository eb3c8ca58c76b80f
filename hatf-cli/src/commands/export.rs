//! `hatf export`: the records of a trace as one wide table (Parquet, Arrow IPC or CSV).
//!
//! One table, not one per record type: the order of records is what lifetimes and live bytes
//! are computed from, and a wide table keeps it in one `index` column without joins. Columns are
//! the union of the record types' fields by name (`address` is one column for `malloc`, `free`
//! and `realloc`), typed (UInt64, Int64, Utf8) and null where a record has no such field.

use std::collections::HashMap;
use std::io::{Read, Seek, Write};
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use hatf::format::EncodeOptions;
use hatf::records::{FieldType, Item, RecordFile, RecordType, Value};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::args::{ExportArgs, TableFormat};
use crate::error::{CliError, CliResult};
use crate::io::{create_output, is_std, Content};
use crate::progress;
use crate::record_range;
use crate::text_input::open_text;
use crate::Verbosity;

/// Rows a row group holds at most, whatever the blocks: bounds the memory of the columns being
/// built (a wide row of Elephant Tracks columns is about 150 bytes).
const MAX_ROWS: usize = 1 << 18;

/// Key of the key-value metadata holding the trace's format.
pub const FORMAT_KEY: &str = "hatf.format";
/// Key of the key-value metadata holding the trace's DTD.
pub const DTD_KEY: &str = "hatf.dtd";

/// Runs `hatf export`.
pub fn run(args: &ExportArgs, verbosity: Verbosity) -> CliResult {
    let (first, end) = args
        .records
        .as_deref()
        .map(record_range::parse)
        .transpose()?
        .unwrap_or((0, u64::MAX));
    if args.out.output.is_none() || is_std(args.out.output.as_deref()) {
        return Err(CliError::usage(
            "export writes a file: give it with -o OUTPUT",
        ));
    }
    let name = args.file.display().to_string();
    let mut file = binary_of(args, &name, verbosity)?;
    let records = RecordFile::open(&mut file, &name)?;
    let plan = Plan::of(records.types());
    let mut output = create_output(args.out.output.as_deref(), args.out.force, Content::Binary)?;
    let metadata = [
        (FORMAT_KEY, records.format().to_string()),
        (DTD_KEY, records.dtd().to_string()),
    ];
    let spinner = progress::spinner(verbosity, "exporting");
    let mut count = 0u64;
    let written = write_table(
        args.to,
        output.send_writer(),
        plan.schema(&metadata),
        &mut |table| {
            let mut rows = Rows::new(&plan);
            let mut write_failure: Option<String> = None;
            let read = records.read(&mut file, &name, first..end, &mut |item| {
                let flush = match item {
                    Item::Block { .. } => rows.len > 0,
                    Item::Record(r) => {
                        rows.push(&plan, r.index, r.record_type, r.values);
                        count += 1;
                        if count.is_multiple_of(1 << 16) {
                            if let Some(s) = &spinner {
                                s.set_message(format!("exporting: {count} records"));
                            }
                        }
                        rows.len >= MAX_ROWS
                    }
                };
                if flush {
                    table
                        .write(rows.finish(), true)
                        .map_err(|m| failed(&mut write_failure, m))?;
                }
                Ok(())
            });
            if let Err(e) = read {
                return Err(match write_failure {
                    Some(m) => CliError::input(m),
                    None => e.into(),
                });
            }
            if rows.len > 0 {
                table.write(rows.finish(), false).map_err(CliError::input)?;
            }
            Ok(())
        },
    );
    if let Err(e) = written {
        return Err(output.blame(e));
    }
    drop(spinner);
    let out_name = output.name.clone();
    let bytes = output.commit_counted()?;
    if verbosity.verbose {
        eprintln!("hatf: {count} records, {bytes} bytes to {out_name}");
    }
    Ok(())
}

fn failed(slot: &mut Option<String>, message: String) -> hatf::FormatError {
    *slot = Some(message.clone());
    hatf::FormatError {
        file: String::new(),
        position: String::new(),
        message,
    }
}

/// A file of any kind, seekable: the binary trace itself, or a text trace encoded into an
/// anonymous temporary file first (removed when it is closed).
trait ReadSeek: Read + Seek {}
impl<T: Read + Seek> ReadSeek for T {}

fn binary_of(args: &ExportArgs, name: &str, verbosity: Verbosity) -> CliResult<Box<dyn ReadSeek>> {
    let mut file = super::dump::open_seekable(&args.file)?;
    let mut magic = [0u8; 4];
    let got = file
        .read(&mut magic)
        .map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
    file.rewind()
        .map_err(|e| CliError::input(format!("{name}: cannot seek: {e}")))?;
    if metatf::container::looks_like_container(&magic[..got]) {
        return Ok(Box::new(file));
    }
    let input = crate::io::open_input(Some(&args.file), crate::io::TEXT_READ_AHEAD)?;
    let input = progress::track(input, verbosity, "encoding");
    let mut opened = open_text(input.reader, &args.from, name)?;
    let temp = tempfile::tempfile()
        .map_err(|e| CliError::input(format!("cannot create a temporary file: {e}")))?;
    let mut encoded = std::io::BufWriter::new(temp);
    let options = EncodeOptions {
        input_name: name.to_string(),
        ..EncodeOptions::default()
    };
    opened
        .format
        .encode(&mut opened.reader, &mut encoded, &options)?;
    let mut temp = encoded
        .into_inner()
        .map_err(|e| CliError::input(format!("cannot write a temporary file: {e}")))?;
    temp.rewind()
        .map_err(|e| CliError::input(format!("cannot seek a temporary file: {e}")))?;
    Ok(Box::new(std::io::BufReader::with_capacity(1 << 20, temp)))
}

/// The table's columns, and where each record type's fields go.
struct Plan {
    /// Name and type of each column after `index` and `record`.
    columns: Vec<(String, FieldType)>,
    /// For each record type, for each column: the field that fills it, if any.
    slots: Vec<Vec<Option<usize>>>,
    names: Vec<String>,
}

impl Plan {
    fn of(types: &[RecordType]) -> Plan {
        let mut columns: Vec<(String, FieldType)> = Vec::new();
        let mut by_name: HashMap<(String, FieldType), usize> = HashMap::new();
        let mut placed = Vec::new();
        for t in types {
            let mut cols = Vec::new();
            for f in &t.fields {
                let key = (f.name.clone(), f.ty);
                let col = *by_name.entry(key).or_insert_with(|| {
                    // The same name with another type gets a column of its own.
                    let taken = columns.iter().any(|(n, _)| *n == f.name)
                        || ["index", "record"].contains(&f.name.as_str());
                    let name = if taken {
                        format!("{}_{}", f.name, type_name(f.ty))
                    } else {
                        f.name.clone()
                    };
                    columns.push((name, f.ty));
                    columns.len() - 1
                });
                cols.push(col);
            }
            placed.push(cols);
        }
        let slots = placed
            .iter()
            .map(|cols| {
                let mut s = vec![None; columns.len()];
                for (field, &col) in cols.iter().enumerate() {
                    s[col] = Some(field);
                }
                s
            })
            .collect();
        Plan {
            columns,
            slots,
            names: types.iter().map(|t| t.name.clone()).collect(),
        }
    }

    fn schema(&self, metadata: &[(&str, String)]) -> SchemaRef {
        let mut fields = vec![
            Field::new("index", DataType::UInt64, false),
            Field::new("record", DataType::Utf8, false),
        ];
        fields.extend(
            self.columns
                .iter()
                .map(|(n, ty)| Field::new(n, data_type(*ty), true)),
        );
        let metadata: HashMap<String, String> = metadata
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect();
        Arc::new(Schema::new_with_metadata(fields, metadata))
    }
}

fn type_name(ty: FieldType) -> &'static str {
    match ty {
        FieldType::U64 => "u64",
        FieldType::I64 => "i64",
        FieldType::Bytes => "text",
    }
}

fn data_type(ty: FieldType) -> DataType {
    match ty {
        FieldType::U64 => DataType::UInt64,
        FieldType::I64 => DataType::Int64,
        FieldType::Bytes => DataType::Utf8,
    }
}

enum Column {
    U64(UInt64Builder),
    I64(Int64Builder),
    Text(StringBuilder),
}

impl Column {
    fn of(ty: FieldType) -> Column {
        match ty {
            FieldType::U64 => Column::U64(UInt64Builder::new()),
            FieldType::I64 => Column::I64(Int64Builder::new()),
            FieldType::Bytes => Column::Text(StringBuilder::new()),
        }
    }

    fn push(&mut self, v: Option<&Value<'_>>) {
        match (self, v) {
            (Column::U64(b), Some(Value::U64(n))) => b.append_value(*n),
            (Column::I64(b), Some(Value::I64(n))) => b.append_value(*n),
            (Column::Text(b), Some(Value::Bytes(s))) => match std::str::from_utf8(s) {
                Ok(s) => b.append_value(s),
                Err(_) => b.append_value(String::from_utf8_lossy(s)),
            },
            (Column::U64(b), _) => b.append_null(),
            (Column::I64(b), _) => b.append_null(),
            (Column::Text(b), _) => b.append_null(),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Column::U64(b) => Arc::new(b.finish()),
            Column::I64(b) => Arc::new(b.finish()),
            Column::Text(b) => Arc::new(b.finish()),
        }
    }
}

/// The rows of the row group being built.
struct Rows {
    index: UInt64Builder,
    record: StringBuilder,
    columns: Vec<Column>,
    len: usize,
}

impl Rows {
    fn new(plan: &Plan) -> Rows {
        Rows {
            index: UInt64Builder::new(),
            record: StringBuilder::new(),
            columns: plan.columns.iter().map(|(_, ty)| Column::of(*ty)).collect(),
            len: 0,
        }
    }

    fn push(&mut self, plan: &Plan, index: u64, record_type: usize, values: &[Value<'_>]) {
        self.index.append_value(index);
        self.record.append_value(&plan.names[record_type]);
        for (col, slot) in self.columns.iter_mut().zip(&plan.slots[record_type]) {
            col.push(slot.and_then(|f| values.get(f)));
        }
        self.len += 1;
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        self.len = 0;
        let mut arrays: Vec<ArrayRef> = vec![
            Arc::new(self.index.finish()),
            Arc::new(self.record.finish()),
        ];
        arrays.extend(self.columns.iter_mut().map(Column::finish));
        arrays
    }
}

/// Starts a table of `schema` on `out`, lets `fill` write its rows, and ends it.
fn write_table(
    to: TableFormat,
    out: &mut (dyn Write + Send),
    schema: SchemaRef,
    fill: &mut dyn FnMut(&mut Table<'_>) -> CliResult,
) -> CliResult {
    let mut table = Table::new(to, out, schema)?;
    fill(&mut table)?;
    table.close().map_err(CliError::input)
}

/// The table being written.
struct Table<'w> {
    schema: SchemaRef,
    writer: TableWriter<'w>,
}

enum TableWriter<'w> {
    Parquet(ArrowWriter<&'w mut (dyn Write + Send)>),
    Arrow(arrow_ipc::writer::FileWriter<&'w mut (dyn Write + Send)>),
    Csv(arrow_csv::Writer<&'w mut (dyn Write + Send)>),
}

impl<'w> Table<'w> {
    fn new(to: TableFormat, out: &'w mut (dyn Write + Send), schema: SchemaRef) -> CliResult<Self> {
        let err = |e: String| CliError::input(format!("cannot start the table: {e}"));
        let writer = match to {
            TableFormat::Parquet => {
                let metadata = schema
                    .metadata()
                    .iter()
                    .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
                    .collect();
                let props = WriterProperties::builder()
                    .set_compression(Compression::ZSTD(ZstdLevel::default()))
                    // Row groups are cut here, at block boundaries, not by the writer.
                    .set_max_row_group_row_count(None)
                    .set_max_row_group_bytes(None)
                    .set_key_value_metadata(Some(metadata))
                    .build();
                TableWriter::Parquet(
                    ArrowWriter::try_new(out, schema.clone(), Some(props))
                        .map_err(|e| err(e.to_string()))?,
                )
            }
            TableFormat::Arrow => TableWriter::Arrow(
                arrow_ipc::writer::FileWriter::try_new(out, &schema)
                    .map_err(|e| err(e.to_string()))?,
            ),
            TableFormat::Csv => TableWriter::Csv(arrow_csv::Writer::new(out)),
        };
        Ok(Table { schema, writer })
    }

    /// Writes one batch; `end_group` closes the Parquet row group after it.
    fn write(&mut self, arrays: Vec<ArrayRef>, end_group: bool) -> Result<(), String> {
        let batch = RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| e.to_string())?;
        match &mut self.writer {
            TableWriter::Parquet(w) => {
                w.write(&batch).map_err(|e| e.to_string())?;
                if end_group {
                    w.flush().map_err(|e| e.to_string())?;
                }
                Ok(())
            }
            TableWriter::Arrow(w) => w.write(&batch).map_err(|e| e.to_string()),
            TableWriter::Csv(w) => w.write(&batch).map_err(|e| e.to_string()),
        }
    }

    fn close(self) -> Result<(), String> {
        match self.writer {
            TableWriter::Parquet(w) => w.close().map(|_| ()).map_err(|e| e.to_string()),
            TableWriter::Arrow(mut w) => w.finish().map_err(|e| e.to_string()),
            TableWriter::Csv(w) => {
                let inner = w.into_inner();
                inner.flush().map_err(|e| e.to_string())
            }
        }
    }
}

//! The wide table's columns, and the building of one batch of them from records.
//!
//! Columns are the union of the record types' fields by name (`address` is one column for
//! `malloc`, `free` and `realloc`), typed (UInt64, Int64, Utf8) and null where a record has no
//! such field. A batch writes only the fields a record has: a column that a record leaves out
//! is padded with nulls when the next value (or the end of the batch) reaches it, so a record
//! costs its own fields, not the width of the table.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, BooleanBufferBuilder, StringBuilder};
use arrow_array::{ArrayRef, Int64Array, StringArray, UInt64Array};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use hatf::records::{FieldType, RecordType, Value};

/// The table's columns, and where each record type's fields go.
pub struct Plan {
    /// Name and type of each column after `index` and `record`.
    columns: Vec<(String, FieldType)>,
    /// For each record type, the column of each of its fields, in field order.
    places: Vec<Vec<usize>>,
    names: Vec<String>,
}

impl Plan {
    /// The columns of a file whose records have `types`.
    pub fn of(types: &[RecordType]) -> Plan {
        let mut columns: Vec<(String, FieldType)> = Vec::new();
        let mut by_name: HashMap<(String, FieldType), usize> = HashMap::new();
        let mut places = Vec::new();
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
            places.push(cols);
        }
        Plan {
            columns,
            places,
            names: types.iter().map(|t| t.name.clone()).collect(),
        }
    }

    /// The table's schema: `index`, `record`, then the fields' columns; `metadata` goes into
    /// the schema's (and so the Parquet file's) key-value metadata.
    pub fn schema(&self, metadata: &[(&str, String)]) -> SchemaRef {
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

/// The values of one numeric column, and which rows have one.
struct Numbers<T> {
    values: Vec<T>,
    valid: BooleanBufferBuilder,
}

impl<T: Copy + Default> Numbers<T> {
    fn new(capacity: usize) -> Self {
        Numbers {
            values: Vec::with_capacity(capacity),
            valid: BooleanBufferBuilder::new(capacity),
        }
    }

    fn pad(&mut self, rows: usize) {
        let missing = rows.saturating_sub(self.values.len());
        if missing > 0 {
            self.values.resize(rows, T::default());
            self.valid.append_n(missing, false);
        }
    }

    fn push(&mut self, row: usize, v: T) {
        self.pad(row);
        self.values.push(v);
        self.valid.append(true);
    }

    /// The values and the null mask (none when every row has a value), leaving room for the
    /// next batch.
    fn take(&mut self, rows: usize) -> (ScalarBuffer<T>, Option<NullBuffer>)
    where
        T: arrow_buffer::ArrowNativeType,
    {
        self.pad(rows);
        let capacity = self.values.capacity();
        let values = std::mem::replace(&mut self.values, Vec::with_capacity(capacity));
        let nulls = NullBuffer::new(self.valid.finish());
        let nulls = (nulls.null_count() > 0).then_some(nulls);
        (ScalarBuffer::from(values), nulls)
    }
}

/// One column of the batch being built.
enum Column {
    U64(Numbers<u64>),
    I64(Numbers<i64>),
    Text(StringBuilder),
}

impl Column {
    fn of(ty: FieldType, capacity: usize) -> Column {
        match ty {
            FieldType::U64 => Column::U64(Numbers::new(capacity)),
            FieldType::I64 => Column::I64(Numbers::new(capacity)),
            FieldType::Bytes => Column::Text(StringBuilder::new()),
        }
    }

    /// Sets row `row` (at or after every row given so far) to `v`.
    fn set(&mut self, row: usize, v: &Value<'_>) {
        match (self, v) {
            (Column::U64(c), Value::U64(n)) => c.push(row, *n),
            (Column::I64(c), Value::I64(n)) => c.push(row, *n),
            (Column::Text(b), Value::Bytes(s)) => {
                let have = b.len();
                if row > have {
                    b.append_nulls(row - have);
                }
                match std::str::from_utf8(s) {
                    Ok(s) => b.append_value(s),
                    Err(_) => b.append_value(String::from_utf8_lossy(s)),
                }
            }
            // A null, or a value of another type than the column's (which the plan never
            // pairs): the padding leaves the row null.
            _ => {}
        }
    }

    fn finish(&mut self, rows: usize) -> ArrayRef {
        match self {
            Column::U64(c) => {
                let (values, nulls) = c.take(rows);
                Arc::new(UInt64Array::new(values, nulls))
            }
            Column::I64(c) => {
                let (values, nulls) = c.take(rows);
                Arc::new(Int64Array::new(values, nulls))
            }
            Column::Text(b) => {
                let have = b.len();
                if rows > have {
                    b.append_nulls(rows - have);
                }
                Arc::new(b.finish())
            }
        }
    }
}

/// The rows of the batch being built.
pub struct Rows {
    index: Vec<u64>,
    /// The record type of each row; its name is written when the batch is finished.
    kinds: Vec<u32>,
    columns: Vec<Column>,
}

impl Rows {
    /// An empty batch of `plan`'s columns, with room for `capacity` rows.
    pub fn new(plan: &Plan, capacity: usize) -> Rows {
        Rows {
            index: Vec::with_capacity(capacity),
            kinds: Vec::with_capacity(capacity),
            columns: plan
                .columns
                .iter()
                .map(|(_, ty)| Column::of(*ty, capacity))
                .collect(),
        }
    }

    /// Rows so far.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Adds record number `index`, of type `record_type`, with `values`.
    pub fn push(&mut self, plan: &Plan, index: u64, record_type: usize, values: &[Value<'_>]) {
        let row = self.index.len();
        self.index.push(index);
        // Record types are few (a DTD's records), far below u32::MAX.
        self.kinds.push(record_type as u32);
        if let Some(places) = plan.places.get(record_type) {
            for (&col, v) in places.iter().zip(values) {
                self.columns[col].set(row, v);
            }
        }
    }

    /// The batch's arrays, in the schema's order; the rows start again from none.
    pub fn finish(&mut self, plan: &Plan) -> Vec<ArrayRef> {
        let rows = self.index.len();
        let capacity = self.index.capacity();
        let index = std::mem::replace(&mut self.index, Vec::with_capacity(capacity));
        let mut arrays: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::new(ScalarBuffer::from(index), None)),
            Arc::new(names(plan, &self.kinds)),
        ];
        self.kinds.clear();
        arrays.extend(self.columns.iter_mut().map(|c| c.finish(rows)));
        arrays
    }
}

/// The `record` column: each row's record type by name.
fn names(plan: &Plan, kinds: &[u32]) -> StringArray {
    let name = |k: u32| plan.names.get(k as usize).map_or("", String::as_str);
    let offsets = OffsetBuffer::<i32>::from_lengths(kinds.iter().map(|&k| name(k).len()));
    let mut bytes = Vec::with_capacity(usize::try_from(offsets.last()).unwrap_or(0));
    for &k in kinds {
        bytes.extend_from_slice(name(k).as_bytes());
    }
    // The names are Rust strings, so the bytes are UTF-8 and the offsets fit them; a failure
    // would be a bug, shown as empty names rather than a panic.
    StringArray::try_new(offsets, Buffer::from_vec(bytes), None)
        .unwrap_or_else(|_| StringArray::from(vec![""; kinds.len()]))
}

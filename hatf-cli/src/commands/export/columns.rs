//! The wide table's columns, and the building of one batch of them from records.
//!
//! Columns are the union of the record types' fields by name (`address` is one column for
//! `malloc`, `free` and `realloc`), typed (UInt64, Int64, Utf8) and null where a record has no
//! such field. A batch writes only the fields a record has: each numeric column has a slot and
//! a validity bit for every row of the batch from the start, so a record costs its own fields,
//! not the width of the table.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, StringBuilder};
use arrow_array::{ArrayRef, Int64Array, StringArray, UInt64Array};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
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

/// The values of one numeric column, and which rows have one, for a batch of a fixed number
/// of rows: a value goes straight to its row and sets the row's bit, so a row without one
/// costs nothing until the batch is finished (an ET row has 2 to 6 of 13 columns).
struct Numbers<T: arrow_buffer::ArrowNativeType> {
    /// One slot a row, zero where the row has no value.
    values: Vec<T>,
    /// One bit a row, set where the row has a value.
    valid: Vec<u64>,
    /// True once a value was set in this batch.
    touched: bool,
    /// The values of a batch without any, kept to be handed out again.
    zeros: Option<ScalarBuffer<T>>,
}

impl<T: Copy + Default + arrow_buffer::ArrowNativeType> Numbers<T> {
    fn new(rows: usize) -> Self {
        Numbers {
            values: vec![T::default(); rows],
            valid: vec![0; rows.div_ceil(64)],
            touched: false,
            zeros: None,
        }
    }

    #[inline]
    fn set(&mut self, row: usize, v: T) {
        if row >= self.values.len() {
            // Only a batch longer than it was made for: grow it.
            self.values.resize(row + 1, T::default());
            self.valid.resize((row + 1).div_ceil(64), 0);
        }
        self.values[row] = v;
        self.valid[row / 64] |= 1 << (row % 64);
        self.touched = true;
    }

    /// The first `rows` values and their null mask (none when every row has a value); the
    /// column starts again from no values, with room for as many rows as before.
    fn take(&mut self, rows: usize) -> (ScalarBuffer<T>, Option<NullBuffer>) {
        let room = self.values.len().max(rows);
        if !self.touched {
            // A column no record of the batch has: its buffers are still all zero, and the
            // batch gets the same zeros as the last batch without values did.
            let zeros = match self.zeros.take() {
                Some(z) if z.len() >= rows => z,
                _ => ScalarBuffer::from(vec![T::default(); rows]),
            };
            self.zeros = Some(zeros.clone());
            return (zeros.slice(0, rows), Some(NullBuffer::new_null(rows)));
        }
        self.touched = false;
        let mut values = std::mem::replace(&mut self.values, vec![T::default(); room]);
        let mut valid = std::mem::replace(&mut self.valid, vec![0; room.div_ceil(64)]);
        values.resize(rows, T::default());
        valid.resize(rows.div_ceil(64), 0);
        let bits = BooleanBuffer::new(Buffer::from_vec(valid), 0, rows);
        let nulls = NullBuffer::new(bits);
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
    fn of(ty: FieldType, rows: usize) -> Column {
        match ty {
            FieldType::U64 => Column::U64(Numbers::new(rows)),
            FieldType::I64 => Column::I64(Numbers::new(rows)),
            FieldType::Bytes => Column::Text(StringBuilder::new()),
        }
    }

    /// Sets row `row` (after every row given so far) to `v`.
    #[inline]
    fn set(&mut self, row: usize, v: &Value<'_>) {
        match (self, v) {
            (Column::U64(c), Value::U64(n)) => c.set(row, *n),
            (Column::I64(c), Value::I64(n)) => c.set(row, *n),
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
            // pairs): the row stays null.
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
    /// An empty batch of `plan`'s columns, with room for `capacity` rows (more grow it).
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
                if let Some(column) = self.columns.get_mut(col) {
                    column.set(row, v);
                }
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

#[cfg(test)]
mod tests {
    use arrow_array::{Array, Int64Array, StringArray, UInt64Array};
    use hatf::records::FieldSpec;

    use super::*;

    fn record_type(name: &str, fields: &[(&str, FieldType)]) -> RecordType {
        RecordType {
            name: name.to_string(),
            fields: fields
                .iter()
                .map(|(n, ty)| FieldSpec {
                    name: n.to_string(),
                    ty: *ty,
                })
                .collect(),
        }
    }

    #[test]
    fn each_row_has_its_own_fields_and_nulls_elsewhere_past_the_batch_size_and_after() {
        let types = [
            record_type("a", &[("x", FieldType::U64), ("s", FieldType::Bytes)]),
            record_type("b", &[("x", FieldType::U64), ("y", FieldType::I64)]),
        ];
        let plan = Plan::of(&types);
        // Room for 4 rows, given 6: the batch grows.
        let mut rows = Rows::new(&plan, 4);
        for i in 0..6u64 {
            if i % 3 == 0 {
                rows.push(&plan, i, 0, &[Value::U64(i), Value::Bytes(b"site")]);
            } else {
                rows.push(&plan, i, 1, &[Value::U64(i), Value::I64(-(i as i64))]);
            }
        }
        let arrays = rows.finish(&plan);
        let x = arrays[2].as_any().downcast_ref::<UInt64Array>().unwrap();
        let s = arrays[3].as_any().downcast_ref::<StringArray>().unwrap();
        let y = arrays[4].as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(x.values().to_vec(), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(x.null_count(), 0);
        let text: Vec<_> = s.iter().collect();
        assert_eq!(text, [Some("site"), None, None, Some("site"), None, None]);
        let signed: Vec<_> = y.iter().collect();
        assert_eq!(signed, [None, Some(-1), Some(-2), None, Some(-4), Some(-5)]);
        // A batch in which no record has `y`: the column is all null, of the batch's length.
        rows.push(&plan, 6, 0, &[Value::U64(6), Value::Null]);
        rows.push(&plan, 7, 0, &[Value::U64(7), Value::Bytes(b"\xff")]);
        let arrays = rows.finish(&plan);
        assert!(arrays.iter().all(|a| a.len() == 2));
        assert_eq!(arrays[4].null_count(), 2);
        let s = arrays[3].as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), [None, Some("\u{fffd}")]);
        let names = arrays[1].as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(names.iter().collect::<Vec<_>>(), [Some("a"), Some("a")]);
    }
}

//! What a record is made of: its type (a name and named, typed fields) and its values.

/// The type of a field's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// An unsigned 64-bit number (addresses, sizes, ids, thread ids).
    U64,
    /// A signed 64-bit number (the JVM trace's decimal fields, which may be negative).
    I64,
    /// A byte string (call sites, class and method names, lines kept verbatim).
    Bytes,
}

/// One field of a record type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldSpec {
    /// The field's name, unique within its record type.
    pub name: String,
    /// What its values are.
    pub ty: FieldType,
}

/// One record type of a file: the name its DTD gives it and its fields in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordType {
    /// The record's name in the DTD (`malloc`, `free`, `N`, `OA`, ...).
    pub name: String,
    /// Its fields, in the order [`Record::values`] gives their values.
    pub fields: Vec<FieldSpec>,
}

/// The value of one field of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// The field is absent from this record (an optional protobuf field, a line without a call
    /// site).
    Null,
    /// An unsigned number.
    U64(u64),
    /// A signed number.
    I64(i64),
    /// A byte string, borrowed from the reader's buffer for the time of the visit.
    Bytes(&'a [u8]),
}

/// One record, handed to the visitor of [`crate::records::RecordFile::read`].
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// The record's number in the file, counted from 0 as `decode --records` counts them.
    pub index: u64,
    /// Its type: an index into [`crate::records::RecordFile::types`].
    pub record_type: usize,
    /// Its values, one per field of its type, in order.
    pub values: &'a [Value<'a>],
}

/// What the reader meets, in file order.
#[derive(Debug, Clone, Copy)]
pub enum Item<'a> {
    /// A block of the file begins; its records follow.
    Block {
        /// The block's number.
        index: u64,
        /// Number of its first record.
        first_record: u64,
        /// How many records it holds.
        record_count: u64,
    },
    /// The next record.
    Record(Record<'a>),
}

/// The most fields a built-in format's record has.
pub(crate) const MAX_FIELDS: usize = 8;

/// The values of one record being parsed, kept on the stack.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields<'a> {
    values: [Value<'a>; MAX_FIELDS],
    len: usize,
}

impl<'a> Fields<'a> {
    pub(crate) fn new() -> Self {
        Fields {
            values: [Value::Null; MAX_FIELDS],
            len: 0,
        }
    }

    pub(crate) fn push(&mut self, v: Value<'a>) {
        // Built-in record types have at most MAX_FIELDS fields (checked by a test).
        if self.len < MAX_FIELDS {
            self.values[self.len] = v;
            self.len += 1;
        }
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.push(Value::U64(v));
    }

    pub(crate) fn as_slice(&self) -> &[Value<'a>] {
        &self.values[..self.len]
    }
}

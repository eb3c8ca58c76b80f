//! The numeric codes of HATF 1.0 (Appendix A, "Tag and field encodings").

/// Record tags (byte 0 of every record).
pub mod tag {
    /// `alloc`: size address thread heap time attributes.
    pub const ALLOC: u8 = 0;
    /// `free`: address thread heap time attributes.
    pub const FREE: u8 = 1;
    /// `realloc no alloc`: the block was resized in place (old address = new address).
    pub const REALLOC_NO_ALLOC: u8 = 2;
    /// `realloc alloc free`: a new block was allocated and the old one freed.
    pub const REALLOC_ALLOC_FREE: u8 = 3;
    /// `realloc alloc`: `realloc(NULL, n)`, an allocation with no free.
    pub const REALLOC_ALLOC: u8 = 4;
    /// `realloc free`: `realloc(p, 0)` (or a null result), a free with no allocation.
    pub const REALLOC_FREE: u8 = 5;
    /// `createHeap`: heap thread time attributes.
    pub const CREATE_HEAP: u8 = 6;
    /// `destroyHeap`: heap thread time attributes.
    pub const DESTROY_HEAP: u8 = 7;
    /// `createThread`: thread time attributes.
    pub const CREATE_THREAD: u8 = 8;
    /// `destroyThread`: thread time attributes.
    pub const DESTROY_THREAD: u8 = 9;
    /// `comment`: reserved byte, 2-byte length, bytes.
    pub const COMMENT: u8 = 10;
    /// `metadata` (the tag table's 11; the layout figure's `1` would collide with `free`).
    pub const METADATA: u8 = 11;
}

/// Metadata operations (byte 1 of a metadata record).
pub mod op {
    /// `set fieldSize field width`.
    pub const SET_FIELD_SIZE: u8 = 1;
    /// `set fieldInterpretation field interpretation args...`.
    pub const SET_FIELD_INTERPRETATION: u8 = 2;
}

/// Interpretation codes (byte 3 of a `set fieldInterpretation` record).
pub mod interp {
    /// The stored value is the value.
    pub const NONE: u8 = 0;
    /// The field is absent; the value is the default (one 8-byte argument).
    pub const DEFAULT: u8 = 1;
    /// Value = base + signed stored value (one 8-byte argument).
    pub const BASE_OFFSET: u8 = 2;
    /// Value = previous value + signed stored value (one 8-byte argument: the initial value).
    pub const DELTA: u8 = 3;
    /// The field is absent; value = previous value + stride (two arguments: initial value, stride).
    pub const STRIDE: u8 = 4;
}

/// The six field types, in the order of their metadata codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// Code 0: requested size.
    Size = 0,
    /// Code 1: block address (both addresses of a realloc record use it).
    Address = 1,
    /// Code 2: time.
    Time = 2,
    /// Code 3: thread.
    Thread = 3,
    /// Code 4: heap.
    Heap = 4,
    /// Code 5: attributes.
    Attributes = 5,
}

impl Field {
    /// All fields, indexed by code.
    pub const ALL: [Field; 6] = [
        Field::Size,
        Field::Address,
        Field::Time,
        Field::Thread,
        Field::Heap,
        Field::Attributes,
    ];

    /// The field with metadata code `code`.
    pub fn from_code(code: u8) -> Option<Field> {
        Field::ALL.get(usize::from(code)).copied()
    }

    /// The metadata code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The name used in Appendix A.
    pub fn name(self) -> &'static str {
        match self {
            Field::Size => "size",
            Field::Address => "address",
            Field::Time => "time",
            Field::Thread => "thread",
            Field::Heap => "heap",
            Field::Attributes => "attributes",
        }
    }
}

/// A field width: a fixed number of bytes, or a length-prefixed byte string (attributes only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Width {
    /// 0, 1, 2, 4 or 8 bytes (codes 0, 1, 2, 4, 8).
    Fixed(u8),
    /// Code 9: a 1-byte length, then that many bytes.
    V1,
    /// Code 10: a 2-byte big-endian length, then that many bytes.
    V2,
}

impl Width {
    /// The width with code `code`; codes 3, 5, 6, 7 and above 10 are not HATF 1.0.
    pub fn from_code(code: u8) -> Option<Width> {
        match code {
            0 | 1 | 2 | 4 | 8 => Some(Width::Fixed(code)),
            9 => Some(Width::V1),
            10 => Some(Width::V2),
            _ => None,
        }
    }

    /// The metadata code.
    pub fn code(self) -> u8 {
        match self {
            Width::Fixed(n) => n,
            Width::V1 => 9,
            Width::V2 => 10,
        }
    }

    /// True for the zero width.
    pub fn is_zero(self) -> bool {
        self == Width::Fixed(0)
    }

    /// The smallest fixed width (1, 2, 4 or 8) holding a value of `bytes` bytes, as
    /// `metatf::field::bits` counts them (0 for the value 0): HATF 1.0 has no width 3 or 5–7,
    /// and the writer never narrows a field to 0 bytes.
    pub fn fixed_for(bytes: u8) -> u8 {
        match bytes {
            0 | 1 => 1,
            2 => 2,
            3 | 4 => 4,
            _ => 8,
        }
    }
}

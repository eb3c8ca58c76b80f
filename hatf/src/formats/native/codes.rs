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
}

/// The smallest HATF 1.0 width (1, 2, 4 or 8) holding `v` unsigned.
pub fn unsigned_width(v: u64) -> u8 {
    match v {
        0..=0xff => 1,
        0x100..=0xffff => 2,
        0x1_0000..=0xffff_ffff => 4,
        _ => 8,
    }
}

/// The smallest HATF 1.0 width (1, 2, 4 or 8) holding `v` as two's complement.
pub fn signed_width(v: i64) -> u8 {
    if i64::from(v as i8) == v {
        1
    } else if i64::from(v as i16) == v {
        2
    } else if i64::from(v as i32) == v {
        4
    } else {
        8
    }
}

/// True when `v` fits `width` bytes unsigned.
pub fn fits_unsigned(v: u64, width: u8) -> bool {
    width >= 8 || v >> (8 * u32::from(width)) == 0
}

/// True when `v` fits `width` bytes as two's complement (width 0 holds only 0).
pub fn fits_signed(v: i64, width: u8) -> bool {
    match width {
        0 => v == 0,
        1..=7 => {
            let bits = 8 * u32::from(width);
            let min = -(1i64 << (bits - 1));
            let max = (1i64 << (bits - 1)) - 1;
            (min..=max).contains(&v)
        }
        _ => true,
    }
}

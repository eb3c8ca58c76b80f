//! Rust integer types a typed record field may have, and their conversion to and from the
//! 64-bit values of the trace. Signed types are stored as two's complement (sign-extended to
//! 64 bits); reading a value the Rust type cannot hold is an error, never a truncation.

/// An integer type usable as a scalar field of a `#[derive(MetaTf)]` record.
pub trait Scalar: Sized + Copy {
    /// The type's name, for error messages.
    const RUST_NAME: &'static str;
    /// The trace value of `self`.
    fn to_u64(self) -> u64;
    /// The Rust value of a trace value, or `None` when it does not fit the type.
    fn from_u64(value: u64) -> Option<Self>;
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const RUST_NAME: &'static str = stringify!($t);
            fn to_u64(self) -> u64 {
                u64::from(self)
            }
            fn from_u64(value: u64) -> Option<Self> {
                <$t>::try_from(value).ok()
            }
        }
    )*};
}

macro_rules! signed {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const RUST_NAME: &'static str = stringify!($t);
            fn to_u64(self) -> u64 {
                i64::from(self) as u64
            }
            fn from_u64(value: u64) -> Option<Self> {
                <$t>::try_from(value as i64).ok()
            }
        }
    )*};
}

unsigned!(u8, u16, u32, u64);
signed!(i8, i16, i32, i64);

#[cfg(test)]
mod tests {
    use super::Scalar;

    #[test]
    fn signed_values_sign_extend_and_out_of_range_values_are_refused() {
        assert_eq!((-1i8).to_u64(), u64::MAX);
        assert_eq!(i8::from_u64(u64::MAX), Some(-1));
        assert_eq!(i8::from_u64(128), None);
        assert_eq!(u16::from_u64(65_536), None);
        assert_eq!(u16::from_u64(65_535), Some(65_535));
        assert_eq!(i64::from_u64(u64::MAX).map(Scalar::to_u64), Some(u64::MAX));
    }
}

//! Field codecs: widths, byte order, the seven interpretations and the metadata changes that
//! switch between them.

pub mod bits;
pub mod change;
pub mod state;

pub use change::{property_code, property_name, Change, MAX_WIDTH};
pub use state::{FieldState, Misfit, ValueSink, ValueSource, MAX_STRIDE_GAP};

#[cfg(test)]
mod tests;

//! Java heap traces: Elephant Tracks ET2 and ET3, and the ZIP-packed JVM trace.

use crate::format::TraceFormat;

/// The Java heap trace formats, in detection order.
pub fn formats() -> Vec<&'static dyn TraceFormat> {
    Vec::new()
}

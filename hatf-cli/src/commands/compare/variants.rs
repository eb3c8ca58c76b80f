//! Every stored form of one trace that `hatf compare` measures, in one list, so the table of
//! times, the CSV, the JSON and the chart all show the same variants in the same order.

use hatf::internal::compare::{Times, TraceRow};

/// One variant: a column of the table (an encoding, `hatf-auto` or `text`) with one
/// compressor (`none` for the column's own bytes).
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// The table's column: an encoding's name, `hatf-auto` (the format-specific layout),
    /// `generic-plain`, `generic-auto` or `text`.
    pub column: &'static str,
    /// `none`, `gzip-9`, `zstd-19`, `zstd-19-long27`, `xz-9`, `hatf` for `hatf-auto`, or
    /// `metatf` for the generic engine.
    pub compressor: &'static str,
    /// Size in bytes; `None` when the variant could not be measured on this trace.
    pub bytes: Option<u64>,
    /// The records those bytes hold (fewer than the row's when the generic engine had a
    /// prefix of the trace), for bytes per record.
    pub records: u64,
    /// Write and read-back times; `None` for the text as it is, which takes no work.
    pub times: Option<Times>,
}

impl Variant {
    /// The name shown in the table of times and the chart's legend.
    pub fn label(&self) -> String {
        match (self.column, self.compressor) {
            ("hatf-auto", _) => "hatf auto".to_string(),
            ("generic-plain", _) => "generic plain".to_string(),
            ("generic-auto", _) => "generic auto".to_string(),
            (column, "none") => column.to_string(),
            (column, compressor) => format!("{column} + {compressor}"),
        }
    }

    /// True for the variants that are compressed (everything but an encoding's or the text's
    /// own bytes).
    pub fn compressed(&self) -> bool {
        self.compressor != "none"
    }
}

/// The variants of `row`: each encoding alone, with gzip -9 and with zstd -19; `hatf auto`
/// when the format has it; the generic engine plain and auto when it ran (its sizes may be
/// of a prefix of the trace, [`super::generic::Generic::lines`]); the text alone, with gzip -9,
/// zstd -19 --long=27 and xz -9.
pub fn of(row: &TraceRow) -> Vec<Variant> {
    let mut out = Vec::new();
    for cell in &row.cells {
        let sizes = cell.sizes.as_ref().ok();
        let measured = sizes.is_some();
        for (compressor, bytes, times) in [
            ("none", sizes.map(|s| s.raw), cell.times.raw),
            ("gzip-9", sizes.map(|s| s.gzip), cell.times.gzip),
            ("zstd-19", sizes.map(|s| s.zstd), cell.times.zstd),
        ] {
            out.push(Variant {
                column: cell.encoding,
                compressor,
                bytes,
                records: row.records,
                times: measured.then_some(times),
            });
        }
    }
    if let Some(auto) = &row.auto {
        out.push(Variant {
            column: "hatf-auto",
            compressor: "hatf",
            bytes: auto.as_ref().ok().copied(),
            records: row.records,
            times: auto.is_ok().then_some(row.auto_times),
        });
    }
    if let Some(g) = &row.generic {
        for (column, measured) in [("generic-plain", &g.plain), ("generic-auto", &g.auto)] {
            out.push(Variant {
                column,
                compressor: "metatf",
                bytes: measured.as_ref().ok().map(|(bytes, _)| *bytes),
                records: g.records,
                times: measured.as_ref().ok().map(|(_, times)| *times),
            });
        }
    }
    let t = &row.text;
    out.push(Variant {
        column: "text",
        compressor: "none",
        bytes: Some(t.raw),
        records: row.records,
        times: None,
    });
    for (compressor, bytes, times) in [
        ("gzip-9", t.gzip9, t.times.gzip9),
        ("zstd-19-long27", t.zstd19_long27, t.times.zstd19_long27),
        ("xz-9", t.xz9, t.times.xz9),
    ] {
        out.push(Variant {
            column: "text",
            compressor,
            bytes: Some(bytes),
            records: row.records,
            times: Some(times),
        });
    }
    out
}

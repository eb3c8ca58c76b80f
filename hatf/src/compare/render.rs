//! The comparison as a Table 4-style text table, CSV and JSON.

use super::{per_record, Comparison, TraceRow};
use std::fmt::Write as _;

fn cell_text(row: &TraceRow, i: usize) -> String {
    match &row.cells[i].sizes {
        Ok(s) => format!(
            "{:.2} / {:.2} / {:.2}",
            per_record(s.raw, row.records),
            per_record(s.gzip, row.records),
            per_record(s.zstd, row.records)
        ),
        Err(_) => "n/a".to_string(),
    }
}

fn auto_text(row: &TraceRow) -> String {
    match &row.auto {
        Some(Ok(b)) => format!("{:.2}", per_record(*b, row.records)),
        Some(Err(_)) => "failed".to_string(),
        None => "-".to_string(),
    }
}

/// The paper's Table 4 layout: rows = traces, columns = encodings, cells
/// "uncompressed / gzip / zstd" bytes per record, then our `auto` and the text peers.
pub fn table(c: &Comparison) -> String {
    let mut header: Vec<String> = vec!["trace".into(), "records".into()];
    if let Some(r) = c.rows.first() {
        header.extend(r.cells.iter().map(|c| c.encoding.to_string()));
    }
    header.extend(
        [
            "hatf auto",
            "text gzip-9",
            "text zstd-19-long27",
            "text xz-9",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let mut lines = vec![header];
    for r in &c.rows {
        let mut l = vec![r.trace.clone(), r.records.to_string()];
        l.extend((0..r.cells.len()).map(|i| cell_text(r, i)));
        l.push(auto_text(r));
        for b in [r.text.gzip9, r.text.zstd19_long27, r.text.xz9] {
            l.push(format!("{:.2}", per_record(b, r.records)));
        }
        lines.push(l);
    }
    let cols = lines.iter().map(|l| l.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            lines
                .iter()
                .filter_map(|l| l.get(i))
                .map(|s| s.len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::from(
        "Bytes per record: encodings as uncompressed / gzip -9 / zstd -19; \
         hatf auto and the text peers compressed\n",
    );
    for l in &lines {
        let mut s = String::new();
        for (i, v) in l.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if i == 0 {
                let _ = write!(s, "{v:<w$}", w = widths[i]);
            } else {
                let _ = write!(s, "{v:>w$}", w = widths[i]);
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    }
    for r in &c.rows {
        for cell in &r.cells {
            if let Err(e) = &cell.sizes {
                let _ = writeln!(out, "note: {} on {}: {e}", cell.encoding, r.trace);
            }
        }
        if let Some(Err(e)) = &r.auto {
            let _ = writeln!(out, "note: hatf auto on {}: {e}", r.trace);
        }
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One line per (trace, column, compressor): `trace,format,records,column,compressor,bytes,bytes_per_record`.
pub fn csv(c: &Comparison) -> String {
    let mut out = String::from("trace,format,records,column,compressor,bytes,bytes_per_record\n");
    for r in &c.rows {
        let mut line = |column: &str, comp: &str, bytes: u64| {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{:.4}",
                csv_field(&r.trace),
                csv_field(&r.format),
                r.records,
                column,
                comp,
                bytes,
                per_record(bytes, r.records)
            );
        };
        for cell in &r.cells {
            if let Ok(s) = &cell.sizes {
                line(cell.encoding, "none", s.raw);
                line(cell.encoding, "gzip-9", s.gzip);
                line(cell.encoding, "zstd-19", s.zstd);
            }
        }
        if let Some(Ok(b)) = &r.auto {
            line("hatf-auto", "hatf", *b);
        }
        line("text", "none", r.text.raw);
        line("text", "gzip-9", r.text.gzip9);
        line("text", "zstd-19-long27", r.text.zstd19_long27);
        line("text", "xz-9", r.text.xz9);
    }
    out
}

/// The comparison as JSON: `{"traces": [{trace, format, records, encodings: {name: {bytes, gzip,
/// zstd} | {error}}, auto: {bytes} | {error} | null, text: {bytes, gzip9, zstd19_long27, xz9}}]}`.
pub fn json(c: &Comparison) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let rows: Vec<Value> = c
        .rows
        .iter()
        .map(|r| {
            let mut enc = Map::new();
            for cell in &r.cells {
                let v = match &cell.sizes {
                    Ok(s) => json!({"bytes": s.raw, "gzip": s.gzip, "zstd": s.zstd}),
                    Err(e) => json!({"error": e}),
                };
                enc.insert(cell.encoding.to_string(), v);
            }
            let auto = match &r.auto {
                Some(Ok(b)) => json!({"bytes": b}),
                Some(Err(e)) => json!({"error": e}),
                None => Value::Null,
            };
            json!({
                "trace": r.trace,
                "format": r.format,
                "records": r.records,
                "encodings": enc,
                "auto": auto,
                "text": {
                    "bytes": r.text.raw,
                    "gzip9": r.text.gzip9,
                    "zstd19_long27": r.text.zstd19_long27,
                    "xz9": r.text.xz9,
                },
            })
        })
        .collect();
    json!({ "traces": rows })
}

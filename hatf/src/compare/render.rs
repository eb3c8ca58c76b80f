//! The comparison as a Table 4-style text table followed by a table of times, CSV and JSON.

use super::{millis, per_record, variants, Comparison, Times, TraceRow};
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
    let mut out = String::from(
        "Bytes per record: encodings as uncompressed / gzip -9 / zstd -19; \
         hatf auto and the text peers compressed\n",
    );
    out.push_str(&aligned(&lines, 1));
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
    out.push('\n');
    out.push_str(&times_table(c));
    out
}

/// One line per variant and trace: its size and how long it takes to write and to read back.
pub fn times_table(c: &Comparison) -> String {
    let mut lines = vec![vec![
        "trace".to_string(),
        "variant".to_string(),
        "bytes".to_string(),
        "B/record".to_string(),
        "encode ms".to_string(),
        "decode ms".to_string(),
    ]];
    for r in &c.rows {
        for v in variants::of(r) {
            let Some(bytes) = v.bytes else {
                continue;
            };
            let (encode, decode) = match v.times {
                Some(t) => (
                    format!("{:.1}", millis(t.encode)),
                    format!("{:.1}", millis(t.decode)),
                ),
                None => ("-".to_string(), "-".to_string()),
            };
            lines.push(vec![
                r.trace.clone(),
                v.label(),
                bytes.to_string(),
                format!("{:.2}", per_record(bytes, r.records)),
                encode,
                decode,
            ]);
        }
    }
    let mut out = String::from(
        "Times (wall clock, one thread): encode = encoding then compressor, \
         decode = decompressor then decoding\n",
    );
    out.push_str(&aligned(&lines, 2));
    out
}

/// `lines` as columns: the first `left` left-aligned, the rest right-aligned.
fn aligned(lines: &[Vec<String>], left: usize) -> String {
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
    let mut out = String::new();
    for l in lines {
        let mut s = String::new();
        for (i, v) in l.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if i < left {
                let _ = write!(s, "{v:<w$}", w = widths[i]);
            } else {
                let _ = write!(s, "{v:>w$}", w = widths[i]);
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
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

/// One line per (trace, column, compressor):
/// `trace,format,records,column,compressor,bytes,bytes_per_record,encode_ms,decode_ms` (the
/// times are empty for the text as it is).
pub fn csv(c: &Comparison) -> String {
    let mut out = String::from(
        "trace,format,records,column,compressor,bytes,bytes_per_record,encode_ms,decode_ms\n",
    );
    for r in &c.rows {
        for v in variants::of(r) {
            let Some(bytes) = v.bytes else {
                continue;
            };
            let times = match v.times {
                Some(t) => format!("{:.3},{:.3}", millis(t.encode), millis(t.decode)),
                None => ",".to_string(),
            };
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{:.4},{times}",
                csv_field(&r.trace),
                csv_field(&r.format),
                r.records,
                v.column,
                v.compressor,
                bytes,
                per_record(bytes, r.records)
            );
        }
    }
    out
}

fn times_json(t: Times) -> serde_json::Value {
    serde_json::json!({"encode_ms": millis(t.encode), "decode_ms": millis(t.decode)})
}

/// The comparison as JSON: `{"traces": [{trace, format, records, encodings: {name: {bytes, gzip,
/// zstd, times_ms: {bytes, gzip, zstd}} | {error}}, auto: {bytes, times_ms} | {error} | null,
/// text: {bytes, gzip9, zstd19_long27, xz9, times_ms: {gzip9, zstd19_long27, xz9}}}]}`, each
/// `times_ms` entry being `{encode_ms, decode_ms}`.
pub fn json(c: &Comparison) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let rows: Vec<Value> = c
        .rows
        .iter()
        .map(|r| {
            let mut enc = Map::new();
            for cell in &r.cells {
                let v = match &cell.sizes {
                    Ok(s) => json!({
                        "bytes": s.raw,
                        "gzip": s.gzip,
                        "zstd": s.zstd,
                        "times_ms": {
                            "bytes": times_json(cell.times.raw),
                            "gzip": times_json(cell.times.gzip),
                            "zstd": times_json(cell.times.zstd),
                        },
                    }),
                    Err(e) => json!({"error": e}),
                };
                enc.insert(cell.encoding.to_string(), v);
            }
            let auto = match &r.auto {
                Some(Ok(b)) => json!({"bytes": b, "times_ms": times_json(r.auto_times)}),
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
                    "times_ms": {
                        "gzip9": times_json(r.text.times.gzip9),
                        "zstd19_long27": times_json(r.text.times.zstd19_long27),
                        "xz9": times_json(r.text.times.xz9),
                    },
                },
            })
        })
        .collect();
    json!({ "traces": rows })
}

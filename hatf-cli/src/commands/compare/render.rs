//! The comparison as a Table 4-style text table followed by a table of times, CSV and JSON.

use super::variants;
use hatf::internal::compare::generic::{Generic, Measured};
use hatf::internal::compare::{millis, per_record, Comparison, Times, TraceRow};
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

fn generic_text(g: Option<&Generic>, pick: fn(&Generic) -> &Measured) -> String {
    match g.map(|g| (g, pick(g))) {
        Some((g, Ok((bytes, _)))) => format!("{:.2}", per_record(*bytes, g.records)),
        Some((_, Err(_))) => "failed".to_string(),
        None => "-".to_string(),
    }
}

fn ratio_text(g: Option<&Generic>) -> String {
    match g.and_then(Generic::auto_over_specific) {
        Some(r) => format!("{r:.2}"),
        None => "-".to_string(),
    }
}

/// The paper's Table 4 layout: rows = traces, columns = encodings, cells
/// "uncompressed / gzip / zstd" bytes per record, then the format-specific layout (`hatf
/// auto`), the generic engine plain and auto with the ratio of auto to the format-specific
/// layout, and the text peers with the best of them.
pub fn table(c: &Comparison) -> String {
    let mut header: Vec<String> = vec!["trace".into(), "format".into(), "records".into()];
    if let Some(r) = c.rows.first() {
        header.extend(r.cells.iter().map(|c| c.encoding.to_string()));
    }
    header.extend(
        [
            "hatf auto",
            "generic plain",
            "generic auto",
            "auto ÷ hatf",
            "text gzip-9",
            "text zstd-19-long27",
            "text xz-9",
            "text best",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let mut lines = vec![header];
    for r in &c.rows {
        let mut l = vec![r.trace.clone(), r.format.clone(), r.records.to_string()];
        l.extend((0..r.cells.len()).map(|i| cell_text(r, i)));
        l.push(auto_text(r));
        let g = r.generic.as_ref();
        l.push(generic_text(g, |g| &g.plain));
        l.push(generic_text(g, |g| &g.auto));
        l.push(ratio_text(g));
        for b in [
            r.text.gzip9,
            r.text.zstd19_long27,
            r.text.xz9,
            r.text.best(),
        ] {
            l.push(format!("{:.2}", per_record(b, r.records)));
        }
        lines.push(l);
    }
    let mut out = String::from(
        "Bytes per record: encodings as uncompressed / gzip -9 / zstd -19; \
         hatf auto (the format-specific layout), the generic engine and the text peers \
         compressed; auto ÷ hatf = generic auto over hatf auto on the same records; records = \
         allocation events for an allocation trace (a realloc is one), else the records of \
         `hatf dump`'s text\n",
    );
    out.push_str(&aligned(&lines, 2));
    for r in &c.rows {
        if let Some(g) = &r.generic {
            let scope = match g.lines {
                Some(n) => format!(
                    "the first {n} lines ({} records of `hatf dump`'s text; hatf auto on them: {})",
                    g.records,
                    match &g.specific {
                        Some(Ok(b)) => format!("{b} bytes"),
                        _ => "-".to_string(),
                    }
                ),
                None => format!("all {} records of `hatf dump`'s text", g.records),
            };
            let _ = writeln!(
                out,
                "note: generic engine on {}: {}, {scope}",
                r.trace, g.dtd
            );
            for (name, m) in [("plain", &g.plain), ("auto", &g.auto)] {
                if let Err(e) = m {
                    let _ = writeln!(out, "note: generic {name} on {}: {e}", r.trace);
                }
            }
        }
    }
    for r in &c.rows {
        let errors: Vec<&String> = r
            .cells
            .iter()
            .filter_map(|c| c.sizes.as_ref().err())
            .collect();
        if !errors.is_empty()
            && errors.len() == r.cells.len()
            && errors.iter().all(|e| *e == errors[0])
        {
            let _ = writeln!(
                out,
                "note: the paper's encodings on {}: {}",
                r.trace, errors[0]
            );
        } else {
            for cell in &r.cells {
                if let Err(e) = &cell.sizes {
                    let _ = writeln!(out, "note: {} on {}: {e}", cell.encoding, r.trace);
                }
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
                format!("{:.2}", per_record(bytes, v.records)),
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
/// times are empty for the text as it is; `records` is what the bytes hold, fewer than the
/// trace's for the generic engine on a prefix).
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
                v.records,
                v.column,
                v.compressor,
                bytes,
                per_record(bytes, v.records)
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
/// text: {bytes, gzip9, zstd19_long27, xz9, best, times_ms: {gzip9, zstd19_long27, xz9}},
/// generic: {dtd, lines, records, specific, plain, auto, auto_over_specific} | null}]}`, each
/// `times_ms` entry being `{encode_ms, decode_ms}`, `plain` and `auto` `{bytes, times_ms} |
/// {error}`, `lines` null when the generic engine had the whole trace.
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
            let measured = |m: &Measured| match m {
                Ok((b, t)) => json!({"bytes": b, "times_ms": times_json(*t)}),
                Err(e) => json!({"error": e}),
            };
            let generic = match &r.generic {
                Some(g) => json!({
                    "dtd": g.dtd,
                    "lines": g.lines,
                    "records": g.records,
                    "specific": match &g.specific {
                        Some(Ok(b)) => json!(b),
                        Some(Err(e)) => json!({"error": e}),
                        None => Value::Null,
                    },
                    "plain": measured(&g.plain),
                    "auto": measured(&g.auto),
                    "auto_over_specific": g.auto_over_specific(),
                }),
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
                    "best": r.text.best(),
                    "times_ms": {
                        "gzip9": times_json(r.text.times.gzip9),
                        "zstd19_long27": times_json(r.text.times.zstd19_long27),
                        "xz9": times_json(r.text.times.xz9),
                    },
                },
                "generic": generic,
            })
        })
        .collect();
    json!({ "traces": rows })
}

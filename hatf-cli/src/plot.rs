//! A grouped bar chart of the comparison as a standalone SVG: one group per trace, one bar per
//! compressed size (the encodings with gzip -9, hatf auto, and the text peers), in bytes per record.

use std::fmt::Write as _;

use hatf::compare::{per_record, Comparison, TextPeers};

const COLORS: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// Series shown: label and value (bytes per record) for each trace; `None` = not measured.
fn series(c: &Comparison) -> Vec<(String, Vec<Option<f64>>)> {
    let mut out: Vec<(String, Vec<Option<f64>>)> = Vec::new();
    let names: Vec<&str> = c
        .rows
        .first()
        .map(|r| r.cells.iter().map(|c| c.encoding).collect())
        .unwrap_or_default();
    for (i, name) in names.iter().enumerate() {
        out.push((
            format!("{name} + gzip-9"),
            c.rows
                .iter()
                .map(|r| {
                    r.cells
                        .get(i)
                        .and_then(|c| c.sizes.as_ref().ok())
                        .map(|s| per_record(s.gzip, r.records))
                })
                .collect(),
        ));
    }
    out.push((
        "hatf auto".into(),
        c.rows
            .iter()
            .map(|r| match &r.auto {
                Some(Ok(b)) => Some(per_record(*b, r.records)),
                _ => None,
            })
            .collect(),
    ));
    type Pick = fn(&TextPeers) -> u64;
    let peers: [(&str, Pick); 3] = [
        ("text gzip -9", |t| t.gzip9),
        ("text zstd -19 --long=27", |t| t.zstd19_long27),
        ("text xz -9", |t| t.xz9),
    ];
    for (label, pick) in peers {
        out.push((
            label.into(),
            c.rows
                .iter()
                .map(|r| Some(per_record(pick(&r.text), r.records)))
                .collect(),
        ));
    }
    out
}

/// A tick step of 1, 2 or 5 times a power of ten giving about five ticks up to `max`.
fn tick_step(max: f64) -> f64 {
    let raw = (max / 5.0).max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The SVG document.
pub fn svg(c: &Comparison) -> String {
    let series = series(c);
    let groups = c.rows.len().max(1);
    let bars = series.len();
    let bar_w = 16.0;
    let group_gap = 28.0;
    let group_w = bars as f64 * bar_w + group_gap;
    let (left, top, plot_h, bottom) = (70.0, 50.0, 320.0, 60.0);
    let plot_w = groups as f64 * group_w;
    let legend_x = left + plot_w + 30.0;
    let width = legend_x + 230.0;
    let height = top + plot_h + bottom;
    let max = series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().copied())
        .fold(0.0f64, f64::max)
        .max(0.01);
    let step = tick_step(max);
    let top_value = (max / step).ceil() * step;
    let y = |v: f64| top + plot_h - v / top_value * plot_h;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="24" font-size="15" font-weight="bold">Compressed size per allocation record (lower is better)</text>"#
    );
    // Grid and y axis.
    let mut v = 0.0;
    while v <= top_value + step / 2.0 {
        let yy = y(v);
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            left + plot_w,
            left - 6.0,
            yy + 4.0,
            if step < 1.0 {
                format!("{v:.1}")
            } else {
                format!("{v:.0}")
            }
        );
        v += step;
    }
    let _ = writeln!(
        s,
        r#"<line x1="{left}" y1="{top}" x2="{left}" y2="{:.1}" stroke="black"/><line x1="{left}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="black"/>"#,
        top + plot_h,
        top + plot_h,
        left + plot_w,
        top + plot_h
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(18,{:.1}) rotate(-90)" text-anchor="middle">bytes per record</text>"#,
        top + plot_h / 2.0
    );
    // Bars.
    for (g, row) in c.rows.iter().enumerate() {
        let gx = left + g as f64 * group_w + group_gap / 2.0;
        for (b, (label, values)) in series.iter().enumerate() {
            let Some(val) = values.get(g).copied().flatten() else {
                continue;
            };
            let x = gx + b as f64 * bar_w;
            let yy = y(val);
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{yy:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {} = {val:.3} B/record</title></rect>"#,
                bar_w - 2.0,
                top + plot_h - yy,
                COLORS[b % COLORS.len()],
                escape(&row.trace),
                escape(label)
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            gx + bars as f64 * bar_w / 2.0,
            top + plot_h + 20.0,
            escape(&row.trace)
        );
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#555">{} records</text>"##,
            gx + bars as f64 * bar_w / 2.0,
            top + plot_h + 36.0,
            row.records
        );
    }
    // Legend.
    for (b, (label, _)) in series.iter().enumerate() {
        let ly = top + b as f64 * 20.0;
        let _ = writeln!(
            s,
            r#"<rect x="{legend_x:.1}" y="{ly:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            COLORS[b % COLORS.len()],
            legend_x + 18.0,
            ly + 11.0,
            escape(label)
        );
    }
    s.push_str("</svg>\n");
    s
}

//! The comparison as a standalone SVG of grouped bar charts: one group per trace, one bar per
//! compressed variant (every encoding with gzip -9 and with zstd -19, hatf auto, and the text
//! with gzip -9, zstd -19 --long=27 and xz -9), each in its own colour and labelled with its
//! value. Three panels share the bars: bytes per record, encode time and decode time.

use std::fmt::Write as _;

use super::variants;
use hatf::internal::compare::{millis, per_record, Comparison, Times};

/// One series: a legend label, and per trace its size and times (`None` = not measured).
struct Series {
    label: String,
    /// Per trace: bytes, times and the records the bytes hold.
    values: Vec<Option<(u64, Times, u64)>>,
}

/// The compressed variants of every trace, in the order they are first met.
fn series(c: &Comparison) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for (g, row) in c.rows.iter().enumerate() {
        for v in variants::of(row).into_iter().filter(|v| v.compressed()) {
            let label = v.label();
            let i = match out.iter().position(|s| s.label == label) {
                Some(i) => i,
                None => {
                    out.push(Series {
                        label,
                        values: vec![None; c.rows.len()],
                    });
                    out.len() - 1
                }
            };
            out[i].values[g] = v.bytes.zip(v.times).map(|(b, t)| (b, t, v.records));
        }
    }
    out
}

/// `n` colours, all different: hues evenly around the wheel, neighbours alternating between a
/// darker and a lighter shade so adjacent bars stand apart.
fn palette(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let hue = 360.0 * i as f64 / n.max(1) as f64;
            let light = if i % 2 == 0 { 0.42 } else { 0.62 };
            hsl_hex(hue, 0.65, light)
        })
        .collect()
}

/// An HSL colour as `#rrggbb`.
fn hsl_hex(hue: f64, sat: f64, light: f64) -> String {
    let c = (1.0 - (2.0 * light - 1.0).abs()) * sat;
    let h = hue / 60.0;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = light - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    format!("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b))
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

/// A value as a bar's label: few digits, more for small values.
fn short(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

const BAR_W: f64 = 16.0;
const GROUP_GAP: f64 = 28.0;
const LEFT: f64 = 70.0;
const PANEL_H: f64 = 240.0;
/// Room above a panel's plot for its title and the labels of its tallest bars.
const PANEL_TOP: f64 = 70.0;
/// Room below a panel for the trace names.
const PANEL_BOTTOM: f64 = 50.0;

/// What every panel draws.
struct Chart<'a> {
    comparison: &'a Comparison,
    series: Vec<Series>,
    colours: Vec<String>,
}

/// One panel of bars at vertical offset `top`: `value` picks what the bars show.
fn panel(
    s: &mut String,
    chart: &Chart<'_>,
    top: f64,
    (title, unit): (&str, &str),
    value: impl Fn(u64, Times, u64) -> f64,
) {
    let Chart {
        comparison: c,
        series,
        colours,
    } = chart;
    let group_w = series.len() as f64 * BAR_W + GROUP_GAP;
    let plot_w = c.rows.len().max(1) as f64 * group_w;
    let plot_top = top + PANEL_TOP;
    let at = |v: &Option<(u64, Times, u64)>| v.map(|(b, t, records)| value(b, t, records));
    let max = series
        .iter()
        .flat_map(|se| se.values.iter().filter_map(at))
        .fold(0.0f64, f64::max)
        .max(0.01);
    let step = tick_step(max);
    let top_value = (max / step).ceil() * step;
    let y = |v: f64| plot_top + PANEL_H - v / top_value * PANEL_H;
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="{:.1}" font-size="15" font-weight="bold">{}</text>"#,
        top + 24.0,
        escape(title)
    );
    let mut v = 0.0;
    while v <= top_value + step / 2.0 {
        let yy = y(v);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            yy + 4.0,
            short(v)
        );
        v += step;
    }
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{plot_top}" x2="{LEFT}" y2="{:.1}" stroke="black"/><line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="black"/>"#,
        plot_top + PANEL_H,
        plot_top + PANEL_H,
        LEFT + plot_w,
        plot_top + PANEL_H
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(18,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        plot_top + PANEL_H / 2.0,
        escape(unit)
    );
    for (g, row) in c.rows.iter().enumerate() {
        let gx = LEFT + g as f64 * group_w + GROUP_GAP / 2.0;
        for (b, se) in series.iter().enumerate() {
            let Some(val) = at(&se.values[g]) else {
                continue;
            };
            let x = gx + b as f64 * BAR_W;
            let yy = y(val);
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{yy:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {} = {} {}</title></rect>"#,
                BAR_W - 2.0,
                plot_top + PANEL_H - yy,
                colours[b],
                escape(&row.trace),
                escape(&se.label),
                short(val),
                escape(unit)
            );
            // The value, written upwards from just above the bar.
            let _ = writeln!(
                s,
                r#"<text transform="translate({:.1},{:.1}) rotate(-90)" font-size="9">{}</text>"#,
                x + BAR_W / 2.0 + 2.0,
                yy - 3.0,
                short(val)
            );
        }
        let mid = gx + series.len() as f64 * BAR_W / 2.0;
        let _ = writeln!(
            s,
            r#"<text x="{mid:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            plot_top + PANEL_H + 20.0,
            escape(&row.trace)
        );
        let _ = writeln!(
            s,
            r##"<text x="{mid:.1}" y="{:.1}" text-anchor="middle" fill="#555">{} records</text>"##,
            plot_top + PANEL_H + 36.0,
            row.records
        );
    }
}

/// The SVG document.
pub fn svg(c: &Comparison) -> String {
    let series = series(c);
    let colours = palette(series.len());
    let group_w = series.len() as f64 * BAR_W + GROUP_GAP;
    let plot_w = c.rows.len().max(1) as f64 * group_w;
    let legend_x = LEFT + plot_w + 30.0;
    let panel_h = PANEL_TOP + PANEL_H + PANEL_BOTTOM;
    let width = legend_x + 250.0;
    let height = (3.0 * panel_h).max(PANEL_TOP + series.len() as f64 * 20.0 + 20.0);

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let chart = Chart {
        comparison: c,
        series,
        colours,
    };
    panel(
        &mut s,
        &chart,
        0.0,
        (
            "Compressed size per allocation record (lower is better)",
            "bytes per record",
        ),
        |bytes, _, records| per_record(bytes, records),
    );
    panel(
        &mut s,
        &chart,
        panel_h,
        (
            "Encode time: encoding, then compressor (lower is better)",
            "milliseconds",
        ),
        |_, t, _| millis(t.encode),
    );
    panel(
        &mut s,
        &chart,
        2.0 * panel_h,
        (
            "Decode time: decompressor, then decoding (lower is better)",
            "milliseconds",
        ),
        |_, t, _| millis(t.decode),
    );
    for (b, se) in chart.series.iter().enumerate() {
        let ly = PANEL_TOP + b as f64 * 20.0;
        let _ = writeln!(
            s,
            r#"<rect x="{legend_x:.1}" y="{ly:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            chart.colours[b],
            legend_x + 18.0,
            ly + 11.0,
            escape(&se.label)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palettes_never_repeat_a_colour() {
        for n in 1..=64 {
            let p = palette(n);
            let distinct: std::collections::HashSet<&String> = p.iter().collect();
            assert_eq!(distinct.len(), n, "{p:?}");
            assert!(p.iter().all(|c| c.len() == 7 && c.starts_with('#')));
        }
    }

    #[test]
    fn hsl_corners() {
        assert_eq!(hsl_hex(0.0, 1.0, 0.5), "#ff0000");
        assert_eq!(hsl_hex(120.0, 1.0, 0.5), "#00ff00");
        assert_eq!(hsl_hex(240.0, 1.0, 0.5), "#0000ff");
    }
}

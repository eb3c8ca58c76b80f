//! A line chart of the live set over time (`hatf stats --plot`) as a standalone SVG: live bytes
//! (or live objects, for a format without sizes) against the trace's own time.

use std::fmt::Write as _;

/// The SVG of `points` (`at`, objects, bytes) from the stats JSON's `live_over_time`.
pub fn svg(title: &str, unit: &str, points: &[(u64, u64, Option<u64>)]) -> String {
    let sized = points.iter().all(|p| p.2.is_some()) && !points.is_empty();
    let value = |p: &(u64, u64, Option<u64>)| if sized { p.2.unwrap_or(0) } else { p.1 } as f64;
    let (left, top, w, h) = (90.0, 50.0, 640.0, 300.0);
    let max_x = points.iter().map(|p| p.0).max().unwrap_or(1).max(1) as f64;
    let max_y = points.iter().map(value).fold(1.0f64, f64::max);
    let x = |at: u64| left + at as f64 / max_x * w;
    let y = |v: f64| top + h - v / max_y * h;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{:.0}" height="{:.0}" font-family="sans-serif" font-size="12">"#,
        left + w + 30.0,
        top + h + 60.0
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let what = if sized { "live bytes" } else { "live objects" };
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="24" font-size="15" font-weight="bold">{}: {what} over time</text>"#,
        escape(title)
    );
    for i in 0..=4 {
        let v = max_y * f64::from(i) / 4.0;
        let yy = y(v);
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{v:.0}</text>"##,
            left + w,
            left - 6.0,
            yy + 4.0
        );
        let at = max_x * f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{at:.0}</text>"#,
            left + at / max_x * w,
            top + h + 18.0
        );
    }
    let line: Vec<String> = points
        .iter()
        .map(|p| format!("{:.1},{:.1}", x(p.0), y(value(p))))
        .collect();
    let _ = writeln!(
        s,
        r##"<polyline fill="none" stroke="#4e79a7" stroke-width="1.5" points="{}"/>"##,
        line.join(" ")
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        left + w / 2.0,
        top + h + 40.0,
        escape(unit)
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(18,{:.1}) rotate(-90)" text-anchor="middle">{what}</text>"#,
        top + h / 2.0
    );
    s.push_str("</svg>\n");
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

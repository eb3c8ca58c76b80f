//! `hatf stats`: numbers about a trace, from its text or its binary form, in one schema for
//! every format (see the README).

use crate::args::StatsArgs;
use crate::error::{CliError, CliResult};
use crate::text_input::analyse;
use crate::Verbosity;

/// The live set over time from the report's JSON: (time, objects, bytes), and the time unit.
fn live_points(json: &serde_json::Value) -> (Vec<(u64, u64, Option<u64>)>, String) {
    let series = &json["live_over_time"];
    let points = series["points"]
        .as_array()
        .map(|points| {
            points
                .iter()
                .map(|p| {
                    (
                        p["at"].as_u64().unwrap_or(0),
                        p["objects"].as_u64().unwrap_or(0),
                        p["bytes"].as_u64(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    (points, series["unit"].as_str().unwrap_or("").to_string())
}

/// Runs `hatf stats`.
pub fn run(args: &StatsArgs, verbosity: Verbosity) -> CliResult {
    // Name files given beside a text trace; a binary trace's own are used when none are given.
    let given = match &args.names {
        Some(dir) => Some(hatf::internal::formats::et::sections::names::read_dir(dir)?),
        None => None,
    };
    let analysed = analyse(
        args.input.as_deref(),
        &args.from,
        verbosity,
        "stats",
        |format, text, name, stored| {
            format.stats_named(text, name, given.as_deref().unwrap_or(stored))
        },
    )?;
    let report = analysed.result;
    let (points, unit) = live_points(&report.json);
    if let Some(path) = &args.plot {
        let svg = crate::live_chart::svg(&analysed.name, &unit, &points);
        std::fs::write(path, svg)
            .map_err(|e| CliError::input(format!("{}: cannot write: {e}", path.display())))?;
    }
    if args.json {
        let text = serde_json::to_string_pretty(&report.json)
            .map_err(|e| CliError::input(format!("cannot render JSON: {e}")))?;
        crate::data_stdout::print(&format!("{text}\n"))
    } else if args.csv {
        let mut csv = format!("{},live_objects,live_bytes\n", unit.replace(' ', "_"));
        for (at, objects, bytes) in points {
            let bytes = bytes.map(|b| b.to_string()).unwrap_or_default();
            csv.push_str(&format!("{at},{objects},{bytes}\n"));
        }
        crate::data_stdout::print(&csv)
    } else {
        crate::data_stdout::print(&report.text)
    }
}

//! `hatf validate`: the checks a trace's format defines. Every problem is printed on standard
//! output as it is found, with its line (or record), so a trace of any length is checked
//! without holding its problems in memory.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};

use hatf::{At, Problem};

use crate::args::ValidateArgs;
use crate::data_stdout::{data_stdout, DataStdout};
use crate::error::{CliError, CliResult};
use crate::text_input::analyse;
use crate::Verbosity;

/// Writes problems as text lines or as the elements of a JSON array, and counts them.
struct Printer {
    out: BufWriter<DataStdout>,
    json: bool,
    name: String,
    by_kind: BTreeMap<&'static str, u64>,
    /// The first failure to write; later problems are only counted.
    failed: Option<std::io::Error>,
}

impl Printer {
    fn count(&self) -> u64 {
        self.by_kind.values().sum()
    }

    fn write(&mut self, text: &str) {
        if self.failed.is_none() {
            if let Err(e) = self.out.write_all(text.as_bytes()) {
                self.failed = Some(e);
            }
        }
    }

    fn problem(&mut self, p: Problem) {
        let first = self.count() == 0;
        *self.by_kind.entry(p.kind).or_default() += 1;
        let text = if self.json {
            let (unit, n) = match p.at {
                At::Line(n) => ("line", n),
                At::Record(n) => ("record", n),
            };
            let object = serde_json::json!({unit: n, "kind": p.kind, "message": p.message});
            format!("{}\n{object}", if first { "" } else { "," })
        } else {
            match p.at {
                At::Line(n) => format!("{}:{n}: {}\n", self.name, p.message),
                At::Record(n) => format!("{}: record {n}: {}\n", self.name, p.message),
            }
        };
        self.write(&text);
    }
}

/// Runs `hatf validate`.
pub fn run(args: &ValidateArgs, verbosity: Verbosity) -> CliResult {
    let mut printer: Option<Printer> = None;
    let analysed = analyse(
        args.input.as_deref(),
        &args.from,
        verbosity,
        "validate",
        |format, text, name, _| {
            let p = printer.insert(Printer {
                out: BufWriter::new(data_stdout()),
                json: args.json,
                name: name.to_string(),
                by_kind: BTreeMap::new(),
                failed: None,
            });
            if args.json {
                let head = serde_json::json!({"file": name, "format": format.name()});
                // The problems are streamed into the object's `problems` array.
                let head = head.to_string();
                let head = head.strip_suffix('}').unwrap_or(&head);
                p.write(&format!("{head},\"problems\":["));
            }
            format.validate(text, name, &mut |problem| p.problem(problem))
        },
    );
    let Some(mut p) = printer else {
        return analysed.map(|_| ());
    };
    let analysed = analysed?;
    let total = p.count();
    if args.json {
        let tail = serde_json::json!({"count": total, "by_kind": p.by_kind});
        let tail = tail.to_string();
        let tail = tail.strip_prefix('{').unwrap_or(&tail);
        let close = if total == 0 { "]" } else { "\n]" };
        p.write(&format!("{close},{tail}\n"));
    } else if total == 0 && !verbosity.quiet {
        p.write(&format!(
            "{}: valid `{}` trace\n",
            analysed.name,
            analysed.format.name()
        ));
    }
    if p.failed.is_none() {
        if let Err(e) = p.out.flush() {
            p.failed = Some(e);
        }
    }
    if let Some(e) = p.failed {
        return Err(CliError::input(format!("<stdout>: cannot write: {e}")));
    }
    if total == 0 {
        return Ok(());
    }
    let kinds: Vec<String> = p.by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
    Err(CliError::input(format!(
        "{}: {total} problems found ({})",
        analysed.name,
        kinds.join(", ")
    )))
}

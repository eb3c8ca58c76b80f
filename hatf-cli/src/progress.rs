//! Progress on standard error for runs that take more than about a second.
//!
//! A bar follows the input bytes consumed, which every command has, rather than records, which
//! only the format knows; a spinner stands for work that reads nothing for long (`compare`).
//! Either is drawn only when standard error is a terminal and `-q` was not given, so scripts
//! and pipes never see it; it appears only once the run has lasted [`SHOW_AFTER`], whatever the
//! size of the input (a small compressed archive can take seconds), and it is cleared when the
//! work ends.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};

use crate::io::Input;
use crate::Verbosity;

/// How long a run goes unannounced: shorter ones end before a bar could say anything.
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

/// True when a progress bar may be drawn.
pub fn wanted(verbosity: Verbosity) -> bool {
    !verbosity.quiet && std::io::stderr().is_terminal()
}

/// Wraps `input` so that reading it advances a bar labelled `verb` (e.g. "encoding"), shown
/// after [`SHOW_AFTER`] when [`wanted`]. The bar goes away with the reader.
pub fn track(input: Input, verbosity: Verbosity, verb: &str) -> Input {
    if !wanted(verbosity) {
        return input;
    }
    let bar = bar_for(input.len, verb, ProgressDrawTarget::hidden());
    show_later(&bar);
    Input {
        reader: Box::new(bar.wrap_read(input.reader)),
        ..input
    }
}

/// A spinner labelled `verb` for work that reads no input as it goes, shown after
/// [`SHOW_AFTER`] when [`wanted`]; it is cleared when dropped.
pub fn spinner(verbosity: Verbosity, verb: &str) -> Option<ProgressBar> {
    if !wanted(verbosity) {
        return None;
    }
    let style = ProgressStyle::with_template("{spinner} {msg} {elapsed}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
        .with_style(style)
        .with_message(verb.to_string())
        .with_finish(ProgressFinish::AndClear);
    bar.enable_steady_tick(Duration::from_millis(200));
    show_later(&bar);
    Some(bar)
}

/// Points `bar` at standard error once [`SHOW_AFTER`] has passed, unless it is done by then.
fn show_later(bar: &ProgressBar) {
    let bar = bar.downgrade();
    std::thread::spawn(move || {
        std::thread::sleep(SHOW_AFTER);
        if let Some(bar) = bar.upgrade().filter(|b| !b.is_finished()) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    });
}

/// The bar itself: bytes with a total and an estimate when the size is known, a spinner with
/// the byte count otherwise; both show the time spent, which keeps moving while the work goes
/// on past the last byte read.
pub fn bar_for(len: Option<u64>, verb: &str, target: ProgressDrawTarget) -> ProgressBar {
    let (bar, template) = match len {
        Some(n) => (
            ProgressBar::with_draw_target(Some(n), target),
            "{spinner} {msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}, {elapsed}",
        ),
        None => (
            ProgressBar::with_draw_target(None, target),
            "{spinner} {msg} {bytes} {bytes_per_sec}, {elapsed}",
        ),
    };
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    let bar = bar
        .with_style(style)
        .with_message(verb.to_string())
        .with_finish(ProgressFinish::AndClear);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn the_bar_counts_the_bytes_read() {
        let data = vec![7u8; 100_000];
        let bar = bar_for(
            Some(data.len() as u64),
            "encoding",
            ProgressDrawTarget::hidden(),
        );
        let mut out = Vec::new();
        bar.wrap_read(&data[..]).read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
        assert_eq!(bar.position(), data.len() as u64);
        assert_eq!(bar.length(), Some(data.len() as u64));
    }

    #[test]
    fn quiet_runs_get_no_bar() {
        let quiet = Verbosity {
            quiet: true,
            verbose: false,
        };
        assert!(!wanted(quiet));
        assert!(spinner(quiet, "comparing").is_none());
        let input = Input {
            name: "x".into(),
            reader: Box::new(&b"abc"[..]),
            len: Some(3),
            identity: None,
        };
        let back = track(input, quiet, "encoding");
        assert_eq!(back.len, Some(3));
    }
}

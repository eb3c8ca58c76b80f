//! A progress bar on standard error for long encodes and decodes.
//!
//! It follows the input bytes consumed, which every command has, rather than records, which
//! only the format knows. It is shown only when standard error is a terminal and `-q` was not
//! given, so scripts and pipes never see it, and it is cleared when the command ends.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};

use crate::io::Input;
use crate::Verbosity;

/// Inputs smaller than this finish too fast for a bar to help.
const SHOW_FROM_BYTES: u64 = 8 << 20;

/// True when a progress bar may be drawn.
pub fn wanted(verbosity: Verbosity) -> bool {
    !verbosity.quiet && std::io::stderr().is_terminal()
}

/// Wraps `input` so that reading it advances a bar labelled `verb` (e.g. "encoding"), when
/// [`wanted`] and the input is large or of unknown size.
pub fn track(input: Input, verbosity: Verbosity, verb: &str) -> Input {
    if !wanted(verbosity) || input.len.is_some_and(|n| n < SHOW_FROM_BYTES) {
        return input;
    }
    let bar = bar_for(input.len, verb, ProgressDrawTarget::stderr());
    Input {
        reader: Box::new(bar.wrap_read(input.reader)),
        ..input
    }
}

/// The bar itself: bytes with a total and an estimate when the size is known, a spinner with
/// the byte count otherwise.
pub fn bar_for(len: Option<u64>, verb: &str, target: ProgressDrawTarget) -> ProgressBar {
    let (bar, template) = match len {
        Some(n) => (
            ProgressBar::with_draw_target(Some(n), target),
            "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}, {eta} left",
        ),
        None => (
            ProgressBar::with_draw_target(None, target),
            "{spinner} {msg} {bytes} {bytes_per_sec}",
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
    fn small_files_and_quiet_runs_get_no_bar() {
        let quiet = Verbosity {
            quiet: true,
            verbose: false,
        };
        assert!(!wanted(quiet));
        let input = Input {
            name: "x".into(),
            reader: Box::new(&b"abc"[..]),
            len: Some(3),
        };
        let back = track(input, quiet, "encoding");
        assert_eq!(back.len, Some(3));
    }
}

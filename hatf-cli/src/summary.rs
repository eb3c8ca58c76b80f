//! The line `encode` and `decode` print for each input, as `zstd` does: sizes, ratio, time.

use crate::Verbosity;
use std::io::IsTerminal;
use std::time::Duration;

/// True when the line is printed: with `-v`, or when standard error is a terminal and `-q` was
/// not given (scripts reading standard error see nothing new).
pub fn wanted(verbosity: Verbosity) -> bool {
    verbosity.verbose || (!verbosity.quiet && std::io::stderr().is_terminal())
}

/// `input: 3.52% (117440512 => 4133000 bytes, output) in 1.23 s`: the output's size as a
/// percentage of the input's (an encode); a decode, whose output is larger, says by how many
/// times instead: `input: x28.42 (4133000 => 117440512 bytes, output) in 0.91 s`.
pub fn line(
    input: &str,
    input_bytes: u64,
    output_bytes: u64,
    output: &str,
    took: Duration,
) -> String {
    let ratio = if input_bytes == 0 {
        "0.00%".to_string()
    } else if output_bytes > input_bytes {
        format!("x{:.2}", output_bytes as f64 / input_bytes as f64)
    } else {
        format!("{:.2}%", output_bytes as f64 * 100.0 / input_bytes as f64)
    };
    format!(
        "{input}: {ratio} ({input_bytes} => {output_bytes} bytes, {output}) in {:.2} s",
        took.as_secs_f64()
    )
}

/// Prints [`line`] on standard error when [`wanted`].
pub fn print(
    verbosity: Verbosity,
    input: &str,
    input_bytes: u64,
    output_bytes: u64,
    output: &str,
    took: Duration,
) {
    if wanted(verbosity) {
        eprintln!(
            "hatf: {}",
            line(input, input_bytes, output_bytes, output, took)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_gives_sizes_ratio_and_time() {
        assert_eq!(
            line(
                "a.mtrace",
                2000,
                50,
                "a.mtrace.hatf",
                Duration::from_millis(1234)
            ),
            "a.mtrace: 2.50% (2000 => 50 bytes, a.mtrace.hatf) in 1.23 s"
        );
        assert!(line("e", 0, 10, "o", Duration::ZERO).starts_with("e: 0.00% (0 => 10"));
        assert_eq!(
            line("a.hatf", 50, 2000, "<stdout>", Duration::from_millis(5)),
            "a.hatf: x40.00 (50 => 2000 bytes, <stdout>) in 0.01 s"
        );
    }
}

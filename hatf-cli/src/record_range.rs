//! `--records A..B`: records counted from 0, `B` exclusive, either end may be left out.

use crate::error::{CliError, CliResult};

/// Parses `A..B`, `A..`, `..B` or `..` into `(first, end)`; a missing end is `u64::MAX`.
pub fn parse(text: &str) -> CliResult<(u64, u64)> {
    let bad = |why: &str| {
        CliError::usage(format!(
            "--records {text}: {why} (expected A..B, A.. or ..B)"
        ))
    };
    let (a, b) = text.split_once("..").ok_or_else(|| bad("no `..`"))?;
    let number = |s: &str, default: u64| -> CliResult<u64> {
        if s.is_empty() {
            Ok(default)
        } else {
            s.parse::<u64>()
                .map_err(|_| bad(&format!("`{s}` is not a record number")))
        }
    };
    let (first, end) = (number(a, 0)?, number(b, u64::MAX)?);
    if end < first {
        return Err(bad("the range ends before it starts"));
    }
    Ok((first, end))
}

/// The range as the user would write it: `A..B`, or `A..` when it runs to the end.
pub fn show(first: u64, end: u64) -> String {
    if end == u64::MAX {
        format!("{first}..")
    } else {
        format!("{first}..{end}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_with_either_end_left_out() {
        assert_eq!(parse("3..10").unwrap(), (3, 10));
        assert_eq!(parse("3..").unwrap(), (3, u64::MAX));
        assert_eq!(parse("..10").unwrap(), (0, 10));
        assert_eq!(parse("..").unwrap(), (0, u64::MAX));
        assert_eq!(parse("5..5").unwrap(), (5, 5));
        for bad in ["3", "a..b", "10..3", "-1..2", "1...2"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(show(3, 10), "3..10");
        assert_eq!(show(3, u64::MAX), "3..");
    }
}

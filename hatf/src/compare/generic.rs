//! The generic engine's columns of `hatf compare`: a trace's records encoded by metatf's
//! universal writer with a DTD alone, as `hatf encode --from text --dtd X --model plain|auto`
//! writes them (or `hatf encode --dtd X` on a trace's own lines), each file decoded again by
//! the universal reader and checked equal to what was encoded.

use super::Times;
use metatf::lines::LineOptions;
use metatf::{Codec, DynRecord, TextModel, UniversalReader};
use std::time::Instant;

/// The codec of `--model plain`, as `hatf encode --from text` defaults it.
const PLAIN_CODEC: Codec = metatf::DEFAULT_CODEC;

/// A size in bytes with the times of writing it and reading it back, or why there is none.
pub type Measured = Result<(u64, Times), String>;

/// The generic engine on one trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generic {
    /// The DTD the records were encoded with (a path, as given or as in the repository).
    pub dtd: String,
    /// `Some(n)`: measured on the trace's first `n` lines only (the other columns of the row
    /// are on the whole trace).
    pub lines: Option<u64>,
    /// Records the generic engine encoded.
    pub records: u64,
    /// The format-specific layout (`hatf encode`, default settings) on the same input, for the
    /// ratio; `None` when the trace has no built-in format (`--dtd`).
    pub specific: Option<Result<u64, String>>,
    /// `--model plain`: the paper's fixed-width records, each section through zstd -3.
    pub plain: Measured,
    /// `--model auto`: predictors chosen per block by measured cost, adaptive range coding.
    pub auto: Measured,
}

impl Generic {
    /// `auto` over the format-specific layout, when both were measured.
    pub fn auto_over_specific(&self) -> Option<f64> {
        match (&self.auto, &self.specific) {
            (Ok((auto, _)), Some(Ok(specific))) if *specific > 0 => {
                Some(*auto as f64 / *specific as f64)
            }
            _ => None,
        }
    }
}

/// The records in the record text form (`hatf dump`'s output) through the generic engine:
/// `(plain, auto, records)`. Each file is checked to hold the records that the same text,
/// parsed and stored uncompressed, holds.
pub fn of_record_text(dtd: &str, dtd_name: &str, text: &[u8]) -> (Measured, Measured, u64) {
    let mut reference = Vec::new();
    let records = match metatf::encode_text_with(
        dtd,
        dtd_name,
        text,
        &mut reference,
        Codec::None,
        0,
        TextModel::Plain,
    ) {
        Ok(n) => n,
        Err(e) => {
            let why = format!("{dtd_name}: {e}");
            return (Err(why.clone()), Err(why), 0);
        }
    };
    let run = |model: TextModel| -> Measured {
        let mut file = Vec::new();
        let started = Instant::now();
        metatf::encode_text_with(
            dtd,
            dtd_name,
            text,
            &mut file,
            PLAIN_CODEC,
            metatf::default_level(PLAIN_CODEC),
            model,
        )
        .map_err(|e| e.to_string())?;
        let encode = started.elapsed();
        let started = Instant::now();
        let read = read_all(&file)?;
        let decode = started.elapsed();
        if read != records {
            return Err(format!("decoded {read} records of {records}"));
        }
        same_records(&file, &reference)?;
        Ok((file.len() as u64, Times { encode, decode }))
    };
    (run(TextModel::Plain), run(TextModel::Auto), records)
}

/// A trace's own lines through the line patterns of `dtd` (`hatf encode --dtd X trace`):
/// `(plain, auto, records)`. Each file must decode to the text byte for byte.
pub fn of_lines(dtd: &str, dtd_name: &str, text: &[u8]) -> (Measured, Measured, u64) {
    let mut records = 0;
    let mut run = |model: bool| -> Measured {
        let options = LineOptions {
            strict: false,
            model,
            stage: metatf::model::Stage::Smallest,
            codec: PLAIN_CODEC,
            level: metatf::default_level(PLAIN_CODEC),
        };
        let mut file = Vec::new();
        let started = Instant::now();
        let report = metatf::lines::encode_lines(dtd, dtd_name, text, &mut file, options)
            .map_err(|e| format!("{dtd_name}: {e}"))?;
        let encode = started.elapsed();
        records = report.records;
        let mut back = Vec::with_capacity(text.len());
        let started = Instant::now();
        metatf::lines::decode_lines(file.as_slice(), &mut back).map_err(|e| e.to_string())?;
        let decode = started.elapsed();
        if back != text {
            return Err("the file did not decode back to the same text".to_string());
        }
        Ok((file.len() as u64, Times { encode, decode }))
    };
    let plain = run(false);
    let auto = run(true);
    (plain, auto, records)
}

/// Reads every record of `file` (what a decode costs); returns how many.
fn read_all(file: &[u8]) -> Result<u64, String> {
    let mut reader = UniversalReader::new(file).map_err(|e| e.to_string())?;
    let mut n = 0;
    let mut rec = DynRecord::default();
    while reader.read_record(&mut rec).map_err(|e| e.to_string())? {
        n += 1;
    }
    Ok(n)
}

/// Checks that two files hold the same records, in the same order.
fn same_records(file: &[u8], reference: &[u8]) -> Result<(), String> {
    let mut got = UniversalReader::new(file).map_err(|e| e.to_string())?;
    let mut want = UniversalReader::new(reference).map_err(|e| e.to_string())?;
    let mut index = 0u64;
    let (mut a, mut b) = (DynRecord::default(), DynRecord::default());
    loop {
        let more_a = got.read_record(&mut a).map_err(|e| e.to_string())?;
        let more_b = want.read_record(&mut b).map_err(|e| e.to_string())?;
        match (more_a, more_b) {
            (false, false) => return Ok(()),
            (true, true) if a.name == b.name && a.fields == b.fields => index += 1,
            _ => return Err(format!("record {index} did not decode back to itself")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DTD: &str = "// Meta-TF version 1.0
tag.width = 1;
address.width = 8;
address.interpretation = none;
size.width = 4;
size.interpretation = none;
op : (tag, address, size) {
    tag.value = 4;
}
";

    #[test]
    fn both_models_round_trip_and_count_the_records() {
        let text: String = (0..2000u64)
            .map(|i| format!("op address={} size={}\n", 4096 + 16 * i, 16 + i % 3))
            .collect();
        let (plain, auto, records) = of_record_text(DTD, "ops.dtd", text.as_bytes());
        assert_eq!(records, 2000);
        let (plain, _) = plain.unwrap();
        let (auto, _) = auto.unwrap();
        assert!(auto > 0 && plain > 0);
        assert!((auto as usize) < text.len() / 20, "{auto}");
    }

    #[test]
    fn a_text_the_dtd_does_not_describe_is_an_error_in_both_columns() {
        let (plain, auto, records) = of_record_text(DTD, "ops.dtd", b"nothing here=1\n");
        assert_eq!(records, 0);
        assert!(plain.unwrap_err().contains("ops.dtd"));
        assert!(auto.is_err());
    }
}

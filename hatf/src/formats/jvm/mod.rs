//! JVM traces as TraceVis reads them (seed `002_…`, Appendix B of its thesis): colon-separated
//! text records `VS VI VD CL OA OF TB TE MN MX FP` with class and method names, shipped as the
//! member `trace` of a ZIP archive. `jvm-zip` takes the archive, `jvm` the bare text. The model
//! and the byte layout are in `docs/FORMAT.md §6.3`.

pub mod check;
pub mod decode;
pub mod encode;
pub mod line;
pub mod model;
pub mod records;
pub mod streams;
pub mod tables;
pub mod zip;

use std::io::{Read, Write};

use metatf::container::ContainerHeader;

use crate::format::{
    DecodeFn, DecodeOptions, DecodeRecordsFn, EncodeFn, EncodeOptions, EncodeReport, FormatError,
    ThreadLister, ThreadListerFn,
};
use crate::shared::container::blocks::{self, write_error, BlockWriter};
use crate::shared::format_parts::{FormatParts, StatsFn, ValidateFn};
use encode::BlockPlan;

/// Format id of the bare text.
pub const FORMAT: &str = "jvm";
/// The DTD embedded in `jvm` and `jvm-zip` files.
pub const DTD: &str = include_str!("../../../../dtds/jvm.dtd");
/// The `layout` property of the files the encoders write: each block starts a fresh model, so
/// any block decodes without the blocks before it, and `decode --records` reads only the blocks
/// it needs.
pub const LAYOUT: &str = "jvm-model-2";

/// Checks that `header`'s file has the layout of JVM records ([`LAYOUT`]); an error naming
/// `file` for any other.
pub fn check_layout(header: &ContainerHeader, file: &str) -> Result<(), FormatError> {
    crate::shared::container::layout::require(header, file, LAYOUT, "JVM records")
}

/// Encodes the bare text of a JVM trace into `output`, its blocks cut as `plan` says
/// ([`BlockPlan::DEFAULT`] is what `hatf encode` writes; other plans serve tests).
pub fn encode_text(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
    plan: BlockPlan,
) -> Result<EncodeReport, FormatError> {
    let mut out = BlockWriter::new(output, &plan.header(FORMAT), options)?;
    let report = encode::encode_into(input, &mut out, options, plan)?;
    out.finish()?;
    Ok(report)
}

/// True when the complete lines at the start of `head` (at most 8, the last cut one ignored)
/// are JVM trace records and there is at least one.
pub fn looks_like_trace(head: &[u8]) -> bool {
    let complete = match memchr::memrchr(b'\n', head) {
        Some(p) => &head[..p],
        None => head,
    };
    let mut n = 0;
    for l in complete.split(|&b| b == b'\n').take(8) {
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        if line::parse(l).is_err() {
            return false;
        }
        n += 1;
    }
    n > 0 && !complete.is_empty()
}

/// Lists each block's threads again (files with a model layout; a `jvm-zip` file's first
/// block, the archive's bytes, has no records and lists none).
fn thread_lister(header: &ContainerHeader, file: &str) -> Option<ThreadLister> {
    check_layout(header, file).ok()?;
    let mut lister = decode::ThreadLister::new();
    let file = file.to_string();
    Some(Box::new(move |block| lister.block(block, &file)))
}

/// The bare text of a JVM trace (the `trace` member, unzipped).
pub struct Jvm;

/// The bare text of a JVM trace.
pub static JVM: Jvm = Jvm;

impl FormatParts for Jvm {
    const NAME: &'static str = FORMAT;
    const DESCRIPTION: &'static str =
        "JVM trace text (TraceVis `trace`: VS/OA/MN/MX... colon-separated records)";
    const DETECT: fn(&[u8]) -> bool = looks_like_trace;
    const ENCODE: EncodeFn =
        |input, output, options| encode_text(input, output, options, BlockPlan::DEFAULT);
    const DECODE: DecodeFn = decode_text;
    const DECODE_RECORDS: Option<DecodeRecordsFn> = Some(|input, output, options, range, note| {
        records::decode_records(FORMAT, input, output, options, range, note)
    });
    const THREAD_LISTER: Option<ThreadListerFn> = Some(thread_lister);
    const STATS: Option<StatsFn> = Some(|input, name, _| check::stats(input, name));
    const VALIDATE: Option<ValidateFn> = Some(|input, name, report| {
        check::validate(input, name).map(|problems| problems.into_iter().for_each(report))
    });
}

/// The ZIP archive holding a JVM trace: `stats` and `validate` read the member `trace`.
pub struct JvmZip;

/// The ZIP archive holding a JVM trace.
pub static JVM_ZIP: JvmZip = JvmZip;

impl FormatParts for JvmZip {
    const NAME: &'static str = zip::FORMAT;
    const DESCRIPTION: &'static str =
        "zip archive holding a JVM trace in its member `trace` (TraceVis)";
    const DETECT: fn(&[u8]) -> bool = zip::detect;
    const ENCODE: EncodeFn =
        |input, output, options| zip::encode(input, output, options, BlockPlan::DEFAULT);
    const DECODE: DecodeFn = zip::decode;
    const DECODE_RECORDS: Option<DecodeRecordsFn> = Some(|input, output, options, range, note| {
        records::decode_records(zip::FORMAT, input, output, options, range, note)
    });
    const THREAD_LISTER: Option<ThreadListerFn> = Some(thread_lister);
    const STATS: Option<StatsFn> =
        Some(|input, name, _| zip::with_member_text(input, name, |t| check::stats(t, name)));
    const VALIDATE: Option<ValidateFn> = Some(|input, name, report| {
        zip::with_member_text(input, name, |t| check::validate(t, name))
            .map(|problems| problems.into_iter().for_each(report))
    });
}

/// Writes the text of a `jvm` file back; returns the number of lines.
fn decode_text(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut reader = blocks::open(input, FORMAT, file)?;
    check_layout(reader.header(), file)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, output);
    let lines = decode::decode_blocks(&mut reader, &mut out, file)?;
    out.flush().map_err(|e| write_error(file, e))?;
    Ok(lines)
}

#[cfg(test)]
mod tests {
    #[test]
    fn embedded_dtd_is_valid_meta_tf() {
        if let Err(d) = metatf_dtd::parse_schema(super::DTD, "jvm.dtd") {
            panic!("jvm.dtd: {d}");
        }
    }

    #[test]
    fn detection_needs_records() {
        assert!(super::looks_like_trace(b"VS:1\nVI:2\nCL:3:A\n"));
        assert!(super::looks_like_trace(b"VS:1\r\nVI:2\r\n"));
        assert!(!super::looks_like_trace(b"A 1 2 3 4 5 6\n"));
        assert!(!super::looks_like_trace(b""));
    }
}

//! JVM traces as TraceVis reads them (seed `002_…`, Appendix B of its thesis): colon-separated
//! text records `VS VI VD CL OA OF TB TE MN MX FP` with class and method names, shipped as the
//! member `trace` of a ZIP archive. `jvm-zip` takes the archive, `jvm` the bare text. The model
//! and the byte layout are in `docs/FORMAT.md §6.3`.

pub mod check;
pub mod line;
pub mod model;
pub mod streams;
pub mod tables;
pub mod text;
pub mod zip;

use std::io::{Read, Write};

use metatf::container::{ContainerHeader, PROPERTY_LAYOUT};

use crate::alloc::blocks::{self, write_error, BlockWriter};
use crate::format::{
    DecodeOptions, EncodeOptions, EncodeReport, FormatError, Problem, StatsReport, TraceFormat,
};

/// Format id of the bare text.
pub const FORMAT: &str = "jvm";
/// The DTD embedded in `jvm` and `jvm-zip` files.
pub const DTD: &str = include_str!("../../../../dtds/jvm.dtd");

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

/// Lists each block's threads again (files with the model layout; a `jvm-zip` file's first
/// block, the archive's bytes, has no records and lists none).
fn thread_lister(header: &ContainerHeader, file: &str) -> Option<crate::format::ThreadLister> {
    if header.property(PROPERTY_LAYOUT) != Some(zip::LAYOUT) {
        return None;
    }
    let mut lister = text::ThreadLister::default();
    let file = file.to_string();
    Some(Box::new(move |block| lister.block(block, &file)))
}

/// The bare text of a JVM trace (the `trace` member, unzipped).
pub struct Jvm;

/// The ZIP archive holding a JVM trace.
pub struct JvmZip;

/// The JVM trace formats, in detection order.
pub fn formats() -> Vec<&'static dyn TraceFormat> {
    vec![&JvmZip, &Jvm]
}

impl TraceFormat for Jvm {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn description(&self) -> &'static str {
        "JVM trace text (TraceVis `trace`: VS/OA/MN/MX... colon-separated records)"
    }

    fn detect(&self, head: &[u8]) -> bool {
        looks_like_trace(head)
    }

    fn encode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &EncodeOptions,
    ) -> Result<EncodeReport, FormatError> {
        let header = ContainerHeader {
            dtd: DTD.to_string(),
            format: FORMAT.to_string(),
            properties: vec![
                ("encoding".to_string(), "auto".to_string()),
                (PROPERTY_LAYOUT.to_string(), zip::LAYOUT.to_string()),
            ],
        };
        let mut out = BlockWriter::new(output, &header, options)?;
        let report = text::encode_into(input, &mut out, options)?;
        out.finish()?;
        Ok(report)
    }

    fn decode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &DecodeOptions,
    ) -> Result<u64, FormatError> {
        let file = options.input_name.as_str();
        let mut reader = blocks::open(input, FORMAT, file)?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, output);
        let lines = text::decode_blocks(&mut reader, &mut out, file)?;
        out.flush().map_err(|e| write_error(file, e))?;
        Ok(lines)
    }

    fn thread_lister(
        &self,
        header: &ContainerHeader,
        file: &str,
    ) -> Option<crate::format::ThreadLister> {
        thread_lister(header, file)
    }

    fn stats(
        &self,
        input: &mut dyn Read,
        input_name: &str,
    ) -> Option<Result<StatsReport, FormatError>> {
        Some(check::stats(input, input_name))
    }

    fn validate(
        &self,
        input: &mut dyn Read,
        input_name: &str,
    ) -> Option<Result<Vec<Problem>, FormatError>> {
        Some(check::validate(input, input_name))
    }
}

impl TraceFormat for JvmZip {
    fn name(&self) -> &'static str {
        self::zip::FORMAT
    }

    fn description(&self) -> &'static str {
        "zip archive holding a JVM trace in its member `trace` (TraceVis)"
    }

    fn detect(&self, head: &[u8]) -> bool {
        self::zip::detect(head)
    }

    fn encode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &EncodeOptions,
    ) -> Result<EncodeReport, FormatError> {
        self::zip::encode(input, output, options)
    }

    fn decode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &DecodeOptions,
    ) -> Result<u64, FormatError> {
        self::zip::decode(input, output, options)
    }

    fn thread_lister(
        &self,
        header: &ContainerHeader,
        file: &str,
    ) -> Option<crate::format::ThreadLister> {
        thread_lister(header, file)
    }

    fn stats(
        &self,
        input: &mut dyn Read,
        input_name: &str,
    ) -> Option<Result<StatsReport, FormatError>> {
        Some(
            self::zip::member_text(input, input_name)
                .and_then(|t| check::stats(&mut t.as_slice(), input_name)),
        )
    }

    fn validate(
        &self,
        input: &mut dyn Read,
        input_name: &str,
    ) -> Option<Result<Vec<Problem>, FormatError>> {
        Some(
            self::zip::member_text(input, input_name)
                .and_then(|t| check::validate(&mut t.as_slice(), input_name)),
        )
    }
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

//! Java heap traces: Elephant Tracks ET2 and ET3, and the ZIP-packed JVM trace.
//!
//! ET2 and ET3 share one record syntax and differ in the field order of `U` records; both
//! formats detect the order per block, so either name reads either dialect losslessly. The
//! stream layout is described in `docs/FORMAT.md §6.2`.

use std::io::{Read, Write};

use crate::format::{
    DecodeOptions, EncodeOptions, EncodeReport, FormatError, ProblemSink, StatsReport, TraceFormat,
};

mod block_text;
pub mod check;
pub mod decode;
pub mod encode;
pub mod line;
pub mod live;
pub mod model;
pub mod names;
mod pipeline;
#[cfg(unix)]
mod positioned;
pub mod print;
mod rank_list;
mod recent;
mod stack;
mod streamed;
pub mod streams;
mod witnessed;

use encode::Flavour;
use model::UOrder;

/// The DTD embedded in `et2` files.
pub const ET2_DTD: &str = include_str!("../../../dtds/et2.dtd");
/// The DTD embedded in `et3` files.
pub const ET3_DTD: &str = include_str!("../../../dtds/et3.dtd");

/// An Elephant Tracks flavour (`et2` or `et3`).
pub struct EtFormat {
    flavour: Flavour,
    description: &'static str,
}

/// ET2 (`U holder field value thread`).
pub static ET2: EtFormat = EtFormat {
    flavour: Flavour {
        format: "et2",
        dtd: ET2_DTD,
        default_order: UOrder::HolderFieldValue,
    },
    description: "Elephant Tracks 2 text trace (U obj field target thread)",
};

/// ET3 (`U holder value field thread`).
pub static ET3: EtFormat = EtFormat {
    flavour: Flavour {
        format: "et3",
        dtd: ET3_DTD,
        default_order: UOrder::HolderValueField,
    },
    description: "Elephant Tracks 3 text trace (U src target field thread)",
};

/// The Java heap trace formats, in detection order.
pub fn formats() -> Vec<&'static dyn TraceFormat> {
    vec![&ET2, &ET3]
}

/// Looks at the first lines of `head`: `Some(order)` when they are ET records (the order the
/// `U` records vote for, if any), `None` when this is not an ET trace.
pub fn sniff(head: &[u8]) -> Option<Option<UOrder>> {
    let mut records = 0usize;
    let mut bad = 0usize;
    let (mut fv, mut vf) = (0usize, 0usize);
    // The last piece of `head` may be a cut line; ignore it.
    let complete = match memchr::memrchr(b'\n', head) {
        Some(p) => &head[..p],
        None => return None,
    };
    for line in complete.split(|&b| b == b'\n').take(2000) {
        match line::classify(line) {
            line::Line::Canonical(r) | line::Line::Spelled(r) => {
                records += 1;
                if r.kind == line::Kind::U {
                    match model::u_order_vote(&r) {
                        Some(UOrder::HolderFieldValue) => fv += 1,
                        Some(UOrder::HolderValueField) => vf += 1,
                        None => {}
                    }
                }
            }
            line::Line::Blank | line::Line::Comment | line::Line::WhiteSpace => {}
            line::Line::Bad { .. } => bad += 1,
        }
    }
    if records == 0 || bad * 20 > records {
        return None;
    }
    Some(match fv.cmp(&vf) {
        std::cmp::Ordering::Greater => Some(UOrder::HolderFieldValue),
        std::cmp::Ordering::Less => Some(UOrder::HolderValueField),
        std::cmp::Ordering::Equal => None,
    })
}

impl TraceFormat for EtFormat {
    fn name(&self) -> &'static str {
        self.flavour.format
    }

    fn description(&self) -> &'static str {
        self.description
    }

    fn detect(&self, head: &[u8]) -> bool {
        match sniff(head) {
            None => false,
            Some(Some(order)) => order == self.flavour.default_order,
            // No U records to tell: ET3 is the current producer.
            Some(None) => self.flavour.default_order == UOrder::HolderValueField,
        }
    }

    fn encode(
        &self,
        input: &mut (dyn Read + Send),
        output: &mut dyn Write,
        options: &EncodeOptions,
    ) -> Result<EncodeReport, FormatError> {
        encode::encode(&self.flavour, input, output, options)
    }

    fn decode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &DecodeOptions,
    ) -> Result<u64, FormatError> {
        decode::decode(input, output, options)
    }

    fn decode_records(
        &self,
        input: &mut dyn crate::seek::ReadSeek,
        output: &mut dyn Write,
        options: &DecodeOptions,
        range: std::ops::Range<u64>,
        note: crate::seek::Note<'_>,
    ) -> Option<Result<u64, FormatError>> {
        Some(decode::decode_records(
            input,
            output,
            options,
            range.start,
            range.end,
            note,
        ))
    }

    fn thread_lister(
        &self,
        _header: &metatf::container::ContainerHeader,
        file: &str,
    ) -> Option<crate::format::ThreadLister> {
        let file = file.to_string();
        Some(Box::new(move |block| {
            decode::block_threads(block).map_err(|m| FormatError {
                file: file.clone(),
                position: format!("byte {}", block.offset),
                message: format!("block {}: {m}", block.index),
            })
        }))
    }

    fn stats(
        &self,
        input: &mut dyn Read,
        input_name: &str,
    ) -> Option<Result<StatsReport, FormatError>> {
        Some(check::stats(input, input_name, self.flavour.default_order))
    }

    fn validate(
        &self,
        input: &mut dyn Read,
        input_name: &str,
        report: ProblemSink<'_>,
    ) -> Option<Result<(), FormatError>> {
        Some(
            check::validate(input, input_name)
                .map(|problems| problems.into_iter().for_each(report)),
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn embedded_dtds_are_valid_meta_tf() {
        for (name, text) in [("et2.dtd", super::ET2_DTD), ("et3.dtd", super::ET3_DTD)] {
            if let Err(d) = metatf_dtd::parse_schema(text, name) {
                panic!("{name}: {d}");
            }
        }
    }
}

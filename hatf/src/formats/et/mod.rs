//! Java heap traces: Elephant Tracks ET2 and ET3, and the ZIP-packed JVM trace.
//!
//! ET2 and ET3 share one record syntax and differ in the field order of `U` records; both
//! formats detect the order per block, so either name reads either dialect losslessly. The
//! stream layout is described in `docs/FORMAT.md §6.2`.

use std::io::{Read, Write};
use std::marker::PhantomData;

use crate::format::{
    DecodeFn, DecodeRecordsFn, EncodeFn, EncodeOptions, EncodeReport, FormatError, StatsReport,
    ThreadListerFn,
};
use crate::shared::format_parts::{FormatParts, StatsFn, StoredNamesFn, ValidateFn};

pub mod check;
pub mod decode;
pub mod encode;
pub mod line;
pub mod model;
pub mod records;
pub mod sections;
pub mod text;

use encode::Flavour;
use model::UOrder;

/// The DTD embedded in `et2` files.
pub const ET2_DTD: &str = include_str!("../../../../dtds/et2.dtd");
/// The DTD embedded in `et3` files.
pub const ET3_DTD: &str = include_str!("../../../../dtds/et3.dtd");

/// An Elephant Tracks dialect: the flavour its files are written in, and its description.
pub trait Dialect: Sync {
    /// Format name, DTD and `U` field order.
    const FLAVOUR: Flavour;
    /// [`crate::TraceFormat::description`].
    const DESCRIPTION: &'static str;
}

/// ET2 (`U holder field value thread`).
pub struct Et2;

impl Dialect for Et2 {
    const FLAVOUR: Flavour = Flavour {
        format: "et2",
        dtd: ET2_DTD,
        default_order: UOrder::HolderFieldValue,
    };
    const DESCRIPTION: &'static str = "Elephant Tracks 2 text trace (U obj field target thread)";
}

/// ET3 (`U holder value field thread`).
pub struct Et3;

impl Dialect for Et3 {
    const FLAVOUR: Flavour = Flavour {
        format: "et3",
        dtd: ET3_DTD,
        default_order: UOrder::HolderValueField,
    };
    const DESCRIPTION: &'static str = "Elephant Tracks 3 text trace (U src target field thread)";
}

/// The Elephant Tracks format of dialect `D`.
pub struct EtFormat<D>(PhantomData<D>);

/// ET2 (`U holder field value thread`).
pub static ET2: EtFormat<Et2> = EtFormat(PhantomData);

/// ET3 (`U holder value field thread`).
pub static ET3: EtFormat<Et3> = EtFormat(PhantomData);

/// How many lines of the head decide whether a text is an ET trace and vote on its `U` order.
const SNIFF_LINES: usize = 2000;

/// Looks at the first lines of `head`: `Some(order)` when they are ET records (the order the
/// `U` records vote for, if any), `None` when this is not an ET trace.
///
/// When no `U` record tells the order, records glued onto one line (`E 114 205029188E 95
/// 205029188`) vote for ET2: its Java agent writes from several threads without a lock, and
/// no ET3 trace shows them, so an ET2 `trace.bz2` without `U` records is still named ET2.
pub fn sniff(head: &[u8]) -> Option<Option<UOrder>> {
    let mut records = 0usize;
    let mut bad = 0usize;
    let mut glued = 0usize;
    let (mut fv, mut vf) = (0usize, 0usize);
    // The last piece of `head` may be a cut line; ignore it.
    let complete = match memchr::memrchr(b'\n', head) {
        Some(p) => &head[..p],
        None => return None,
    };
    for (number, line) in complete.split(|&b| b == b'\n').enumerate() {
        if number >= SNIFF_LINES {
            // Past the lines that decide whether this is ET at all, only look for the one
            // sign of ET2's writer, which may first show a few thousand lines in.
            if glued == 0 && is_glued(line) {
                glued += 1;
            }
            continue;
        }
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
            line::Line::Bad { .. } => {
                bad += 1;
                if is_glued(line) {
                    glued += 1;
                }
            }
        }
    }
    if records == 0 || bad * 20 > records {
        return None;
    }
    Some(match fv.cmp(&vf) {
        std::cmp::Ordering::Greater => Some(UOrder::HolderFieldValue),
        std::cmp::Ordering::Less => Some(UOrder::HolderValueField),
        std::cmp::Ordering::Equal if glued > 0 => Some(UOrder::HolderFieldValue),
        std::cmp::Ordering::Equal => None,
    })
}

/// True when `line` is two records written onto one line: a record letter right after a
/// digit, with a record on each side. (Lines without such a letter, nearly all, cost one scan.)
fn is_glued(line: &[u8]) -> bool {
    let is_record = |l: &[u8]| {
        matches!(
            line::classify(l),
            line::Line::Canonical(_) | line::Line::Spelled(_)
        )
    };
    line.windows(2).enumerate().any(|(i, w)| {
        w[0].is_ascii_digit()
            && w[1].is_ascii_uppercase()
            && is_record(&line[..=i])
            && is_record(&line[i + 1..])
    })
}

impl<D: Dialect> FormatParts for EtFormat<D> {
    const NAME: &'static str = D::FLAVOUR.format;
    const DESCRIPTION: &'static str = D::DESCRIPTION;
    const DETECT: fn(&[u8]) -> bool = detect::<D>;
    const ENCODE: EncodeFn = encode_as::<D>;
    const DECODE: DecodeFn = decode::decode;
    const DECODE_RECORDS: Option<DecodeRecordsFn> = Some(|input, output, options, range, note| {
        records::decode_records(input, output, options, range.start, range.end, note)
    });
    const THREAD_LISTER: Option<ThreadListerFn> = Some(|_header, file| {
        let file = file.to_string();
        Some(Box::new(move |block| {
            decode::block_threads(block)
                .map_err(|m| decode::block_error(&file, block.offset, block, m))
        }))
    });
    const STATS: Option<StatsFn> = Some(stats::<D>);
    const VALIDATE: Option<ValidateFn> = Some(|input, input_name, report| {
        check::validate(input, input_name).map(|problems| problems.into_iter().for_each(report))
    });
    const STORED_NAMES: Option<StoredNamesFn> = Some(sections::names::stored);
}

/// True when `head` is an Elephant Tracks trace whose `U` records vote for dialect `D`'s order.
fn detect<D: Dialect>(head: &[u8]) -> bool {
    match sniff(head) {
        None => false,
        Some(Some(order)) => order == D::FLAVOUR.default_order,
        // No U records to tell: ET3 is the current producer.
        Some(None) => D::FLAVOUR.default_order == UOrder::HolderValueField,
    }
}

/// Encodes a trace as dialect `D`'s file.
fn encode_as<D: Dialect>(
    input: &mut (dyn Read + Send),
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    encode::encode(&D::FLAVOUR, input, output, options)
}

/// Statistics of a trace, `U` records read in dialect `D`'s order unless they say otherwise.
fn stats<D: Dialect>(
    input: &mut dyn Read,
    input_name: &str,
    name_files: &[(String, Vec<u8>)],
) -> Result<StatsReport, FormatError> {
    check::stats(
        input,
        input_name,
        D::FLAVOUR.default_order,
        &sections::names::Names::parse(name_files),
    )
}

#[cfg(test)]
mod tests {
    use super::{sniff, UOrder, ET2, ET3};
    use crate::format::TraceFormat;

    const NO_U: &str = "M 493 0 2018699554\nE 493 2018699554\nW 650023597 123 2018699554\n";

    #[test]
    fn glued_records_without_u_records_are_et2() {
        let glued = format!(
            "{}M 515 0 2018699554W 650023597 123 2018699554\n{}",
            NO_U.repeat(4),
            NO_U.repeat(4)
        );
        assert_eq!(
            sniff(glued.as_bytes()),
            Some(Some(UOrder::HolderFieldValue))
        );
        assert!(ET2.detect(glued.as_bytes()) && !ET3.detect(glued.as_bytes()));
        // Without the glued line nothing tells the dialects apart: ET3, the current producer.
        assert_eq!(sniff(NO_U.as_bytes()), Some(None));
        assert!(ET3.detect(NO_U.as_bytes()) && !ET2.detect(NO_U.as_bytes()));
    }

    #[test]
    fn a_glued_line_past_the_first_lines_still_votes() {
        // As in the et2-java traces, whose first glued line is line 2,091.
        let late = format!("{}E 96 205029188E 104 205029188\n", NO_U.repeat(800));
        assert_eq!(sniff(late.as_bytes()), Some(Some(UOrder::HolderFieldValue)));
    }

    #[test]
    fn u_records_outvote_glued_lines() {
        let et3 = format!(
            "U 0 914504136 2 1283928880\nU 0 99747242 4 1283928880\nE 114 205029188E 95 205029188\n{}",
            NO_U.repeat(8)
        );
        assert_eq!(sniff(et3.as_bytes()), Some(Some(UOrder::HolderValueField)));
    }

    #[test]
    fn a_bad_line_that_is_not_two_records_is_no_vote() {
        let odd = format!(
            "{}M 515 0 2018699554W 650023597\n{}",
            NO_U.repeat(4),
            NO_U.repeat(4)
        );
        assert_eq!(sniff(odd.as_bytes()), Some(None));
    }

    #[test]
    fn embedded_dtds_are_valid_meta_tf() {
        for (name, text) in [("et2.dtd", super::ET2_DTD), ("et3.dtd", super::ET3_DTD)] {
            if let Err(d) = metatf_dtd::parse_schema(text, name) {
                panic!("{name}: {d}");
            }
        }
    }
}

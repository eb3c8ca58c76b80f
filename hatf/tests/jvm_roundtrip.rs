//! JVM traces (TraceVis `trace`, bare and zipped) come back byte for byte, the zip container
//! included, and the modelled files are small.

mod jvm_support;

use hatf::format::{DecodeOptions, EncodeOptions, TraceFormat};
use hatf::internal::formats::jvm::{JVM, JVM_ZIP};
use jvm_support::{trace, zip_of, Ends};
use proptest::prelude::*;

fn encode(
    f: &dyn TraceFormat,
    input: &[u8],
    options: &EncodeOptions,
) -> Result<Vec<u8>, hatf::FormatError> {
    let mut out = Vec::new();
    f.encode(&mut &input[..], &mut out, options)?;
    Ok(out)
}

fn decode(f: &dyn TraceFormat, bin: &[u8]) -> Vec<u8> {
    let mut back = Vec::new();
    f.decode(&mut &bin[..], &mut back, &DecodeOptions::default())
        .expect("decodes");
    back
}

fn round_trip(f: &dyn TraceFormat, input: &[u8]) -> Vec<u8> {
    let bin = encode(f, input, &EncodeOptions::default()).expect("encodes");
    let back = decode(f, &bin);
    assert!(
        back == input,
        "{}: decoded bytes differ from the input",
        f.name()
    );
    bin
}

fn property(bin: &[u8], key: &str) -> Option<String> {
    let r = metatf::container::ContainerReader::new(bin).expect("a container");
    r.header()
        .properties
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
}

#[test]
fn text_round_trips_with_every_line_end() {
    for (seed, ends) in [(1, Ends::Lf), (2, Ends::CrLf), (3, Ends::Mixed)] {
        let (text, _) = trace(seed, 20_000, 3, ends);
        let bin = round_trip(&JVM, text.as_bytes());
        assert!(
            bin.len() * 5 < text.len(),
            "{ends:?}: {} -> {}",
            text.len(),
            bin.len()
        );
        // Without the final line end, and with a non-canonical but legal record.
        let cut = text.trim_end();
        round_trip(&JVM, cut.as_bytes());
        let odd = format!("{}OA:007:A:01\nMX:1:1:A:m\r", text);
        round_trip(&JVM, odd.as_bytes());
    }
    round_trip(&JVM, b"");
    round_trip(&JVM, b"VS:0");
}

#[test]
fn zips_stored_and_deflated_by_the_zip_crate_are_modelled_and_come_back() {
    let (text, _) = trace(7, 30_000, 4, Ends::Mixed);
    for (method, level, expect) in [
        (zip::CompressionMethod::Stored, None, "stored"),
        (zip::CompressionMethod::Deflated, None, "flate2-level-6"),
        (zip::CompressionMethod::Deflated, Some(1), "flate2-level-1"),
        (zip::CompressionMethod::Deflated, Some(9), "flate2-level-9"),
    ] {
        let z = zip_of(&text, method, level);
        assert!(hatf::detect(&z[..z.len().min(65536)]).is_some_and(|f| f.name() == "jvm-zip"));
        let bin = round_trip(&JVM_ZIP, &z);
        assert_eq!(property(&bin, "deflate").as_deref(), Some(expect));
        assert_eq!(
            property(&bin, "layout").as_deref(),
            Some(hatf::internal::formats::jvm::LAYOUT)
        );
        assert!(
            bin.len() * 2 < z.len().min(text.len()),
            "{method:?} {level:?}: zip {} -> {}",
            z.len(),
            bin.len()
        );
    }
}

#[test]
fn a_zip_deflated_by_another_deflater_is_stored_as_is() {
    let (text, _) = trace(8, 3_000, 2, Ends::Lf);
    // zip's levels above 9 use zopfli, whose output flate2 does not reproduce.
    let z = zip_of(&text, zip::CompressionMethod::Deflated, Some(15));
    let bin = round_trip(&JVM_ZIP, &z);
    assert_eq!(property(&bin, "layout").as_deref(), Some("original-bytes"));
    assert!(property(&bin, "deflate-reason").is_some_and(|r| r.contains("flate2")));
}

#[test]
fn detection_takes_jvm_and_leaves_other_formats_alone() {
    let (text, _) = trace(9, 500, 2, Ends::Lf);
    assert_eq!(hatf::detect(text.as_bytes()).map(|f| f.name()), Some("jvm"));
    let mr = "186: malloc 0xb6027400 1024\n186: free 0xb6027400\n";
    let z = zip_of(mr, zip::CompressionMethod::Deflated, None);
    assert_eq!(
        hatf::detect(&z).map(|f| f.name()),
        Some("memory-replay-zip")
    );
    let et = "N 1 16 1 1 0 7\nM 2 1 7\nE 2 7\n";
    assert_ne!(hatf::detect(et.as_bytes()).map(|f| f.name()), Some("jvm"));
    assert!(hatf::by_name("jvm").is_some() && hatf::by_name("jvm-zip").is_some());
}

#[test]
fn a_damaged_line_is_an_error_at_its_line_and_column_unless_kept() {
    let (text, _) = trace(10, 2_000, 2, Ends::Lf);
    let mut lines: Vec<&str> = text.lines().collect();
    lines[100] = "OA:123:java/lang/String:12x4";
    lines[200] = "ZZ:1";
    let damaged = lines.join("\n") + "\n";
    let e = encode(&JVM, damaged.as_bytes(), &EncodeOptions::default()).unwrap_err();
    assert_eq!(e.position, "101:25", "{e}");
    assert!(
        e.message.contains("12x4") && e.message.contains("--keep-bad-lines"),
        "{e}"
    );
    let keep = EncodeOptions {
        keep_bad_lines: true,
        ..EncodeOptions::default()
    };
    let mut out = Vec::new();
    let report = JVM
        .encode(&mut damaged.as_bytes(), &mut out, &keep)
        .expect("kept");
    assert_eq!(report.bad_lines, 2);
    assert_eq!(decode(&JVM, &out), damaged.as_bytes());
    // Inside a zip the error names the member.
    let z = zip_of(&damaged, zip::CompressionMethod::Deflated, None);
    let e = encode(&JVM_ZIP, &z, &EncodeOptions::default()).unwrap_err();
    assert_eq!(e.position, "101:25");
    assert!(e.file.ends_with("!trace"), "{e}");
    let bin = encode(&JVM_ZIP, &z, &keep).expect("kept");
    assert_eq!(decode(&JVM_ZIP, &bin), z);
}

fn line_strategy() -> impl Strategy<Value = String> {
    let name = "[a-zA-Z/$<>\\[;]{0,12}";
    let num = prop_oneof![
        Just(0i64),
        -3i64..3,
        any::<i32>().prop_map(i64::from),
        any::<i64>()
    ];
    prop_oneof![
        (prop::sample::select(vec!["VS", "VI", "VD"]), num.clone())
            .prop_map(|(k, t)| format!("{k}:{t}")),
        (num.clone(), name).prop_map(|(t, c)| format!("CL:{t}:{c}")),
        (
            prop::sample::select(vec!["OA", "OF"]),
            num.clone(),
            name,
            num.clone()
        )
            .prop_map(|(k, t, c, o)| format!("{k}:{t}:{c}:{o}")),
        (prop::sample::select(vec!["TB", "TE"]), num.clone(), 0i64..4)
            .prop_map(|(k, t, th)| format!("{k}:{t}:{th}")),
        (
            num.clone(),
            0i64..4,
            name,
            name,
            prop_oneof![Just(0i64), 1i64..6, num.clone()]
        )
            .prop_map(|(t, th, c, m, o)| format!("MN:{t}:{th}:{c}:{m}:{o}")),
        (
            prop::sample::select(vec!["MX", "FP"]),
            num,
            0i64..4,
            name,
            name
        )
            .prop_map(|(k, t, th, c, m)| format!("{k}:{t}:{th}:{c}:{m}")),
        "[ -~]{0,20}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn any_lines_round_trip_with_kept_bad_lines(
        lines in prop::collection::vec((line_strategy(), prop::sample::select(vec!["\n", "\r\n", ""])), 0..60)
    ) {
        let text: String = lines.iter().map(|(l, e)| format!("{l}{e}")).collect();
        let keep = EncodeOptions { keep_bad_lines: true, ..EncodeOptions::default() };
        let bin = encode(&JVM, text.as_bytes(), &keep).expect("encodes");
        prop_assert_eq!(decode(&JVM, &bin), text.as_bytes());
    }
}

//! `decode_records` for JVM traces (`jvm` and `jvm-zip`): a record is a line, the output is
//! exactly those lines of the text, only the blocks holding them are read (every other block
//! is damaged and the range still decodes), and files of the older layout, whose model carried
//! across blocks, still decode whole and by range.

mod jvm_support;

use std::io::Cursor;
use std::ops::Range;

use hatf::format::{DecodeOptions, EncodeOptions, TraceFormat};
use hatf::internal::formats::jvm::encode::BlockPlan;
use hatf::internal::formats::jvm::{encode_text, JVM, JVM_ZIP};
use jvm_support::{trace, zip_of, Ends};

/// Lines per block in these tests: small, so that a short trace has many blocks.
const LINES: u64 = 1000;

/// Blocks of [`LINES`] lines.
fn plan() -> BlockPlan {
    BlockPlan { lines: LINES }
}

fn options() -> EncodeOptions {
    EncodeOptions {
        input_name: "t".into(),
        level: Some(3),
        ..EncodeOptions::default()
    }
}

/// A generated trace with CRLF and LF ends, a line kept verbatim (`+` sign) in its second
/// block, and no line end on its last line.
fn text() -> Vec<u8> {
    let (text, _) = trace(7, 6_000, 3, Ends::Mixed);
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    lines.insert(1500, "VS:+1\n");
    let mut text = lines.concat().into_bytes();
    assert_eq!(text.pop(), Some(b'\n'));
    text
}

fn encode_jvm(text: &[u8], plan: BlockPlan) -> Vec<u8> {
    let mut bin = Vec::new();
    encode_text(&mut &text[..], &mut bin, &options(), plan).expect("encodes");
    bin
}

fn encode_zip(zip: &[u8], plan: BlockPlan) -> Vec<u8> {
    let mut bin = Vec::new();
    hatf::internal::formats::jvm::zip::encode(&mut &zip[..], &mut bin, &options(), plan)
        .expect("encodes");
    bin
}

/// Records `range` of `bin`, with the notes the decoder gave.
fn records(
    f: &dyn TraceFormat,
    bin: &[u8],
    range: Range<u64>,
) -> Result<(Vec<u8>, u64, Vec<String>), String> {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let options = DecodeOptions {
        input_name: "t.hatf".into(),
        ..DecodeOptions::default()
    };
    let n = f
        .decode_records(&mut Cursor::new(bin), &mut out, &options, range, &mut |m| {
            notes.push(m.to_string())
        })
        .expect("the format decodes ranges")
        .map_err(|e| e.to_string())?;
    Ok((out, n, notes))
}

fn whole(f: &dyn TraceFormat, bin: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    f.decode(&mut &bin[..], &mut out, &DecodeOptions::default())
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// Lines `first..end` of `text` (the last may lack its line end), and how many there are.
fn lines(text: &[u8], range: Range<u64>) -> (Vec<u8>, u64) {
    let all: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let total = all.len() as u64;
    let (first, end) = (range.start.min(total), range.end.min(total));
    let end = end.max(first);
    (all[first as usize..end as usize].concat(), end - first)
}

/// Block offsets from the file's own index: block `k` is `spans[k]`.
fn spans(bin: &[u8]) -> Vec<Range<usize>> {
    let entries = metatf::container::read_index(&mut Cursor::new(bin)).expect("an index");
    let trailer = &bin[bin.len() - 16..];
    let index_at = u64::from_le_bytes(trailer[..8].try_into().unwrap()) as usize;
    let starts: Vec<usize> = entries.iter().map(|e| e.offset as usize).collect();
    let ends = starts.iter().skip(1).copied().chain([index_at]);
    starts
        .iter()
        .copied()
        .zip(ends)
        .map(|(a, b)| a..b)
        .collect()
}

/// `bin` with every block but `keep` (and block 0 of a `jvm-zip` file, `keep_first`) damaged:
/// a byte in the middle of each is flipped, which its checksum catches whenever it is read.
fn damage_all_but(bin: &[u8], keep: Range<usize>, keep_first: bool) -> Vec<u8> {
    let mut out = bin.to_vec();
    for (k, span) in spans(bin).into_iter().enumerate() {
        if keep.contains(&k) || (keep_first && k == 0) {
            continue;
        }
        out[span.start + span.len() / 2] ^= 0x5a;
    }
    out
}

fn check_ranges(f: &dyn TraceFormat, bin: &[u8], text: &[u8]) {
    let total = lines(text, 0..u64::MAX).1;
    assert!(total > 5 * LINES, "the trace spans several blocks");
    for range in [
        0..10,
        LINES - 3..LINES + 4,
        1499..1502,
        2 * LINES..3 * LINES,
        total - 5..u64::MAX,
        0..u64::MAX,
        total - 2..total + 100,
        LINES + 7..LINES + 7,
        total..total + 10,
        total + 50..u64::MAX,
    ] {
        let (out, n, notes) = records(f, bin, range.clone()).unwrap_or_else(|e| panic!("{e}"));
        let (want, count) = lines(text, range.clone());
        assert!(out == want, "{}: records {range:?} differ", f.name());
        assert_eq!(n, count, "{}: records {range:?} counted", f.name());
        assert!(notes.is_empty(), "{notes:?}");
    }
}

#[test]
fn ranges_of_a_bare_trace_are_its_lines() {
    let text = text();
    let bin = encode_jvm(&text, plan());
    assert!(whole(&JVM, &bin).unwrap() == text);
    check_ranges(&JVM, &bin, &text);
}

#[test]
fn ranges_of_a_zipped_trace_are_lines_of_its_member() {
    let text = String::from_utf8(text()).unwrap();
    let zip = zip_of(&text, zip::CompressionMethod::Deflated, Some(6));
    let bin = encode_zip(&zip, plan());
    assert!(whole(&JVM_ZIP, &bin).unwrap() == zip);
    check_ranges(&JVM_ZIP, &bin, text.as_bytes());
}

#[test]
fn only_the_blocks_of_the_range_are_read() {
    let text = text();
    let zip = zip_of(
        std::str::from_utf8(&text).unwrap(),
        zip::CompressionMethod::Stored,
        None,
    );
    for (f, bin, first_block) in [
        (&JVM as &dyn TraceFormat, encode_jvm(&text, plan()), 0),
        (&JVM_ZIP, encode_zip(&zip, plan()), 1),
    ] {
        // Records 2990..3010 are in blocks 2 and 3 of the text (blocks 3 and 4 of a zip's file).
        let keep = first_block + 2..first_block + 4;
        let damaged = damage_all_but(&bin, keep, first_block == 1);
        assert!(whole(f, &damaged).is_err(), "the damage is seen");
        let (out, n, notes) = records(f, &damaged, 2990..3010).unwrap();
        assert!(out == lines(&text, 2990..3010).0, "{}", f.name());
        assert_eq!(n, 20);
        assert!(notes.is_empty(), "{notes:?}");
        // A range in a damaged block is an error naming the block's place, never wrong text.
        let e = records(f, &damaged, 10..20).unwrap_err();
        assert!(e.starts_with("t.hatf:"), "{e}");
    }
}

#[test]
fn a_zip_stored_as_its_bytes_has_no_lines_to_select() {
    // A zip whose member uses a method other than stored or deflate is kept as bytes.
    let text = "VS:1\nVI:2\nVD:3\n";
    let mut zip = zip_of(text, zip::CompressionMethod::Stored, None);
    // Method 0 -> 99 in the local and central headers of `trace`: not modelled.
    for at in [8, memchr_all(&zip, b"PK\x01\x02")[0] + 10] {
        zip[at] = 99;
    }
    let mut bin = Vec::new();
    JVM_ZIP
        .encode(&mut &zip[..], &mut bin, &options())
        .expect("stored as is");
    assert!(whole(&JVM_ZIP, &bin).unwrap() == zip);
    let e = records(&JVM_ZIP, &bin, 0..2).unwrap_err();
    assert!(e.contains("no lines to select"), "{e}");
}

fn memchr_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn each_block_lists_its_threads_again() {
    // What `hatf recover` uses when an index is lost: the lister, fed the blocks in order,
    // gives the lists the encoder wrote.
    let text = text();
    let bin = encode_jvm(&text, plan());
    let (_, lists) = metatf::container::read_index_threads(&mut Cursor::new(&bin[..])).unwrap();
    let lists = lists.expect("the index lists threads");
    assert!(lists.len() > 5);
    let mut r = metatf::container::ContainerReader::new(&bin[..]).unwrap();
    let mut lister = JVM.thread_lister(r.header(), "t").expect("a lister");
    let mut listed = Vec::new();
    while let Some(b) = r.next_block().unwrap() {
        listed.push(lister(&b).unwrap_or_else(|e| panic!("{e}")));
    }
    assert_eq!(listed, lists);
}

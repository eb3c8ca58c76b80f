//! An Elephant Tracks decode into a file puts each block's text at its place, from several
//! threads, when the blocks say how long their text is; every full block says so, and a
//! block that lies about it, or a file whose blocks do not say, is handled.

use std::io::{Read, Seek};
use std::sync::Arc;

use hatf::format::{DecodeOptions, EncodeOptions, FormatError, TraceFormat};
use hatf::internal::formats::et::encode::{BLOCK_LINES, TEXT_LEN_SECTION};
use hatf::internal::formats::et::{ET3, ET3_DTD};
use metatf::container::{Codec, ContainerReader, ContainerWriter, SectionData};

/// Two and a half blocks of ET3 records: allocations, calls and returns, field updates and
/// deaths, with ids and values that keep changing.
fn trace() -> Vec<u8> {
    let mut text = String::new();
    let mut lines = 0;
    let mut k = 0u64;
    while lines < BLOCK_LINES * 5 / 2 {
        let object = 1000 + k;
        let method = k % 41;
        text += &format!("N {object} {} {} {} 0 7\n", 16 + k % 72, k % 9, k % 13);
        text += &format!("M {method} {object} 7\n");
        text += &format!("U {object} {} {} 7\n", 1000 + k / 2, k % 5);
        text += &format!("E {method} 7\n");
        lines += 4;
        if k.is_multiple_of(3) {
            text += &format!("D {} 7 {}\n", 1000 + k / 3, k);
            lines += 1;
        }
        k += 1;
    }
    text.into_bytes()
}

fn encode(text: &[u8]) -> Vec<u8> {
    let options = EncodeOptions {
        input_name: "made".into(),
        threads: 2,
        level: Some(1),
        ..EncodeOptions::default()
    };
    let mut out = Vec::new();
    ET3.encode(&mut &text[..], &mut out, &options)
        .unwrap_or_else(|e| panic!("{e}"));
    out
}

/// Decodes `binary` into a fresh file with `threads` threads: the file's bytes, and what went
/// through the writer instead.
fn decode_into_file(binary: &[u8], threads: usize) -> Result<(Vec<u8>, Vec<u8>), FormatError> {
    let mut file = tempfile::tempfile().expect("temp file");
    let options = DecodeOptions {
        input_name: "made.hatf".into(),
        names_dir: None,
        threads,
        positioned: Some(Arc::new(file.try_clone().expect("clone"))),
    };
    let mut through_writer = Vec::new();
    ET3.decode(&mut &binary[..], &mut through_writer, &options)?;
    let mut in_file = Vec::new();
    file.rewind().expect("rewind");
    file.read_to_end(&mut in_file).expect("read back");
    Ok((in_file, through_writer))
}

/// `binary` with its blocks' text-length sections changed by `change` (given the block's
/// number and its section's bytes, if it has one; `None` drops the section).
fn rewritten(binary: &[u8], change: impl Fn(u64, Option<&[u8]>) -> Option<Vec<u8>>) -> Vec<u8> {
    let mut reader = ContainerReader::new(binary).expect("container");
    let mut header = reader.header().clone();
    // The file names its DTD by reference; the writer needs the text to name it again.
    header.dtd = ET3_DTD.to_string();
    let mut writer = ContainerWriter::new(Vec::new(), &header).expect("writer");
    while let Some(block) = reader.next_block().expect("block") {
        let old = block.section(TEXT_LEN_SECTION).map(|s| s.bytes.as_slice());
        let new = change(block.index, old);
        let mut sections: Vec<SectionData<'_>> = block
            .sections
            .iter()
            .filter(|s| s.number != TEXT_LEN_SECTION)
            .map(|s| SectionData {
                number: s.number,
                element_width: s.element_width,
                codec: Codec::None,
                level: 0,
                bytes: &s.bytes,
            })
            .collect();
        if let Some(bytes) = &new {
            sections.push(SectionData {
                number: TEXT_LEN_SECTION,
                element_width: 1,
                codec: Codec::None,
                level: 0,
                bytes,
            });
        }
        writer
            .write_block(block.record_count, &sections)
            .expect("write block");
    }
    writer.finish().expect("finish")
}

fn varint(v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    metatf::varint::put_u64(&mut out, v);
    out
}

#[test]
fn blocks_are_written_at_their_places() {
    let text = trace();
    let binary = encode(&text);
    // Every full block says its text's length; the last, partial one does not.
    let mut reader = ContainerReader::new(&binary[..]).expect("container");
    let mut said = Vec::new();
    while let Some(block) = reader.next_block().expect("block") {
        said.push(block.section(TEXT_LEN_SECTION).is_some());
    }
    assert_eq!(said, [true, true, false]);
    for threads in [2, 3] {
        let (in_file, through_writer) =
            decode_into_file(&binary, threads).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            through_writer.is_empty(),
            "the text went through the writer"
        );
        assert!(in_file == text, "{threads} threads: the file differs");
    }
    // One thread writes in order, through the writer.
    let (in_file, through_writer) = decode_into_file(&binary, 1).unwrap_or_else(|e| panic!("{e}"));
    assert!(in_file.is_empty() && through_writer == text);
}

#[test]
fn a_wrong_text_length_is_an_error() {
    let text = trace();
    let binary = encode(&text);
    for (block, delta) in [(0, 1i64), (0, -1), (1, 1), (1, -1)] {
        let bad = rewritten(&binary, |index, old| {
            let old = old?;
            let len = old
                .iter()
                .enumerate()
                .fold(0u64, |v, (i, b)| v | u64::from(b & 0x7f) << (7 * i));
            Some(if index == block {
                varint(len.wrapping_add_signed(delta))
            } else {
                old.to_vec()
            })
        });
        let e = decode_into_file(&bad, 2).expect_err("a wrong length must fail");
        let m = e.to_string();
        assert!(
            m.contains(&format!("block {block}: its text is")) && m.contains("text-length section"),
            "{m}"
        );
    }
}

#[test]
fn only_the_last_block_may_not_say_its_length() {
    let text = trace();
    let binary = encode(&text);
    let bad = rewritten(&binary, |index, old| {
        if index == 1 {
            None
        } else {
            old.map(<[u8]>::to_vec)
        }
    });
    let e = decode_into_file(&bad, 2).expect_err("a block in the middle must say");
    assert!(
        e.to_string()
            .contains("block 1: has no text-length section, but another block follows it"),
        "{e}"
    );
    // A damaged length section is named too.
    let bad = rewritten(&binary, |index, old| {
        old.map(|o| {
            let mut o = o.to_vec();
            if index == 0 {
                o.push(0);
            }
            o
        })
    });
    let e = decode_into_file(&bad, 2).expect_err("bytes after the length");
    assert!(e.to_string().contains("block 0:"), "{e}");
}

/// Files written before blocks said their text's length still decode into a file, in order,
/// through the writer.
#[test]
fn blocks_that_do_not_say_are_written_in_order() {
    let text = trace();
    let old_style = rewritten(&encode(&text), |_, _| None);
    for threads in [1, 2] {
        let (in_file, through_writer) =
            decode_into_file(&old_style, threads).unwrap_or_else(|e| panic!("{e}"));
        assert!(in_file.is_empty() && through_writer == text);
    }
}

//! The thread lists of the container index: the JVM encoder writes them, and each format's
//! `thread_lister` (what `hatf recover` uses when an index is lost) lists exactly what the
//! encoder listed.

mod jvm_support;

use std::collections::BTreeSet;

use hatf::format::{EncodeOptions, TraceFormat};
use hatf::internal::formats::jvm::{JVM, JVM_ZIP};
use hatf::internal::formats::memory_replay::MemoryReplay;
use jvm_support::{trace, zip_of, Ends};
use metatf::container::{read_index_threads, ContainerReader};

mod format_support;

fn encode(format: &dyn TraceFormat, text: &[u8]) -> Vec<u8> {
    let options = EncodeOptions {
        input_name: "t".into(),
        ..EncodeOptions::default()
    };
    format_support::encode_with(format, text, &options)
}

/// The index's thread lists, and the lists the format's lister gives for the same blocks.
fn index_and_listed(format: &dyn TraceFormat, bin: &[u8]) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
    let (_, lists) = read_index_threads(&mut std::io::Cursor::new(bin)).unwrap();
    let lists = lists.expect("the index lists threads");
    let mut r = ContainerReader::new(bin).unwrap();
    let mut lister = format
        .thread_lister(r.header(), "t")
        .expect("the format lists threads again");
    let mut listed = Vec::new();
    while let Some(b) = r.next_block().unwrap() {
        listed.push(lister(&b).unwrap_or_else(|e| panic!("{e}")));
    }
    (lists, listed)
}

/// The thread ids of the JVM records that name one, read from the text independently of the
/// library: the third colon-separated field of `TB TE MN MX FP` lines.
fn jvm_threads(text: &str) -> Vec<u64> {
    let mut ids = BTreeSet::new();
    for line in text.lines() {
        let f: Vec<&str> = line.trim_end_matches('\r').split(':').collect();
        if ["TB", "TE", "MN", "MX", "FP"].contains(&f[0]) {
            ids.insert(f[2].parse::<i64>().unwrap() as u64);
        }
    }
    ids.into_iter().collect()
}

#[test]
fn jvm_index_lists_the_threads_of_its_records() {
    let (text, _) = trace(11, 3000, 4, Ends::Mixed);
    let want = jvm_threads(&text);
    assert_eq!(want.len(), 4, "the generator ran 4 threads");
    let bin = encode(&JVM, text.as_bytes());
    let (lists, listed) = index_and_listed(&JVM, &bin);
    assert_eq!(lists, vec![want.clone()]);
    assert_eq!(listed, lists);
    // The zip's first block is the archive's bytes: no records, no threads.
    let z = zip_of(&text, zip::CompressionMethod::Deflated, Some(6));
    let bin = encode(&JVM_ZIP, &z);
    let (lists, listed) = index_and_listed(&JVM_ZIP, &bin);
    assert_eq!(lists, vec![vec![], want]);
    assert_eq!(listed, lists);
}

#[test]
fn jvm_verbatim_records_and_negative_ids_are_listed() {
    // `MN` spelled with a leading zero is kept verbatim but still names thread 5; a negative
    // thread id is listed as its two's complement; `OA` names no thread.
    let text = "VS:1\nTB:2:3\nMN:3:05:A:m:0\nMX:4:5:A:m\nTB:5:-2\nOA:6:A:9\n";
    let bin = encode(&JVM, text.as_bytes());
    let (lists, listed) = index_and_listed(&JVM, &bin);
    assert_eq!(lists, vec![vec![3, 5, (-2i64) as u64]]);
    assert_eq!(listed, lists);
}

#[test]
fn memory_replay_lister_agrees_with_the_index() {
    let text = b"7: malloc 0x10 5\n9: calloc 0x20 3 4\n7: free 0x10\n12: thread_done 0x0\n";
    let bin = encode(&MemoryReplay, text);
    let (lists, listed) = index_and_listed(&MemoryReplay, &bin);
    assert_eq!(lists, vec![vec![7, 9, 12]]);
    assert_eq!(listed, lists);
}

#[test]
fn et_lister_agrees_with_the_index() {
    // Canonical records on threads 1 and 3, a spelled one (extra blank) on thread 8 that the
    // encoder keeps verbatim and does not list, a comment.
    let text = b"N 10 16 2 5 0 1\nM 4 10 3\n# note\nE 4  8\nE 4 3\nD 10 1 7\n";
    let bin = encode(&hatf::internal::formats::et::ET3, text);
    let (lists, listed) = index_and_listed(&hatf::internal::formats::et::ET3, &bin);
    assert_eq!(lists, vec![vec![1, 3]]);
    assert_eq!(listed, lists);
}

//! Replays the corpora and crash reproducers of the hatf fuzz targets (`fuzz/corpus/<target>`
//! and `fuzz/artifacts/<target>`) on stable Rust, through the very check functions the fuzz
//! targets run (`fuzz/checks/`): text front ends, the native reader and every format's decoder.

#[path = "../../fuzz/checks/format_decode.rs"]
mod format_decode;
#[path = "../../fuzz/checks/format_sections.rs"]
mod format_sections;
#[path = "../../fuzz/checks/native_reader.rs"]
mod native_reader;
#[path = "../../fuzz/checks/replay.rs"]
mod replay;
#[path = "../../fuzz/checks/text_front_end.rs"]
mod text_front_end;

use std::path::Path;

fn fuzz_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz"))
}

/// Replays `target` and checks that its seeds at least were there.
fn replays(target: &str, check: fn(&[u8])) {
    let n = replay::replay(fuzz_dir(), target, check);
    assert!(
        n == 0 || n >= 3,
        "expected the seeds of {target}, replayed {n} files"
    );
}

#[test]
fn mtrace_corpus_replays() {
    replays("text_mtrace", |d| {
        text_front_end::check(
            "mtrace",
            d,
            Some(hatf::internal::formats::mtrace::read_events),
        )
    });
}

#[test]
fn memory_replay_corpus_replays() {
    replays("text_memory_replay", |d| {
        text_front_end::check(
            "memory-replay",
            d,
            Some(hatf::internal::formats::memory_replay::read_events),
        )
    });
}

#[test]
fn wee_alloc_corpus_replays() {
    replays("text_wee_alloc", |d| {
        text_front_end::check(
            "wee-alloc",
            d,
            Some(hatf::internal::formats::wee_alloc::read_events),
        )
    });
}

#[test]
fn malloc_bench_corpus_replays() {
    replays("text_malloc_bench", text_front_end::check_malloc_bench);
}

#[test]
fn et2_corpus_replays() {
    replays("text_et2", |d| text_front_end::check("et2", d, None));
}

#[test]
fn et3_corpus_replays() {
    replays("text_et3", |d| text_front_end::check("et3", d, None));
}

#[test]
fn jvm_corpus_replays() {
    replays("text_jvm", |d| text_front_end::check("jvm", d, None));
}

#[test]
fn native_reader_corpus_replays() {
    replays("native_reader", native_reader::check);
}

#[test]
fn format_decode_corpus_replays() {
    replays("format_decode", format_decode::check);
}

#[test]
fn format_sections_corpus_replays() {
    replays("format_sections", format_sections::check);
}

/// The archive samples of `format_sections` are taken apart, not stored as bytes, so the fuzz
/// bytes reach their reconstruction data and models.
#[test]
fn format_sections_archive_samples_are_taken_apart() {
    let all = format_sections::encoded();
    for archive in ["malloc-bench", "memory-replay-zip"] {
        let (_, header, _, blocks) = all.iter().find(|s| s.0 == archive).unwrap();
        let layout = header.property("layout").unwrap_or("");
        assert!(layout.contains("preflate"), "{archive}: layout {layout}");
        assert!(!blocks.is_empty());
    }
}

//! Short traces and the light context mixer (container codec 4, docs/FORMAT.md §6.1): the first
//! block of a short mtrace or memory_replay trace is coded with it, and the bytes it writes are
//! pinned by a fixture.
//!
//! The fixture in `tests/data/` comes from the synthetic text of `make_relive.py`: the
//! `mtrace-alloc-model-4-light.hatf` file pins the bytes the encoder writes for it.

use hatf::format::{DecodeOptions, TraceFormat};
use hatf::internal::formats::memory_replay::MemoryReplay;
use hatf::internal::formats::mtrace::Mtrace;
use metatf::container::{Codec, ContainerReader};

mod format_support;
use format_support::{decode_on, encode};

const MTRACE: &[u8] = include_bytes!("data/relive.mtrace");
const REPLAY: &[u8] = include_bytes!("data/relive_memory_replay.txt");
const MTRACE_LIGHT: &[u8] = include_bytes!("data/mtrace-alloc-model-4-light.hatf");

/// The codecs of the sections of every block, in file order.
fn codecs(bin: &[u8]) -> Vec<Codec> {
    let mut r = ContainerReader::new(bin).unwrap();
    let mut all = Vec::new();
    while r.next_block().unwrap().is_some() {
        all.extend(r.last_descriptors().iter().map(|d| d.codec));
    }
    all
}

#[test]
fn short_traces_take_the_light_mixer() {
    for (f, text) in [
        (&Mtrace as &dyn TraceFormat, MTRACE),
        (&MemoryReplay, REPLAY),
    ] {
        let bin = encode(f, text);
        let used = codecs(&bin);
        assert!(used.contains(&Codec::LightContextMix), "{}", f.name());
        assert!(
            used.iter()
                .all(|&c| c == Codec::LightContextMix || c == Codec::None),
            "{}: {used:?}",
            f.name()
        );
        for threads in [1, 2] {
            assert!(decode_on(f, &bin, threads) == text, "{}", f.name());
        }
    }
}

#[test]
fn light_mixer_bytes_are_pinned() {
    // The encoder still writes exactly the fixture's bytes, and they decode: a change to the
    // coder that would make old codec-4 files unreadable fails here.
    assert!(encode(&Mtrace, MTRACE) == MTRACE_LIGHT);
    assert!(decode_on(&Mtrace, MTRACE_LIGHT, 1) == MTRACE);
}

#[test]
fn damaged_light_sections_give_errors() {
    // Every byte of the file changed in turn, and every cut: an error or (where the damage
    // misses what decoding reads) the text, never a panic; the CRCs catch wrong bytes.
    let options = DecodeOptions::default();
    for at in 0..MTRACE_LIGHT.len() {
        let mut bad = MTRACE_LIGHT.to_vec();
        bad[at] ^= 0x55;
        let mut out = Vec::new();
        if Mtrace.decode(&mut &bad[..], &mut out, &options).is_ok() {
            assert!(out == MTRACE, "byte {at} changed, wrong text decoded");
        }
    }
    for cut in 0..MTRACE_LIGHT.len() {
        let mut out = Vec::new();
        assert!(Mtrace
            .decode(&mut &MTRACE_LIGHT[..cut], &mut out, &options)
            .is_err());
    }
}

/// A short mtrace log (4,500 lines) whose streams come to about 20 KiB: one block, coded by the
/// light mixer, large enough for the decoder to split its sections over two threads.
fn short_log() -> Vec<u8> {
    let mut text = b"= Start\n".to_vec();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut live: Vec<u64> = Vec::new();
    let mut next_addr = 0x5555_5555_0000u64;
    for _ in 0..4_500 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let site = state % 40;
        let caller = format!(
            "/usr/lib/libpython3.11.so.1.0:(f{site}+0x{:x})[0x7f{site:04x}]",
            site * 7
        );
        if live.len() > 20 && state.is_multiple_of(3) {
            let addr = live.swap_remove((state >> 8) as usize % live.len());
            text.extend(format!("@ {caller} - 0x{addr:x}\n").bytes());
        } else {
            let size = 16 + (state >> 20) % 200;
            live.push(next_addr);
            text.extend(format!("@ {caller} + 0x{next_addr:x} 0x{size:x}\n").bytes());
            next_addr += (size + 31) & !15;
        }
    }
    text.extend(b"= End\n");
    text
}

#[test]
fn a_split_decode_gives_the_same_text_and_errors() {
    let text = short_log();
    let bin = encode(&Mtrace, &text);
    let used = codecs(&bin);
    assert!(
        used.iter()
            .filter(|&&c| c == Codec::LightContextMix)
            .count()
            >= 2
    );
    let mut r = ContainerReader::new(&bin[..]).unwrap();
    r.next_block().unwrap();
    let mixed: u64 = r
        .last_descriptors()
        .iter()
        .filter(|d| d.codec == Codec::LightContextMix)
        .map(|d| d.uncompressed_len)
        .sum();
    assert!(mixed >= 16 << 10, "{mixed} bytes: too few to split");
    assert!(decode_on(&Mtrace, &bin, 2) == text);
    assert!(decode_on(&Mtrace, &bin, 1) == text);
    // Damage in any section: the same error whichever thread decoded it.
    for at in (bin.len() / 10..bin.len() * 9 / 10).step_by(bin.len() / 25) {
        let mut bad = bin.clone();
        bad[at] ^= 0x55;
        let errors: Vec<String> = [1, 2]
            .iter()
            .map(|&threads| {
                let options = DecodeOptions {
                    threads,
                    ..DecodeOptions::default()
                };
                match Mtrace.decode(&mut &bad[..], &mut std::io::sink(), &options) {
                    Ok(_) => String::new(),
                    Err(e) => e.to_string(),
                }
            })
            .collect();
        assert_eq!(errors[0], errors[1], "byte {at} changed");
    }
}

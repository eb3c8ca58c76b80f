//! Decoding allocation traces on several threads: the text is the same whatever the thread
//! count and the block size, `--records` still reads single blocks, and a damaged block gives
//! the same error (naming the block) and the same text before it on one thread as on several.
//!
//! The containers are written here block by block with the library's model and block writer,
//! so blocks can be small (many blocks, batches spanning block ends) and one can be damaged.

use hatf::internal::formats::memory_replay::{self, MemoryReplay};
use hatf::internal::formats::mtrace::line::{render, Op, OpLine};
use hatf::internal::formats::mtrace::{self, model as kinds, Mtrace};
use hatf::internal::shared::allocation_model::packing::record_shapes;
use hatf::internal::shared::allocation_model::{ModelRecord, State, Streams};
use hatf::internal::shared::container::blocks::{model_properties, BlockWriter};
use hatf::{DecodeOptions, EncodeOptions, FormatError, TraceFormat};
use metatf::container::ContainerHeader;
use metatf::varint::put_u64;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

/// One generated `mtrace` operation: caller number (`None`: no caller), op, address, size.
type Line = (Option<u32>, Op, u64, u64);

/// A plausible allocation trace: blocks carved upwards, freed ones reused, realloc pairs.
fn generate(n: usize) -> Vec<Line> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut live, mut freed, mut top) = (Vec::<u64>::new(), Vec::<u64>::new(), 0x5555_0000u64);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let r = next();
        let caller = match r % 40 {
            0 => None,
            c => Some((c as u32) * 7 % 23),
        };
        let size = [16u64, 24, 32, 100, 0, 4096][(r >> 8) as usize % 6];
        let pick = (r >> 16) as usize;
        if r % 5 < 3 || live.is_empty() {
            let addr = match freed.pop() {
                Some(a) if r % 3 == 0 => a,
                _ => {
                    top += 0x30 + (r >> 40) % 4 * 0x10;
                    top
                }
            };
            live.push(addr);
            out.push((caller, Op::Malloc, addr, size));
        } else if r % 5 == 3 {
            let addr = live.swap_remove(pick % live.len());
            freed.push(addr);
            out.push((caller, Op::Free, addr, 0));
        } else {
            let old = live.swap_remove(pick % live.len());
            top += 0x1000;
            live.push(top);
            out.push((caller, Op::ReallocOld, old, 0));
            out.push((caller, Op::ReallocNew, top, size));
        }
    }
    out.truncate(n);
    out
}

fn caller_text(c: u32) -> Vec<u8> {
    format!("/usr/bin/prog:(f{c}+0x{:x})[0x{:x}]", c * 3, 0x1000 + c).into_bytes()
}

/// The log of `lines`, after `= Start`.
fn text_of(lines: &[Line]) -> Vec<u8> {
    let mut t = b"= Start\n".to_vec();
    for &(c, op, addr, size) in lines {
        let caller = c.map(caller_text);
        render(
            &OpLine {
                caller: caller.as_deref(),
                op,
                addr,
                size,
            },
            &mut t,
        );
    }
    t
}

/// An `mtrace` container of `= Start` and `lines`, `per_block` records a block; block `lie`
/// (if any) claims one record more than it holds.
fn container(lines: &[Line], per_block: usize, lie: Option<u64>) -> Vec<u8> {
    let properties = model_properties();
    let header = ContainerHeader {
        dtd: mtrace::DTD.to_string(),
        format: mtrace::FORMAT.to_string(),
        properties,
    };
    let options = EncodeOptions {
        input_name: "generated".into(),
        ..EncodeOptions::default()
    };
    let mut out = Vec::new();
    let mut w = BlockWriter::new(&mut out, &header, &options).expect("header");
    let mut streams = Streams::default();
    let mut packer = record_shapes::Packer::default();
    let mut strings = Vec::new();
    let mut sites: Vec<Option<u32>> = Vec::new();
    let records: Vec<Option<&Line>> = std::iter::once(None)
        .chain(lines.iter().map(Some))
        .collect();
    for (b, chunk) in records.chunks(per_block).enumerate() {
        let mut state = State::for_block();
        sites.clear();
        for rec in chunk {
            let r = match rec {
                None => ModelRecord {
                    kind: kinds::START,
                    ..ModelRecord::default()
                },
                Some(&(c, op, addr, size)) => {
                    let site = match sites.iter().position(|&s| s == c) {
                        Some(i) => i,
                        None => {
                            match c {
                                Some(c) => {
                                    let t = caller_text(c);
                                    put_u64(&mut strings, t.len() as u64 + 1);
                                    strings.extend_from_slice(&t);
                                }
                                None => put_u64(&mut strings, 0),
                            }
                            sites.push(c);
                            sites.len() - 1
                        }
                    };
                    let kind = match op {
                        Op::Malloc => kinds::MALLOC,
                        Op::Free => kinds::FREE,
                        Op::ReallocOld => kinds::REALLOC_OLD,
                        Op::ReallocNew => kinds::REALLOC_NEW,
                    };
                    ModelRecord {
                        kind,
                        site: site as u32,
                        size,
                        addr,
                        ..ModelRecord::default()
                    }
                }
            };
            state.encode(&kinds::MtraceKinds, &r, &mut streams);
        }
        packer.pack(&kinds::MtraceKinds, &streams).expect("pack");
        let mut sections: Vec<(u8, &[u8])> = packer.sections(&streams);
        sections.push((mtrace::STRINGS, &strings));
        let count = chunk.len() as u64 + u64::from(lie == Some(b as u64));
        w.block(count, &sections).expect("block");
        streams.clear();
        strings.clear();
    }
    w.finish().expect("finish");
    out
}

fn decode(
    format: &dyn TraceFormat,
    bin: &[u8],
    threads: usize,
) -> (Vec<u8>, Result<u64, FormatError>) {
    let mut out = Vec::new();
    let options = DecodeOptions {
        input_name: "t".into(),
        threads,
        ..DecodeOptions::default()
    };
    let r = format.decode(&mut &bin[..], &mut out, &options);
    (out, r)
}

#[test]
fn text_is_the_same_for_any_thread_count_and_block_size() {
    let lines = generate(60_000);
    let text = text_of(&lines);
    // Blocks smaller than a batch, a batch exactly, a few batches, an odd size.
    for per_block in [3, 8192, 20_000, 7_777] {
        let bin = container(&lines, per_block, None);
        for threads in [1, 2, 3] {
            let (out, r) = decode(&Mtrace, &bin, threads);
            assert_eq!(r.expect("decodes"), lines.len() as u64 + 1);
            assert!(
                out == text,
                "{per_block} a block, {threads} threads: text differs"
            );
        }
    }
}

#[test]
fn a_damaged_block_is_named_and_the_text_before_it_is_the_same_on_any_thread_count() {
    let lines = generate(50_000);
    let text = text_of(&lines);
    let per_block = 10_000;
    let bin = container(&lines, per_block, Some(3));
    let mut outputs = Vec::new();
    for threads in [1, 2] {
        let (out, r) = decode(&Mtrace, &bin, threads);
        let e = r.expect_err("block 3 lies about its records");
        assert!(e.position.starts_with("block 3 record "), "{e}");
        assert!(e.message.contains("its header says 10001"), "{e}");
        // Nothing but the true text, and every block before the damaged one.
        assert!(
            text.starts_with(&out),
            "{threads} threads wrote text that is not the log's"
        );
        let before: usize = text
            .split_inclusive(|&b| b == b'\n')
            .take(3 * per_block)
            .map(<[u8]>::len)
            .sum();
        assert!(
            out.len() >= before,
            "{threads} threads: blocks 0..3 not all written"
        );
        outputs.push(out);
    }
    assert!(
        outputs[0] == outputs[1],
        "one and two threads wrote different text before the error"
    );
}

#[test]
fn records_ranges_read_single_blocks_of_a_many_block_file() {
    let lines = generate(30_000);
    let text = text_of(&lines);
    let all: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let bin = container(&lines, 4_000, None);
    for (a, b) in [
        (0u64, 1u64),
        (3_999, 4_001),
        (7_000, 12_345),
        (29_990, 40_000),
    ] {
        let mut out = Vec::new();
        let mut note = |m: &str| panic!("unexpected note: {m}");
        let written = Mtrace
            .decode_records(
                &mut std::io::Cursor::new(&bin[..]),
                &mut out,
                &DecodeOptions::default(),
                a..b,
                &mut note,
            )
            .expect("a seekable format")
            .expect("decodes");
        let end = (b as usize).min(all.len());
        assert_eq!(written, (end - a as usize) as u64);
        assert!(out == all[a as usize..end].concat(), "records {a}..{b}");
    }
}

#[test]
fn corpus_memory_replay_decodes_the_same_on_one_and_two_threads() {
    let zip = std::path::Path::new(CORPUS).join("malloc/android/surfaceflinger.zip");
    let Ok(file) = std::fs::File::open(&zip) else {
        eprintln!("skipped: {} is absent", zip.display());
        return;
    };
    let mut text = Vec::new();
    memory_replay::zip::inflate_entry(&mut std::io::BufReader::new(file), "sf", &mut |r| {
        r.read_to_end(&mut text)
            .map(|_| ())
            .map_err(|e| FormatError {
                file: "sf".into(),
                position: String::new(),
                message: e.to_string(),
            })
    })
    .expect("the corpus zip inflates");
    let options = EncodeOptions {
        input_name: "sf".into(),
        level: Some(3),
        ..EncodeOptions::default()
    };
    let mut bin = Vec::new();
    MemoryReplay
        .encode(&mut &text[..], &mut bin, &options)
        .expect("encodes");
    for threads in [1, 2] {
        let (out, r) = decode(&MemoryReplay, &bin, threads);
        r.expect("decodes");
        assert!(out == text, "{threads} threads: text differs");
    }
}

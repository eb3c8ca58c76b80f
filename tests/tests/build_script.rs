//! This crate's build script uses the DTD compiler's build-script API the way a user crate
//! would: the codecs it generated round-trip records, and it told Cargo to watch every DTD.

use hatf_tests::differential::typed_round_trip;
use hatf_tests::dtd_codecs::{self, hatf10, wee_alloc};
use metatf::typed::TypedWriter;
use metatf::Codec;

#[test]
fn the_build_script_asks_cargo_to_rerun_when_any_dtd_changes() {
    let dtds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dtds");
    for stem in dtd_codecs::COMPILED {
        let want = format!(
            "cargo:rerun-if-changed={}",
            dtds.join(format!("{stem}.dtd")).display()
        );
        assert!(
            dtd_codecs::CARGO_INSTRUCTIONS.contains(&want.as_str()),
            "{want} missing from {:?}",
            dtd_codecs::CARGO_INSTRUCTIONS
        );
    }
    let folder = format!("cargo:rerun-if-changed={}", dtds.display());
    assert!(
        dtd_codecs::CARGO_INSTRUCTIONS.contains(&folder.as_str()),
        "a new DTD reruns the build script"
    );
}

#[test]
fn codecs_generated_at_build_time_round_trip_records() {
    let records: Vec<hatf10::Heap> = (0..500u64)
        .map(|i| match i % 3 {
            0 => hatf10::Heap::Alloc(hatf10::Alloc {
                size: 16 + i,
                address: 0x1000 + 64 * i,
                time: i,
                thread: i % 2,
                heap: 0,
                vfield: vec![i as u8; (i % 5) as usize],
            }),
            1 => hatf10::Heap::Free(hatf10::Free {
                address: 0x1000 + 64 * (i - 1),
                time: i,
                thread: 0,
                heap: 0,
                vfield: vec![],
            }),
            _ => hatf10::Heap::Realloc(hatf10::Realloc {
                size: 1 << 33, // wider than size.width: the writer adds a metadata record
                address_1: 0x1000,
                address_2: 0x9000 + i,
                time: i,
                thread: 0,
                heap: 1,
                vfield: vec![7],
            }),
        })
        .collect();
    let w = TypedWriter::<hatf10::Heap, _>::new(Vec::new(), Codec::Zstd, 3).expect("writer");
    typed_round_trip(w, 64, &records);

    // A second DTD's codec, with byte strings, through the same build script.
    let wee = vec![
        wee_alloc::WeeAlloc::Alloc(wee_alloc::Alloc { size: 24 }),
        wee_alloc::WeeAlloc::Verbatim(wee_alloc::Verbatim {
            vfield: b"Alloc(oops".to_vec(),
        }),
        wee_alloc::WeeAlloc::Free(wee_alloc::Free { index: 0 }),
    ];
    let w = TypedWriter::<wee_alloc::WeeAlloc, _>::new(Vec::new(), Codec::None, 0).expect("writer");
    typed_round_trip(w, u64::MAX, &wee);
}

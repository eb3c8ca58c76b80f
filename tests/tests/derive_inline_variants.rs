//! Enum variants that hold a record's fields inline (`#[metatf(tag = 4)] Alloc { .. }`) are
//! the same format as variants wrapping record structs: same DTD, same bytes.

use metatf::typed::{Format, TypedReader, TypedWriter};
use metatf::{Codec, MetaTf, UniversalReader};

mod wrapped {
    use metatf::MetaTf;

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 4)]
    pub struct Alloc {
        #[metatf(width = 2)]
        pub size: u32,
        #[metatf(delta = 0, width = 1)]
        pub address: u64,
        pub data: Vec<u8>,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 6, name = "release")]
    pub struct Free {
        #[metatf(delta = 0, width = 1)]
        pub address: u64,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(section = 1, name = "heap")]
    pub enum Heap {
        Alloc(Alloc),
        Free(Free),
    }
}

#[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
#[metatf(section = 1, name = "heap")]
enum Heap {
    #[metatf(tag = 4)]
    Alloc {
        #[metatf(width = 2)]
        size: u32,
        #[metatf(delta = 0, width = 1)]
        address: u64,
        data: Vec<u8>,
    },
    #[metatf(tag = 6, name = "release")]
    Free {
        #[metatf(delta = 0, width = 1)]
        address: u64,
    },
}

/// Records whose sizes and address steps outgrow the declared widths now and then, so the
/// writers add metadata records and leave (and later rejoin) the fast paths.
fn records(n: u64) -> (Vec<Heap>, Vec<wrapped::Heap>) {
    let mut inline = Vec::new();
    let mut outer = Vec::new();
    let mut address = 0x1000u64;
    for i in 0..n {
        let step = if i % 97 == 5 { 0x1_0000 } else { 16 + i % 64 };
        address = address.wrapping_add(step);
        if i % 4 == 3 {
            inline.push(Heap::Free { address });
            outer.push(wrapped::Heap::Free(wrapped::Free { address }));
        } else {
            let size = if i % 211 == 7 {
                1 << 20
            } else {
                (i % 300) as u32
            };
            let data = if i % 13 == 0 {
                vec![i as u8; 3]
            } else {
                vec![]
            };
            inline.push(Heap::Alloc {
                size,
                address,
                data: data.clone(),
            });
            outer.push(wrapped::Heap::Alloc(wrapped::Alloc {
                size,
                address,
                data,
            }));
        }
    }
    (inline, outer)
}

fn write<T: Format>(records: &[T]) -> Vec<u8> {
    let mut w = TypedWriter::<T, _>::new(Vec::new(), Codec::None, 0).expect("writer");
    w.set_block_records(100);
    for r in records {
        w.write(r).expect("write");
    }
    w.finish().expect("finish")
}

#[test]
fn inline_variants_describe_the_same_dtd_as_wrapped_structs() {
    assert_eq!(
        Heap::dtd().expect("dtd"),
        wrapped::Heap::dtd().expect("dtd")
    );
    assert!(Heap::dtd().unwrap().contains("release : (tag, address)"));
}

#[test]
fn inline_variants_write_the_same_bytes_and_read_back() {
    let (inline, outer) = records(2_000);
    let bytes = write(&inline);
    assert!(bytes == write(&outer), "inline and wrapped writers differ");
    let back: Vec<Heap> = TypedReader::<Heap, _>::new(&bytes[..])
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("records");
    assert_eq!(back, inline);
    // The universal reader sees the records and the widening metadata.
    let mut r = UniversalReader::new(&bytes[..]).expect("universal reader");
    let (mut data, mut metadata) = (0, 0);
    while let Some(rec) = r.next_record().expect("record") {
        match rec.name.as_str() {
            "metadata" => metadata += 1,
            "alloc" | "release" => data += 1,
            _ => {}
        }
    }
    assert_eq!(data, 2_000);
    assert!(metadata > 0, "wide values needed metadata");
}

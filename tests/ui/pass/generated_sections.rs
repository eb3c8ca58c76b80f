// The shape `hatf dtd compile` generates for a DTD with records in two sections: one enum per
// section, and `Dtd`, the format of the whole DTD. A record named `write` becomes
// `WriteRecord` (no clash with `std::io::Write` under the glob import below), a field named
// `ref` becomes `ref_`. A trace that switches sections is written and read with `Dtd`, is
// byte-identical to the universal writer's, and its heap records read with `Heap` alone.

use std::io::*;

/// The DTD this code was generated from.
#[allow(dead_code)]
pub const DTD_SOURCE: &str = r#"tag.width = 1;
size.width = 4;
size.interpretation = none;
address.width = 8;
address.interpretation = delta 0;
ref.width = 2;
ref.interpretation = none;

section heap 1 {
    alloc : (tag, size, address) { tag.value = 4; }
    free : (tag, address) { tag.value = 5; }
}

section dead 2 {
    write : (tag, address, ref, vfield) { tag.value = 4; }
}
"#;

/// Record `alloc` (tag 4, section 1).
#[derive(Debug, Clone, PartialEq, Eq, Default, ::metatf::MetaTf)]
#[metatf(tag = 4, name = "alloc")]
pub struct Alloc {
    /// Field `size`.
    #[metatf(width = 4, interpretation = "none")]
    pub size: u64,
    /// Field `address`.
    #[metatf(width = 8, interpretation = "delta 0")]
    pub address: u64,
}

/// Record `free` (tag 5, section 1).
#[derive(Debug, Clone, PartialEq, Eq, Default, ::metatf::MetaTf)]
#[metatf(tag = 5, name = "free")]
pub struct Free {
    /// Field `address`.
    #[metatf(width = 8, interpretation = "delta 0")]
    pub address: u64,
}

/// The records of section `heap` (1).
#[derive(Debug, Clone, PartialEq, Eq, ::metatf::MetaTf)]
#[metatf(section = 1, name = "heap", format = "heap", tag_width = 1)]
pub enum Heap {
    /// `alloc`, tag 4.
    Alloc(Alloc),
    /// `free`, tag 5.
    Free(Free),
}

/// Record `write` (tag 4, section 2).
#[derive(Debug, Clone, PartialEq, Eq, Default, ::metatf::MetaTf)]
#[metatf(tag = 4, name = "write")]
pub struct WriteRecord {
    /// Field `address`.
    #[metatf(width = 8, interpretation = "delta 0")]
    pub address: u64,
    /// Field `ref`.
    #[metatf(name = "ref", width = 2, interpretation = "none")]
    pub ref_: u64,
    /// `vfield`: a 1-byte length, then that many bytes.
    pub vfield: ::std::vec::Vec<u8>,
}

/// The records of section `dead` (2).
#[derive(Debug, Clone, PartialEq, Eq, ::metatf::MetaTf)]
#[metatf(section = 2, name = "dead", format = "dead", tag_width = 1)]
pub enum Dead {
    /// `write`, tag 4.
    WriteRecord(WriteRecord),
}

/// Every record of the DTD, section by section: one reader and one writer for traces
/// that switch sections. The traces it writes embed `DTD_SOURCE`.
#[derive(Debug, Clone, PartialEq, Eq, ::metatf::MetaTf)]
#[metatf(sections, format = "dtd", dtd = DTD_SOURCE)]
pub enum Dtd {
    /// The records of [`Heap`].
    Heap(Heap),
    /// The records of [`Dead`].
    Dead(Dead),
}

fn main() {
    use metatf::typed::{TypedReader, TypedWriter};
    use metatf::{Codec, DynRecord, UniversalWriter, Value};

    let records = vec![
        Dtd::Heap(Heap::Alloc(Alloc { size: 16, address: 0x1000 })),
        Dtd::Dead(Dead::WriteRecord(WriteRecord { address: 0x1000, ref_: 3, vfield: vec![1, 2] })),
        Dtd::Heap(Heap::Free(Free { address: 0x1000 })),
        Dtd::Heap(Heap::Alloc(Alloc { size: 1 << 40, address: 0x2000 })),
    ];
    let mut w = TypedWriter::<Dtd, _>::new(Vec::new(), Codec::None, 0).unwrap();
    for r in &records {
        w.write(r).unwrap();
    }
    let bytes = w.finish().unwrap();

    // The trace embeds the DTD it was compiled from.
    let back = TypedReader::<Dtd, _>::new(&bytes[..]).unwrap();
    assert_eq!(back.header().dtd, DTD_SOURCE);
    let back: Vec<Dtd> = back.collect::<std::result::Result<_, _>>().unwrap();
    assert_eq!(back, records);

    // The universal writer, with the section of each record, writes the same bytes.
    let mut u = UniversalWriter::for_format::<Dtd>(Vec::new(), Codec::None, 0).unwrap();
    let dyns = [
        (1, "alloc", 4, vec![Value::Uint(16), Value::Uint(0x1000)]),
        (2, "write", 4, vec![Value::Uint(0x1000), Value::Uint(3), Value::Uint(2), Value::Bytes(vec![1, 2])]),
        (1, "free", 5, vec![Value::Uint(0x1000)]),
        (1, "alloc", 4, vec![Value::Uint(1 << 40), Value::Uint(0x2000)]),
    ];
    for (section, name, tag, fields) in dyns {
        u.write(&DynRecord { section: Some(section), name: name.into(), tag, fields }).unwrap();
    }
    assert_eq!(u.finish().unwrap(), bytes);

    // One section's enum reads that section's records of the same trace, and stops with an
    // error at a record of the other section.
    let mut heap = TypedReader::<Heap, _>::new(&bytes[..]).unwrap();
    assert_eq!(heap.next().unwrap().unwrap(), Heap::Alloc(Alloc { size: 16, address: 0x1000 }));
    assert!(heap.next().unwrap().is_err());
    let _ = stdout().flush();
}

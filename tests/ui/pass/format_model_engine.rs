// `#[metatf(model = "auto")]` on a format: its typed writer codes with the model engine, and
// the universal writer made for the format writes the same bytes.
use metatf::typed::{Format, TypedReader, TypedWriter};
use metatf::{Codec, DynRecord, MetaTf, UniversalWriter, Value};

#[derive(MetaTf, Debug, PartialEq)]
#[metatf(tag = 4)]
struct Alloc {
    size: u32,
    #[metatf(model = "sum size, last")]
    address: u64,
}

#[derive(MetaTf, Debug, PartialEq)]
#[metatf(section = 1, name = "heap", model = "auto")]
enum Heap {
    Alloc(Alloc),
}

#[derive(MetaTf, Debug, PartialEq)]
#[metatf(section = 1, name = "heap", model = "none")]
enum Plain {
    Alloc(Alloc),
}

fn main() {
    assert!(Heap::MODEL_ENGINE);
    assert!(!Plain::MODEL_ENGINE);
    let mut t = TypedWriter::<Heap, _>::new(Vec::new(), Codec::None, 0).unwrap();
    let mut u = UniversalWriter::for_format::<Heap>(Vec::new(), Codec::None, 0).unwrap();
    for i in 0..100u64 {
        t.write(&Heap::Alloc(Alloc { size: 16, address: 4096 + 16 * i })).unwrap();
        u.write(&DynRecord {
            section: Some(1),
            name: "alloc".into(),
            tag: 4,
            fields: vec![Value::Uint(16), Value::Uint(4096 + 16 * i)],
        })
        .unwrap();
    }
    let bytes = t.finish().unwrap();
    assert_eq!(bytes, u.finish().unwrap());
    let back: Vec<Plain> = TypedReader::<Plain, _>::new(&bytes[..])
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back.len(), 100);
}

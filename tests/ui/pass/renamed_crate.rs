// The runtime reached through another path: `#[metatf(crate = "...")]` points the generated
// code at it.
mod outer {
    pub use ::metatf as runtime;
}

use outer::runtime::typed::{Format, TypedReader, TypedWriter};

#[derive(outer::runtime::MetaTf, Debug, PartialEq)]
#[metatf(tag = 4, crate = "crate::outer::runtime")]
struct Alloc {
    size: u32,
}

#[derive(outer::runtime::MetaTf, Debug, PartialEq)]
#[metatf(crate = "crate::outer::runtime")]
enum Trace {
    Alloc(Alloc),
}

fn main() {
    assert!(Trace::dtd().is_ok());
    let mut w = TypedWriter::<Trace, _>::new(Vec::new(), outer::runtime::Codec::None, 0).unwrap();
    w.write(&Trace::Alloc(Alloc { size: 7 })).unwrap();
    let bytes = w.finish().unwrap();
    let back: Vec<Trace> = TypedReader::<Trace, _>::new(&bytes[..])
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back, vec![Trace::Alloc(Alloc { size: 7 })]);
}

// What `hatf dtd compile` generates for a DTD with a repeated field (`depth * frame`): it
// compiles, and a trace written with it reads back.

/// Record `stack` (tag 4, section 1).
#[derive(Debug, Clone, PartialEq, Eq, Default, ::metatf::MetaTf)]
#[metatf(tag = 4, name = "stack")]
pub struct Stack {
    /// Field `depth`.
    #[metatf(width = 1, interpretation = "none")]
    pub depth: u64,
    /// Field `frame`, repeated `depth` times.
    #[metatf(count = "depth", width = 2, interpretation = "delta 0")]
    pub frame: ::std::vec::Vec<u64>,
    /// Field `thread`.
    #[metatf(width = 2, interpretation = "none")]
    pub thread: u64,
}

/// The records of section `samples` (1).
#[derive(Debug, Clone, PartialEq, Eq, ::metatf::MetaTf)]
#[metatf(section = 1, name = "samples", format = "samples", tag_width = 1)]
pub enum Samples {
    /// `stack`, tag 4.
    Stack(Stack),
}

fn main() {
    use metatf::typed::{TypedReader, TypedWriter};
    let stack = Samples::Stack(Stack {
        depth: 3,
        frame: vec![0x4000, 0x4010, 0x1_0000_0000],
        thread: 7,
    });
    let mut w = TypedWriter::<Samples, _>::new(Vec::new(), metatf::Codec::None, 0).unwrap();
    w.write(&stack).unwrap();
    let bytes = w.finish().unwrap();
    let back: Vec<Samples> = TypedReader::new(&bytes[..])
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back, [stack]);
}

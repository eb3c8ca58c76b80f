// Misuse of `#[metatf(sections)]` (a format spanning several sections), of `dtd = ...` and of
// the name of a Vec<u8> field.
use metatf::MetaTf;

#[derive(MetaTf)]
#[metatf(tag = 4)]
struct Alloc {
    size: u32,
}

#[derive(MetaTf)]
#[metatf(section = 1, name = "heap")]
enum Heap {
    Alloc(Alloc),
}

// `section`, `tag_width` and `name` belong to the section enums.
#[derive(MetaTf)]
#[metatf(sections, section = 1, tag_width = 2, name = "all")]
enum Misplaced {
    Heap(Heap),
}

// Each variant wraps a section enum: fields written inline are refused.
#[derive(MetaTf)]
#[metatf(sections)]
enum Inline {
    Heap(Heap),
    #[metatf(tag = 5)]
    Free { address: u64 },
}

// No section enum at all.
#[derive(MetaTf)]
#[metatf(sections)]
enum Empty {}

// `dtd` takes the DTD text, `sections` nothing.
#[derive(MetaTf)]
#[metatf(sections = 2, dtd)]
enum Shapes {
    Heap(Heap),
}

// A byte string takes only `name`, and not a reserved one.
#[derive(MetaTf)]
#[metatf(tag = 6)]
struct Note {
    #[metatf(width = 2)]
    text: Vec<u8>,
    #[metatf(name = "tag")]
    other: Vec<u8>,
}

fn main() {}

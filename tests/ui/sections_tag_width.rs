// The section enums of a `sections` format must agree on the tag width: a trace has one.
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

#[derive(MetaTf)]
#[metatf(section = 2, name = "wide", tag_width = 2)]
enum Wide {
    Alloc(Alloc),
}

#[derive(MetaTf)]
#[metatf(sections)]
enum Both {
    Heap(Heap),
    Wide(Wide),
}

fn main() {}

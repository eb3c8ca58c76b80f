// `model` on a format enum is the engine switch: `auto` or `none`, nothing else.
use metatf::MetaTf;

#[derive(MetaTf)]
#[metatf(tag = 4)]
struct Alloc {
    size: u32,
}

#[derive(MetaTf)]
#[metatf(section = 1, model = "fcm 2")]
enum Heap {
    Alloc(Alloc),
}

#[derive(MetaTf)]
#[metatf(section = 1, model = "auto", model = "none")]
enum Twice {
    Alloc(Alloc),
}

fn main() {}

use metatf::MetaTf;

#[derive(MetaTf)]
#[metatf(tag = 4)]
struct Alloc {
    size: u32,
}

#[derive(MetaTf)]
#[metatf(tag = 4)]
struct Free {
    address: u32,
}

#[derive(MetaTf)]
#[metatf(section = 1)]
enum Heap {
    Alloc(Alloc),
    Free(Free),
}

fn main() {}

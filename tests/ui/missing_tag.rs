use metatf::MetaTf;

#[derive(MetaTf)]
struct Alloc {
    size: u32,
}

fn main() {}

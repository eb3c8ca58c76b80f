use metatf::MetaTf;

#[derive(MetaTf)]
#[metatf(tag = 4)]
struct Alloc {
    name: String,
    ratio: f64,
    size: u32,
}

fn main() {}

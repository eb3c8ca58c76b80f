use metatf::MetaTf;

#[derive(MetaTf)]
#[metatf(tag = 4)]
#[metatf(tag = 5)]
struct Alloc {
    #[metatf(width = 2, width = 4)]
    size: u32,
}

fn main() {}

use metatf::MetaTf;

#[derive(MetaTf)]
#[metatf(tag = 4, colour = 3)]
struct Alloc {
    #[metatf(widht = 4)]
    size: u32,
}

fn main() {}

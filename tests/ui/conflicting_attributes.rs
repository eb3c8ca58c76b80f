use metatf::MetaTf;

#[derive(MetaTf)]
#[metatf(tag = 4)]
struct Alloc {
    // Two interpretations for one field.
    #[metatf(delta = 0, default = 1)]
    size: u32,
    // `default` stores nothing, so a width contradicts it.
    #[metatf(default = 0, width = 4)]
    heap: u32,
    // A bad interpretation string.
    #[metatf(interpretation = "delat 0")]
    time: u64,
}

fn main() {}

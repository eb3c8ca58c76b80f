use metatf::MetaTf;

#[derive(MetaTf)]
#[metatf(tag = 4)]
struct Alloc {
    // A u16 holds 2 bytes: the Rust type is too small for this width.
    #[metatf(width = 4)]
    size: u16,
    // No field is wider than 8 bytes.
    #[metatf(width = 9)]
    address: u64,
}

fn main() {}

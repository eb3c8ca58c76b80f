use metatf::MetaTf;

#[derive(MetaTf)]
#[metatf(tag = 4)]
struct Stack {
    depth: u8,
    thread: u16,
    // The count must be the integer field just before the repeated one.
    #[metatf(count = "depth")]
    frames: Vec<u64>,
    // `count` needs a Vec of integers.
    #[metatf(count = "thread")]
    single: u32,
}

fn main() {}

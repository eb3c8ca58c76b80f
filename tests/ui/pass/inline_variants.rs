// Inline variants compile under `#![no_implicit_prelude]` too, mixed with wrapped structs.
#![no_implicit_prelude]

#[derive(::metatf::MetaTf)]
#[metatf(tag = 6)]
struct Free {
    address: u64,
}

#[derive(::metatf::MetaTf)]
#[metatf(section = 1, name = "heap")]
enum Heap {
    #[metatf(tag = 4, name = "alloc")]
    Alloc {
        #[metatf(width = 2)]
        size: u32,
        #[metatf(delta = 0, width = 2)]
        address: u64,
        data: ::std::vec::Vec<u8>,
    },
    Free(Free),
}

fn main() {
    let _ = <Heap as ::metatf::typed::Format>::dtd();
}

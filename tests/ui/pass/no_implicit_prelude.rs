// Generated code names everything by absolute path, so it compiles without the prelude.
#![no_implicit_prelude]

mod heap {
    #[derive(::metatf::MetaTf)]
    #[metatf(tag = 4)]
    pub struct Alloc {
        #[metatf(delta = 0, width = 2)]
        pub address: u64,
        pub size: u32,
        pub data: ::std::vec::Vec<u8>,
    }

    #[derive(::metatf::MetaTf)]
    #[metatf(section = 1)]
    pub enum Heap {
        Alloc(Alloc),
    }
}

fn main() {
    let dtd = <heap::Heap as ::metatf::typed::Format>::dtd();
    ::std::assert!(dtd.is_ok());
}

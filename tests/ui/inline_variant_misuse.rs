use metatf::MetaTf;

#[derive(MetaTf)]
#[metatf(section = 1)]
enum Heap {
    // An inline record needs its tag like a record struct does.
    Alloc { size: u32 },
    // `crate` belongs on the enum.
    #[metatf(tag = 6, crate = "::metatf")]
    Free { address: u64 },
    // Two unnamed fields are neither a wrapped struct nor inline fields.
    Pair(u32, u64),
}

fn main() {}

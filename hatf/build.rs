//! Compiles the DTDs whose records `hatf` writes through generated (typed) codecs into
//! `$OUT_DIR/<stem>.rs`, included by `metatf::include_dtd!`. Today that is `dtds/hatf10.dtd`,
//! used by the `hatf10-dtd` encoding (`src/alloc/hatf10_dtd/`); the other built-in formats keep
//! their own record models and every other DTD is read by the universal codec.

fn main() {
    let dtd = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dtds/hatf10.dtd");
    let out_dir = std::env::var_os("OUT_DIR").expect("Cargo sets OUT_DIR for build scripts");
    match metatf_dtd::codegen::compile_dtd_to(&dtd, &out_dir) {
        Ok(compiled) => {
            for line in &compiled.cargo {
                println!("{line}");
            }
        }
        Err(e) => {
            // Keep watching the file so that fixing it reruns this script.
            println!("cargo:rerun-if-changed={}", dtd.display());
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}

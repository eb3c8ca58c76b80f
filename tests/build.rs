//! A real user of the DTD compiler's build-script API: compiles every DTD in `dtds/` into
//! `$OUT_DIR/<stem>.rs` and writes `$OUT_DIR/dtd_codecs.rs`, which `src/lib.rs` includes: one
//! module per DTD (`metatf::include_dtd!`), the list of formats, and the instructions for Cargo
//! that were printed, so that a test can check that changing a DTD reruns this script. The
//! example DTDs of `dtds/examples/` are compiled too, with the model engine switched on.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let dtds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dtds");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("Cargo sets OUT_DIR"));
    // A new or removed DTD changes the folder: rerun to pick it up.
    let mut cargo = vec![format!("cargo:rerun-if-changed={}", dtds.display())];
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dtds)
        .expect("dtds/ is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "dtd"))
        .collect();
    paths.sort();
    let mut modules = String::new();
    let mut formats = String::new();
    let mut compiled = String::new();
    let mut skipped = String::new();
    for path in &paths {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("DTD file names are UTF-8");
        match metatf_dtd::codegen::compile_dtd_to(path, &out_dir) {
            Ok(c) => {
                cargo.extend(c.cargo);
                let module = stem.replace('-', "_");
                let _ = writeln!(
                    modules,
                    "/// Typed codecs generated from `dtds/{stem}.dtd` by the build script.\n\
                     #[allow(missing_docs)]\npub mod {module} {{\n    metatf::include_dtd!(\"{stem}\");\n}}\n"
                );
                for f in &c.formats {
                    let _ = writeln!(formats, "        $m!({module}, {f});");
                }
                let _ = writeln!(compiled, "    \"{stem}\",");
            }
            Err(e) => {
                // A DTD being edited may not compile yet: it stays watched, and the list of
                // skipped DTDs lets a test report it rather than silently miss it.
                cargo.push(format!("cargo:rerun-if-changed={}", path.display()));
                cargo.push(format!(
                    "cargo:warning=dtds/{stem}.dtd does not compile, no codec generated: {}",
                    e.lines().next().unwrap_or("")
                ));
                let _ = writeln!(skipped, "    \"{stem}\",");
            }
        }
    }
    // The example DTDs of tools hatf has no front end for, compiled with the model engine
    // switched on: the typed writers they give code like `hatf encode --from text --model auto`.
    let examples = dtds.join("examples");
    let model_dir = out_dir.join("model");
    std::fs::create_dir_all(&model_dir).expect("OUT_DIR is writable");
    let mut model_formats = String::new();
    let mut model_paths: Vec<PathBuf> = std::fs::read_dir(&examples)
        .expect("dtds/examples/ is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "dtd"))
        .collect();
    model_paths.sort();
    cargo.push(format!("cargo:rerun-if-changed={}", examples.display()));
    let engine = metatf_dtd::codegen::Options {
        model_engine: Some(true),
    };
    for path in &model_paths {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("DTD file names are UTF-8");
        let c = metatf_dtd::codegen::compile_dtd_to_with(path, &model_dir, &engine)
            .unwrap_or_else(|e| panic!("dtds/examples/{stem}.dtd does not compile: {e}"));
        cargo.extend(c.cargo);
        let module = stem.replace('-', "_");
        let _ = writeln!(
            modules,
            "/// Typed codecs generated from `dtds/examples/{stem}.dtd`, coding with the model engine.\n\
             #[allow(missing_docs)]\npub mod {module} {{\n    metatf::include_dtd!(\"model/{stem}\");\n}}\n"
        );
        for f in &c.formats {
            let _ = writeln!(model_formats, "        $m!({module}, {f});");
        }
    }
    let mut code = String::from("// Written by tests/build.rs. Do not edit.\n\n");
    code.push_str(&modules);
    let _ = write!(
        code,
        "/// Calls `$m!(module, Format)` for every format enum generated from `dtds/examples/`\n\
         /// with the model engine switched on.\n\
         #[macro_export]\nmacro_rules! for_each_model_format {{\n    ($m:ident) => {{\n{model_formats}    }};\n}}\n\n"
    );
    let _ = write!(
        code,
        "/// Calls `$m!(module, Format)` for every format enum generated from `dtds/`.\n\
         #[macro_export]\nmacro_rules! for_each_dtd_format {{\n    ($m:ident) => {{\n{formats}    }};\n}}\n\n\
         /// Stems of the DTDs in `dtds/` that compiled.\npub const COMPILED: &[&str] = &[\n{compiled}];\n\n\
         /// Stems of the DTDs in `dtds/` that did not compile (no codec generated).\n\
         pub const SKIPPED: &[&str] = &[\n{skipped}];\n\n"
    );
    let _ = writeln!(
        code,
        "/// The instructions this build script printed for Cargo.\npub const CARGO_INSTRUCTIONS: &[&str] = &{cargo:?};"
    );
    std::fs::write(out_dir.join("dtd_codecs.rs"), code).expect("OUT_DIR is writable");
    for line in &cargo {
        println!("{line}");
    }
}

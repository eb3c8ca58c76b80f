//! The build-script entry point: compile a DTD file into `$OUT_DIR/<stem>.rs`.

use std::path::{Path, PathBuf};

/// Compiles the DTD at `path` to Rust in `$OUT_DIR/<file stem>.rs` and tells Cargo to rerun
/// the build script when the DTD changes. Include the result with `metatf::include_dtd!("stem")`.
///
/// Call it from `build.rs`:
///
/// ```no_run
/// metatf_dtd::codegen::compile_dtd("dtds/hatf10.dtd").unwrap();
/// ```
///
/// The error is the DTD's diagnostics (file, line:column, caret) or the I/O error, as text.
pub fn compile_dtd(path: impl AsRef<Path>) -> Result<PathBuf, String> {
    let path = path.as_ref();
    println!("cargo:rerun-if-changed={}", path.display());
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let schema =
        crate::parse_schema(&source, &path.display().to_string()).map_err(|d| d.to_string())?;
    let out_dir = std::env::var_os("OUT_DIR")
        .ok_or_else(|| "OUT_DIR is not set: call compile_dtd from a build script".to_string())?;
    let stem = path
        .file_stem()
        .ok_or_else(|| format!("{} has no file name", path.display()))?;
    let mut out = PathBuf::from(out_dir).join(stem);
    out.set_extension("rs");
    std::fs::write(&out, super::generate(&schema, &source))
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(out)
}

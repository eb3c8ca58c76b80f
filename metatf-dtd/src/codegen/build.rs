//! The build-script entry point: compile a DTD file into `$OUT_DIR/<stem>.rs`.

use std::path::{Path, PathBuf};

use super::Options;

/// What [`compile_dtd_to`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// The Rust file written: `<out_dir>/<DTD file stem>.rs`.
    pub path: PathBuf,
    /// The format enums it defines (see [`super::format_types`]).
    pub formats: Vec<String>,
    /// The instructions for Cargo a build script must print (`cargo:rerun-if-changed=...`),
    /// one per line, so that changing the DTD rebuilds the crate.
    pub cargo: Vec<String>,
}

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
/// Cargo is told to watch the DTD even then, so fixing it reruns the build script.
pub fn compile_dtd(path: impl AsRef<Path>) -> Result<PathBuf, String> {
    compile_dtd_with(path, &Options::default())
}

/// [`compile_dtd`] with options, such as the switch to the model engine:
///
/// ```no_run
/// use metatf_dtd::codegen::{compile_dtd_with, Options};
///
/// compile_dtd_with("dtds/lackey.dtd", &Options { model_engine: Some(true) }).unwrap();
/// ```
pub fn compile_dtd_with(path: impl AsRef<Path>, options: &Options) -> Result<PathBuf, String> {
    let path = path.as_ref();
    let out_dir = match std::env::var_os("OUT_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            println!("{}", rerun_line(path));
            return Err("OUT_DIR is not set: call compile_dtd from a build script".to_string());
        }
    };
    match compile_dtd_to_with(path, &out_dir, options) {
        Ok(c) => {
            for line in &c.cargo {
                println!("{line}");
            }
            Ok(c.path)
        }
        Err(e) => {
            println!("{}", rerun_line(path));
            Err(e)
        }
    }
}

/// [`compile_dtd`] with an explicit output folder, printing nothing: the caller prints
/// [`Compiled::cargo`] (a build script) or inspects it (a test).
pub fn compile_dtd_to(
    path: impl AsRef<Path>,
    out_dir: impl AsRef<Path>,
) -> Result<Compiled, String> {
    compile_dtd_to_with(path, out_dir, &Options::default())
}

/// [`compile_dtd_to`] with options (see [`compile_dtd_with`]).
pub fn compile_dtd_to_with(
    path: impl AsRef<Path>,
    out_dir: impl AsRef<Path>,
    options: &Options,
) -> Result<Compiled, String> {
    let path = path.as_ref();
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let schema =
        crate::parse_schema(&source, &path.display().to_string()).map_err(|d| d.to_string())?;
    let stem = path
        .file_stem()
        .ok_or_else(|| format!("{} has no file name", path.display()))?;
    let mut out = out_dir.as_ref().join(stem);
    out.set_extension("rs");
    std::fs::write(&out, super::generate_with(&schema, &source, options))
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(Compiled {
        path: out,
        formats: super::format_types(&schema),
        cargo: vec![rerun_line(path)],
    })
}

fn rerun_line(path: &Path) -> String {
    format!("cargo:rerun-if-changed={}", path.display())
}

#[cfg(test)]
mod tests {
    use super::compile_dtd_to;

    #[test]
    fn compiling_writes_the_code_and_asks_cargo_to_watch_the_dtd() {
        let dir = std::env::temp_dir().join(format!("metatf-codegen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let dtd = dir.join("tiny.dtd");
        std::fs::write(
            &dtd,
            "size.width = 2; size.interpretation = none;\n\
             section heap 1 { alloc : (tag, size) { tag.value = 4; } }\n",
        )
        .expect("write DTD");
        let c = compile_dtd_to(&dtd, &dir).expect("compiles");
        assert_eq!(c.path, dir.join("tiny.rs"));
        assert_eq!(c.formats, ["Heap", "Dtd"]);
        assert_eq!(
            c.cargo,
            [format!("cargo:rerun-if-changed={}", dtd.display())]
        );
        let code = std::fs::read_to_string(&c.path).expect("generated file");
        assert!(code.contains("pub enum Heap {"), "{code}");

        std::fs::write(&dtd, "section heap 1 { alloc : (tag, nosuchfield) }").expect("write");
        let err = compile_dtd_to(&dtd, &dir).expect_err("an invalid DTD is an error");
        assert!(err.contains("tiny.dtd"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}

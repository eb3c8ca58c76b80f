//! The DTD compiler's output for every DTD in `dtds/` is pinned by a golden file in
//! `tests/golden/`. Regenerate with `UPDATE_GOLDEN=1 cargo test -p hatf-tests --test dtd_golden`.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn dtds() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("dtds"))
        .expect("dtds/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "dtd"))
        .collect();
    v.sort();
    v
}

fn golden_path(dtd: &Path) -> PathBuf {
    let stem = dtd.file_stem().expect("a file name");
    repo().join("tests/golden").join(stem).with_extension("rs")
}

#[test]
fn generated_code_matches_the_golden_file_of_every_dtd() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1");
    let mut problems = Vec::new();
    let mut compiled = 0;
    for dtd in dtds() {
        let source = std::fs::read_to_string(&dtd).expect("readable DTD");
        let schema = match metatf_dtd::parse_schema(&source, &dtd.display().to_string()) {
            Ok(s) => s,
            Err(d) => {
                // Not this test's business: `hatf dtd check` and metatf-dtd's tests own DTD
                // validity. A DTD that does not compile has no golden file.
                eprintln!("skipping {}: it does not compile:\n{d}", dtd.display());
                continue;
            }
        };
        compiled += 1;
        let code = metatf_dtd::codegen::generate(&schema, &source);
        let golden = golden_path(&dtd);
        if update {
            std::fs::write(&golden, &code).expect("writable golden file");
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(g) if g == code => {}
            Ok(_) => problems.push(format!(
                "{} changed; rerun with UPDATE_GOLDEN=1 if intended",
                golden.display()
            )),
            Err(_) => problems.push(format!("{} is missing", golden.display())),
        }
    }
    assert!(compiled >= 1, "no DTD compiled");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn generation_is_deterministic_and_names_every_record() {
    let source = std::fs::read_to_string(repo().join("dtds/hatf10.dtd")).expect("hatf10.dtd");
    let schema = metatf_dtd::parse_schema(&source, "hatf10.dtd").expect("valid");
    let a = metatf_dtd::codegen::generate(&schema, &source);
    assert_eq!(a, metatf_dtd::codegen::generate(&schema, &source));
    for r in &schema.sections[0].records {
        assert!(
            a.contains(&format!("name = \"{}\"", r.name)),
            "record {} missing",
            r.name
        );
    }
    // realloc's two addresses keep their DTD name, numbered alike.
    assert!(a.contains("#[metatf(name = \"address\", width = 4, interpretation = \"none\")]\n    pub address_1: u64,"), "{a}");
    assert!(a.contains("pub address_2: u64,"));
}

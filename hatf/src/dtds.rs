//! Every DTD that ships with hatf, so that a file which names its DTD by reference (the
//! format models do: see `docs/FORMAT.md` §5) can still show it.

/// `(file name, text)` of each DTD in the repository's `dtds/` folder.
pub const KNOWN: &[(&str, &str)] = &[
    ("et2.dtd", include_str!("../../dtds/et2.dtd")),
    ("et3.dtd", include_str!("../../dtds/et3.dtd")),
    ("hatf10.dtd", include_str!("../../dtds/hatf10.dtd")),
    ("jvm.dtd", include_str!("../../dtds/jvm.dtd")),
    (
        "malloc-bench.dtd",
        include_str!("../../dtds/malloc-bench.dtd"),
    ),
    (
        "memory-replay.dtd",
        include_str!("../../dtds/memory-replay.dtd"),
    ),
    ("mtrace.dtd", include_str!("../../dtds/mtrace.dtd")),
    ("wee-alloc.dtd", include_str!("../../dtds/wee-alloc.dtd")),
];

/// The shipped DTD with the given identity (length and CRC-32 of its text), if any.
pub fn by_identity(id: metatf::container::DtdIdentity) -> Option<&'static str> {
    KNOWN
        .iter()
        .map(|(_, text)| *text)
        .find(|text| id.matches(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_dtd_is_listed_and_found_by_identity() {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/../dtds");
        let mut on_disk: Vec<String> = std::fs::read_dir(folder)
            .expect("dtds/ folder")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".dtd"))
            .collect();
        on_disk.sort();
        let listed: Vec<&str> = KNOWN.iter().map(|(n, _)| *n).collect();
        assert_eq!(on_disk, listed, "dtds/ and KNOWN differ");
        for (name, text) in KNOWN {
            let id = metatf::container::DtdIdentity::of(text);
            assert_eq!(by_identity(id), Some(*text), "{name}");
        }
        let other = metatf::container::DtdIdentity::of("tag.width = 1;\n");
        assert_eq!(by_identity(other), None);
    }
}

//! The record DTD (`dtds/records/`) of each built-in format: the DTD the generic engine
//! encodes that format's records with in `hatf compare`.

/// The file name and text of the record DTD of the format named `format`.
pub fn of_format(format: &str) -> Option<(&'static str, &'static str)> {
    RECORD_DTDS
        .iter()
        .find(|(name, _, _)| *name == format)
        .map(|(_, file, text)| (*file, *text))
}

/// Format name, DTD path in the repository, DTD text.
const RECORD_DTDS: &[(&str, &str, &str)] = &[
    (
        "mtrace",
        "dtds/records/mtrace.dtd",
        include_str!("../../../dtds/records/mtrace.dtd"),
    ),
    (
        "memory-replay",
        "dtds/records/memory-replay.dtd",
        include_str!("../../../dtds/records/memory-replay.dtd"),
    ),
    // A memory_replay trace kept in its zip has the same records as its text.
    (
        "memory-replay-zip",
        "dtds/records/memory-replay.dtd",
        include_str!("../../../dtds/records/memory-replay.dtd"),
    ),
    (
        "wee-alloc",
        "dtds/records/wee-alloc.dtd",
        include_str!("../../../dtds/records/wee-alloc.dtd"),
    ),
    (
        "malloc-bench",
        "dtds/records/malloc-bench.dtd",
        include_str!("../../../dtds/records/malloc-bench.dtd"),
    ),
    (
        "et2",
        "dtds/records/et2.dtd",
        include_str!("../../../dtds/records/et2.dtd"),
    ),
    (
        "et3",
        "dtds/records/et3.dtd",
        include_str!("../../../dtds/records/et3.dtd"),
    ),
    (
        "jvm",
        "dtds/records/jvm.dtd",
        include_str!("../../../dtds/records/jvm.dtd"),
    ),
    // A zipped JVM trace has the same records as its text.
    (
        "jvm-zip",
        "dtds/records/jvm.dtd",
        include_str!("../../../dtds/records/jvm.dtd"),
    ),
];

#[cfg(test)]
mod tests {
    #[test]
    fn every_built_in_format_has_a_record_dtd() {
        for format in crate::registry() {
            assert!(
                super::of_format(format.name()).is_some(),
                "{}",
                format.name()
            );
        }
    }
}

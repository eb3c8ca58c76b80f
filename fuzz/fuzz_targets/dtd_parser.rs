//! Feeds arbitrary UTF-8 to the DTD front end: it must never panic, and whatever parses must
//! format to text that parses to the same schema.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let parsed = metatf_dtd::parse_schema(text, "fuzz.dtd");
    if let Ok(formatted) = metatf_dtd::format_dtd(text, "fuzz.dtd") {
        if let Ok(schema) = parsed {
            assert_eq!(
                metatf_dtd::parse_schema(&formatted, "fuzz.dtd").ok(),
                Some(schema)
            );
        }
    }
});

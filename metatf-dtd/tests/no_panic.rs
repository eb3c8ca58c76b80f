//! The front end must turn any text into a schema or diagnostics, never a panic: random strings
//! over the DTD alphabet, and random edits of valid DTDs. Whatever parses must also format
//! to text that parses to the same schema.

use metatf_dtd::{format_dtd, parse_schema};
use proptest::prelude::*;

const SEEDS: [&str; 3] = [
    include_str!("../../dtds/hatf10.dtd"),
    include_str!("../src/builtins.dtd"),
    "n.width = 1; n.interpretation = none; k.width = 2; k.interpretation = delta 1;\n\
     section a 1 { r : (tag, n * (k, n), x : (k) { k.width = 1; }) { tag.value = 4; } }\n\
     section b 2 { } // end\n",
];

fn check(text: &str) -> Result<(), TestCaseError> {
    let parsed = parse_schema(text, "random.dtd");
    if let Err(errors) = &parsed {
        prop_assert!(!errors.is_empty());
        for d in errors.iter() {
            prop_assert!(d.line >= 1 && d.column >= 1);
        }
        let _ = errors.to_string();
    }
    if let Ok(formatted) = format_dtd(text, "random.dtd") {
        if let Ok(schema) = parsed {
            let again = parse_schema(&formatted, "formatted.dtd");
            prop_assert_eq!(again.ok(), Some(schema), "formatted:\n{}", formatted);
        }
        prop_assert_eq!(
            format_dtd(&formatted, "f.dtd").ok(),
            Some(formatted.clone())
        );
    }
    Ok(())
}

/// An edit applied to a seed: delete, insert or replace a short run at a character boundary.
fn mutate(seed: &str, at: usize, len: usize, insert: &str, kind: u8) -> String {
    let mut cut = at % (seed.len() + 1);
    while !seed.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut end = (cut + len).min(seed.len());
    while !seed.is_char_boundary(end) {
        end -= 1;
    }
    match kind % 3 {
        0 => format!("{}{}", &seed[..cut], &seed[end..]),
        1 => format!("{}{}{}", &seed[..cut], insert, &seed[cut..]),
        _ => format!("{}{}{}", &seed[..cut], insert, &seed[end..]),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_text_never_panics(text in "[a-z0-9_(){};:.,*=/ \\n\\t+#x-]{0,160}") {
        check(&text)?;
    }

    #[test]
    fn edited_dtds_never_panic(
        seed in 0..SEEDS.len(),
        edits in prop::collection::vec((any::<usize>(), 0usize..6, "[a-z0-9(){};:.,*=/ \\n-]{0,4}|tag|section|vfield|\\(|\\)|\\{|\\}|/\\*|\\*/|//|é", any::<u8>()), 1..4),
    ) {
        let mut text = SEEDS[seed].to_string();
        for (at, len, insert, kind) in &edits {
            text = mutate(&text, *at, *len, insert, *kind);
        }
        check(&text)?;
    }
}

#[test]
fn pathological_inputs_are_rejected_quickly() {
    let deep = format!(
        "r : {}x{} {{ tag.value = 4; }}",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    assert!(parse_schema(&deep, "deep.dtd").is_err());
    // Records doubling their size at each level: 2^40 fields if expanded naively.
    let mut text = String::from("x.width = 1; x.interpretation = none;\ng0 : (x, x)\n");
    for i in 1..40 {
        text.push_str(&format!("g{i} : (g{0}, g{0})\n", i - 1));
    }
    text.push_str("r : (tag, g39) { tag.value = 4; }\n");
    let errors = parse_schema(&text, "wide.dtd").expect_err("too many fields");
    assert!(errors.to_string().contains("too many fields"), "{errors}");
    let chain: String = (0..500).map(|i| format!("g{i} : g{}\n", i + 1)).collect();
    assert!(parse_schema(
        &format!("{chain}g500 : x\nr : g0 {{ tag.value = 4; }}"),
        "chain.dtd"
    )
    .is_err());
    assert!(parse_schema("\u{0}\u{feff}/*", "nul.dtd").is_err());
    // A thousand properties each copying the next one's width: refused, not a stack overflow.
    let mut text = String::from("f999.width = 1;\n");
    let mut fields = Vec::new();
    for k in 0..1000 {
        if k < 999 {
            text.push_str(&format!("f{k}.width = f{}.width;\n", k + 1));
        }
        text.push_str(&format!("f{k}.interpretation = none;\n"));
        fields.push(format!("f{k}"));
    }
    text.push_str(&format!(
        "r : (tag, {}) {{ tag.value = 4; }}\n",
        fields.join(", ")
    ));
    let errors = parse_schema(&text, "chain.dtd").expect_err("chain too long");
    assert!(errors.to_string().contains("too long"), "{errors}");
}

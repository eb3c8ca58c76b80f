//! Hostile DTDs: nesting and repetition far deeper than any real schema, and very long
//! declarations. The front end must answer (a schema or diagnostics) without overflowing the
//! stack or taking super-linear time — on a thread with a small stack, as a server would run it.

use metatf_dtd::{format_dtd, parse_schema};

/// Runs parse and format of `text` on a thread with a 1 MiB stack; a stack overflow would abort
/// the whole test binary, so reaching the end is the assertion.
fn answers(text: String) -> bool {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let parsed = parse_schema(&text, "deep.dtd");
            let _ = format_dtd(&text, "deep.dtd");
            parsed.is_ok()
        })
        .expect("thread starts")
        .join()
        .expect("no panic")
}

fn nested_groups(depth: usize) -> String {
    format!(
        "x.width = 1; x.interpretation = none;\nsection s 1 {{ r : (tag, {}x{}) {{ tag.value = 4; }} }}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    )
}

fn nested_repetition(depth: usize) -> String {
    let mut fields = String::from("x");
    for i in 0..depth {
        fields = format!("n{i} * ({fields})");
    }
    let mut props = String::from("x.width = 1; x.interpretation = none;");
    for i in 0..depth {
        props.push_str(&format!(" n{i}.width = 1; n{i}.interpretation = none;"));
    }
    format!("{props}\nsection s 1 {{ r : (tag, {fields}) {{ tag.value = 4; }} }}\n")
}

#[test]
fn deep_group_nesting_is_answered_without_stack_overflow() {
    assert!(answers(nested_groups(10)), "a plain nested group parses");
    for depth in [1_000, 100_000] {
        answers(nested_groups(depth));
    }
}

#[test]
fn deep_repetition_nesting_is_answered_without_stack_overflow() {
    assert!(
        answers(nested_repetition(10)),
        "ten nested repetitions parse"
    );
    for depth in [500, 5_000] {
        answers(nested_repetition(depth));
    }
}

#[test]
fn unbalanced_openers_are_answered() {
    assert!(!answers(format!(
        "section s 1 {{ r : {} }}",
        "(".repeat(200_000)
    )));
    assert!(!answers("section s 1 {".repeat(50_000)));
}

#[test]
fn very_many_records_and_fields_parse() {
    let fields: Vec<String> = (0..20_000).map(|i| format!("f{i}")).collect();
    let props: String = (0..20_000)
        .map(|i| format!("f{i}.width = 1; f{i}.interpretation = none;\n"))
        .collect();
    let text = format!(
        "{props}section s 1 {{ r : (tag, {}) {{ tag.value = 4; }} }}\n",
        fields.join(", ")
    );
    assert!(answers(text));
}

/// A record repeating one field `n` times.
fn repeated_field(n: usize) -> String {
    format!(
        "x.width = 1; x.interpretation = none;\nsection s 1 {{ r : (tag, {}) {{ tag.value = 4; }} }}\n",
        vec!["x"; n].join(", ")
    )
}

/// Records `g0 : (x, x)`, `g1 : (g0, g0)`, …: the last expands to 2^`depth` fields.
fn doubling_groups(depth: usize) -> String {
    let mut text = String::from("x.width = 1; x.interpretation = none;\ng0 : (x, x)\n");
    for i in 1..depth {
        text.push_str(&format!("g{i} : (g{}, g{})\n", i - 1, i - 1));
    }
    text.push_str(&format!(
        "section s 1 {{ r : (tag, g{}) {{ tag.value = 4; }} }}\n",
        depth - 1
    ));
    text
}

/// Seconds of thread CPU time `f` takes (not wall-clock: other work on the machine does not
/// count).
fn cpu_seconds(f: impl FnOnce()) -> f64 {
    fn now() -> f64 {
        let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
        let ns: f64 = stat
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        ns / 1e9
    }
    let start = now();
    f();
    now() - start
}

#[test]
fn repeated_fields_compile_in_linear_time() {
    let compile = |text: &str| {
        let schema = parse_schema(text, "rep.dtd").unwrap_or_else(|d| panic!("{d}"));
        metatf_dtd::codegen::generate(&schema, text)
    };
    // Each repeat gets the next number, in order, the first one included.
    let code = compile(&repeated_field(8_192));
    assert!(code.contains("pub x_1: u64,") && code.contains("pub x_8192: u64,"));
    assert!(!code.contains("pub x_8193") && !code.contains("pub x: u64,"));
    let code = compile(&doubling_groups(13));
    assert!(code.contains("pub x_8192: u64,"), "2^13 fields");
    // Doubling the repeats at most about doubles the time (a cubic growth would take over a
    // minute at 8,192 repeats). Measured on the larger sizes, where fixed costs are small.
    let small = cpu_seconds(|| {
        compile(&repeated_field(8_192));
    });
    let large = cpu_seconds(|| {
        compile(&repeated_field(32_768));
    });
    if small > 0.0 {
        assert!(
            large < 8.0 * small + 0.05,
            "8,192 repeats: {small:.3} s; 32,768: {large:.3} s"
        );
    }
}

#[test]
fn a_long_chain_of_records_gives_bounded_errors() {
    // 100,000 records each used only by the next: every one is reported as having no tag value
    // (the chain is deeper than nesting allows too), but only the first hundred are printed,
    // each with at most 120 characters of its line even when the whole DTD is one line.
    for separator in ["\n", " "] {
        let mut text = String::from("x.width = 1; x.interpretation = none;");
        text.push_str(separator);
        text.push_str("g0 : (x)");
        for i in 1..100_000 {
            text.push_str(&format!("{separator}g{i} : (g{})", i - 1));
        }
        text.push_str("\nsection s 1 { r : (tag, g99999) { tag.value = 4; } }\n");
        let diagnostics = parse_schema(&text, "chain.dtd").expect_err("errors");
        assert!(diagnostics.len() > 1000, "{}", diagnostics.len());
        assert_eq!(diagnostics.iter().count(), 100);
        let printed = diagnostics.to_string();
        assert!(
            printed.len() < 100 * 600,
            "{} bytes of errors",
            printed.len()
        );
        assert!(printed.contains("more errors not shown"), "{printed}");
    }
}

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

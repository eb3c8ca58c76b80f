//! Compile-fail and compile-pass tests of `#[derive(MetaTf)]`. The expected compiler output is
//! in `tests/ui/*.stderr`; regenerate it with `TRYBUILD=overwrite` after checking the messages.

#[test]
fn derive_errors_point_at_the_offending_attribute() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("ui/pass/*.rs");
}

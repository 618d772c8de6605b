#[test]
fn corpus_cases_hold_natively() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cases/flux-gate");
    let (count, failures) = conformance::check_native(&flux_gate::ENTRY, &dir).unwrap();
    assert!(count >= 35, "only {count} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

//! The recorded corpus, judged by the native evaluator as policy-server would,
//! and every command its refusals and warnings suggest.

#[test]
fn corpus_cases_hold_natively() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cases/flux-gate");
    let (count, failures) = conformance::check_native(&flux_gate::ENTRY, &dir).unwrap();
    assert!(count >= 35, "only {count} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_suggested_command_is_admitted() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cases/flux-gate");
    let (count, failures) =
        conformance::commands::check_suggested_applied_from_git(&flux_gate::ENTRY, &dir).unwrap();
    assert!(count >= 10, "only {count} suggested commands");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

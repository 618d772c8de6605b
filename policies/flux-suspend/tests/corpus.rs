//! The recorded corpus, judged by the native evaluator as policy-server would.

#[test]
fn corpus_cases_hold_natively() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cases/flux-suspend");
    let (count, failures) = conformance::check_native(&flux_suspend::ENTRY, &dir).unwrap();
    assert!(count >= 30, "only {count} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_suggested_command_is_admitted() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cases/flux-suspend");
    let (count, failures) =
        conformance::commands::check_suggested(&flux_suspend::ENTRY, &dir).unwrap();
    assert!(count >= 20, "only {count} suggested commands");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

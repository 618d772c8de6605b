#[test]
fn corpus_cases_hold_natively() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cases/aso-reconcile");
    let (count, failures) = conformance::check_native(&aso_reconcile::ENTRY, &dir).unwrap();
    assert!(count >= 35, "only {count} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_suggested_command_is_admitted() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cases/aso-reconcile");
    let (count, failures) =
        conformance::commands::check_suggested(&aso_reconcile::ENTRY, &dir).unwrap();
    assert!(count >= 5, "only {count} suggested commands");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

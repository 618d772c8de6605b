//! The policy's stories (`tests/stories/aso-reconcile`), judged by the
//! native evaluator as policy-server would, each write shaped as its writer
//! sends it.

#[test]
fn stories_hold_natively() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/stories/aso-reconcile");
    let (_count, failures) = conformance::story::check_native(&aso_reconcile::ENTRY, &dir).unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

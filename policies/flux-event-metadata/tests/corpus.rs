//! The recorded admission payload corpus, run through the native evaluator
//! exactly as policy-server would reply.

#[test]
fn corpus_cases_hold_natively() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/cases/flux-event-metadata");
    let (count, failures) = conformance::check_native(&flux_event_metadata::ENTRY, &dir).unwrap();
    assert!(count >= 30, "only {count} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_suggested_command_is_admitted() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/cases/flux-event-metadata");
    let (count, failures) =
        conformance::commands::check_suggested(&flux_event_metadata::ENTRY, &dir).unwrap();
    assert!(count >= 1, "no suggested command in the corpus");
    assert!(
        failures.is_empty(),
        "{count} commands:\n{}",
        failures.join("\n")
    );
}

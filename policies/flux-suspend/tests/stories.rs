//! The policy's stories (`tests/stories/flux-suspend`), judged by the native
//! evaluator as policy-server would, each write shaped as its writer sends it.

#[test]
fn stories_hold_natively() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/stories/flux-suspend");
    let (count, failures) = conformance::story::check_native(&flux_suspend::ENTRY, &dir).unwrap();
    assert!(count >= MIN_STORIES, "only {count} stories");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The stories this policy has so far; raise it as stories are added.
const MIN_STORIES: usize = 14;

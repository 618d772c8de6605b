//! The growth table's scenarios through the shipped modules in dist/ (made
//! by `make build`): padding a case's cluster with objects that cannot change
//! its verdict leaves the reply the case's, and a scenario whose lookups are
//! narrowed is handed the same bytes at 10,000 objects as at 10. Bytes are
//! asserted because they depend on the input alone; time is not (`make
//! bench` prints it).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

use devtools::growth::{scenarios, Prepared, SIZES};

#[test]
fn narrowed_lookups_do_not_grow_and_padding_changes_no_verdict() {
    let root = conformance::worst_case::workspace_root();
    for scenario in &scenarios() {
        let prepared = Prepared::new(scenario, &root.join("tests/cases"), &root.join("dist"))
            .unwrap_or_else(|e| panic!("{}: {e:#}; run `make build` first", scenario.label));
        let name = format!("{} ({})", scenario.policy, scenario.label);
        let smallest = prepared.judge(SIZES[0]);
        assert!(!smallest.lookups.is_empty(), "{name}: no lookup made");
        // Past 1,000, a policy that reads a bounded number of a lookup's
        // objects may stop before the case's own (flux-event-metadata reads
        // 4,096 Alerts): that is what narrowing is for.
        let at_1000 = prepared.judge(1_000);
        assert!(
            smallest.same_reply_as_case() && at_1000.same_reply_as_case(),
            "{name}"
        );
        if scenario.narrowed {
            let largest = prepared.judge(SIZES[SIZES.len() - 1]);
            assert!(largest.same_reply_as_case(), "{name}: the reply changed");
            assert_eq!(largest.lookups, smallest.lookups, "{name}");
            assert_eq!(
                largest.handed_bytes, smallest.handed_bytes,
                "{name}: handed more with more objects elsewhere"
            );
        } else {
            // Not narrowable: every object of the kind is handed over.
            assert!(at_1000.handed_bytes > 10 * smallest.handed_bytes, "{name}");
        }
    }
}

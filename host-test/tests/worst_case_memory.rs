//! The benchmarked worst cases (`tests/bench/<policy>-worst-case.yaml`,
//! each made by its policy's `tests/worst_case.rs`) through the shipped
//! modules in dist/ (made by `make build`): each answers as its case
//! records, and its instance's linear memory stays within the budget.
//! Memory is asserted because it depends on the input alone; time is not
//! (`make bench` prints it).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

use std::path::PathBuf;

use host_test::bench::{self, Input, BUDGET_MEMORY_BYTES};
use host_test::harness::Policy;
use host_test::host::Limits;

/// Worst cases known to exceed the memory budget: the ceiling each is held
/// to instead, and why.
const OVER_BUDGET: &[(&str, usize, &str)] = &[(
    "flux-event-metadata",
    96 << 20,
    "object and oldObject each read 200,000 labels into a map kept for the whole evaluation \
     (about 36 MiB of the peak), beside the 4096 Alerts listed at once (about 7 MiB)",
)];

#[test]
fn every_worst_case_answers_within_its_memory_budget() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    // No deadline: how long it takes is the benchmark's business, and a
    // loaded machine must not turn a memory figure into a timeout.
    let limits = Limits {
        timeout_seconds: None,
        memory_bytes: None,
    };
    let mut report = Vec::new();
    for entry in host_test::POLICIES {
        let file = root.join(format!("tests/bench/{}-worst-case.yaml", entry.name));
        let case = conformance::load_cases(&file)
            .unwrap_or_else(|e| panic!("{}: {e}", entry.name))
            .remove(0);
        let path = root.join("dist").join(format!("{}.wasm", entry.name));
        let policy = Policy::load(&path)
            .unwrap_or_else(|e| panic!("{}: {e:#}; run `make build` first", path.display()));
        let fresh = bench::evaluate_fresh(&policy, &Input::from_case(&case), &limits).unwrap();
        assert!(fresh.answered, "{}: {}", entry.name, fresh.outcome);
        assert_eq!(
            fresh.outcome.starts_with("accepted"),
            case.expect.allowed,
            "{}: {}",
            entry.name,
            fresh.outcome
        );
        let (ceiling, why) = OVER_BUDGET
            .iter()
            .find(|(name, ..)| *name == entry.name)
            .map_or((BUDGET_MEMORY_BYTES, ""), |(_, ceiling, why)| {
                (*ceiling, *why)
            });
        report.push(format!(
            "{}: {:.1} MiB for {:.1} KiB of payload {why}",
            entry.name,
            fresh.peak_memory_bytes as f64 / f64::from(1u32 << 20),
            fresh.payload_bytes as f64 / 1024.0
        ));
        assert!(
            fresh.peak_memory_bytes <= ceiling,
            "{}: peak linear memory {} bytes, over {ceiling} {why}",
            entry.name,
            fresh.peak_memory_bytes
        );
    }
    println!("{}", report.join("\n"));
}

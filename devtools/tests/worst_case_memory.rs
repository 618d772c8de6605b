//! The benchmarked worst cases (`conformance::worst_case`, each written by
//! its policy's `tests/worst_case.rs`) through the shipped
//! modules in dist/ (made by `make build`): each answers as its case
//! records, and its instance's linear memory stays within the budget.
//! Memory is asserted because it depends on the input alone; time is not
//! (`make bench` prints it).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

use devtools::bench::{self, Input, BUDGET_MEMORY_BYTES};
use host_test::harness::Policy;
use host_test::host::Limits;

#[test]
fn every_worst_case_answers_within_its_memory_budget() {
    let root = conformance::worst_case::workspace_root();
    // No deadline: how long it takes is the benchmark's business, and a
    // loaded machine must not turn a memory figure into a timeout.
    let limits = Limits {
        timeout_seconds: None,
        memory_bytes: None,
    };
    let mut report = Vec::new();
    for entry in catalog::POLICIES {
        let file = conformance::worst_case::path(&root, entry.name);
        let case = conformance::load_cases(&file)
            .unwrap_or_else(|e| {
                panic!(
                    "{e}: run `cargo test --profile host -p {} --test worst_case` first \
                     (make native-tests does)",
                    entry.name
                )
            })
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
        report.push(format!(
            "{}: {:.1} MiB for {:.1} KiB of payload",
            entry.name,
            fresh.peak_memory_bytes as f64 / f64::from(1u32 << 20),
            fresh.payload_bytes as f64 / 1024.0
        ));
        assert!(
            fresh.peak_memory_bytes <= BUDGET_MEMORY_BYTES,
            "{}: peak linear memory {} bytes, over {BUDGET_MEMORY_BYTES}",
            entry.name,
            fresh.peak_memory_bytes
        );
    }
    println!("{}", report.join("\n"));
}

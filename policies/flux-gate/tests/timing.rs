//! Native timing of the worst case (issue 17), run by hand:
//! `cargo test --profile host -p flux-gate --test timing -- --ignored --nocapture`.
//! `WORST_CASE=<file>` times another corpus-format file. Nothing is asserted
//! about time: this only prints it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // test code

use std::time::Instant;

#[test]
#[ignore = "a measurement, not a test"]
fn time_the_worst_case() {
    let file = std::env::var("WORST_CASE").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/bench/worst-case/flux-gate-worst-case.yaml"
        )
        .to_string()
    });
    let case = conformance::load_cases(std::path::Path::new(&file))
        .unwrap()
        .remove(0);
    let request = conformance::as_policy_server_sends(&case.admission_request()).unwrap();
    let payload = conformance::validate_payload(&request, &case.settings);
    let cluster = conformance::RecordedCluster::new(&case.context);
    let ctx = guard_core::Context::new(case.now, &cluster);
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let mut ms: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let reply = (flux_gate::ENTRY.validate)(&payload, &ctx);
            std::hint::black_box(reply);
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    println!(
        "flux-gate: payload {} KiB, median {:.2} ms, min {:.2} ms over {runs} runs",
        payload.len() / 1024,
        ms[ms.len() / 2],
        ms[0]
    );
}

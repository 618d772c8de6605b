//! A policy's worst case evaluated natively in a loop, for a profiler:
//! `cargo build --profile host -p devtools --example profile_worst_case`, then
//! `perf record --call-graph dwarf target/host/examples/profile_worst_case flux-suspend 40`
//! from the repository's root, after `make worst-cases`. The native build
//! runs the same code as the module, so its profile shows where the module's
//! own time goes; the recorded cluster's answers are the host's share here.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let policy = args
        .next()
        .context("usage: profile_worst_case <policy> [iterations]")?;
    let iterations: u32 = args.next().map_or(Ok(50), |n| n.parse())?;
    let input = devtools::bench::worst_case(Path::new("."), &policy)?
        .with_context(|| format!("{policy}'s worst-case file holds no case"))?;
    let entry = catalog::entry(&policy).with_context(|| format!("no policy named {policy}"))?;
    let request =
        conformance::as_policy_server_sends(&input.request).map_err(anyhow::Error::msg)?;
    let payload = conformance::validate_payload(&request, &input.settings);
    let cluster = conformance::RecordedCluster::new(&input.context);
    let context = guard_core::Context::new(input.now, &cluster);
    let start = Instant::now();
    for _ in 0..iterations {
        std::hint::black_box((entry.validate)(std::hint::black_box(&payload), &context));
    }
    let per_run = start.elapsed().as_secs_f64() * 1e3 / f64::from(iterations.max(1));
    eprintln!(
        "{policy}: {per_run:.2} ms a run natively, {} bytes of payload",
        payload.len()
    );
    Ok(())
}

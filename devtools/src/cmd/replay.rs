//! `devtools replay`: corpus cases through the built modules, each
//! checked against its expectation.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use host_test::host::Limits;
use host_test::replay::{self, median, Modules};

use host_test::input::load_corpus;

#[derive(clap::Args)]
pub struct Args {
    /// Case files or folders (default tests/cases).
    paths: Vec<PathBuf>,
    /// Where the built modules are (`<policy>.wasm`).
    #[arg(long, default_value = "dist")]
    dist: PathBuf,
    /// Print a summary table per policy (cases, verdicts, size, median time).
    #[arg(long)]
    table: bool,
    /// Evaluations per case, for the median time in the table.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let cases = load_corpus(args.paths)?;
    let mut modules = Modules::new(&args.dist);
    let limits = Limits::default();
    let mut outcomes = Vec::new();
    for case in &cases {
        let outcome = replay::run_case(&mut modules, case, args.repeat, &limits);
        if !args.table || !outcome.passed() {
            println!(
                "{} {:<64} {}",
                if outcome.passed() { "ok  " } else { "FAIL" },
                outcome.id,
                outcome.verdict()
            );
            for p in &outcome.problems {
                println!("      {p}");
            }
        }
        outcomes.push(outcome);
    }
    if args.table {
        print_summary(&outcomes, &mut modules);
    }
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    println!("{} passed, {} failed", outcomes.len() - failed, failed);
    Ok(super::exit_code(failed == 0))
}

fn print_summary(outcomes: &[replay::Outcome], modules: &mut Modules) {
    let mut by_policy: BTreeMap<&str, Vec<&replay::Outcome>> = BTreeMap::new();
    for o in outcomes {
        by_policy.entry(o.policy.as_str()).or_default().push(o);
    }
    println!(
        "\n{:<20} {:>6} {:>8} {:>8} {:>8} {:>7} {:>11} {:>12}",
        "policy", "cases", "allowed", "mutated", "denied", "failed", "module KiB", "µs/request"
    );
    for (policy, list) in by_policy {
        let count = |v: &str| list.iter().filter(|o| o.verdict() == v).count();
        let times: Vec<f64> = list.iter().flat_map(|o| o.micros.iter().copied()).collect();
        let size = modules.get(policy).map(|p| p.module().size()).unwrap_or(0);
        println!(
            "{:<20} {:>6} {:>8} {:>8} {:>8} {:>7} {:>11.1} {:>12.1}",
            policy,
            list.len(),
            count("allowed"),
            count("mutated"),
            count("denied"),
            list.iter().filter(|o| !o.passed()).count(),
            size as f64 / 1024.0,
            median(&times)
        );
    }
    println!(
        "µs/request: median over every case, each on a fresh instance as policy-server runs it, \
         including the host's share (payload, AdmissionResponse, JSONPatch); `make bench` times \
         the module alone, warm and fresh, against native.\n"
    );
}

//! `devtools conformance`: corpus cases through the real kwctl and
//! policy-server, their AdmissionResponses compared with the harness's.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use devtools::engines;

use host_test::input::load_corpus;

#[derive(clap::Args)]
pub struct Args {
    /// Case files or folders (default tests/cases).
    paths: Vec<PathBuf>,
    #[arg(long, default_value = "dist")]
    dist: PathBuf,
    /// Known differences, each with its reason (a YAML list of case, engine, reason).
    #[arg(long, default_value = "tests/engine-differences.yaml")]
    allow_list: PathBuf,
    /// The engines to compare (default: both).
    #[arg(long, value_enum)]
    engine: Vec<engines::Engine>,
    /// Where the engines' files go (requests, sessions, policies.yml, logs).
    #[arg(long, default_value = "target/conformance")]
    work: PathBuf,
    /// Concurrent kwctl runs.
    #[arg(long, default_value_t = 4)]
    jobs: usize,
}

/// An engine that is not installed is skipped, with the reason, and the run
/// passes; where one is installed, every difference not allow-listed fails
/// the run, and so does an allow-list entry whose case no longer differs.
pub fn run(args: Args) -> Result<ExitCode> {
    let cases = load_corpus(args.paths)?;
    let allow_list = if args.allow_list.exists() {
        engines::load_allow_list(&args.allow_list).map_err(anyhow::Error::msg)?
    } else {
        Vec::new()
    };
    let options = engines::Options {
        dist: args.dist,
        work: args.work,
        engines: if args.engine.is_empty() {
            vec![engines::Engine::Kwctl, engines::Engine::PolicyServer]
        } else {
            args.engine
        },
        allow_list,
        jobs: args.jobs,
    };
    let started = std::time::Instant::now();
    let results = engines::run_blocking(&cases, &options).map_err(anyhow::Error::msg)?;
    let failed = engines::report(&results, &cases);
    let stale = engines::stale_entries(&options.allow_list, &results);
    for entry in &stale {
        println!(
            "stale allow-list entry: {} no longer differs on {}",
            entry.case,
            entry.engine.name()
        );
    }
    println!("({:.0} s)", started.elapsed().as_secs_f64());
    Ok(super::exit_code(failed == 0 && stale.is_empty()))
}

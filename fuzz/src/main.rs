//! `guard-fuzz`: fuzz the policies natively and through their wasm modules.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::{Parser, ValueEnum};
use guard_fuzz::engine::{self, EngineKind};
use guard_fuzz::minimize::Budget;
use guard_fuzz::run::{self, Config};
use guard_fuzz::seeds;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Engines {
    Native,
    Wasm,
    Both,
}

/// Feeds mutated admission payloads to the policies, natively and through
/// the wasm modules, and reports any panic, trap, timeout or harness error
/// with a minimized reproducer. Exits 1 when there is a finding.
#[derive(Debug, Parser)]
#[command(name = "guard-fuzz", version)]
struct Cli {
    /// A policy name, or `all`.
    #[arg(long, default_value = "all")]
    policy: String,
    #[arg(long, value_enum, default_value_t = Engines::Both)]
    engine: Engines,
    /// Inputs per policy and engine.
    #[arg(long)]
    inputs: Option<u64>,
    /// Seconds per policy and engine (60 when neither this nor --inputs is given).
    #[arg(long)]
    seconds: Option<f64>,
    /// The run's seed (default: from the clock, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Index of the first input (with --inputs 1, replays one input of a run).
    #[arg(long, default_value_t = 0)]
    start: u64,
    /// Worker threads (default: available cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Also make raw-level inputs (payload bytes policy-server would never send).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    raw: bool,
    /// A native evaluation slower than this (twice) is a timeout finding.
    #[arg(long, default_value_t = 200)]
    slow_ms: u64,
    /// The same through wasm (the harness also cuts calls at its 2 s deadline).
    #[arg(long, default_value_t = 1000)]
    wasm_slow_ms: u64,
    /// A longer message, warning or audit annotation is a finding (default:
    /// the 16 KiB the policies bound their messages to).
    #[arg(long, default_value_t = guard_fuzz::oracle::MAX_MESSAGE_BYTES)]
    max_message_bytes: usize,
    /// Where reproducers go: <out>/<policy>/.
    #[arg(long, default_value = "target/fuzz")]
    out: PathBuf,
    /// The corpus: <cases>/<policy>/*.yaml.
    #[arg(long, default_value = "tests/cases")]
    cases: PathBuf,
    /// The built modules: <dist>/<policy>.wasm.
    #[arg(long, default_value = "dist")]
    dist: PathBuf,
    /// The policies' sources, for metadata.yml and questions-ui.yml.
    #[arg(long, default_value = "policies")]
    policies: PathBuf,
    /// Most attempts to minimize one finding.
    #[arg(long, default_value_t = 4000)]
    minimize_attempts: usize,
    /// Most seconds to minimize one finding.
    #[arg(long, default_value_t = 60)]
    minimize_seconds: u64,
    /// Print every call's payload and reply, shortened (with --jobs 1 and few inputs).
    #[arg(long)]
    trace: bool,
    /// Seconds between progress lines.
    #[arg(long, default_value_t = 10)]
    progress_seconds: u64,
}

fn main() -> ExitCode {
    match real_main() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("guard-fuzz: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "one branch per subcommand of the fuzzer's command line"
)]
fn real_main() -> Result<bool> {
    let cli = Cli::parse();
    let policies: Vec<&str> = if cli.policy == "all" {
        catalog::names().collect()
    } else if let Some(entry) = catalog::entry(&cli.policy) {
        vec![entry.name]
    } else {
        bail!(
            "unknown policy {:?} (one of {} or all)",
            cli.policy,
            catalog::names().collect::<Vec<_>>().join(", ")
        );
    };
    let engines = match cli.engine {
        Engines::Native => vec![EngineKind::Native],
        Engines::Wasm => vec![EngineKind::Wasm],
        Engines::Both => vec![EngineKind::Native, EngineKind::Wasm],
    };
    let seed = cli.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() ^ u64::from(d.subsec_nanos()))
            .unwrap_or(1)
    });
    let jobs = cli
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let seconds = match (cli.inputs, cli.seconds) {
        (None, None) => Some(60.0),
        (_, s) => s,
    };
    eprintln!(
        "guard-fuzz: seed {seed}, jobs {jobs}, raw {}, {}",
        cli.raw,
        match (cli.inputs, seconds) {
            (Some(n), Some(s)) => format!("{n} inputs or {s} s per policy and engine"),
            (Some(n), None) => format!("{n} inputs per policy and engine"),
            (None, Some(s)) => format!("{s} s per policy and engine"),
            (None, None) => String::new(),
        }
    );
    let mut summaries = Vec::new();
    for policy in &policies {
        let corpus = seeds::load(policy, &cli.cases, &cli.policies)?;
        for engine in &engines {
            let slow_ms = match engine {
                EngineKind::Native => cli.slow_ms,
                EngineKind::Wasm => cli.wasm_slow_ms,
            };
            let config = Config {
                engine: *engine,
                inputs: cli.inputs,
                seconds,
                seed,
                start: cli.start,
                jobs,
                raw: cli.raw,
                slow: Duration::from_millis(slow_ms),
                max_message: cli.max_message_bytes,
                out: cli.out.clone(),
                budget: Budget {
                    attempts: cli.minimize_attempts,
                    time: Duration::from_secs(cli.minimize_seconds),
                },
                hang: Duration::from_millis((slow_ms * 50).max(30_000)),
                progress_every: Duration::from_secs(cli.progress_seconds.max(1)),
                trace: cli.trace,
            };
            let target = engine::target(*engine, policy, &cli.dist)?;
            let summary = run::run(&config, &corpus, target.as_ref());
            eprintln!("{summary}");
            summaries.push(summary);
        }
    }
    let findings: usize = summaries.iter().map(|s| s.reports.len()).sum();
    println!();
    for s in &summaries {
        println!("{s}");
    }
    if findings > 0 {
        println!(
            "{findings} findings; reproducers under {}",
            cli.out.display()
        );
    }
    Ok(findings == 0)
}

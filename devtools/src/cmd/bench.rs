//! `devtools bench`: every module timed against its native evaluation, its
//! worst case against the read floor, and the growth table.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use conformance::case::unwrap_review;
use serde_json::Value;

use devtools::bench::{self, Input};
use devtools::measurements::{Machine, Measurements};
use host_test::harness::Policy;

use host_test::input::{read_document, write};

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "dist")]
    dist: PathBuf,
    #[arg(long, default_value = "tests/cases")]
    cases: PathBuf,
    /// The typical Flux object every policy is timed on.
    #[arg(long, default_value = "tests/bench/kustomization-update.json")]
    typical: PathBuf,
    /// Corpus cases per policy to time besides the typical object.
    #[arg(long, default_value_t = 3)]
    cases_per_policy: usize,
    #[arg(long, default_value_t = 1000)]
    iterations: usize,
    /// Where to write the JSON report.
    #[arg(long, default_value = "target/bench/bench.json")]
    json: PathBuf,
    /// Also time the typical object through the real engine (`kwctl bench`),
    /// for each module and for Kubewarden's official annotations policy.
    #[arg(long, value_enum)]
    engine: Option<bench::Engine>,
    /// The read floor module (`make build` writes it): timed on each worst
    /// case's request, settings and lookups as the floor of its budget.
    #[arg(long, default_value = "target/opt/read-floor.wasm")]
    read_floor: PathBuf,
    /// The no-op floor module (`make build` writes it): timed on the
    /// typical object beside every policy, the least a `validate` call costs.
    #[arg(long, default_value = "target/opt/noop-floor.wasm")]
    noop_floor: PathBuf,
    /// Kubewarden's official annotations policy module (default: the file
    /// `OFFICIAL_POLICY` names): timed on each worst case's request as its
    /// floor, and compared with the modules under --engine. Without it
    /// both are skipped, with the reason.
    #[arg(long)]
    official: Option<PathBuf>,
    /// Its settings (it requires a criterion and at least one value).
    #[arg(
        long,
        default_value = r#"{"criteria":"containsAnyOf","values":["event.toolkit.fluxcd.io/team"]}"#
    )]
    official_settings: String,
    /// kwctl bench's --warm-up-time, per benchmark (whole seconds).
    #[arg(long, default_value_t = 1)]
    kwctl_warm_up: u64,
    /// kwctl bench's --measurement-time, per benchmark (whole seconds).
    #[arg(long, default_value_t = 3)]
    kwctl_measurement: u64,
    /// Also write the figures as a Markdown page, dated, with the machine's
    /// facts (`make bench` writes docs/measurements.md).
    #[arg(long, value_name = "FILE")]
    measurements: Option<PathBuf>,
    /// Only the growth table (`make bench` prints it after the others).
    #[arg(long)]
    growth_only: bool,
    /// Only these policies (default: every module in --dist).
    policies: Vec<String>,
}

impl Args {
    fn wanted(&self, policy: &str) -> bool {
        self.policies.is_empty() || self.policies.iter().any(|p| p == policy)
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    // The official policy's module, or why it is not at hand.
    let official = match &args.official {
        Some(path) if path.is_file() => Ok(path.clone()),
        Some(path) => bail!("--official {}: no such file", path.display()),
        None => match host_test::locate::official_policy().map_err(anyhow::Error::msg)? {
            host_test::locate::Found::At(path) => Ok(path),
            host_test::locate::Found::Absent(reason) => Err(reason),
        },
    };
    let official_floor = bench::Official::load(&official, &args.official_settings)?;
    let machine = Machine::read();
    let inputs = if args.growth_only {
        Vec::new()
    } else {
        time_policies(&args, official_floor.as_ref())?
    };
    let mut beside_noop = Vec::new();
    if !args.growth_only {
        bench::print_table(&inputs);
        bench::print_budget(&inputs);
        let noop = Policy::load(&args.noop_floor).with_context(|| {
            format!(
                "the no-op floor {}: run `make build`",
                args.noop_floor.display()
            )
        })?;
        let typical = typical_input(&args)?;
        for name in catalog::names().filter(|name| args.wanted(name)) {
            let policy = Policy::load(&args.dist.join(format!("{name}.wasm")))?;
            beside_noop.push(bench::beside_noop(
                &noop,
                &policy,
                name,
                &typical,
                args.iterations,
            )?);
        }
        bench::print_beside_noop(&beside_noop, TYPICAL_LABEL);
    }
    let growth = devtools::growth::run(&args.cases, &args.dist, &args.policies, args.iterations)?;
    devtools::growth::print_table(&growth);
    let mut measured = Measurements {
        machine,
        inputs,
        beside_noop,
        growth,
    };
    measured.machine.finish();
    write_reports(&args, &measured)?;
    if args.growth_only {
        return Ok(ExitCode::SUCCESS);
    }
    let Some(bench::Engine::Kwctl) = args.engine else {
        return Ok(ExitCode::SUCCESS);
    };
    let compare = bench::KwctlCompare {
        official,
        official_settings: args.official_settings.clone(),
        timing: bench::KwctlTiming {
            warm_up_seconds: args.kwctl_warm_up,
            measurement_seconds: args.kwctl_measurement,
        },
    };
    let benched: Vec<&str> = catalog::names().filter(|name| args.wanted(name)).collect();
    let passed = bench::kwctl_report(&compare, &benched, &args.dist, &args.typical, &args.json)?;
    Ok(super::exit_code(passed))
}

const TYPICAL_LABEL: &str = "typical: kustomization-update.json";

/// The typical object every policy is timed on, with settings `{}`.
fn typical_input(args: &Args) -> Result<Input> {
    Ok(Input {
        label: TYPICAL_LABEL.into(),
        request: unwrap_review(&read_document(&args.typical.to_string_lossy())?),
        settings: Value::Object(Default::default()),
        now: "2026-11-20T10:00:00Z".parse()?,
        context: Vec::new().into(),
        granted: None,
        with_floor: false,
    })
}

/// Each wanted policy timed on the typical object, its worst case and its
/// first corpus cases.
fn time_policies(args: &Args, official: Option<&bench::Official>) -> Result<Vec<bench::Row>> {
    let read_floor = Policy::load(&args.read_floor).with_context(|| {
        format!(
            "the read floor {}: run `make build`",
            args.read_floor.display()
        )
    })?;
    let mut rows = Vec::new();
    for entry in catalog::POLICIES {
        if !args.wanted(entry.name) {
            continue;
        }
        let wasm = args.dist.join(format!("{}.wasm", entry.name));
        let mut inputs = vec![typical_input(args)?];
        inputs.extend(bench::worst_case(Path::new("."), entry.name)?);
        let dir = args.cases.join(entry.name);
        if dir.is_dir() {
            let cases = conformance::load_cases(&dir).map_err(anyhow::Error::msg)?;
            inputs.extend(
                cases
                    .iter()
                    .take(args.cases_per_policy)
                    .map(Input::from_case),
            );
        }
        eprintln!(
            "benchmarking {} ({} inputs x {})",
            entry.name,
            inputs.len(),
            args.iterations
        );
        rows.extend(bench::bench_policy(
            &wasm,
            &inputs,
            args.iterations,
            &read_floor,
            official,
        )?);
    }
    Ok(rows)
}

/// Writes the JSON report, and the Markdown page where asked, and says where.
fn write_reports(args: &Args, measured: &Measurements) -> Result<()> {
    measured.write_json(&args.json)?;
    println!("\nJSON report: {}", args.json.display());
    if let Some(page) = &args.measurements {
        write(page, measured.markdown())?;
        println!("Measurements: {}", page.display());
    }
    Ok(())
}

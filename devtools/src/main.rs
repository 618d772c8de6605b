//! `devtools`: what reconcile-guard's developers and release pipeline run
//! (`make`, `.ci/run`, `.github/release/publish.sh`), not its users: the
//! corpus and stories through the harness, the comparison with the real
//! engines, benchmarks, size budgets, SBOMs and the generated files. Each
//! command is in `cmd/<command>.rs`; this file names them and dispatches.

mod cmd;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// reconcile-guard's development and release tooling (users want
/// `reconcile-guard`).
#[derive(Parser)]
#[command(name = "devtools", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay corpus cases against the built modules and check their expectations.
    Replay(cmd::replay::Args),
    /// Run stories (`tests/stories`) with every request judged by the built
    /// module and natively; see tests/stories/README.md.
    Stories(cmd::stories::Args),
    /// Run corpus cases through the real kwctl and policy-server and compare
    /// their AdmissionResponses with the harness's, field by field.
    Conformance(cmd::conformance::Args),
    /// Benchmark every module against its native evaluation.
    Bench(cmd::bench::Args),
    /// Each policy's optimized module against its size budget
    /// (`policies/<policy>/size-budget.yml`); with --breakdown, where the
    /// bytes of the given named builds go.
    Sizes(cmd::sizes::Args),
    /// Check metadata.yml files for what a published reconcile-guard policy
    /// needs beyond kwctl's checks (io.kubewarden.policy.* annotations, semver
    /// version, at least one rule, no unknown fields).
    LintMetadata(cmd::lint_metadata::Args),
    /// Regenerate the Artifact Hub packages, the kustomize base under deploy/
    /// and policies.yml from each policy's Cargo.toml, metadata.yml,
    /// questions-ui.yml and README.
    Scaffold(cmd::scaffold::Args),
    /// Write the SPDX 2.3 JSON SBOM of a built module, from the dependency
    /// graph cargo resolves for its build.
    Sbom(cmd::sbom::Args),
}

/// Exit codes: 0 done (and passed), 1 done and failed (a case, story or
/// budget missed), 2 could not run (the error printed).
fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Replay(args) => cmd::replay::run(args),
        Command::Stories(args) => cmd::stories::run(args),
        Command::Conformance(args) => cmd::conformance::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Sizes(args) => cmd::sizes::run(args),
        Command::LintMetadata(args) => cmd::lint_metadata::run(args),
        Command::Scaffold(args) => cmd::scaffold::run(args),
        Command::Sbom(args) => cmd::sbom::run(args),
    }
}

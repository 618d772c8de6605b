//! `host-test`: run, replay, benchmark and annotate reconcile-guard policy
//! modules the way Kubewarden's policy-server and kwctl do. Each command,
//! its arguments and its `run` are in `cmd/<command>.rs`; this file names
//! the commands and dispatches to them.

mod cmd;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "host-test", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate one request, printing the AdmissionResponse as one JSON line (like `kwctl run`).
    Run(cmd::run::Args),
    /// Check a GitOps repository's manifests against the policies before they
    /// reach the cluster: every object the policies select, as the request
    /// kube-apiserver sends while Flux applies it, through the modules.
    Check(cmd::check::Args),
    /// Each policy's optimized module against its size budget
    /// (`policies/<policy>/size-budget.yml`); with --breakdown, where the
    /// bytes of the given named builds go.
    Sizes(cmd::sizes::Args),
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
    /// Add Kubewarden metadata to a module (like `kwctl annotate`: accepts the
    /// metadata kwctl accepts; `lint-metadata` adds reconcile-guard's own checks).
    Annotate(cmd::annotate::Args),
    /// Check metadata.yml files for what a published reconcile-guard policy
    /// needs beyond kwctl's checks (io.kubewarden.policy.* annotations, semver
    /// version, at least one rule, no unknown fields).
    LintMetadata(cmd::lint_metadata::Args),
    /// Regenerate the Artifact Hub packages, ClusterAdmissionPolicy examples and
    /// policies.yml from each policy's Cargo.toml, metadata.yml, questions-ui.yml and README.
    Scaffold(cmd::scaffold::Args),
    /// Push an annotated module to an OCI registry; prints the immutable reference.
    Push(cmd::push::Args),
    /// Pull a module from an OCI registry, verifying its digest.
    Pull(cmd::pull::Args),
    /// Generate a cosign key pair: cosign.key (encrypted with COSIGN_PASSWORD,
    /// as `cosign generate-key-pair` writes it) and cosign.pub.
    Keygen(cmd::keygen::Args),
    /// Sign a pushed module with a cosign key (password in COSIGN_PASSWORD),
    /// storing the signature as cosign does; optionally attach its SBOM and sign that too.
    Sign(cmd::sign::Args),
    /// Verify a module's signatures as `kwctl verify` does (same flags and
    /// verification config format; key-based signatures only).
    Verify(cmd::verify::Args),
    /// Write the SPDX 2.3 JSON SBOM of a built module, from the dependency
    /// graph cargo resolves for its build.
    Sbom(cmd::sbom::Args),
}

/// Exit codes: 0 done (and passed), 1 done and failed (a refusal found, a
/// case or budget missed, no answer), 2 could not run (the error printed).
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
        Command::Run(args) => cmd::run::run(args),
        Command::Check(args) => cmd::check::run(args),
        Command::Sizes(args) => cmd::sizes::run(args),
        Command::Replay(args) => cmd::replay::run(args),
        Command::Stories(args) => cmd::stories::run(args),
        Command::Conformance(args) => cmd::conformance::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Annotate(args) => cmd::annotate::run(args),
        Command::LintMetadata(args) => cmd::lint_metadata::run(args),
        Command::Scaffold(args) => cmd::scaffold::run(args),
        Command::Push(args) => cmd::push::run(args),
        Command::Pull(args) => cmd::pull::run(args),
        Command::Keygen(args) => cmd::keygen::run(args),
        Command::Sign(args) => cmd::sign::run(args),
        Command::Verify(args) => cmd::verify::run(args),
        Command::Sbom(args) => cmd::sbom::run(args),
    }
}

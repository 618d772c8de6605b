//! `reconcile-guard`: the command line users run, in CI and at their desk.
//! Each command, its arguments and its `run` are in `cmd/<command>.rs`;
//! this file names the commands and dispatches to them. The developer
//! commands (replay, stories, bench, sizes, scaffold...) are `devtools`'.

mod cmd;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// Kubewarden admission policies for Flux and Azure Service Operator.
///
/// Check a GitOps repository against the policies before Flux applies it,
/// run a policy module on one request as policy-server would, and publish,
/// sign and verify modules (kwctl's flags where kwctl has the same command).
#[derive(Parser)]
#[command(name = "reconcile-guard", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a GitOps repository's manifests against the policies, as Flux would apply them.
    ///
    /// Every object the policies select, as the request kube-apiserver sends
    /// while Flux applies it, through the modules; with --base-revision, the
    /// change (UPDATEs and DELETEs too).
    Check(cmd::check::Args),
    /// Evaluate one request with a policy module, like `kwctl run`.
    ///
    /// Prints the AdmissionResponse policy-server would send, as one line of JSON.
    Run(cmd::run::Args),
    /// Add Kubewarden metadata to a policy module, like `kwctl annotate`.
    Annotate(cmd::annotate::Args),
    /// Push an annotated policy module to an OCI registry, like `kwctl push`.
    ///
    /// Prints the immutable reference (registry://...@sha256:...).
    Push(cmd::push::Args),
    /// Pull a policy module from an OCI registry, like `kwctl pull`.
    ///
    /// The module's digest is verified against the manifest.
    Pull(cmd::pull::Args),
    /// Generate a cosign key pair (cosign.key and cosign.pub).
    ///
    /// The private key is encrypted with COSIGN_PASSWORD, as `cosign
    /// generate-key-pair` writes it.
    Keygen(cmd::keygen::Args),
    /// Sign a pushed policy module with a cosign key, as `cosign sign` does.
    ///
    /// The key's password is read from COSIGN_PASSWORD; with --sbom, the
    /// SBOM is attached and signed too.
    Sign(cmd::sign::Args),
    /// Verify a policy module's signatures, like `kwctl verify`.
    ///
    /// Same flags and verification config as kwctl; key-based signatures only.
    Verify(cmd::verify::Args),
}

/// Exit codes: 0 done (and passed), 1 done and failed (a refusal found, no
/// answer), 2 could not run (the error printed).
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
        Command::Check(args) => cmd::check::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Annotate(args) => cmd::annotate::run(args),
        Command::Push(args) => cmd::push::run(args),
        Command::Pull(args) => cmd::pull::run(args),
        Command::Keygen(args) => cmd::keygen::run(args),
        Command::Sign(args) => cmd::sign::run(args),
        Command::Verify(args) => cmd::verify::run(args),
    }
}

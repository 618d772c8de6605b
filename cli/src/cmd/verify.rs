//! `reconcile-guard verify`: a module's signatures checked as `kwctl verify`
//! checks them (key-based signatures only).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};

use reconcile_guard::signing::{self, VerificationConfig};

use host_test::input::{key_value, read_text, write};

#[derive(clap::Args)]
pub struct Args {
    /// A kwctl verification config (YAML, apiVersion v1).
    #[arg(long = "verification-config-path", conflicts_with = "keys")]
    config: Option<PathBuf>,
    /// A public key that must have signed it (repeatable).
    #[arg(short = 'k', long = "verification-key")]
    keys: Vec<PathBuf>,
    /// An annotation every key's signature must carry (key=value, repeatable).
    #[arg(short = 'a', long = "verification-annotation", value_parser = key_value)]
    annotations: Vec<(String, String)>,
    /// Also require an attached SBOM signed the same way, and write it here.
    #[arg(long)]
    sbom_output: Option<PathBuf>,
    /// registry://HOST/REPOSITORY:TAG or @sha256:...
    uri: String,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = match &args.config {
        Some(path) => VerificationConfig::parse(&read_text(path)?)
            .with_context(|| format!("{}", path.display()))?,
        None => VerificationConfig::from_keys(
            args.keys
                .iter()
                .map(|k| read_text(k))
                .collect::<Result<_>>()?,
            &args.annotations.into_iter().collect(),
        )?,
    };
    let verified = signing::verify(&args.uri, &config, args.sbom_output.is_some())?;
    if let (Some(path), Some(document)) = (&args.sbom_output, verified.sbom) {
        write(path, document)?;
    }
    println!("Policy successfully verified: {}", verified.module);
    Ok(ExitCode::SUCCESS)
}

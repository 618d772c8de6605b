//! `reconcile-guard keygen`: a cosign key pair, as `cosign generate-key-pair`
//! writes it.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};

use reconcile_guard::signing;

#[derive(clap::Args)]
pub struct Args {
    /// Write PREFIX.key and PREFIX.pub.
    #[arg(long, default_value = "cosign")]
    output_key_prefix: String,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let prefix = &args.output_key_prefix;
    let (private, public) = signing::generate_key_pair(&signing::password()?)?;
    for (path, text) in [
        (format!("{prefix}.key"), private.as_str()),
        (format!("{prefix}.pub"), public.as_str()),
    ] {
        if Path::new(&path).exists() {
            bail!("{path} exists; remove it or choose another --output-key-prefix");
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {path}"))?;
    }
    eprintln!("Private key written to {prefix}.key");
    eprintln!("Public key written to {prefix}.pub");
    Ok(ExitCode::SUCCESS)
}

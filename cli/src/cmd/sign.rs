//! `reconcile-guard sign`: a pushed module signed with a cosign key, as cosign
//! stores it, and optionally its SBOM attached and signed too.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use reconcile_guard::signing;

use host_test::input::{key_value, read_bytes};

#[derive(clap::Args)]
pub struct Args {
    /// The private key (cosign's encrypted PEM).
    #[arg(short = 'k', long = "key")]
    key: PathBuf,
    /// An annotation to sign with the digest (key=value, repeatable), as
    /// `cosign sign -a`; `kwctl verify -a` and verification configs can require it.
    #[arg(short = 'a', long = "annotation", value_parser = key_value)]
    annotations: Vec<(String, String)>,
    /// An SPDX JSON document to attach (`cosign attach sbom` layout) and sign.
    #[arg(long)]
    sbom: Option<PathBuf>,
    /// registry://HOST/REPOSITORY:TAG or @sha256:... (a tag is resolved; its digest is signed)
    uri: String,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let key_pem = read_bytes(&args.key)?;
    let sbom = args.sbom.as_deref().map(read_bytes).transpose()?;
    let signed = signing::sign(
        &args.uri,
        &key_pem,
        &signing::password()?,
        &args.annotations.into_iter().collect(),
        sbom.as_deref(),
    )?;
    println!("{} signed: {}", signed.module, signed.signature);
    if let Some((attached, signature)) = signed.sbom {
        println!("{attached} (SBOM) signed: {signature}");
    }
    Ok(ExitCode::SUCCESS)
}

//! `reconcile-guard pull`: a module pulled from an OCI registry, its digest verified.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use reconcile_guard::oci;

use host_test::input::write;

#[derive(clap::Args)]
pub struct Args {
    /// registry://HOST/REPOSITORY:TAG or @sha256:...
    uri: String,
    #[arg(short = 'o', long = "output-path")]
    output: PathBuf,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let pulled = oci::pull(&args.uri)?;
    write(&args.output, &pulled.wasm)?;
    println!("{}", pulled.immutable);
    Ok(ExitCode::SUCCESS)
}

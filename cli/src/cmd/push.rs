//! `reconcile-guard push`: an annotated module pushed to an OCI registry.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use reconcile_guard::oci;

use host_test::input::read_bytes;

#[derive(clap::Args)]
pub struct Args {
    /// The module, e.g. dist/flux-suspend.wasm.
    wasm: PathBuf,
    /// registry://HOST/REPOSITORY:TAG
    uri: String,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let bytes = read_bytes(&args.wasm)?;
    println!("{}", oci::push(&bytes, &args.uri)?);
    Ok(ExitCode::SUCCESS)
}

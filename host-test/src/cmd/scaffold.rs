//! `host-test scaffold`: the Artifact Hub packages and deploy manifests,
//! regenerated from each policy's sources.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use guard_core::Timestamp;

#[derive(clap::Args)]
pub struct Args {
    /// The repository root.
    #[arg(long, default_value = ".")]
    root: PathBuf,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let names: Vec<&str> = catalog::names().collect();
    let created_at = Timestamp::now().round(jiff::Unit::Second)?.to_string();
    host_test::distribution::write_all(&args.root, &names, &created_at)?;
    Ok(ExitCode::SUCCESS)
}

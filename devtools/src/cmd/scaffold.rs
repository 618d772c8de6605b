//! `devtools scaffold`: the Artifact Hub packages and deploy manifests,
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
    /// The registry the modules are published to (HOST[/PATH]: policy P is
    /// HOST[/PATH]/P:v<version>); default: each metadata.yml's
    /// io.kubewarden.policy.ociUrl, the committed placeholder.
    #[arg(long)]
    registry: Option<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let names: Vec<&str> = catalog::names().collect();
    let created_at = Timestamp::now().round(jiff::Unit::Second)?.to_string();
    devtools::distribution::write_all(&args.root, &names, &created_at, args.registry.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

//! `devtools lint-metadata`: what a published reconcile-guard policy's
//! metadata.yml needs beyond kwctl's checks.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};

use host_test::metadata::Metadata;

use host_test::input::read_text;

#[derive(clap::Args)]
pub struct Args {
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    for path in &args.files {
        Metadata::lint_yaml(&read_text(path)?).with_context(|| path.display().to_string())?;
    }
    Ok(ExitCode::SUCCESS)
}

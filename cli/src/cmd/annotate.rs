//! `reconcile-guard annotate`: Kubewarden metadata added to a module, as
//! `kwctl annotate` adds it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};

use host_test::harness::Policy;
use host_test::metadata::{self, Metadata};

use host_test::input::{read_bytes, read_text, write};

#[derive(clap::Args)]
pub struct Args {
    #[arg(short = 'm', long = "metadata-path")]
    metadata: PathBuf,
    #[arg(short = 'u', long = "usage-path")]
    usage: Option<PathBuf>,
    #[arg(short = 'o', long = "output-path")]
    output: PathBuf,
    wasm: PathBuf,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let meta = Metadata::parse(&read_text(&args.metadata)?)
        .with_context(|| args.metadata.display().to_string())?;
    let usage = args.usage.as_deref().map(read_text).transpose()?;
    let bytes = read_bytes(&args.wasm)?;
    let version = match meta.backend(&bytes)? {
        metadata::Backend::Wapc => Policy::protocol_version_of(&bytes)?,
        metadata::Backend::Other => "Unknown".into(),
    };
    let annotated = metadata::annotate(&bytes, &meta, &version, usage.as_deref())?;
    write(&args.output, annotated)?;
    Ok(ExitCode::SUCCESS)
}

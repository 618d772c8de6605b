//! `devtools sbom`: the SPDX 2.3 JSON SBOM of a built module, from the
//! dependency graph cargo resolves for its build.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};

use devtools::sbom;

use host_test::input::{read_bytes, write};

#[derive(clap::Args)]
pub struct Args {
    /// The built module, e.g. dist/flux-suspend.wasm (its digest names it).
    #[arg(long)]
    module: PathBuf,
    /// The other packages built in the same cargo invocation (features are
    /// resolved per invocation), as `make build` builds them.
    #[arg(long = "built-with")]
    built_with: Vec<String>,
    /// Where to write the document (default: stdout).
    #[arg(short = 'o', long = "output-path")]
    output: Option<PathBuf>,
    /// The workspace the module was built in.
    #[arg(long, default_value = ".")]
    workspace: PathBuf,
    /// The policy's package name.
    policy: String,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let bytes = read_bytes(&args.module)?;
    let graph = sbom::graph(&args.workspace, &args.policy, &args.built_with)?;
    let file_name = args.module.file_name().map_or_else(
        || format!("{}.wasm", args.policy),
        |n| n.to_string_lossy().into_owned(),
    );
    let document = sbom::document(&graph, &bytes, &file_name, &created()?)?;
    let json = serde_json::to_string_pretty(&document)? + "\n";
    match &args.output {
        Some(path) => write(path, json)?,
        None => print!("{json}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// When an SBOM is created: `SOURCE_DATE_EPOCH` (the reproducible-builds
/// convention; `make build` sets the last commit's time), else now.
fn created() -> Result<String> {
    let at = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(epoch) => jiff::Timestamp::from_second(
            epoch
                .trim()
                .parse()
                .with_context(|| format!("SOURCE_DATE_EPOCH {epoch:?} is not whole seconds"))?,
        )?,
        Err(_) => jiff::Timestamp::now(),
    };
    Ok(at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
}

//! `devtools sizes`: each policy's optimized module against its size
//! budget, and where the bytes of named builds go.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use devtools::sizes;

use host_test::input::read_bytes;

#[derive(clap::Args)]
pub struct Args {
    /// The optimized modules, `<policy>.wasm` (default: target/opt).
    #[arg(long, default_value = "target/opt")]
    modules: PathBuf,
    /// Modules built with their function names (`make sizes` builds them)
    /// to break down: sections, data, the largest functions.
    #[arg(long)]
    breakdown: Vec<PathBuf>,
    /// How many of the largest functions to list.
    #[arg(long, default_value_t = 15)]
    top: usize,
}

/// Every policy's module within its budget; then the breakdowns asked for.
pub fn run(args: Args) -> Result<ExitCode> {
    let mut over = 0;
    for entry in catalog::POLICIES {
        let budget = sizes::Budget::load(
            &Path::new("policies")
                .join(entry.name)
                .join("size-budget.yml"),
        )?;
        let (line, fits) =
            sizes::check(&args.modules.join(format!("{}.wasm", entry.name)), &budget)?;
        println!("{line}");
        if !fits {
            over += 1;
        }
    }
    for path in &args.breakdown {
        let wasm = read_bytes(path)?;
        sizes::print(
            &path.display().to_string(),
            &sizes::breakdown(&wasm)?,
            args.top,
        );
    }
    if over > 0 {
        println!(
            "\n{over} module(s) over budget: make it smaller, or raise bytes in its \
             size-budget.yml, with the reason, in the same commit"
        );
    }
    Ok(super::exit_code(over == 0))
}

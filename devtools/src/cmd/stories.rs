//! `devtools stories`: stories (`tests/stories`), every request judged by
//! the built module and natively.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// Story files or folders (default tests/stories).
    paths: Vec<PathBuf>,
    #[arg(long, default_value = "dist")]
    dist: PathBuf,
    /// Print every step: the state before it, the request and the reply.
    #[arg(long)]
    verbose: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("tests/stories")]
    } else {
        args.paths
    };
    let (mut passed, mut failed) = (0, 0);
    for path in &paths {
        for (id, run) in host_test::stories::run(path, &args.dist).map_err(anyhow::Error::msg)? {
            let failures = match &run {
                Ok(done) => done.failures(),
                Err(e) => vec![e.clone()],
            };
            if failures.is_empty() {
                passed += 1;
                println!("ok   {id}");
            } else {
                failed += 1;
                println!("FAIL {id}");
                for f in &failures {
                    println!("      {}", f.replace('\n', "\n      "));
                }
            }
            if let (true, Ok(done)) = (args.verbose, &run) {
                print!("{}", done.narrate());
            }
        }
    }
    println!("{passed} stories passed, {failed} failed");
    Ok(super::exit_code(failed == 0))
}

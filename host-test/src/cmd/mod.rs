//! One module per command of `host-test`: its arguments and its `run`,
//! which returns the exit code (an `Err` is exit code 2, printed by `main`).

pub mod annotate;
pub mod bench;
pub mod check;
pub mod conformance;
mod input;
pub mod keygen;
pub mod lint_metadata;
pub mod pull;
pub mod push;
pub mod replay;
pub mod run;
pub mod sbom;
pub mod scaffold;
pub mod sign;
pub mod sizes;
pub mod stories;
pub mod verify;

use std::process::ExitCode;

/// Success when `passed`, else failure: a command that ran and found
/// something wrong.
fn exit_code(passed: bool) -> ExitCode {
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

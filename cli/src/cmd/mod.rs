//! One module per command of `reconcile-guard`: its arguments and its `run`,
//! which returns the exit code (an `Err` is exit code 2, printed by `main`).

pub mod annotate;
pub mod check;
pub mod keygen;
pub mod pull;
pub mod push;
pub mod run;
pub mod sign;
pub mod verify;

use std::process::ExitCode;

/// Success when `passed`, else failure: a command that ran and found
/// something wrong.
fn exit_code(passed: bool) -> ExitCode {
    ExitCode::from(u8::from(!passed))
}

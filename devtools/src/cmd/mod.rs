//! One module per command of `devtools`: its arguments and its `run`,
//! which returns the exit code (an `Err` is exit code 2, printed by `main`).

pub mod bench;
pub mod conformance;
pub mod lint_metadata;
pub mod replay;
pub mod sbom;
pub mod scaffold;
pub mod sizes;
pub mod stories;

use std::process::ExitCode;

/// Success when `passed`, else failure: a command that ran and found
/// something wrong (a case, story or budget missed).
fn exit_code(passed: bool) -> ExitCode {
    ExitCode::from(u8::from(!passed))
}

//! Where the real Kubewarden engines are, on a machine that has them: the
//! `KWCTL` / `POLICY_SERVER` / `OFFICIAL_POLICY` variable, then (for the two
//! programs) `PATH`. Nothing is looked for anywhere else: the project passes
//! its tests without the engines and compares with them only where a user
//! installed them (from Kubewarden's releases).

use std::path::PathBuf;

/// Whether an engine is installed here.
pub enum Found {
    At(PathBuf),
    /// Not installed: where it was looked for, naming the engine (what a
    /// skipped check prints after its own name).
    Absent(String),
}

/// A program: the variable when set (it must name a file: a variable naming
/// nothing is an error, not a skip), else the first `tool` on `PATH`.
pub fn engine(tool: &str, variable: &str) -> Result<Found, String> {
    if let Some(path) = variable_file(variable)? {
        return Ok(Found::At(path));
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file());
    Ok(match on_path {
        Some(path) => Found::At(path),
        None => Found::Absent(format!(
            "{variable} is not set and there is no {tool} on PATH"
        )),
    })
}

/// Kubewarden's official annotations policy module, named by `OFFICIAL_POLICY`.
pub fn official_policy() -> Result<Found, String> {
    Ok(match variable_file("OFFICIAL_POLICY")? {
        Some(path) => Found::At(path),
        None => Found::Absent(
            "OFFICIAL_POLICY (Kubewarden's official annotations policy module) is not set"
                .to_string(),
        ),
    })
}

/// The file a variable names; `None` when it is unset, an error when it
/// names no file (a mistake to report, not a reason to skip).
fn variable_file(variable: &str) -> Result<Option<PathBuf>, String> {
    match std::env::var_os(variable) {
        None => Ok(None),
        Some(set) => {
            let path = PathBuf::from(set);
            if path.is_file() {
                Ok(Some(path))
            } else {
                Err(format!("{variable}={} is not a file", path.display()))
            }
        }
    }
}

/// The library that pins the engines' wall clock (`pinned-clock`), built
/// beside this executable by `make build`.
pub fn pinned_clock() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let library = exe.with_file_name("libpinned_clock.so");
    if library.is_file() {
        Ok(library)
    } else {
        Err(format!(
            "{} is missing: run `make build`",
            library.display()
        ))
    }
}

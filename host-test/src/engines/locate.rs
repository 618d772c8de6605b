//! Where the real Kubewarden engines are: the `KWCTL` / `POLICY_SERVER`
//! variable, then `PATH`, then `../shared/engines/` beside the checkout (the
//! working directory is the repository root, as under `make`).

use std::path::{Path, PathBuf};

/// The engine's path, or why there is none, for a run from the repository root.
pub fn engine(tool: &str, variable: &str) -> Result<PathBuf, String> {
    engine_beside(Path::new("."), tool, variable)
}

/// The engine's path, looking in `<root>/../shared/engines` last, for
/// callers whose working directory is not the repository root (tests).
pub fn engine_beside(root: &Path, tool: &str, variable: &str) -> Result<PathBuf, String> {
    if let Some(set) = std::env::var_os(variable) {
        let path = PathBuf::from(set);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!("{variable}={} is not a file", path.display()))
        };
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file());
    if let Some(found) = on_path {
        return Ok(found);
    }
    let beside = root.join("../shared/engines").join(tool);
    if beside.is_file() {
        return Ok(beside);
    }
    Err(format!(
        "no {tool}: set {variable}, put it on PATH, or in ../shared/engines"
    ))
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

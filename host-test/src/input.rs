//! What several commands read: documents in JSON or YAML, recorded cluster
//! objects, corpus cases, and `key=value` arguments.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use serde_json::Value;

/// Reads JSON or YAML (YAML is a superset; JSON is tried first for exact numbers).
pub fn read_document(source: &str) -> Result<Value> {
    let text = if source == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        s
    } else {
        std::fs::read_to_string(source).with_context(|| format!("cannot read {source}"))?
    };
    serde_json::from_str(&text)
        .or_else(|_| serde_norway::from_str(&text))
        .with_context(|| format!("{source} is neither JSON nor YAML"))
}

/// Recorded cluster objects (`--context`).
pub fn read_context(path: &Path) -> Result<Vec<conformance::cluster::Recorded>> {
    serde_json::from_value(read_document(&path.to_string_lossy())?).with_context(|| {
        format!(
            "--context {}: expected a list of {{apiVersion, kind, namespace, name, object}}",
            path.display()
        )
    })
}

/// The cases under `paths` (default `tests/cases`).
pub fn load_corpus(paths: Vec<PathBuf>) -> Result<Vec<conformance::Case>> {
    let paths = if paths.is_empty() {
        vec![PathBuf::from("tests/cases")]
    } else {
        paths
    };
    let mut cases = Vec::new();
    for p in &paths {
        cases.extend(conformance::load_cases(p).map_err(anyhow::Error::msg)?);
    }
    if cases.is_empty() {
        bail!("no cases found under {paths:?}");
    }
    Ok(cases)
}

/// `key=value`, as cosign and kwctl take annotations.
pub fn key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("{text:?} is not key=value")),
    }
}

/// Reads a file as text, naming it when it cannot.
pub fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Reads a file's bytes, naming it when it cannot.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Writes a file, naming it when it cannot.
pub fn write(path: &Path, contents: impl AsRef<[u8]>) -> Result<()> {
    std::fs::write(path, contents).with_context(|| format!("cannot write {}", path.display()))
}

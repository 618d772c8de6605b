//! Which folders of a repository Flux builds as clusters, from wherever a
//! user starts: the repository's root, a folder of clusters, a cluster.
//!
//! A cluster's folder is where `flux bootstrap --path` (or a FluxInstance's
//! `spec.sync.path`) points, a folder nothing else in the repository builds.
//! So the folders built on their own are the highest ones with manifests or
//! a kustomization file that no other folder of the repository uses: not
//! listed by another kustomization file (`resources`, `components`,
//! `bases`), not under the `spec.path` of a Flux Kustomization written
//! elsewhere (its generated kustomization takes the subfolders), and not a
//! kustomize `Component` (which builds only inside another kustomization).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde_json::Value;

use super::flux::{self, KUSTOMIZATION_FILES};
use super::manifests;

/// The conventional folder of clusters at a repository's root.
pub const CLUSTERS: &str = "clusters";

/// The folders under `folder` (itself included) that are built on their own.
pub fn entries(folder: &Path) -> Result<Vec<PathBuf>> {
    if flux::is_cluster(folder)? && !is_component(folder)? {
        return Ok(vec![folder.to_path_buf()]);
    }
    let mut candidates = Vec::new();
    top_most(folder, &mut candidates)?;
    let mut used = Vec::new();
    references(folder, &mut used)?;
    let root = canonical(folder);
    let mut out = Vec::new();
    for candidate in candidates {
        let key = canonical(&candidate);
        // A folder a Kustomization builds takes its subfolders with it. A
        // reference from inside the candidate itself (a bootstrap's own
        // Kustomization names its folder) does not make it another's.
        let elsewhere = used
            .iter()
            .any(|(from, to)| key.starts_with(to) && to != &root && !from.starts_with(&key));
        if !elsewhere && !is_component(&candidate)? {
            out.push(candidate);
        }
    }
    Ok(out)
}

/// The highest folders under `dir` kustomize-controller builds as they are.
fn top_most(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in manifests::entries(dir)? {
        if !entry.is_dir() || flux::hidden(&entry) {
            continue;
        }
        if flux::is_cluster(&entry)? {
            out.push(entry);
        } else {
            top_most(&entry, out)?;
        }
    }
    Ok(())
}

/// Every use of a folder under `dir`: (the folder of the file that uses it,
/// the folder used), both canonical.
fn references(dir: &Path, out: &mut Vec<(PathBuf, PathBuf)>) -> Result<()> {
    for entry in manifests::entries(dir)? {
        if flux::hidden(&entry) {
            continue;
        }
        if entry.is_dir() {
            references(&entry, out)?;
            continue;
        }
        if !flux::is_yaml(&entry) {
            continue;
        }
        let here = canonical(dir);
        let Ok(text) = std::fs::read_to_string(&entry) else {
            continue;
        };
        // A file that is not YAML fails the build that reads it, not the
        // search for clusters.
        let documents = manifests::documents(&entry.to_string_lossy(), &text).unwrap_or_default();
        let kustomization_file = KUSTOMIZATION_FILES.contains(&flux::name_of(&entry).as_str());
        for (_, document) in documents {
            if kustomization_file {
                for field in ["resources", "components", "bases"] {
                    for item in strings(&document, field) {
                        let used = canonical(&dir.join(item));
                        if used.is_dir() {
                            out.push((here.clone(), used));
                        }
                    }
                }
            } else if let Some(path) = kustomization_path(&document) {
                // spec.path is relative to the source's root: the
                // repository's, here the current directory.
                out.push((here.clone(), canonical(Path::new(path))));
            }
        }
    }
    Ok(())
}

/// A Flux Kustomization's `spec.path`, where it names a folder (no
/// variables left for postBuild).
fn kustomization_path(document: &Value) -> Option<&str> {
    let group = document.get("apiVersion")?.as_str()?.split_once('/')?.0;
    if group != guard_core::model::kinds::KUSTOMIZE || document.get("kind")? != "Kustomization" {
        return None;
    }
    document
        .pointer("/spec/path")
        .and_then(Value::as_str)
        .filter(|p| !p.contains("${"))
}

fn strings<'a>(document: &'a Value, field: &str) -> impl Iterator<Item = &'a str> {
    document
        .get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Whether a folder's kustomization file is a kustomize `Component`.
fn is_component(folder: &Path) -> Result<bool> {
    for name in KUSTOMIZATION_FILES {
        let file = folder.join(name);
        if file.is_file() {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let documents = manifests::documents(&file.to_string_lossy(), &text)
                .with_context(|| format!("{} is not YAML", file.display()))?;
            return Ok(documents
                .iter()
                .any(|(_, d)| d.get("kind").and_then(Value::as_str) == Some("Component")));
        }
    }
    Ok(false)
}

/// The absolute path, where it exists; else the path as given.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

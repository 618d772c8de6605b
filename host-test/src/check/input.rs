//! What one run of `check` judges: the manifests of each cluster, each with
//! its base. A folder is built as Flux builds it ([`super::flux`]), one
//! cluster per folder (or per subfolder of a folder of clusters); files and
//! stdin are read as they are (rendered manifests, `kustomize build`
//! output), together, as one set.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use conformance::cluster::Recorded;

use super::flux::{self, Workspace};
use super::manifests::{self, Manifests};
use super::revision;

/// One set of manifests judged on its own.
pub struct Judged {
    /// The cluster's folder, or the files' names.
    pub name: String,
    pub head: Manifests,
    pub base: Option<Manifests>,
}

/// Where the previous revision comes from.
#[derive(Clone, Copy)]
pub enum Base<'a> {
    None,
    /// Files or folders, one for each path, in order.
    Paths(&'a [PathBuf]),
    /// A git revision of the same paths.
    Revision(&'a str),
}

/// Reads every path; `owner` is the Kustomization that applies what no
/// Kustomization of the repository applies.
pub fn read(
    paths: &[PathBuf],
    base: Base<'_>,
    owner: &(String, String),
    context: &[Recorded],
) -> Result<Vec<Judged>> {
    let is_folder = |p: &PathBuf| p.as_os_str() != "-" && p.is_dir();
    if let Base::Paths(b) = base {
        if paths.iter().any(is_folder) && b.len() != paths.len() {
            bail!(
                "--base names {} paths for {} paths: give one base for each path",
                b.len(),
                paths.len()
            );
        }
    }
    let mut out = Vec::new();
    let files: Vec<PathBuf> = paths.iter().filter(|p| !is_folder(p)).cloned().collect();
    if !files.is_empty() {
        let base_files: Vec<PathBuf> = match base {
            Base::Paths(b) if paths.iter().any(is_folder) => paths
                .iter()
                .zip(b)
                .filter(|(p, _)| !is_folder(p))
                .map(|(_, b)| b.clone())
                .collect(),
            Base::Paths(b) => b.to_vec(),
            _ => Vec::new(),
        };
        let head = manifests::read(&files)?;
        let base = match base {
            Base::Revision(rev) => Some(revision::read(rev, &files)?),
            Base::Paths(_) => Some(manifests::read(&base_files)?),
            Base::None => None,
        };
        out.push(Judged {
            name: names(&files),
            head,
            base,
        });
    }
    let folders: Vec<(usize, &PathBuf)> = paths
        .iter()
        .enumerate()
        .filter(|(_, p)| is_folder(p))
        .collect();
    if folders.is_empty() {
        return Ok(out);
    }
    let here = Workspace::working_tree(Path::new("."))?;
    let earlier = match base {
        Base::Revision(rev) => Some(Workspace::at_revision(rev)?),
        _ => None,
    };
    for (i, folder) in folders {
        for cluster in flux::clusters(folder)? {
            if !here.has(&cluster) {
                eprintln!(
                    "note: {} is left out of the repository's artifact (a .sourceignore, or source-controller's default patterns): not checked",
                    cluster.display()
                );
                continue;
            }
            let head = here.build_cluster(&cluster, owner.clone(), context, true)?;
            let base = match (&base, &earlier) {
                (_, Some(ws)) if ws.has(&cluster) => {
                    Some(ws.build_cluster(&cluster, owner.clone(), context, false)?)
                }
                (_, Some(_)) => Some(Manifests::default()),
                (Base::Paths(b), _) => {
                    let from = b.get(i).map(PathBuf::as_path).unwrap_or(Path::new(""));
                    let within = cluster.strip_prefix(folder).unwrap_or(Path::new(""));
                    let at = from.join(within);
                    if at.is_dir() {
                        Some(here.build_cluster(&at, owner.clone(), context, false)?)
                    } else {
                        Some(Manifests::default())
                    }
                }
                _ => None,
            };
            out.push(Judged {
                name: cluster.display().to_string(),
                head,
                base,
            });
        }
    }
    Ok(out)
}

fn names(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

//! What one run of `check` judges: the manifests of each cluster, each with
//! its base. A folder is built as Flux builds it ([`super::flux`]), one
//! cluster per folder (or per subfolder of a folder of clusters); files and
//! stdin are read as they are (rendered manifests, `kustomize build`
//! output), together, as one set.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use conformance::cluster::Recorded;

use super::discover;
use super::flux::{self, Workspace};
use super::manifests::{self, Manifests};
use super::revision;

/// One set of manifests judged on its own.
pub struct Judged {
    /// The cluster's folder, or the files' names.
    pub name: String,
    pub head: Manifests,
    pub base: Option<Manifests>,
    /// Report only what comes from these files or folders (relative to the
    /// repository's root, `/`-separated): the paths a user named that the
    /// clusters build, such as the files a pre-commit hook passes.
    pub only: Option<Vec<String>>,
}

impl Judged {
    /// Whether a finding at `file` is reported.
    pub fn reports(&self, file: &str) -> bool {
        let Some(only) = &self.only else {
            return true;
        };
        only.iter().any(|p| within(file, p))
    }
}

/// Whether a file (as origins name it) is `path` or under it.
fn within(file: &str, path: &str) -> bool {
    let file = file.strip_suffix(" (generated)").unwrap_or(file);
    path == "." || file == path || file.starts_with(&format!("{path}/"))
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
#[expect(clippy::too_many_lines, reason = "one branch per kind of input path")]
pub fn read(
    paths: &[PathBuf],
    base: Base<'_>,
    owner: &(String, String),
    artifacts: &[flux::Artifact],
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
    // In a repository laid out as Flux's (clusters under `clusters/`, run
    // from its root), a file or a folder outside the clusters' own folders
    // is what some cluster builds: the clusters are built and what comes
    // from it is reported.
    let fleet = Path::new(discover::CLUSTERS).is_dir();
    let mapped: Vec<String> = paths
        .iter()
        .filter(|p| fleet && p.as_os_str() != "-" && p.is_relative() && p.exists())
        .filter_map(|p| Some((p, flux::relative(p).ok()?)))
        .filter(|(p, rel)| !is_folder(p) || !is_clusters_own(rel))
        .map(|(_, rel)| rel)
        .collect();
    let is_mapped = |p: &PathBuf| {
        flux::relative(p).is_ok_and(|rel| mapped.contains(&rel)) && p.as_os_str() != "-"
    };
    let mut out = Vec::new();
    let files: Vec<PathBuf> = paths
        .iter()
        .filter(|p| !is_folder(p) && !is_mapped(p))
        .cloned()
        .collect();
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
            only: None,
        });
    }
    let folders: Vec<(usize, &PathBuf)> = paths
        .iter()
        .enumerate()
        .filter(|(_, p)| is_folder(p) && !is_mapped(p))
        .collect();
    if folders.is_empty() && mapped.is_empty() {
        return Ok(out);
    }
    let builds = Builds {
        here: Workspace::working_tree(Path::new("."))?,
        earlier: match base {
            Base::Revision(rev) => Some(Workspace::at_revision(rev)?),
            _ => None,
        },
        base,
        owner,
        artifacts,
        context,
    };
    for (i, folder) in folders {
        for cluster in discover::entries(folder)? {
            out.extend(builds.cluster(i, folder, &cluster, None)?);
        }
    }
    if !mapped.is_empty() {
        if let Base::Paths(_) = base {
            bail!(
                "{} {} built by the repository's clusters: name the previous revision with --base-revision",
                mapped.join(", "),
                if mapped.len() == 1 { "is" } else { "are" },
            );
        }
        let root = Path::new(".");
        let mut clusters = Vec::new();
        for cluster in discover::entries(root)? {
            clusters.extend(builds.cluster(0, root, &cluster, Some(&mapped))?);
        }
        for path in &mapped {
            let built = clusters.iter().any(|j| {
                let head = &j.head;
                head.objects.iter().any(|m| within(&m.origin.file, path))
                    || head.unbuilt.iter().any(|u| within(&u.origin.file, path))
            });
            if !built {
                eprintln!("note: no Kustomization of the repository's clusters builds an object from {path}: nothing of it is checked");
            }
        }
        out.extend(clusters);
    }
    Ok(out)
}

/// Whether a repository path is the clusters' folder, one of its
/// subfolders, or the root: built as clusters, not through them.
fn is_clusters_own(rel: &str) -> bool {
    rel == "." || rel == discover::CLUSTERS || rel.starts_with(&format!("{}/", discover::CLUSTERS))
}

/// What every cluster's build needs.
struct Builds<'a> {
    here: Workspace,
    earlier: Option<Workspace>,
    base: Base<'a>,
    owner: &'a (String, String),
    artifacts: &'a [flux::Artifact],
    context: &'a [Recorded],
}

impl Builds<'_> {
    /// The cluster `cluster` found under `folder` (the `i`th path given),
    /// with its base; none where the artifact leaves it out.
    fn cluster(
        &self,
        i: usize,
        folder: &Path,
        cluster: &Path,
        only: Option<&[String]>,
    ) -> Result<Option<Judged>> {
        let (owner, context, artifacts) = (self.owner, self.context, self.artifacts);
        if !self.here.has(cluster) {
            eprintln!(
                "note: {} is left out of the repository's artifact (a .sourceignore, or source-controller's default patterns): not checked",
                cluster.display()
            );
            return Ok(None);
        }
        let head = self
            .here
            .build_cluster(cluster, owner.clone(), artifacts, context, true)?;
        let base = match (&self.base, &self.earlier) {
            (_, Some(ws)) if ws.has(cluster) => {
                Some(ws.build_cluster(cluster, owner.clone(), artifacts, context, false)?)
            }
            (_, Some(_)) => Some(Manifests::default()),
            (Base::Paths(b), _) => {
                let from = b.get(i).map(PathBuf::as_path).unwrap_or(Path::new(""));
                let within = cluster.strip_prefix(folder).unwrap_or(Path::new(""));
                let at = from.join(within);
                if at.is_dir() {
                    Some(
                        self.here
                            .build_cluster(&at, owner.clone(), artifacts, context, false)?,
                    )
                } else {
                    Some(Manifests::default())
                }
            }
            _ => None,
        };
        Ok(Some(Judged {
            name: cluster.display().to_string(),
            head,
            base,
            only: only.map(<[String]>::to_vec),
        }))
    }
}

fn names(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

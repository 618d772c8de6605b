//! The manifests of an earlier git revision, read with git itself: the same
//! paths, as `git ls-tree` and `git show REV:./path` see them.

use std::path::{Component, Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _, Result};

use super::manifests::{self, Manifests};

pub(super) fn git(args: &[&str]) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .args(args)
        .output()
        .context("cannot run git")?;
    if !out.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

/// The manifests under `paths` (relative to the working directory) at `rev`.
pub fn read(rev: &str, paths: &[PathBuf]) -> Result<Manifests> {
    let mut out = Manifests::default();
    for path in paths {
        if path.as_os_str() == "-" {
            bail!("--base-revision cannot read stdin's earlier revision; give paths");
        }
        let listed = git(&[
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            rev,
            "--",
            &path.to_string_lossy(),
        ])?;
        for name in listed.split(|b| *b == 0).filter(|n| !n.is_empty()) {
            let name = String::from_utf8_lossy(name).into_owned();
            if !is_manifest(Path::new(&name)) {
                continue;
            }
            let text = git(&["show", &format!("{rev}:./{name}")])?;
            let text =
                String::from_utf8(text).with_context(|| format!("{rev}:{name} is not UTF-8"))?;
            let found = manifests::parse(&name, Some(rev), &text)?;
            out.objects.extend(found.objects);
            out.skipped.extend(found.skipped);
        }
    }
    Ok(out)
}

/// What a folder walk would read: manifest files outside hidden folders.
fn is_manifest(path: &Path) -> bool {
    let hidden = path
        .components()
        .any(|c| matches!(c, Component::Normal(n) if n.to_string_lossy().starts_with('.')));
    !hidden && manifests::has_manifest_extension(path)
}

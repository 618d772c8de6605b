//! The folders a repository's CI pushes as OCI artifacts: a GitHub Actions
//! workflow step running `flux push artifact oci://URL:TAG --path=FOLDER`
//! publishes FOLDER as the artifact an OCIRepository with that URL reads
//! (fluxcd/flux2 da2d22d3, `cmd/flux/push_artifact.go`,
//! `pushArtifactCmdRun`: the URL is the first argument, `--path`/`-f` the
//! directory, `-` a stream from stdin). Only what the workflow writes
//! literally is followed: a URL or path built from `${{ … }}` or shell
//! variables is known at run time only.

use std::path::Path;

/// A folder a workflow pushes to `url` (an OCIRepository's `spec.url`, no
/// tag): (the workflow file, the folder relative to `root`).
pub fn folder_for(root: &Path, url: &str) -> Option<(String, String)> {
    let dir = root.join(".github/workflows");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| super::flux::is_yaml(p))
        .collect();
    files.sort();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (pushed_url, folder) in pushes(&text) {
            if pushed_url != url.trim_end_matches('/') {
                continue;
            }
            let Ok(folder) = super::flux::relative(Path::new(&folder)) else {
                continue;
            };
            if root.join(&folder).is_dir() {
                let name = super::flux::name_of(&file);
                return Some((format!(".github/workflows/{name}"), folder));
            }
        }
    }
    None
}

/// Every `flux push artifact` in `text` with a literal URL and folder:
/// (the URL without its tag, the folder).
fn pushes(text: &str) -> Vec<(String, String)> {
    // A shell line continued with `\` is one command.
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut out = Vec::new();
    for line in joined.lines() {
        let Some((_, rest)) = line.split_once("flux push artifact") else {
            continue;
        };
        // The command ends where the shell starts another.
        let command = rest.split(['|', ';', '&', '#']).next().unwrap_or_default();
        let Some(words) = shlex::split(command) else {
            continue;
        };
        if let Some(push) = push_of(&words) {
            out.push(push);
        }
    }
    out
}

/// The URL and folder of one command's words (after `flux push artifact`).
fn push_of(words: &[String]) -> Option<(String, String)> {
    let mut url = None;
    let mut path = None;
    let mut at = words.iter();
    while let Some(word) = at.next() {
        if let Some(value) = word.strip_prefix("--path=") {
            path = Some(value.to_string());
        } else if word == "--path" || word == "-f" {
            path = at.next().cloned();
        } else if let Some(value) = word.strip_prefix("-f=") {
            path = Some(value.to_string());
        } else if word.starts_with("oci://") && url.is_none() {
            url = Some(word.clone());
        }
    }
    let (url, path) = (without_reference(&url?).to_string(), path?);
    let literal = |s: &str| !s.contains('$') && !s.is_empty() && s != "-";
    (literal(&url) && literal(&path)).then_some((url, path))
}

/// An artifact URL without its tag or digest: what an OCIRepository's
/// `spec.url` names (its `ref` gives the tag).
fn without_reference(url: &str) -> &str {
    let url = url.split_once('@').map_or(url, |(u, _)| u);
    // A colon after the last `/` starts the tag; one before it is a port.
    let untagged = match url.rfind(':') {
        Some(colon) if url.rfind('/').is_some_and(|slash| colon > slash) => {
            url.get(..colon).unwrap_or(url)
        }
        _ => url,
    };
    untagged.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_push_names_its_url_and_folder_in_every_spelling() {
        let text = "steps:\n  - run: |\n      flux push artifact oci://registry.example.com/org/fleet/apps:$(git rev-parse --short HEAD) \\\n        --path=\"./apps/production\" \\\n        --source=\"$(git config --get remote.origin.url)\"\n  - run: flux push artifact oci://registry.example.com/org/fleet/infra:latest -f infra --revision main@sha1:abc && echo done\n  - run: kustomize build . | flux push artifact oci://registry.example.com/org/fleet/built:v1 -f -\n  - run: flux push artifact oci://registry.example.com/${{ github.repository }}:v1 --path=apps\n";
        assert_eq!(
            pushes(text),
            vec![
                (
                    "oci://registry.example.com/org/fleet/apps".to_string(),
                    "./apps/production".to_string()
                ),
                (
                    "oci://registry.example.com/org/fleet/infra".to_string(),
                    "infra".to_string()
                ),
            ]
        );
    }

    #[test]
    fn the_reference_is_not_part_of_the_url() {
        assert_eq!(
            without_reference("oci://registry.example.com:5000/a/b:v1"),
            "oci://registry.example.com:5000/a/b"
        );
        assert_eq!(
            without_reference("oci://registry.example.com:5000/a/b"),
            "oci://registry.example.com:5000/a/b"
        );
        assert_eq!(
            without_reference("oci://registry.example.com/a/b@sha256:0123"),
            "oci://registry.example.com/a/b"
        );
    }
}

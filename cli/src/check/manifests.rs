//! Kubernetes manifests as a GitOps repository holds them: files and folders
//! of multi-document YAML or JSON, `kustomize build` output on stdin, `List`
//! objects; each object remembers where it was written.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use serde_json::Value;

/// Where an object was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The path as given (or `-` for stdin), with `/` separators.
    pub file: String,
    /// The git revision the file was read at, when not the working tree.
    pub revision: Option<String>,
    /// The document's position in the file, from 1.
    pub document: usize,
    /// The line the document starts on, from 1.
    pub line: usize,
    /// The position in a `List`'s `items`, from 1.
    pub item: Option<usize>,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(rev) = &self.revision {
            write!(f, "{rev}:")?;
        }
        write!(f, "{}:{} (document {}", self.file, self.line, self.document)?;
        if let Some(item) = self.item {
            write!(f, ", item {item}")?;
        }
        f.write_str(")")
    }
}

/// One object of the manifests.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub origin: Origin,
    pub object: Value,
    /// The Flux Kustomization (namespace, name) that applies it, when the
    /// manifests were built as Flux builds them.
    pub owner: Option<(String, String)>,
    /// The ResourceSet that generates it, when Flux Operator applies it.
    pub generator: Option<Generator>,
}

/// A ResourceSet whose generated objects Flux Operator applies, as the
/// service account `spec.serviceAccountName` names in the ResourceSet's
/// namespace, else as itself (controlplaneio-fluxcd/flux-operator 17c6aead,
/// `internal/controller/resourceset_controller.go`, `makeImpersonator`; the
/// operator's `--default-service-account` is a cluster setting check does
/// not see).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generator {
    pub namespace: String,
    pub name: String,
    pub service_account: Option<String>,
}

/// What a set of paths holds.
#[derive(Debug, Default)]
pub struct Manifests {
    pub objects: Vec<Manifest>,
    /// Documents that are not Kubernetes objects (no `apiVersion` and `kind`),
    /// such as Helm values or kustomize's own `kustomization.yaml` fields.
    pub skipped: Vec<Origin>,
    /// The Flux Kustomizations kustomize-controller could not build: it
    /// applies nothing of theirs, and prunes nothing either.
    pub unbuilt: Vec<Unbuilt>,
    /// The ResourceSets whose objects are not rendered.
    pub unrendered: Vec<Unrendered>,
}

/// A ResourceSet whose objects are not rendered, and why.
#[derive(Debug, Clone)]
pub struct Unrendered {
    /// Where the ResourceSet is written.
    pub origin: Origin,
    /// Its (namespace, name).
    pub resource_set: (String, String),
    pub message: String,
    /// Flux Operator fails to build it too, so it applies nothing of it;
    /// otherwise check cannot render what Flux Operator would.
    pub fails: bool,
}

/// A Flux Kustomization whose build fails, as kustomize-controller reports
/// it on its Ready condition.
#[derive(Debug, Clone)]
pub struct Unbuilt {
    /// Where the Kustomization is written (the cluster's folder for the one
    /// that applies it, when the repository does not hold that one).
    pub origin: Origin,
    /// Its (namespace, name).
    pub kustomization: (String, String),
    /// The Ready condition's reason: `ArtifactFailed` (its path is not in
    /// the source) or `BuildFailed`.
    pub reason: &'static str,
    pub message: String,
    /// The build needs an object neither the repository nor `--context`
    /// holds: whether it fails depends on the cluster.
    pub undecided: bool,
}

/// Reads every path: a file, a folder (its `.yaml`, `.yml` and `.json` files,
/// recursively, in name order, skipping hidden entries) or `-` for stdin.
pub fn read(paths: &[PathBuf]) -> Result<Manifests> {
    let mut out = Manifests::default();
    for path in paths {
        if path.as_os_str() == "-" {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .context("cannot read stdin")?;
            parse_into(&mut out, "-", None, &text)?;
        } else {
            for file in files_under(path)? {
                let text = std::fs::read_to_string(&file)
                    .with_context(|| format!("cannot read {}", file.display()))?;
                parse_into(&mut out, &display(&file), None, &text)?;
            }
        }
    }
    Ok(out)
}

/// The manifests of one text, named `file` (at `revision`, when not the working tree).
pub fn parse(file: &str, revision: Option<&str>, text: &str) -> Result<Manifests> {
    let mut out = Manifests::default();
    parse_into(&mut out, file, revision, text)?;
    Ok(out)
}

fn display(path: &Path) -> String {
    let text = path.to_string_lossy();
    let text = text.strip_prefix("./").unwrap_or(&text);
    text.replace(std::path::MAIN_SEPARATOR, "/")
}

fn files_under(path: &Path) -> Result<Vec<PathBuf>> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    for entry in entries(path)? {
        let name = entry.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.as_deref().is_none_or(|n| n.starts_with('.')) {
            continue;
        }
        if entry.is_dir() {
            files.extend(files_under(&entry)?);
        } else if has_manifest_extension(&entry) {
            files.push(entry);
        }
    }
    Ok(files)
}

/// A folder's entries, in name order.
pub(super) fn entries(path: &Path) -> Result<Vec<PathBuf>> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("cannot read {}", path.display()))?;
    entries.sort();
    Ok(entries)
}

/// `.yaml`, `.yml` or `.json`.
pub fn has_manifest_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
}

fn parse_into(out: &mut Manifests, file: &str, revision: Option<&str>, text: &str) -> Result<()> {
    let named = match revision {
        Some(rev) => format!("{rev}:{file}"),
        None => file.to_string(),
    };
    for (document, (line, value)) in documents(&named, text)?.into_iter().enumerate() {
        let origin = Origin {
            file: file.to_string(),
            revision: revision.map(str::to_string),
            document: document + 1,
            line,
            item: None,
        };
        add(out, origin, value)?;
    }
    Ok(())
}

/// Adds one document: an object, a `List` of objects, or something else (skipped).
fn add(out: &mut Manifests, origin: Origin, value: Value) -> Result<()> {
    let is_object = value.get("apiVersion").is_some_and(Value::is_string)
        && value.get("kind").is_some_and(Value::is_string);
    if !is_object {
        out.skipped.push(origin);
        return Ok(());
    }
    let is_list = value
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List"))
        && value.get("items").is_some_and(Value::is_array);
    if !is_list {
        out.objects.push(Manifest {
            origin,
            object: value,
            owner: None,
            generator: None,
        });
        return Ok(());
    }
    let Some(Value::Array(items)) = value.get("items") else {
        return Ok(());
    };
    for (i, item) in items.iter().enumerate() {
        let origin = Origin {
            item: Some(i + 1),
            ..origin.clone()
        };
        if item.get("apiVersion").is_some_and(Value::is_string)
            && item.get("kind").is_some_and(Value::is_string)
        {
            out.objects.push(Manifest {
                origin,
                object: item.clone(),
                owner: None,
                generator: None,
            });
        } else {
            bail!("{origin}: a List item without apiVersion and kind");
        }
    }
    Ok(())
}

/// The documents of a text with the line each starts on: a JSON value or
/// stream, or YAML documents separated by `---` (a marker at the start of a
/// line ends any scalar, so splitting there is exact). Empty documents are
/// left out.
pub fn documents(file: &str, text: &str) -> Result<Vec<(usize, Value)>> {
    // A byte-order mark is not content (kustomize's reader drops it too).
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with(['{', '[']) {
        let stream: Result<Vec<Value>, _> = serde_json::Deserializer::from_str(text)
            .into_iter()
            .collect();
        if let Ok(values) = stream {
            return Ok(values
                .into_iter()
                .flat_map(|v| match v {
                    Value::Array(items) => items,
                    other => vec![other],
                })
                .map(|v| (1, v))
                .collect());
        }
    }
    let mut out = Vec::new();
    for (start, chunk) in yaml_chunks(text) {
        // A document is where its first line of content is, past comments.
        let Some(offset) = chunk
            .lines()
            .position(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        else {
            continue;
        };
        let line = start + offset;
        // Read through YAML's own value first: a key written twice is an
        // error there (kustomize refuses it too: kyaml reads with yaml.v3,
        // which reports "mapping key already defined"), and `<<` merge keys
        // are expanded as kustomize and kubectl expand them.
        let value = serde_norway::from_str::<serde_norway::Value>(&chunk).and_then(|mut v| {
            v.apply_merge()?;
            Ok(v)
        });
        let value: Value = match value {
            Ok(v) => serde_json::to_value(v)
                .with_context(|| format!("{file}:{line}: not a JSON-compatible YAML document"))?,
            Err(e) => {
                // The parser counts lines from the document's start.
                let at = e
                    .location()
                    .map_or(line, |l| start.saturating_add(l.line()).saturating_sub(1));
                let text = e.to_string();
                let text = text.split(" at line ").next().unwrap_or(&text);
                bail!("{file}:{at}: not valid YAML: {text}");
            }
        };
        if !value.is_null() {
            out.push((line, value));
        }
    }
    Ok(out)
}

/// What follows a document marker `m` at the start of `line`, if it is one.
fn marker<'a>(line: &'a str, m: &str) -> Option<&'a str> {
    line.strip_prefix(m)
        .filter(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

/// Splits YAML at document markers: `---` (content may follow on the same
/// line) and `...`, each at the start of a line and followed by a blank or
/// the end of the line; directives (`%…`) before a document are dropped.
fn yaml_chunks(text: &str) -> Vec<(usize, String)> {
    let mut chunks = Vec::new();
    let mut current = String::new();
    let mut start = 1;
    let mut in_document = false;
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if let Some(rest) = marker(line, "---") {
            if in_document || !current.trim().is_empty() {
                chunks.push((start, std::mem::take(&mut current)));
            }
            current.clear();
            current.push_str(rest);
            current.push('\n');
            start = number;
            in_document = true;
        } else if marker(line, "...").is_some() {
            chunks.push((start, std::mem::take(&mut current)));
            in_document = false;
            start = number + 1;
        } else if !in_document && line.starts_with('%') {
            start = number + 1;
        } else {
            if !in_document && current.trim().is_empty() && !line.trim().is_empty() {
                in_document = true;
            }
            current.push_str(line);
            current.push('\n');
        }
    }
    chunks.push((start, current));
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_documents_keep_their_lines_and_lists_expand() {
        let text = "# a comment\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n\
                    replicaCount: 2\n--- \napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  \
                    kind: Namespace\n  metadata: {name: b}\n---\n# only a comment\n";
        let m = parse("x.yaml", None, text).unwrap();
        let names: Vec<_> = m
            .objects
            .iter()
            .map(|o| {
                (
                    o.object["metadata"]["name"].as_str().unwrap(),
                    o.origin.to_string(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("a", "x.yaml:3 (document 1)".to_string()),
                ("b", "x.yaml:9 (document 3, item 1)".to_string())
            ]
        );
        assert_eq!(m.skipped.len(), 1);
        assert_eq!(m.skipped[0].line, 7);
    }

    #[test]
    fn a_block_scalar_ends_at_a_marker_and_json_streams_read() {
        let text = "a: |\n  ---not a marker\n  b\n---\nc: 1\n";
        let chunks = yaml_chunks(text);
        assert_eq!(chunks.len(), 2);
        assert!(chunks[0].1.contains("---not a marker"));
        let m = parse(
            "s.json",
            None,
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}} {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"b"}}"#,
        )
        .unwrap();
        assert_eq!(m.objects.len(), 2);
    }

    #[test]
    fn invalid_yaml_names_file_and_line() {
        let e = parse("bad.yaml", None, "---\na: b\n---\na: [\n").unwrap_err();
        assert!(
            format!("{e:#}").starts_with("bad.yaml:5: not valid YAML: did not find expected"),
            "{e:#}"
        );
    }
}

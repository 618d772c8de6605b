//! `devtools sbom`: an SPDX 2.3 JSON document for one policy module, made
//! from the dependency graph cargo resolves for the build that made it.
//!
//! The graph is `cargo tree` run with the build's own package list, target
//! and edge kind (`-p … --target wasm32-wasip1 -e normal`): cargo resolves
//! features per invocation, so this is the graph `make build` compiles, where
//! `cargo metadata` would unify features across the whole workspace (host
//! tools included) and list six crates the modules do not contain. The
//! document types are serde-spdx's, generated from the SPDX 2.3 JSON schema.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context as _, Result};
use serde_spdx::spdx::v_2_3::{
    Spdx, SpdxCreationInfo, SpdxItemPackages, SpdxItemPackagesItemChecksums,
    SpdxItemPackagesItemExternalRefs, SpdxItemRelationships,
};
use sha2::{Digest as _, Sha256};

pub const WASM_TARGET: &str = "wasm32-wasip1";
const PROJECT_URL: &str = "https://github.com/reconcile-guard/reconcile-guard";

/// A package of the graph, as `cargo tree` names it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Package {
    pub name: String,
    pub version: String,
    /// From this workspace (a path dependency) rather than crates.io.
    pub local: bool,
    /// The `license` of its Cargo.toml, as cargo prints it.
    pub license: String,
}

/// The packages a module is built from and which depends on which.
#[derive(Debug)]
pub struct Graph {
    pub root: Package,
    pub packages: BTreeSet<Package>,
    pub edges: BTreeSet<(Package, Package)>,
}

/// The graph of `policy` in the build of `built_with` (the packages built in
/// the same cargo invocation, `policy` among them), read from `cargo tree`
/// run in `workspace`.
pub fn graph(workspace: &Path, policy: &str, built_with: &[String]) -> Result<Graph> {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command
        .current_dir(workspace)
        .args(["tree", "--locked", "--target", WASM_TARGET, "-e", "normal"])
        .args(["--prefix", "depth", "--format", "{p}|{l}"]);
    let mut packages: Vec<&str> = built_with.iter().map(String::as_str).collect();
    if !packages.contains(&policy) {
        packages.push(policy);
    }
    for p in packages {
        command.args(["-p", p]);
    }
    let out = command.output().context("cannot run cargo tree")?;
    if !out.status.success() {
        bail!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    parse_tree(&String::from_utf8(out.stdout)?, policy)
}

/// Reads `cargo tree --prefix depth --format '{p}|{l}'`: every line is a
/// depth, the package and its license; a package already shown ends in
/// `(*)` and its dependencies are not repeated, so edges are gathered from
/// every root's tree before walking from `policy`.
fn parse_tree(text: &str, policy: &str) -> Result<Graph> {
    let mut stack: Vec<Package> = Vec::new();
    let mut edges: BTreeMap<Package, BTreeSet<Package>> = BTreeMap::new();
    let mut root = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let digits = line.chars().take_while(char::is_ascii_digit).count();
        let depth: usize = line
            .get(..digits)
            .unwrap_or_default()
            .parse()
            .with_context(|| format!("cargo tree line without a depth: {line:?}"))?;
        let rest = line.get(digits..).unwrap_or_default();
        let package = parse_package(rest).with_context(|| format!("cargo tree line {line:?}"))?;
        stack.truncate(depth);
        if stack.len() != depth {
            bail!("cargo tree line {line:?} skips a level");
        }
        match stack.last() {
            Some(parent) => {
                edges
                    .entry(parent.clone())
                    .or_default()
                    .insert(package.clone());
            }
            None if package.name == policy => root = Some(package.clone()),
            None => {}
        }
        edges.entry(package.clone()).or_default();
        stack.push(package);
    }
    let root = root.with_context(|| format!("cargo tree did not show {policy}"))?;
    let mut packages = BTreeSet::new();
    let mut graph_edges = BTreeSet::new();
    let mut todo = vec![root.clone()];
    while let Some(p) = todo.pop() {
        if !packages.insert(p.clone()) {
            continue;
        }
        for d in edges.get(&p).into_iter().flatten() {
            graph_edges.insert((p.clone(), d.clone()));
            todo.push(d.clone());
        }
    }
    Ok(Graph {
        root,
        packages,
        edges: graph_edges,
    })
}

/// `name vVERSION[ (proc-macro)][ (PATH)]|LICENSE[ (*)]`.
fn parse_package(text: &str) -> Result<Package> {
    let text = text.trim_end();
    let text = text.strip_suffix(" (*)").unwrap_or(text);
    let (id, license) = text.split_once('|').context("no license column")?;
    let mut words = id.split(' ');
    let name = words.next().context("no package name")?;
    let version = words
        .next()
        .and_then(|v| v.strip_prefix('v'))
        .context("no package version")?;
    let local = words.any(|w| w.starts_with("(/") || w.starts_with("(.") || w.starts_with("(C:"));
    Ok(Package {
        name: name.to_string(),
        version: version.to_string(),
        local,
        license: license.trim().to_string(),
    })
}

/// A Cargo `license` as an SPDX license expression: the old `A/B` form means
/// `A OR B`; no license is NOASSERTION.
fn license_expression(license: &str) -> String {
    let license = license.trim();
    if license.is_empty() {
        return "NOASSERTION".into();
    }
    license
        .split('/')
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// SPDX identifiers hold letters, digits, `.` and `-`.
fn spdx_id(p: &Package) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    };
    format!("SPDXRef-Package-{}-{}", clean(&p.name), clean(&p.version))
}

/// The SPDX document for `module` (the built bytes, whose SHA-256 names it),
/// created at `created` (RFC 3339, UTC, whole seconds).
pub fn document(graph: &Graph, module: &[u8], file_name: &str, created: &str) -> Result<Spdx> {
    let digest = format!("{:x}", Sha256::digest(module));
    let mut ids = BTreeMap::new();
    for p in &graph.packages {
        if let Some(other) = ids.insert(spdx_id(p), p) {
            bail!(
                "{} and {} would share an SPDX identifier",
                other.name,
                p.name
            );
        }
    }
    let packages = graph
        .packages
        .iter()
        .map(|p| package(p, p == &graph.root, &digest, file_name))
        .collect::<Result<Vec<_>>>()?;
    let root_id = spdx_id(&graph.root);
    let mut relationships = vec![SpdxItemRelationships {
        comment: None,
        spdx_element_id: "SPDXRef-DOCUMENT".into(),
        relationship_type: "DESCRIBES".into(),
        related_spdx_element: root_id,
    }];
    relationships.extend(graph.edges.iter().map(|(from, to)| SpdxItemRelationships {
        comment: None,
        spdx_element_id: spdx_id(from),
        relationship_type: "DEPENDS_ON".into(),
        related_spdx_element: spdx_id(to),
    }));
    let name = format!("{}-{}", graph.root.name, graph.root.version);
    Ok(Spdx {
        spdxid: "SPDXRef-DOCUMENT".into(),
        spdx_version: "SPDX-2.3".into(),
        data_license: "CC0-1.0".into(),
        document_namespace: format!("{PROJECT_URL}/spdx/{name}-{digest}"),
        name,
        creation_info: SpdxCreationInfo {
            comment: Some(format!(
                "Dependency graph of the {WASM_TARGET} build: cargo tree -e normal."
            )),
            created: created.into(),
            creators: vec![format!("Tool: devtools-{}", env!("CARGO_PKG_VERSION"))],
            license_list_version: None,
        },
        packages: Some(packages),
        relationships: Some(relationships),
        annotations: None,
        comment: None,
        document_describes: None,
        external_document_refs: None,
        files: None,
        has_extracted_licensing_infos: None,
        revieweds: None,
        snippets: None,
    })
}

fn package(p: &Package, root: bool, digest: &str, file_name: &str) -> Result<SpdxItemPackages> {
    let mut b = serde_spdx::spdx::v_2_3::SpdxItemPackagesBuilder::default();
    b.spdxid(spdx_id(p))
        .name(p.name.clone())
        .version_info(p.version.clone())
        .license_declared(license_expression(&p.license))
        .license_concluded("NOASSERTION")
        .copyright_text("NOASSERTION")
        .files_analyzed(false);
    if p.local {
        b.download_location(format!("git+{PROJECT_URL}"))
            .supplier("Organization: reconcile-guard developers");
    } else {
        b.download_location(format!(
            "https://crates.io/api/v1/crates/{}/{}/download",
            p.name, p.version
        ))
        .external_refs(vec![SpdxItemPackagesItemExternalRefs {
            comment: None,
            reference_category: "PACKAGE-MANAGER".into(),
            reference_type: "purl".into(),
            reference_locator: format!("pkg:cargo/{}@{}", p.name, p.version),
        }]);
    }
    if root {
        b.package_file_name(file_name)
            .primary_package_purpose("APPLICATION")
            .checksums(vec![SpdxItemPackagesItemChecksums {
                algorithm: "SHA256".into(),
                checksum_value: digest.into(),
            }]);
    }
    b.build().context("cannot build an SPDX package")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TREE: &str = "\
0b-policy v0.1.0 (/src/policies/b)|Apache-2.0
1core v0.1.0 (/src/core)|Apache-2.0
2serde v1.0.1|MIT OR Apache-2.0
3serde_derive v1.0.1 (proc-macro)|MIT/Apache-2.0
0a-policy v0.1.0 (/src/policies/a)|Apache-2.0
1core v0.1.0 (/src/core)|Apache-2.0 (*)
1odd v2.0.0|
";

    #[test]
    fn a_policy_keeps_what_another_roots_tree_showed_first() {
        let g = parse_tree(TREE, "a-policy").unwrap();
        let names: Vec<_> = g.packages.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["a-policy", "core", "odd", "serde", "serde_derive"]);
        assert!(g.packages.iter().any(|p| p.name == "core" && p.local));
        assert!(g
            .packages
            .iter()
            .any(|p| p.name == "serde_derive" && !p.local));
        assert_eq!(g.edges.len(), 4);
    }

    #[test]
    fn licenses_become_spdx_expressions() {
        assert_eq!(license_expression("MIT/Apache-2.0"), "MIT OR Apache-2.0");
        assert_eq!(license_expression("Apache-2.0 / MIT"), "Apache-2.0 OR MIT");
        assert_eq!(
            license_expression("(MIT OR Apache-2.0) AND Unicode-3.0"),
            "(MIT OR Apache-2.0) AND Unicode-3.0"
        );
        assert_eq!(license_expression(""), "NOASSERTION");
    }

    #[test]
    fn the_document_names_the_module_by_its_digest() {
        let g = parse_tree(TREE, "a-policy").unwrap();
        let doc = document(&g, b"module", "a-policy.wasm", "2026-11-22T00:00:00Z").unwrap();
        let json = serde_json::to_value(&doc).unwrap();
        let digest = format!("{:x}", Sha256::digest(b"module"));
        let root = &json["packages"][0];
        assert_eq!(root["name"], "a-policy");
        assert_eq!(root["checksums"][0]["checksumValue"], digest.as_str());
        assert_eq!(root["packageFileName"], "a-policy.wasm");
        assert!(json["documentNamespace"]
            .as_str()
            .unwrap()
            .ends_with(&digest));
        let serde = json["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "serde_derive")
            .unwrap();
        assert_eq!(serde["SPDXID"], "SPDXRef-Package-serde-derive-1.0.1");
        assert_eq!(serde["licenseDeclared"], "MIT OR Apache-2.0");
        assert_eq!(
            serde["externalRefs"][0]["referenceLocator"],
            "pkg:cargo/serde_derive@1.0.1"
        );
        assert_eq!(json["relationships"][0]["relationshipType"], "DESCRIBES");
    }
}

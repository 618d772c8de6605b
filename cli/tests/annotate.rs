//! `reconcile-guard annotate` accepts and refuses the metadata `kwctl annotate`
//! accepts and refuses (kubewarden/kubewarden-controller 3460bb71,
//! crates/kwctl/src/annotate.rs `prepare_metadata`, policy-evaluator's
//! policy_metadata.rs), writes what it writes but for the kwctl version, and
//! keeps reconcile-guard's stricter checks in `lint-metadata`. Where the real
//! kwctl is installed (KWCTL, then PATH) every case is also run through it
//! and compared; elsewhere that comparison prints that it was skipped.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

#[path = "../../host-test/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use host_test::metadata::{self, Metadata};
use serde_json::{json, Value};

use common::root;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "reconcile-guard-annotate-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `annotate` (ours or kwctl's) on the test module; the metadata JSON
/// written, or the error output.
fn annotate_with(tool: &Path, dir: &Path, yaml: &str) -> Result<Value, String> {
    let meta = dir.join("metadata.yml");
    let out = dir.join(format!(
        "out-{}.wasm",
        tool.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&meta, yaml).unwrap();
    let _ = std::fs::remove_file(&out);
    let result = Command::new(tool)
        .arg("annotate")
        .arg("-m")
        .arg(&meta)
        .arg("-o")
        .arg(&out)
        .arg(common::test_module_path())
        .output()
        .unwrap();
    if !result.status.success() {
        return Err(String::from_utf8_lossy(&result.stderr).into_owned());
    }
    Ok(section(&std::fs::read(&out).unwrap()))
}

/// The raw JSON of the module's io.kubewarden.metadata section.
fn section(wasm: &[u8]) -> Value {
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        if let wasmparser::Payload::CustomSection(s) = payload.unwrap() {
            if s.name() == metadata::SECTION {
                return serde_json::from_slice(s.data()).unwrap();
            }
        }
    }
    panic!("no io.kubewarden.metadata section")
}

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_reconcile-guard"))
}

const RULE: &str = r#"rules: [{apiGroups: [""], apiVersions: ["v1"], resources: ["pods"], operations: ["CREATE"]}]"#;

/// Metadata kwctl accepts, and what both tools must write for it.
fn accepted() -> Vec<(&'static str, String)> {
    vec![
        (
            "hostCapabilities, no annotations, unknown fields, duplicate contextAwareResources",
            r#"
rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["pods", "*"]
    operations: ["CREATE"]
mutating: false
contextAware: true
somethingElse: 3
contextAwareResources:
  - {apiVersion: v1, kind: Namespace}
  - {apiVersion: apps/v1, kind: Deployment}
  - {apiVersion: v1, kind: Namespace}
hostCapabilities: ["kubernetes/get_resource", "kubernetes/list_resources_by_namespace"]
"#
            .to_string(),
        ),
        ("an empty rule list", "rules: []\nmutating: true\n".into()),
        (
            "a kwctl version in metadata.yml",
            format!("{RULE}\nmutating: false\nannotations:\n  io.kubewarden.kwctl: \"0.0.1\"\n  multi: \"a\\nb\"\n"),
        ),
        (
            "executionMode wasi",
            format!("{RULE}\nmutating: false\nexecutionMode: wasi\nhostCapabilities: []\n"),
        ),
        (
            "subresources and minimumKubewardenVersion",
            r#"
rules:
  - apiGroups: ["*"]
    apiVersions: ["*"]
    resources: ["*/status", "pods/*"]
    operations: ["*"]
mutating: true
policyType: raw
minimumKubewardenVersion: 1.10.0
"#
            .into(),
        ),
    ]
}

/// Metadata kwctl refuses.
fn refused() -> Vec<(&'static str, String)> {
    vec![
        ("no rules", "mutating: false\n".into()),
        ("no mutating", format!("{RULE}\n")),
        (
            "'*' before a plain resource",
            r#"rules: [{apiGroups: [""], apiVersions: ["v1"], resources: ["*", "pods"], operations: ["CREATE"]}]
mutating: false"#
                .into(),
        ),
        (
            "'*/*' with another resource",
            r#"rules: [{apiGroups: [""], apiVersions: ["v1"], resources: ["*/*", "pods/log"], operations: ["CREATE"]}]
mutating: false"#
                .into(),
        ),
        (
            "'*' among apiGroups",
            r#"rules: [{apiGroups: ["*", "apps"], apiVersions: ["v1"], resources: ["pods"], operations: ["CREATE"]}]
mutating: false"#
                .into(),
        ),
        (
            "an empty resource",
            r#"rules: [{apiGroups: [""], apiVersions: ["v1"], resources: [""], operations: ["CREATE"]}]
mutating: false"#
                .into(),
        ),
        (
            "an unknown operation",
            r#"rules: [{apiGroups: [""], apiVersions: ["v1"], resources: ["pods"], operations: ["PATCH"]}]
mutating: false"#
                .into(),
        ),
        (
            "protocolVersion v2",
            format!("{RULE}\nmutating: false\nprotocolVersion: v2\n"),
        ),
        (
            "a `v` in minimumKubewardenVersion",
            format!("{RULE}\nmutating: false\nminimumKubewardenVersion: v1.2.0\n"),
        ),
        (
            "policyType other",
            format!("{RULE}\nmutating: false\npolicyType: other\n"),
        ),
        (
            "an empty contextAwareResources apiVersion",
            format!("{RULE}\nmutating: false\ncontextAwareResources: [{{apiVersion: \"\", kind: X}}]\n"),
        ),
        (
            "executionMode opa on a module that is not Rego",
            format!("{RULE}\nmutating: false\nexecutionMode: opa\n"),
        ),
    ]
}

#[test]
fn annotate_accepts_what_kwctl_accepts_and_writes_no_kwctl_version() {
    let dir = tmp("accepted");
    for (what, yaml) in accepted() {
        let m = annotate_with(&ours(), &dir, &yaml).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            m.get("annotations")
                .is_none_or(|a| a.get("io.kubewarden.kwctl").is_none()),
            "{what}: {m}"
        );
    }
    let first = annotate_with(&ours(), &dir, &accepted()[0].1).unwrap();
    assert_eq!(
        first["hostCapabilities"],
        json!([
            "kubernetes/get_resource",
            "kubernetes/list_resources_by_namespace"
        ])
    );
    assert_eq!(
        first["contextAwareResources"],
        json!([{"apiVersion": "apps/v1", "kind": "Deployment"}, {"apiVersion": "v1", "kind": "Namespace"}]),
        "sorted and deduplicated, as kwctl's BTreeSet"
    );
    assert_eq!(first["protocolVersion"], "v1");
    assert!(first.get("contextAware").is_none() && first.get("somethingElse").is_none());
    let wasi = annotate_with(&ours(), &dir, &accepted()[3].1).unwrap();
    assert_eq!(wasi["protocolVersion"], "Unknown");
    assert_eq!(wasi["hostCapabilities"], json!([]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn annotate_refuses_what_kwctl_refuses() {
    let dir = tmp("refused");
    for (what, yaml) in refused() {
        assert!(
            annotate_with(&ours(), &dir, &yaml).is_err(),
            "{what}: accepted"
        );
    }
    let opa = annotate_with(&ours(), &dir, &refused().last().unwrap().1).unwrap_err();
    assert!(
        opa.contains("Wrong value inside of policy's metadata for 'executionMode'. The policy has not been created using Rego"),
        "{opa}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn metadata_with_host_capabilities_is_read_from_the_section() {
    let meta = Metadata::parse(&accepted()[0].1).unwrap();
    let wasm = metadata::annotate(&common::test_module(), &meta, "v1", Some("u")).unwrap();
    let back = metadata::read(&wasm).unwrap().unwrap();
    assert_eq!(
        back.host_capabilities
            .unwrap()
            .into_iter()
            .collect::<Vec<_>>(),
        [
            "kubernetes/get_resource",
            "kubernetes/list_resources_by_namespace"
        ]
    );
    assert_eq!(back.annotations["io.kubewarden.policy.usage"], "u");
}

#[test]
fn the_stricter_checks_are_a_separate_lint() {
    let dir = tmp("lint");
    // kwctl accepts metadata without any annotation; the lint does not.
    let bare = format!("{RULE}\nmutating: false\n");
    assert!(annotate_with(&ours(), &dir, &bare).is_ok());
    // The lint is `devtools lint-metadata`'s (run by `make build`), not a user command.
    let refused = format!("{:#}", Metadata::lint_yaml(&bare).unwrap_err());
    assert!(refused.contains("io.kubewarden.policy.title"), "{refused}");

    let full = format!(
        "{bare}annotations:\n  io.kubewarden.policy.title: t\n  io.kubewarden.policy.version: 0.1.0\n  \
         io.kubewarden.policy.description: d\n  io.kubewarden.policy.author: a\n  io.kubewarden.policy.license: Apache-2.0\n"
    );
    assert!(Metadata::lint_yaml(&full).is_ok());
    for (what, yaml) in [
        ("unknown field", format!("{full}somethingElse: 1\n")),
        (
            "version not semver",
            full.replace("version: 0.1.0", "version: latest"),
        ),
        ("no rules", full.replace(RULE, "rules: []")),
        (
            "upper-case resource",
            full.replace("[\"pods\"]", "[\"Pods\"]"),
        ),
    ] {
        assert!(Metadata::parse(&yaml).is_ok(), "{what}: kwctl accepts it");
        assert!(Metadata::lint_yaml(&yaml).is_err(), "{what}: lint passed");
    }

    // Every shipped policy passes the lint (devtools' `lint-metadata`).
    for entry in catalog::POLICIES {
        let path = root()
            .join("policies")
            .join(entry.name)
            .join("metadata.yml");
        let yaml = std::fs::read_to_string(&path).unwrap();
        if let Err(e) = Metadata::lint_yaml(&yaml) {
            panic!("{}: {e}", path.display());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn annotate_matches_the_real_kwctl() {
    let Some(kwctl) = common::engine("kwctl", "KWCTL", "annotate compared with kwctl annotate")
    else {
        return;
    };
    let dir = tmp("kwctl");
    for (what, yaml) in accepted() {
        let mut theirs =
            annotate_with(&kwctl, &dir, &yaml).unwrap_or_else(|e| panic!("kwctl, {what}: {e}"));
        let ours = annotate_with(&ours(), &dir, &yaml).unwrap();
        // The only difference: kwctl writes its own version.
        let annotations = theirs["annotations"].as_object_mut().unwrap();
        assert!(annotations.remove("io.kubewarden.kwctl").is_some());
        if annotations.is_empty() {
            theirs.as_object_mut().unwrap().remove("annotations");
        }
        assert_eq!(ours, theirs, "{what}");
    }
    for (what, yaml) in refused() {
        assert!(
            annotate_with(&kwctl, &dir, &yaml).is_err(),
            "{what}: kwctl accepts it"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

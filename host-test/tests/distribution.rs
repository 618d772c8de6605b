//! The committed distribution files are what the generator makes from each
//! policy's sources (apart from `createdAt`), carry the fields Artifact Hub and
//! Kubewarden need, and agree on the version everywhere.
//! Regenerate with `make scaffold` when a policy's metadata, README or
//! questions change.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

mod common;

use std::path::Path;

use host_test::distribution::{
    artifacthub_package, cluster_admission_policy, kustomization, plural, policies_yml,
    policy_server_rbac, Sources,
};
use serde_json::Value;

use common::root;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}; run `make scaffold`", path.display()))
}

fn sources() -> Vec<Sources> {
    catalog::POLICIES
        .iter()
        .map(|e| Sources::load(&root(), e.name).unwrap())
        .collect()
}

#[test]
fn artifacthub_packages_match_the_generator_and_carry_required_fields() {
    for s in sources() {
        let path = root()
            .join("artifacthub")
            .join(&s.name)
            .join("artifacthub-pkg.yml");
        let committed = read(&path);
        let pkg: Value = serde_norway::from_str(&committed).unwrap();
        let created_at = pkg["createdAt"].as_str().expect("createdAt");
        assert_eq!(
            committed,
            artifacthub_package(&s, created_at).unwrap(),
            "{} drifted from its sources: run `make scaffold`",
            path.display()
        );
        for field in [
            "version",
            "name",
            "displayName",
            "createdAt",
            "description",
            "license",
            "homeURL",
            "install",
        ] {
            assert!(
                pkg[field].as_str().is_some_and(|v| !v.is_empty()),
                "{}: {field} missing",
                s.name
            );
        }
        assert_eq!(pkg["version"], s.version.as_str());
        assert_eq!(pkg["containersImages"][0]["name"], "policy");
        let image = pkg["containersImages"][0]["image"].as_str().unwrap();
        assert!(image.ends_with(&format!(":v{}", s.version)), "{image}");
        assert_eq!(pkg["provider"]["name"], "kubewarden");
        assert!(!pkg["keywords"].as_array().unwrap().is_empty());
        for key in [
            "kubewarden/mutation",
            "kubewarden/rules",
            "kubewarden/questions-ui",
            "kubewarden/resources",
        ] {
            assert!(
                pkg["annotations"][key]
                    .as_str()
                    .is_some_and(|v| !v.is_empty()),
                "{}: {key}",
                s.name
            );
        }
        if !s.metadata.context_aware_resources.is_empty() {
            assert!(pkg["annotations"]["kubewarden/contextAwareResources"].is_string());
        }
        // questions-ui.yml must be YAML with a questions list, as the Rancher UI reads it.
        let questions: Value = serde_norway::from_str(&s.questions).unwrap();
        assert!(
            questions["questions"].is_array(),
            "{}: questions-ui.yml has no questions list",
            s.name
        );
    }
}

#[test]
fn deploy_manifests_match_the_generator() {
    let all = sources();
    for s in &all {
        let path = root().join("deploy").join(format!("{}.yaml", s.name));
        assert_eq!(
            read(&path),
            cluster_admission_policy(s).unwrap(),
            "{} drifted: run `make scaffold`",
            path.display()
        );
        let manifest: Value = serde_norway::from_str(&read(&path)).unwrap();
        assert_eq!(manifest["apiVersion"], "policies.kubewarden.io/v1");
        assert_eq!(
            manifest["spec"]["module"],
            format!("registry://{}", s.image())
        );
    }
    for (file, generated) in [
        ("policies.yml", policies_yml(&all).unwrap()),
        ("policy-server-rbac.yaml", policy_server_rbac(&all).unwrap()),
        ("kustomization.yaml", kustomization(&all).unwrap()),
    ] {
        let path = root().join("deploy").join(file);
        assert_eq!(
            read(&path),
            generated,
            "{} drifted: run `make scaffold`",
            path.display()
        );
    }
}

/// The policy-server may read every kind a policy looks up, by the resource
/// name the policies' own webhook rules use for it.
#[test]
fn the_lookups_are_granted_by_their_resource_names() {
    let all = sources();
    let rbac = read(&root().join("deploy/policy-server-rbac.yaml"));
    let role: Value = serde_norway::from_str(rbac.split("---\n").next().unwrap()).unwrap();
    let granted: Vec<(String, String)> = role["rules"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            let group = r["apiGroups"][0].as_str().unwrap().to_string();
            assert_eq!(r["verbs"], serde_json::json!(["get", "list", "watch"]));
            r["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |res| (group.clone(), res.as_str().unwrap().to_string()))
        })
        .collect();
    let in_rules = |group: &str, resource: &str| {
        all.iter().any(|s| {
            s.metadata.rules.iter().any(|r| {
                r.api_groups.iter().any(|g| g == group) && r.resources.iter().any(|x| x == resource)
            })
        })
    };
    for (group, resource) in &granted {
        assert!(
            in_rules(group, resource),
            "{group}/{resource}: no such resource"
        );
    }
    for s in &all {
        for r in host_test::distribution::lookups(s).unwrap().0 {
            let group = r.api_version.rsplit_once('/').map_or("", |(g, _)| g);
            let wanted = (group.to_string(), plural(&r.kind));
            assert!(
                granted.contains(&wanted),
                "{}: {wanted:?} not granted",
                s.name
            );
        }
    }
    assert_eq!(plural("GitRepository"), "gitrepositories");
    assert_eq!(plural("Kustomization"), "kustomizations");
}

#[test]
fn the_repository_file_exists() {
    let repo: Value =
        serde_norway::from_str(&read(&root().join("artifacthub/artifacthub-repo.yml"))).unwrap();
    assert!(repo["owners"].is_array());
}

//! The committed distribution files are what the generator makes from each
//! policy's sources (apart from `createdAt`), carry the fields Artifact Hub and
//! Kubewarden need, and agree on the version everywhere.
//! Regenerate with `make scaffold` when a policy's metadata, README or
//! questions change.
//!
//! Then the Flux install (README.md, "Install with Flux"): `install/`'s
//! overlays on the kustomize base `deploy/`, built by the real `kubectl
//! kustomize` (the kustomize Flux's kustomize-controller embeds), each object
//! checked against what the Kubewarden 1.37 CRD accepts, and the built
//! policies run by `check` on the fixture GitOps repository.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

#[path = "../../host-test/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;

use devtools::distribution::{
    artifacthub_package, cluster_admission_policy, kustomization, plural, policies_yml,
    policy_server_rbac, Sources,
};
use serde::Deserialize as _;
use serde_json::{json, Value};

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
        for r in devtools::distribution::lookups(s).unwrap().0 {
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

/// `kubectl kustomize <dir>`: the objects, as Flux would apply them.
fn kustomize(dir: &str) -> Vec<Value> {
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(root().join(dir))
        .output()
        .expect("kubectl is not installed: `make test-setup` installs it");
    assert!(
        out.status.success(),
        "kubectl kustomize {dir}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    documents(&String::from_utf8(out.stdout).unwrap())
}

fn documents(text: &str) -> Vec<Value> {
    serde_norway::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

fn of_kind<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a Value> {
    objects.iter().filter(|o| o["kind"] == kind).collect()
}

/// What a field of ClusterAdmissionPolicy v1's `spec` must be.
#[derive(Clone, Copy)]
enum Field {
    Bool,
    Str,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// An int32 within these bounds.
    Int(i64, i64),
    Object,
    /// A list of rules (`RuleWithOperations`).
    Rules,
    /// A list of `{apiVersion, kind}`, both required.
    Resources,
    /// A list of objects (matchConditions).
    Objects,
}

/// ClusterAdmissionPolicy `v1` (served and stored) as the CRD of Kubewarden
/// 1.37's `admission-controller` chart declares its `spec`: every property,
/// its type, enum and bounds, facts read from kubewarden/helm-charts
/// 148b1a90 (chart 6.0.2, appVersion v1.37.2),
/// `charts/admission-controller/templates/crds/policies.kubewarden.io_clusteradmissionpolicies.yaml`,
/// `versions[v1].schema.openAPIV3Schema.properties.spec`. The schema is
/// structural, so the API server drops a property it does not declare
/// without a word: here an undeclared one is an error.
const SPEC: &[(&str, Field)] = &[
    ("allowInsideAdmissionControllerNamespace", Field::Bool),
    ("backgroundAudit", Field::Bool),
    ("contextAwareResources", Field::Resources),
    ("failurePolicy", Field::Str),
    ("matchConditions", Field::Objects),
    ("matchPolicy", Field::Str),
    ("message", Field::Str),
    ("mode", Field::OneOf(&["protect", "monitor"])),
    ("module", Field::Str),
    ("mutating", Field::Bool),
    ("namespaceSelector", Field::Object),
    ("objectSelector", Field::Object),
    ("policyServer", Field::Str),
    ("rules", Field::Rules),
    ("settings", Field::Object),
    ("sideEffects", Field::Str),
    ("timeoutEvalSeconds", Field::Int(2, 30)),
    ("timeoutSeconds", Field::Int(2, 30)),
];
/// `spec.required` of the same schema.
const REQUIRED: &[&str] = &["module", "mutating", "rules"];
/// `spec.rules.items.properties`: four string lists and `scope`, a string.
const RULE_LISTS: &[&str] = &["apiGroups", "apiVersions", "operations", "resources"];

fn string_list(v: &Value) -> bool {
    v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
}

fn field_problem(field: Field, v: &Value) -> Option<String> {
    let ok = match field {
        Field::Bool => v.is_boolean(),
        Field::Str => v.is_string(),
        Field::OneOf(values) => v.as_str().is_some_and(|s| values.contains(&s)),
        Field::Int(min, max) => v.as_i64().is_some_and(|i| (min..=max).contains(&i)),
        Field::Object => v.is_object(),
        Field::Objects => v.as_array().is_some_and(|a| a.iter().all(Value::is_object)),
        Field::Rules => v.as_array().is_some_and(|rules| {
            rules.iter().all(|r| {
                r.as_object().is_some_and(|r| {
                    r.iter().all(|(k, v)| {
                        (RULE_LISTS.contains(&k.as_str()) && string_list(v))
                            || (k == "scope" && v.is_string())
                    })
                })
            })
        }),
        Field::Resources => v.as_array().is_some_and(|items| {
            items.iter().all(|r| {
                r.as_object().is_some_and(|r| {
                    r.len() == 2 && r["apiVersion"].is_string() && r["kind"].is_string()
                })
            })
        }),
    };
    (!ok).then(|| format!("{v} does not fit the schema"))
}

/// Every way `object` is not a ClusterAdmissionPolicy v1 the API server
/// would store as written.
fn schema_problems(object: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if object["apiVersion"] != "policies.kubewarden.io/v1" {
        problems.push(format!("apiVersion {}", object["apiVersion"]));
    }
    if object["metadata"]["name"]
        .as_str()
        .is_none_or(str::is_empty)
    {
        problems.push("metadata.name missing".into());
    }
    let Some(spec) = object["spec"].as_object() else {
        problems.push("no spec".into());
        return problems;
    };
    for required in REQUIRED {
        if !spec.contains_key(*required) {
            problems.push(format!("spec.{required} is required"));
        }
    }
    for (key, value) in spec {
        match SPEC.iter().find(|(k, _)| k == key) {
            None => problems.push(format!("spec.{key} is not in the CRD's schema")),
            Some((_, field)) => {
                if let Some(p) = field_problem(*field, value) {
                    problems.push(format!("spec.{key}: {p}"));
                }
            }
        }
    }
    problems
}

fn assert_valid(objects: &[Value], what: &str) {
    let policies = of_kind(objects, "ClusterAdmissionPolicy");
    assert_eq!(policies.len(), catalog::POLICIES.len(), "{what}");
    for p in policies {
        let problems = schema_problems(p);
        assert!(
            problems.is_empty(),
            "{what}: {}: {problems:?}",
            p["metadata"]["name"]
        );
    }
}

#[test]
fn the_schema_check_refuses_what_the_crd_refuses() {
    let base = kustomize("deploy");
    let good = of_kind(&base, "ClusterAdmissionPolicy")[0].clone();
    assert!(schema_problems(&good).is_empty());
    let mut bad = Vec::new();
    for (path, value) in [
        ("/spec/mode", json!("audit")),
        ("/spec/timeoutSeconds", json!(31)),
        ("/spec/mutating", json!("true")),
        ("/spec/rules/0/operations", json!("CREATE")),
        ("/spec/contextAwareResources", json!([{"kind": "Gate"}])),
        ("/spec/setings", json!({})),
    ] {
        let mut object = good.clone();
        let (parent, key) = path.rsplit_once('/').unwrap();
        object.pointer_mut(parent).unwrap()[key] = value;
        bad.push((path, schema_problems(&object)));
    }
    let mut object = good.clone();
    object["spec"].as_object_mut().unwrap().remove("rules");
    bad.push(("no rules", schema_problems(&object)));
    for (what, problems) in bad {
        assert!(!problems.is_empty(), "{what} was accepted");
    }
}

#[test]
fn the_base_and_both_overlays_build_and_fit_the_crd() {
    let base = kustomize("deploy");
    assert_valid(&base, "deploy");
    for p in of_kind(&base, "ClusterAdmissionPolicy") {
        assert!(
            p["spec"].get("mode").is_none(),
            "the base leaves mode to the overlays"
        );
    }
    // The policy-server's account may read what the policies look up.
    let binding = of_kind(&base, "ClusterRoleBinding")[0];
    assert_eq!(
        binding["subjects"][0],
        json!({"kind": "ServiceAccount", "namespace": "kubewarden", "name": "policy-server"})
    );
    assert_eq!(of_kind(&base, "ClusterRole").len(), 1);

    for mode in ["monitor", "protect"] {
        let built = kustomize(&format!("install/{mode}"));
        assert_valid(&built, mode);
        assert_eq!(
            built.len(),
            base.len(),
            "{mode}: the same objects as the base"
        );
        for p in of_kind(&built, "ClusterAdmissionPolicy") {
            let name = p["metadata"]["name"].as_str().unwrap();
            assert_eq!(p["spec"]["mode"], mode, "{name}");
            let original = of_kind(&base, "ClusterAdmissionPolicy")
                .into_iter()
                .find(|b| b["metadata"]["name"] == name)
                .unwrap();
            for key in ["module", "rules", "mutating", "contextAwareResources"] {
                assert_eq!(
                    p["spec"].get(key),
                    original["spec"].get(key),
                    "{name}.{key}"
                );
            }
        }
    }
}

/// The settings component states each policy's defaults: every value it sets
/// is its questions-ui.yml default, and nothing else is set.
#[test]
fn the_settings_component_states_the_defaults() {
    let built = kustomize("install/protect");
    for entry in catalog::POLICIES {
        let name = entry.name;
        let questions: Value = serde_norway::from_str(
            &std::fs::read_to_string(root().join(format!("policies/{name}/questions-ui.yml")))
                .unwrap(),
        )
        .unwrap();
        let defaults: Vec<(&str, &Value)> = questions["questions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| (q["variable"].as_str().unwrap(), &q["default"]))
            .collect();
        let policy = of_kind(&built, "ClusterAdmissionPolicy")
            .into_iter()
            .find(|p| p["metadata"]["name"] == name)
            .unwrap();
        let settings = policy["spec"]["settings"].as_object().unwrap();
        assert!(!settings.is_empty(), "{name}: no settings stated");
        for (key, value) in settings {
            let default = defaults.iter().find(|(v, _)| v == key).map(|(_, d)| *d);
            assert_eq!(default, Some(value), "{name}.{key} is not its default");
        }
    }
}

/// `check` on the fixture GitOps repository with the installed policies
/// (protect) gives the verdicts of the base as generated (`settings: {}`):
/// the stated settings are the policies' real defaults. (Monitor mode is
/// the same objects with `spec.mode: monitor`, checked above; a check run
/// of it would cost as much again.)
#[test]
fn check_runs_the_installed_policies() {
    let scratch = common::scratch("install-test", "built");
    let run = |policies: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_reconcile-guard"))
            .current_dir(root())
            .env_remove("GITHUB_STEP_SUMMARY")
            .args(["check", "--now", "2026-11-20T10:00:00Z", "--policies"])
            .arg(policies)
            .arg("--dist")
            .arg(root().join("dist"))
            .arg("tests/check/repo")
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let summary = stdout.lines().last().unwrap_or_default().to_string();
        assert!(
            summary.contains(" evaluations: "),
            "{}: {stdout}{}",
            policies.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        (stdout, summary)
    };
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(root().join("install/protect"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let protect = scratch.join("protect.yaml");
    std::fs::write(&protect, out.stdout).unwrap();
    let base = root().join("deploy");
    let (installed, generated) = std::thread::scope(|s| {
        let installed = s.spawn(|| run(&protect));
        let generated = s.spawn(|| run(&base));
        (installed.join().unwrap(), generated.join().unwrap())
    });
    assert_eq!(installed.0, generated.0, "protect with the stated defaults");
    assert!(!installed.1.contains(" 0 refused"), "{}", installed.1);
}

/// Each Flux Kustomization path in the README is an overlay of install/.
#[test]
fn the_readme_points_flux_at_the_overlays() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let paths: Vec<&str> = readme
        .split("path: ./")
        .skip(1)
        .map(|rest| {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '/' || c == '-'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect();
    assert!(paths.contains(&"install/monitor"), "{paths:?}");
    assert!(paths.contains(&"install/protect"), "{paths:?}");
    for path in paths {
        assert!(
            root().join(path).join("kustomization.yaml").is_file(),
            "{path}"
        );
    }
}

/// The ASO groups a policy's rules send it.
fn aso_groups(policy: &Value) -> Vec<&str> {
    let mut groups: Vec<&str> = policy["spec"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["apiGroups"].as_array().unwrap())
        .filter_map(Value::as_str)
        .filter(|g| g.ends_with(".azure.com"))
        .collect();
    groups.sort_unstable();
    groups
}

/// The recommended overlay builds, fits the CRD, and sends flux-gate every
/// ASO group aso-reconcile sees (README.md, "Recommended settings").
#[test]
fn the_recommended_overlay_builds_and_gates_every_aso_group() {
    let base = kustomize("deploy");
    let built = kustomize("install/recommended");
    assert_valid(&built, "recommended");
    assert_eq!(built.len(), base.len());
    let policy = |name: &str| {
        of_kind(&built, "ClusterAdmissionPolicy")
            .into_iter()
            .find(|p| p["metadata"]["name"] == name)
            .unwrap()
            .clone()
    };
    let (gate, aso) = (policy("flux-gate"), policy("aso-reconcile"));
    assert_eq!(gate["spec"]["mode"], "protect");
    assert!(!aso_groups(&aso).is_empty());
    assert_eq!(aso_groups(&gate), aso_groups(&aso));
    let kinds = aso["spec"]["settings"]["deletionProtection"]["kinds"]
        .as_array()
        .unwrap();
    assert!(
        kinds.iter().all(|k| k.get("version").is_none()),
        "{kinds:?}"
    );
}

/// `check` with the recommended set, on the fixture's change (reports-db
/// pruned) on a Friday in Los Angeles: the prune is refused and the ASO
/// changes wait for Saturday; with the defaults both pass.
#[test]
fn check_with_the_recommended_settings_protects_the_database_and_holds_friday() {
    let scratch = common::scratch("install-test", "recommended");
    let run = |overlay: &str| {
        let out = Command::new("kubectl")
            .arg("kustomize")
            .arg(root().join(overlay))
            .output()
            .unwrap();
        assert!(out.status.success());
        let policies = scratch.join(format!("{}.yaml", overlay.replace('/', "-")));
        std::fs::write(&policies, out.stdout).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_reconcile-guard"))
            .current_dir(root())
            .env_remove("GITHUB_STEP_SUMMARY")
            // Friday 2026-11-20 02:00 PST.
            .args(["check", "--now", "2026-11-20T10:00:00Z", "--policies"])
            .arg(&policies)
            .arg("--dist")
            .arg(root().join("dist"))
            .args(["--base", "tests/check/base", "tests/check/repo"])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let pruned = "FlexibleServer shop/reports-db: DELETE refused by aso-reconcile: FlexibleServer shop/reports-db is protected from deletion";
    let held = "FlexibleServer shop/orders-db: UPDATE refused by flux-gate: ";
    let (code, stdout, stderr) = run("install/recommended");
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stdout.contains(pruned), "{stdout}");
    assert!(stdout.contains(held), "{stdout}");
    assert!(stdout.contains("no-deploy-friday"), "{stdout}");
    let (_, stdout, stderr) = run("install/protect");
    assert!(!stdout.contains(pruned), "{stdout}{stderr}");
    assert!(!stdout.contains("refused by flux-gate"), "{stdout}");
}

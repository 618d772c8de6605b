//! `reconcile-guard check` on excerpts of public GitOps repositories, kept beside
//! the checkout in `../shared/gitops-real` (not in this repository: their
//! licences and sizes are theirs). Each test is one fixture of its README
//! with the verdict the real cluster gives. Without that folder the tests
//! say so and pass.

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

use common::root;

const FRIDAY: &str = "2026-11-27T09:00:00Z";
const THURSDAY: &str = "2026-11-26T09:00:00Z";

/// The fixtures, or `None` (said on stderr) where they are absent.
fn fixtures() -> Option<PathBuf> {
    let dir = root().join("../shared/gitops-real");
    if dir.is_dir() {
        return Some(dir.canonicalize().unwrap());
    }
    common::skipped(
        "the gitops-real fixtures",
        &format!(
            "{} is absent (they live beside the checkout)",
            dir.display()
        ),
    );
    None
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The summary's count of `what` (`objects`, `refused`, `undecided`, ...).
    fn count(&self, what: &str) -> usize {
        let line = self
            .stdout
            .lines()
            .find(|l| l.contains(" objects, ") && l.contains(" evaluations: "))
            .unwrap_or_else(|| panic!("no summary:\n{}{}", self.stdout, self.stderr));
        let words: Vec<&str> = line
            .split([' ', ',', ':'])
            .filter(|w| !w.is_empty())
            .collect();
        let at = words
            .iter()
            .position(|w| *w == what)
            .unwrap_or_else(|| panic!("no {what} in {line}"));
        words[at - 1].parse().unwrap()
    }

    fn lines(&self, finding: &str) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| l.contains(finding))
            .collect()
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}\n{}{}", self.code, self.stdout, self.stderr)
    }
}

/// `reconcile-guard check` in `dir` with the built modules; `policies` is
/// `deploy` (the project's own), `team` (the fixtures' shared settings) or
/// a path from `dir`.
fn check(dir: &Path, policies: &str, args: &[&str], stdin: &str) -> Run {
    let policies = match policies {
        "deploy" => root().join("deploy"),
        "team" => fixtures().unwrap().join("policies/team"),
        other => dir.join(other),
    };
    let mut command = Command::new(env!("CARGO_BIN_EXE_reconcile-guard"));
    command
        .current_dir(dir)
        .arg("check")
        .arg("--dist")
        .arg(root().join("dist"))
        .arg("--policies")
        .arg(policies)
        .args(args);
    let (code, stdout, stderr) = common::run_with_stdin(&mut command, stdin);
    Run {
        code,
        stdout,
        stderr,
    }
}

/// `check` in a fixture's folder; `None` where the fixtures are absent.
fn fixture(folder: &str, policies: &str, args: &[&str]) -> Option<Run> {
    Some(check(&fixtures()?.join(folder), policies, args, ""))
}

/// The exit code and the summary's counts.
fn verdict(run: &Run, code: i32, counts: &[(&str, usize)]) {
    assert_eq!(run.code, code, "{run:?}");
    for (what, n) in counts {
        assert_eq!(run.count(what), *n, "{what}: {run:?}");
    }
}

/// F1: `clusters/production` as flux bootstrap writes it; its
/// `kustomization.yaml` is kustomize's build file, and the Kustomizations
/// read ExternalArtifacts, which are not this repository's folders.
#[test]
fn f1_a_cluster_folder_is_built_not_read_as_objects() {
    let folder = "flux2-kustomize-helm-example/canonical-layout";
    let Some(run) = fixture(folder, "deploy", &["production"]) else {
        return;
    };
    verdict(&run, 0, &[("objects", 4), ("refused", 0), ("warnings", 0)]);
    // The note names the folder the ArtifactGenerator copies, and how to
    // check it.
    assert!(
        run.stderr.contains("note: Kustomization flux-system/apps builds from ExternalArtifact flux-system/apps, not from this repository: its objects are not checked; where a folder holds that source's content, check them with `reconcile-guard check --source 'ExternalArtifact/flux-system/apps=FOLDER' "),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("; ArtifactGenerator flux-system/flux-system copies its path from this repository's apps/production: check that with `check --kustomization flux-system/apps apps/production`"),
        "{run:?}"
    );
}

/// F2: the fixture as given has no kustomization file (the example's name
/// the patch; the excerpt left them out), so Flux builds each folder with
/// the kustomization fluxcd/pkg's generator writes: every YAML file under it
/// is a resource (`scanManifests`). A Kustomization of `apps/production`
/// applies the patch file as it is, a HelmRelease of the patch's fields
/// only (the CRD's schema, which check does not read, refuses it before
/// admission); one of `apps` as a whole fails where kustomize meets the
/// same HelmRelease twice.
#[test]
fn f2_a_folder_without_kustomization_lists_every_file() {
    let Some(f) = fixtures() else { return };
    let apps = f.join("flux2-kustomize-helm-example/patch-as-object/apps");
    // `apps` holds no YAML of its own: `base` and `production` are judged
    // on their own, the one HelmRelease in each.
    let run = check(apps.parent().unwrap(), "deploy", &["apps"], "");
    verdict(&run, 0, &[("objects", 4), ("refused", 0)]);
    let cases = common::scratch("gitops-real", "f2-cases");
    let args = ["--save-cases", cases.to_str().unwrap(), "apps/production"];
    let run = check(apps.parent().unwrap(), "deploy", &args, "");
    verdict(&run, 0, &[("objects", 1), ("refused", 0)]);
    let case = conformance::case::load_case(
        &cases.join("flux-suspend/create-helmrelease-podinfo-podinfo.yaml"),
    )
    .unwrap();
    let spec = &case.admission_request()["object"]["spec"];
    assert_eq!(
        spec["values"]["httpRoute"]["hostnames"],
        serde_json::json!(["podinfo.production"])
    );
    assert_eq!(spec["chart"]["spec"]["chart"], serde_json::Value::Null);
    // A cluster whose Kustomization applies `./apps` from this repository
    // (our own entry point beside the fixture's files, unchanged).
    let repo = common::scratch("gitops-real", "f2-repo");
    std::fs::create_dir_all(repo.join("clusters/c")).unwrap();
    copy_tree(&apps, &repo.join("apps"));
    std::fs::write(
        repo.join("clusters/c/apps.yaml"),
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 1h\n  path: ./apps\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
    )
    .unwrap();
    // Its build fails: a finding on the Kustomization, as
    // kustomize-controller reports it.
    let run = check(&repo, "deploy", &["clusters/c"], "");
    assert_eq!(run.code, 1, "{run:?}");
    for said in [
        "clusters/c/apps.yaml:1 (document 1): Kustomization flux-system/apps: CREATE not applied by kustomize-controller: its build fails, so nothing of it is applied or pruned (Ready=False, reason BuildFailed): kustomize build of apps failed",
        "may not add resource with an already registered id: HelmRelease.v2.helm.toolkit.fluxcd.io/podinfo.podinfo",
    ] {
        assert!(run.stdout.contains(said), "{said}: {run:?}");
    }
}

/// F2, as in the example repository: a strategic-merge patch is no object
/// of its own once the folder that uses it is built, and the fixture's
/// expected verdict (one HelmRelease, base and patch, no findings) holds.
/// The example's kustomization files, which name the patch and which the
/// excerpt leaves out, are written here (our own, the same shape).
#[test]
fn f2_with_the_examples_kustomization_files_the_patch_merges_into_its_release() {
    let Some(f) = fixtures() else { return };
    let from = f.join("flux2-kustomize-helm-example/patch-as-object/apps");
    let dir = common::scratch("gitops-real", "f2");
    for file in [
        "base/podinfo/namespace.yaml",
        "base/podinfo/release.yaml",
        "base/podinfo/repository.yaml",
        "production/podinfo-values.yaml",
    ] {
        let to = dir.join("apps").join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from.join(file), to).unwrap();
    }
    let kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n";
    std::fs::write(
        dir.join("apps/base/podinfo/kustomization.yaml"),
        format!("{kustomization}resources:\n- namespace.yaml\n- repository.yaml\n- release.yaml\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("apps/production/kustomization.yaml"),
        format!("{kustomization}resources:\n- ../base/podinfo\npatches:\n- path: podinfo-values.yaml\n  target:\n    kind: HelmRelease\n"),
    )
    .unwrap();
    let cases = dir.join("cases");
    let args = ["--save-cases", cases.to_str().unwrap(), "apps/production"];
    let run = check(&dir, "deploy", &args, "");
    // Namespace, HelmRepository and the one HelmRelease, patched.
    verdict(&run, 0, &[("objects", 3), ("refused", 0)]);
    let case = conformance::case::load_case(
        &cases.join("flux-suspend/create-helmrelease-podinfo-podinfo.yaml"),
    )
    .unwrap();
    let object = &case.admission_request()["object"];
    assert_eq!(
        object["spec"]["values"]["httpRoute"]["hostnames"],
        serde_json::json!(["podinfo.production"])
    );
    assert_eq!(object["spec"]["chart"]["spec"]["chart"], "podinfo");
    assert_eq!(
        object["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"],
        "flux-system"
    );
}

/// Copies a folder's files (the fixtures are read-only; copies are not).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::write(&target, std::fs::read(&path).unwrap()).unwrap();
        }
    }
}

/// F3: `check clusters` judges each cluster on its own.
#[test]
fn f3_each_cluster_is_judged_on_its_own() {
    let folder = "flux2-kustomize-helm-example/two-clusters";
    let Some(run) = fixture(folder, "deploy", &["clusters"]) else {
        return;
    };
    verdict(&run, 0, &[("objects", 2), ("refused", 0)]);
}

/// F4a-c: every write of the Kustomization that applies the change is held
/// on Friday, whether or not it is named and whether or not the cluster's
/// Kustomizations are recorded.
#[test]
fn f4_a_friday_change_is_held_with_or_without_flags() {
    let owner = ["--kustomization", "flux-system/infra-controllers"];
    for extra in [
        &[owner[0], owner[1], "--context", "context.yaml"][..],
        &owner[..],
        &[][..],
    ] {
        let mut args = vec!["--now", FRIDAY];
        args.extend(extra);
        args.extend(["--base", "base.yaml", "head.yaml"]);
        let folder = "flux2-kustomize-helm-example/friday-freeze-7c6e245";
        let Some(run) = fixture(folder, "team", &args) else {
            return;
        };
        verdict(&run, 1, &[("refused", 11), ("undecided", 0)]);
        for held in [
            "Namespace envoy-gateway-system: CREATE refused by flux-gate",
            "HelmRelease cert-manager/cert-manager: UPDATE refused by flux-gate",
            "Namespace ingress-nginx: DELETE refused by flux-gate",
        ] {
            assert_eq!(run.lines(held).len(), 1, "{held} {extra:?} {run:?}");
        }
    }
}

/// F5 and M1: an apiVersion upgrade alone is no change under the freeze.
#[test]
fn f5_m1_an_api_version_upgrade_alone_changes_nothing() {
    for (folder, owner, base, head) in [
        (
            "flux2-kustomize-helm-example/api-upgrade-386ef74",
            "flux-system/apps",
            "base.yaml",
            "head.yaml",
        ),
        (
            "flux2-monitoring-example/ocirepository-v1beta2-to-v1",
            "flux-system/monitoring-controllers",
            "base",
            "head",
        ),
    ] {
        let args = [
            "--now",
            FRIDAY,
            "--missing-means-absent",
            "--kustomization",
            owner,
            "--base",
            base,
            head,
        ];
        let Some(run) = fixture(folder, "team", &args) else {
            return;
        };
        verdict(&run, 0, &[("refused", 0)]);
    }
}

/// F6: YAML is read as kustomize reads it.
#[test]
fn f6_yaml_forms_read_as_kustomize_reads_them() {
    let folder = "flux2-kustomize-helm-example/yaml-forms";
    // A merge key expands: the suspension is there, with a placeholder reason.
    let Some(run) = fixture(folder, "deploy", &["merge-key.yaml"]) else {
        return;
    };
    verdict(&run, 1, &[("refused", 1)]);
    assert_eq!(
        run.lines("CREATE refused by flux-suspend").len(),
        1,
        "{run:?}"
    );
    assert!(!run.stdout.contains("must be a string"), "{run:?}");
    // A byte-order mark is not content.
    let Some(run) = fixture(folder, "deploy", &["bom.yaml"]) else {
        return;
    };
    verdict(&run, 0, &[("objects", 1)]);
    // A key written twice, and two documents without `---`, are refused.
    for (file, key) in [
        ("duplicate-key.yaml", "name"),
        ("concatenated-without-separator.yaml", "apiVersion"),
    ] {
        let Some(run) = fixture(folder, "deploy", &[file]) else {
            return;
        };
        assert_eq!(run.code, 2, "{file} {run:?}");
        let duplicate = format!("duplicate entry with key \"{key}\"");
        assert!(
            run.stderr.contains(&format!("{file}:")) && run.stderr.contains(&duplicate),
            "{file} {run:?}"
        );
    }
}

/// X1 and X2: a prune of an ASO object is judged on what it owns, with the
/// stored object's uid, when protected kinds carry a version.
#[test]
fn x_aso_prunes_are_judged_on_what_they_own() {
    let run = |head: &str| {
        let args = [
            "--context",
            "context-default-namespace.yaml",
            "--base",
            "base",
            head,
        ];
        fixture("azure-service-operator-samples", "policies", &args)
    };
    let Some(gone) = run("head-owners-gone") else {
        return;
    };
    verdict(&gone, 1, &[("refused", 2)]);
    for (owner, owned) in [
        (
            "ResourceGroup default/aso-sample-rg: DELETE refused by aso-reconcile",
            "the protected FlexibleServer \"asosampleserver20250801\"",
        ),
        (
            "Namespace default/aso-namespace: DELETE refused by aso-reconcile",
            "the protected NamespacesQueue \"samplequeue\"",
        ),
    ] {
        let lines = gone.lines(owner);
        assert_eq!(lines.len(), 1, "{owner} {gone:?}");
        assert!(lines[0].contains(owned), "{owner} {gone:?}");
    }
    let Some(database) = run("head-database-gone") else {
        return;
    };
    verdict(&database, 0, &[("refused", 0)]);
}

/// S1: a `servicebus.azure.com` Namespace is namespaced (its group says so).
#[test]
fn s1_scope_comes_from_the_group_not_the_kind_name() {
    let folder = "sds-flux-config/servicebus-namespace-kind";
    let Some(run) = fixture(folder, "deploy", &["two-namespaces-same-name.yaml"]) else {
        return;
    };
    verdict(&run, 0, &[("objects", 2), ("warnings", 2)]);
    for ns in ["opal", "juror"] {
        let line = format!("Namespace {ns}/opal-servicebus-dev: CREATE warning by aso-reconcile");
        assert_eq!(run.lines(&line).len(), 1, "{ns} {run:?}");
    }
}

/// S2: the prune of a protected servicebus Namespace is refused; beside a
/// core Namespace, its kind is printed with its group.
#[test]
fn s2_a_protected_servicebus_namespace_prune_is_refused() {
    let folder = "sds-flux-config/servicebus-namespace-kind/delete";
    let Some(run) = fixture(folder, "../policies", &["--base", "base", "head"]) else {
        return;
    };
    verdict(&run, 1, &[("refused", 1)]);
    let line =
        "Namespace.servicebus.azure.com opal/opal-servicebus-dev: DELETE refused by aso-reconcile";
    assert_eq!(run.lines(line).len(), 1, "{run:?}");
}

/// S3: re-keying a SOPS file changes nothing the cluster sees. S4: a label
/// left empty is the empty string the API server hands on.
#[test]
fn s3_s4_what_the_api_server_receives() {
    let args = [
        "--now",
        FRIDAY,
        "--missing-means-absent",
        "--kustomization",
        "flux-system/toffee",
        "--base",
        "base",
        "head",
    ];
    let Some(run) = fixture("sds-flux-config/sops-updatekeys", "team", &args) else {
        return;
    };
    verdict(&run, 0, &[("refused", 0)]);
    // Derived: the value re-encrypted, as `sops rotate` re-encrypts every
    // value under a new data key. check cannot decrypt it: no change is
    // judged, and a note says so.
    let f = fixtures().unwrap().join("sds-flux-config/sops-updatekeys");
    let dir = common::scratch("gitops-real", "s3-rotate");
    copy_tree(&f, &dir);
    let head = dir.join("head/postgres.enc.yaml");
    let text = std::fs::read_to_string(&head).unwrap();
    let from = text.find("ENC[AES256_GCM,data:").unwrap() + "ENC[AES256_GCM,data:".len();
    std::fs::write(&head, format!("{}A{}", &text[..from], &text[from + 1..])).unwrap();
    let run = check(&dir, "team", &args, "");
    verdict(&run, 0, &[("refused", 0)]);
    assert!(
        run.stderr.contains("note: Secret toffee/postgres (head/postgres.enc.yaml:1 (document 1)) is SOPS-encrypted and its ciphertext changed"),
        "{run:?}"
    );
    let label = ["namespace.rendered.yaml"];
    let Some(run) = fixture("sds-flux-config/null-label", "deploy", &label) else {
        return;
    };
    verdict(&run, 0, &[("refused", 0)]);
}

/// S5 and S6: ASO objects detached on delete warn; on Friday the Secret's
/// prune is held.
#[test]
fn s5_s6_toffee_cleanup() {
    let folder = "sds-flux-config/toffee-cleanup-97b4fc6848";
    for (now, code, refused) in [(THURSDAY, 0, 0), (FRIDAY, 1, 1)] {
        let args = [
            "--now",
            now,
            "--missing-means-absent",
            "--kustomization",
            "flux-system/toffee",
            "--base",
            "base.yaml",
            "head.yaml",
        ];
        let Some(run) = fixture(folder, "team", &args) else {
            return;
        };
        verdict(&run, code, &[("refused", refused), ("warnings", 3)]);
        assert_eq!(run.lines("detach-on-delete").len(), 2, "{run:?}");
        let held = run.lines("Secret toffee/postgres: DELETE refused by flux-gate");
        assert_eq!(held.len(), refused, "{run:?}");
    }
}

/// P1-P3: podinfo's kustomize folder is built; a Helm chart template is no
/// manifest (Flux's own build of such a folder fails the same way) unless a
/// `.sourceignore` leaves it out; an empty input fails, and the requested
/// report is still written.
#[test]
fn p_podinfo_and_empty_input() {
    let Some(run) = fixture("podinfo", "deploy", &["kustomize"]) else {
        return;
    };
    verdict(&run, 0, &[("objects", 3)]);
    let friday = ["--now", FRIDAY, "--missing-means-absent", "kustomize"];
    let Some(run) = fixture("podinfo", "team", &friday) else {
        return;
    };
    verdict(&run, 1, &[("refused", 3)]);
    let Some(run) = fixture("podinfo", "deploy", &["chart-template"]) else {
        return;
    };
    assert_eq!(run.code, 1, "{run:?}");
    let fails = "chart-template:0 (document 0): Kustomization flux-system/flux-system: CREATE not applied by kustomize-controller: its build fails, so nothing of it is applied or pruned (Ready=False, reason BuildFailed): failed to decode Kubernetes YAML from ./certificate.yaml";
    assert!(run.stdout.contains(fails), "{run:?}");
    // The repository as a whole: the chart's build fails the same way, the
    // rest is judged; a `.sourceignore` (our own, beside a copy) leaves the
    // chart out of the artifact, as source-controller does.
    let dir = common::scratch("gitops-real", "p2");
    copy_tree(&fixtures().unwrap().join("podinfo"), &dir);
    let run = check(&dir, "deploy", &["."], "");
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains(fails), "{run:?}");
    verdict(&run, 1, &[("objects", 3)]);
    std::fs::write(dir.join(".sourceignore"), "# Helm chart\nchart-template/\n").unwrap();
    let run = check(&dir, "deploy", &["."], "");
    verdict(&run, 0, &[("objects", 3)]);
    assert!(
        run.stderr
            .contains("note: ./chart-template is left out of the repository's artifact"),
        "{run:?}"
    );
    let out = common::scratch("gitops-real", "p3").join("check.sarif");
    let sarif = ["--format", "sarif", "-o", out.to_str().unwrap(), "-"];
    let Some(run) = fixture("podinfo", "deploy", &sarif) else {
        return;
    };
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("no object read from -"), "{run:?}");
    let log: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );
}

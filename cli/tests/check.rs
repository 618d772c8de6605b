//! `reconcile-guard check` on the fixture GitOps repository under tests/check:
//! every planted finding, in every output format, from one revision and from
//! a change between two (files and git revisions).

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
use std::process::{Command, Stdio};

const NOW: &str = "2026-11-20T10:00:00Z";

use common::root;

/// Runs `check` in `dir` with the fixture's policies and the built modules.
fn check_in(dir: &Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    common::run_with_stdin(&mut command_in(dir, args), stdin)
}

/// The `check` command in `dir`, outside any GitHub Actions step summary.
fn command_in(dir: &Path, args: &[&str]) -> Command {
    let root = root();
    let policies = root.join("tests/check/policies.yaml");
    let dist = root.join("dist");
    let mut command = Command::new(env!("CARGO_BIN_EXE_reconcile-guard"));
    command
        .current_dir(dir)
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(["check", "--now", NOW]);
    if !args.contains(&"--policies") {
        command.arg("--policies").arg(&policies);
    }
    command.arg("--dist").arg(&dist).args(args);
    command
}

fn check(args: &[&str]) -> (i32, String, String) {
    check_in(&root(), args, "")
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(root().join("tests/check/expected").join(name)).unwrap()
}

/// The finding lines of a text report (a message may span lines), without
/// where each object was written.
fn findings_without_origin(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.contains(" objects, ") && line.contains(" evaluations: ") {
            continue;
        }
        if let Some((_, rest)) = line.split_once(" (document ") {
            let rest = rest.split_once("): ").unwrap().1;
            out.push(rest.to_string());
        } else if let Some(last) = out.last_mut() {
            last.push('\n');
            last.push_str(line);
        }
    }
    out.sort();
    out
}

#[test]
fn every_planted_finding_of_one_revision_is_reported() {
    let (code, stdout, stderr) = check(&["tests/check/repo"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout, expected("create.txt"));
}

#[test]
fn a_change_between_two_revisions_is_updates_and_deletes() {
    let (code, stdout, stderr) = check(&["--base", "tests/check/base", "tests/check/repo"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout, expected("change.txt"));
    // --no-prune leaves the deletion of reports-db out.
    let (_, unpruned, _) = check(&[
        "--no-prune",
        "--base",
        "tests/check/base",
        "tests/check/repo",
    ]);
    assert!(stdout.contains("DELETE refused by aso-reconcile"));
    assert!(!unpruned.contains("DELETE"), "{unpruned}");
}

#[test]
fn a_git_revision_is_the_same_base_as_its_files() {
    let dir = tempdir("git");
    let git = |args: &[&str]| git_in(&dir, args);
    git(&["init", "-q"]);
    copy_dir(&root().join("tests/check/base"), &dir.join("gitops"));
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    std::fs::remove_dir_all(dir.join("gitops")).unwrap();
    copy_dir(&root().join("tests/check/repo"), &dir.join("gitops"));
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "head"]);
    let (code, from_git, stderr) = check_in(&dir, &["--base-revision", "HEAD~1", "gitops"], "");
    assert_eq!(code, 1, "{stderr}");
    assert!(
        from_git.contains("HEAD~1:gitops/infra/shop.yaml:26 (document 4)"),
        "{from_git}"
    );
    let (_, from_files, _) = check(&["--base", "tests/check/base", "tests/check/repo"]);
    // The fixes name the files each run read.
    let from_git = from_git
        .replace("HEAD~1:gitops/", "tests/check/base/")
        .replace("gitops/", "tests/check/repo/");
    assert_eq!(
        findings_without_origin(&from_git),
        findings_without_origin(&from_files)
    );
    // In GitHub's format the DELETE points at the file that held the object
    // in the base; the unchanged HelmRelease's warning is counted, not
    // annotated; the step summary repeats every annotation.
    let summary = dir.join("step-summary.md");
    let args = ["--format", "github", "--base-revision", "HEAD~1", "gitops"];
    let mut command = command_in(&dir, &args);
    command.env("GITHUB_STEP_SUMMARY", &summary);
    let (code, annotations, stderr) = common::run_with_stdin(&mut command, "");
    assert_eq!(code, 1, "{stderr}");
    assert!(
        annotations.contains("::error file=gitops/infra/shop.yaml,line=26,title=aso-reconcile refused DELETE%3A FlexibleServer shop/reports-db::"),
        "{annotations}"
    );
    assert!(!annotations.contains("podinfo"), "{annotations}");
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(
        markdown.matches("\n- **").count(),
        annotations.lines().count(),
        "{markdown}"
    );
    assert!(
        markdown.contains("2 warnings, 0 changed (2 on objects this change leaves as they were, not repeated) (failed)"),
        "{markdown}"
    );
}

#[test]
fn stdin_reads_like_the_files() {
    let mut stream = String::new();
    for file in [
        "apps/apps.yaml",
        "apps/payments.yaml",
        "apps/podinfo.yaml",
        "infra/shop.yaml",
        "infra/billing.yaml",
    ] {
        stream.push_str("---\n");
        stream.push_str(
            &std::fs::read_to_string(root().join("tests/check/repo").join(file)).unwrap(),
        );
    }
    let (code, stdout, _) = check_in(&root(), &["-"], &stream);
    assert_eq!(code, 1);
    let (_, files, _) = check(&["tests/check/repo"]);
    assert_eq!(
        findings_without_origin(&stdout),
        findings_without_origin(&files)
    );
    assert!(stdout.contains("-:"), "{stdout}");
}

#[test]
fn a_recorded_namespace_decides_what_the_manifests_cannot() {
    let dir = tempdir("context");
    let context = dir.join("context.yaml");
    std::fs::write(
        &context,
        "- apiVersion: v1\n  kind: Namespace\n  name: billing\n  object:\n    apiVersion: v1\n    \
         kind: Namespace\n    metadata:\n      name: billing\n      annotations:\n        \
         serviceoperator.azure.com/reconcile-policy: detach-on-delete\n",
    )
    .unwrap();
    let (_, undecided, _) = check(&["tests/check/repo/infra/billing.yaml"]);
    assert!(
        undecided
            .contains("undecided by aso-reconcile: aso-reconcile looked up v1 Namespace billing"),
        "{undecided}"
    );
    let (code, decided, stderr) = check(&[
        "--context",
        context.to_str().unwrap(),
        "tests/check/repo/infra/billing.yaml",
    ]);
    assert_eq!(code, 0, "{decided}{stderr}");
    assert!(decided.contains("warning by aso-reconcile"), "{decided}");
    assert!(decided.contains("detach-on-delete"), "{decided}");
    assert!(!decided.contains("undecided by"), "{decided}");
    // Treating it as absent decides too, as the warning says.
    let (code, absent, _) = check(&[
        "--missing-means-absent",
        "tests/check/repo/infra/billing.yaml",
    ]);
    assert_eq!(code, 0, "{absent}");
    // Warnings fail only when asked to.
    let (code, _, _) = check(&[
        "--missing-means-absent",
        "--warnings-as-errors",
        "tests/check/repo/infra/billing.yaml",
    ]);
    assert_eq!(code, 1);
}

/// policy-server's own policies.yml (no webhook rules: the modules' metadata
/// rules) judges the repository as the ClusterAdmissionPolicies in deploy/ do.
#[test]
fn a_policies_yml_judges_as_the_cluster_admission_policies() {
    let (code, from_yml, stderr) =
        check(&["--policies", "deploy/policies.yml", "tests/check/repo"]);
    assert_eq!(code, 1, "{stderr}");
    let (_, from_manifests, _) = check(&["--policies", "deploy", "tests/check/repo"]);
    assert_eq!(from_yml, from_manifests);
    assert!(
        from_yml.ends_with(
            "8 objects, 16 evaluations: 3 refused, 0 failed, 1 undecided, 2 warnings, 0 changed\n"
        ),
        "{from_yml}"
    );
}

#[test]
fn github_annotations_point_at_the_lines() {
    let (code, stdout, _) = check(&["--format", "github", "tests/check/repo"]);
    assert_eq!(code, 1);
    assert_eq!(stdout, expected("create.github"));
    // A multi-line message stays on its command's line.
    assert!(stdout.lines().all(|l| l.starts_with("::")), "{stdout}");
}

#[test]
fn junit_has_a_suite_per_policy_and_a_case_per_evaluation() {
    let (code, stdout, _) = check(&["--format", "junit", "tests/check/repo"]);
    assert_eq!(code, 1);
    let doc = roxmltree::Document::parse(&stdout).unwrap();
    let suites: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .map(|s| {
            (
                s.attribute("name").unwrap().to_string(),
                s.attribute("tests").unwrap().to_string(),
                s.attribute("failures").unwrap().to_string(),
            )
        })
        .collect();
    let strs = |v: &[(&str, &str, &str)]| -> Vec<(String, String, String)> {
        v.iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect()
    };
    assert_eq!(
        suites,
        strs(&[
            ("aso-reconcile", "4", "2"),
            ("flux-suspend", "3", "1"),
            ("flux-event-metadata", "4", "1"),
        ])
    );
    let failures = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    assert_eq!(failures, 4);
    let top = doc.root_element();
    assert_eq!(top.attribute("tests"), Some("11"));
    assert_eq!(top.attribute("failures"), Some("4"));
}

#[test]
fn sarif_is_valid_against_its_schema() {
    let dir = tempdir("sarif");
    let file = dir.join("check.sarif");
    let (code, _, stderr) = check(&[
        "--format",
        "sarif",
        "-o",
        file.to_str().unwrap(),
        "tests/check/repo",
    ]);
    assert_eq!(code, 1, "{stderr}");
    let out = Command::new("node")
        .current_dir(root())
        .arg("tests/check/validate-sarif.cjs")
        .arg(&file)
        .output()
        .expect("node (make test-setup installs the npm packages)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let log: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 6);
    let errors: Vec<_> = results
        .iter()
        .filter(|r| r["level"] == "error")
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap(),
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap(),
                r["locations"][0]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap(),
            )
        })
        .collect();
    assert_eq!(
        errors,
        [
            ("flux-suspend", "tests/check/repo/apps/payments.yaml", 1),
            (
                "flux-event-metadata",
                "tests/check/repo/apps/podinfo.yaml",
                1
            ),
            ("aso-reconcile", "tests/check/repo/infra/billing.yaml", 3),
            ("aso-reconcile", "tests/check/repo/infra/shop.yaml", 14),
        ]
    );
}

/// Runs git in `dir`, as a committer of the fixture.
fn git_in(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
        .args(args)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn tempdir(name: &str) -> PathBuf {
    common::scratch("check-tests", name)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every evaluation saved as a corpus case answers the same natively, in the
/// harness and, where they are installed, in the real kwctl and
/// policy-server: check's messages are the admission path's.
#[test]
fn saved_cases_replay_and_the_real_engines_agree() {
    let dir = tempdir("cases");
    let cases = dir.join("cases");
    for args in [
        vec!["tests/check/repo"],
        vec!["--base", "tests/check/base", "tests/check/repo"],
    ] {
        let mut all = vec!["--save-cases", cases.to_str().unwrap()];
        all.extend(args);
        let (code, _, stderr) = check(&all);
        assert_eq!(code, 1, "{stderr}");
    }
    let saved = conformance::load_cases(&cases).unwrap();
    // 11 evaluations of the head alone (CREATEs), 12 of the change.
    assert_eq!(
        saved.len(),
        23,
        "{:?}",
        saved.iter().map(|c| &c.id).collect::<Vec<_>>()
    );
    // The saved cases replay through the harness as `devtools replay` replays them.
    let mut modules = host_test::replay::Modules::new(&root().join("dist"));
    let limits = host_test::host::Limits::default();
    let failed: Vec<String> = saved
        .iter()
        .map(|case| host_test::replay::run_case(&mut modules, case, 1, &limits))
        .filter(|outcome| !outcome.passed())
        .map(|outcome| format!("{}: {:?}", outcome.id, outcome.problems))
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
    // `devtools conformance` compares with each engine installed and skips
    // the others; with neither, there is nothing to run.
    let what = "the saved cases through the real engine";
    let kwctl = common::engine("kwctl", "KWCTL", what);
    let server = common::engine("policy-server", "POLICY_SERVER", what);
    if kwctl.is_none() && server.is_none() {
        return;
    }
    use devtools::engines::{self, Engine};
    let options = engines::Options {
        dist: root().join("dist"),
        work: dir.join("engines"),
        engines: vec![Engine::Kwctl, Engine::PolicyServer],
        allow_list: engines::load_allow_list(&root().join("tests/engine-differences.yaml"))
            .unwrap(),
        jobs: 4,
    };
    let results = engines::run_blocking(&saved, &options).unwrap();
    assert_eq!(engines::report(&results, &saved), 0, "saved cases differ");
    assert!(engines::stale_entries(&options.allow_list, &results).is_empty());
}

/// Manifests check cannot judge are refused with where they are, exit 2.
#[test]
fn bad_manifests_are_refused_with_their_place() {
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n";
    for (stdin, message) in [
        (
            format!("{namespace}---\n{namespace}"),
            "error: -:5 (document 2): Namespace a is already written at -:1 (document 1)",
        ),
        (
            format!("{namespace}---\nkind: [\n"),
            "error: -:6: not valid YAML: did not find expected node content",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-}\n".to_string(),
            "error: -:1 (document 1): v1 ConfigMap without metadata.name",
        ),
    ] {
        let (code, _, stderr) = check_in(&root(), &["-"], &stdin);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.starts_with(message), "{stderr}");
    }
}

/// The writer, the field manager and the owner labels are what
/// kustomize-controller's apply carries.
#[test]
fn requests_carry_the_writer_and_the_kustomization() {
    let dir = tempdir("writer");
    let cases = dir.join("cases");
    let (_, _, stderr) = check(&[
        "--kustomization",
        "flux-system/apps",
        "--save-cases",
        cases.to_str().unwrap(),
        "tests/check/repo/apps/payments.yaml",
    ]);
    let case = conformance::case::load_case(
        &cases.join("flux-suspend/create-kustomization-flux-system-payments.yaml"),
    )
    .unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    let request = case.admission_request();
    assert_eq!(
        request["userInfo"],
        serde_json::json!({"username": "system:serviceaccount:flux-system:kustomize-controller",
            "groups": ["system:serviceaccounts", "system:serviceaccounts:flux-system", "system:authenticated"]})
    );
    assert_eq!(
        request["options"],
        serde_json::json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1",
            "fieldManager": "kustomize-controller"})
    );
    assert_eq!(
        request["object"]["metadata"]["labels"],
        serde_json::json!({"kustomize.toolkit.fluxcd.io/name": "apps",
            "kustomize.toolkit.fluxcd.io/namespace": "flux-system"})
    );
    assert_eq!(request["namespace"], "flux-system");
    assert_eq!(request["resource"]["resource"], "kustomizations");
}

/// The fixture fleet, laid out as Flux Operator's reference fleets: a
/// cluster under `clusters/`, its Kustomizations building `components/`.
fn fleet() -> PathBuf {
    root().join("tests/check/fleet")
}

const LEGACY: &str = "clusters/staging/legacy.yaml:3 (document 1): Kustomization flux-system/legacy: CREATE not applied by kustomize-controller: its build fails, so nothing of it is applied or pruned (Ready=False, reason ArtifactFailed): kustomization path not found: components/legacy/staging";

#[test]
fn a_kustomization_that_cannot_be_built_is_a_finding_and_the_others_are_judged() {
    let (code, stdout, stderr) = check_in(&fleet(), &["."], "");
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.contains(LEGACY), "{stdout}");
    // The other Kustomizations' objects are judged.
    assert!(
        stdout.contains("components/infra/base/shop.yaml:16 (document 3): FlexibleServer shop/orders-db: CREATE refused by aso-reconcile"),
        "{stdout}"
    );
    assert!(
        stdout.contains("components/apps/base/payments.yaml:1 (document 1): Kustomization flux-system/payments: CREATE refused by flux-suspend"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(", 1 Kustomization not applied (build failed)\n"),
        "{stdout}"
    );
    // In every format: an error annotation on the Kustomization's line.
    let (_, github, _) = check_in(&fleet(), &["--format", "github", "."], "");
    assert!(
        github.contains("::error file=clusters/staging/legacy.yaml,line=3,title=kustomize-controller not applied CREATE%3A Kustomization flux-system/legacy::"),
        "{github}"
    );
}

#[test]
fn check_starts_from_the_root_a_file_or_a_components_folder() {
    let finding_files = |stdout: &str| -> Vec<String> {
        let mut files: Vec<String> = stdout
            .lines()
            .filter_map(|l| l.split_once(" (document ").map(|(at, _)| at.to_string()))
            .collect();
        files.sort();
        files.dedup();
        files
    };
    let (code, root, stderr) = check_in(&fleet(), &["."], "");
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        finding_files(&root),
        [
            "clusters/staging/legacy.yaml:3",
            "components/apps/base/payments.yaml:1",
            "components/infra/base/shop.yaml:16",
            "components/infra/base/shop.yaml:6",
        ]
    );
    // The cluster's folder alone is the same cluster.
    let (_, cluster, _) = check_in(&fleet(), &["clusters/staging"], "");
    assert_eq!(cluster, root);
    // A file (as a pre-commit hook passes it) is judged as the cluster's
    // Kustomization builds it: its findings only.
    let (code, file, stderr) = check_in(&fleet(), &["components/infra/base/shop.yaml"], "");
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        finding_files(&file),
        [
            "components/infra/base/shop.yaml:16",
            "components/infra/base/shop.yaml:6",
        ]
    );
    let (code, folder, stderr) = check_in(&fleet(), &["components/"], "");
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        finding_files(&folder),
        [
            "components/apps/base/payments.yaml:1",
            "components/infra/base/shop.yaml:16",
            "components/infra/base/shop.yaml:6",
        ]
    );
    // A file no Kustomization builds is named, and not judged as it is.
    let (code, kustomize_file, stderr) = check_in(
        &fleet(),
        &["components/infra/staging/kustomization.yaml"],
        "",
    );
    assert_eq!(code, 0, "{kustomize_file}{stderr}");
    assert!(
        stderr.contains("no Kustomization of the repository's clusters builds an object from components/infra/staging/kustomization.yaml: nothing of it is checked"),
        "{stderr}"
    );
}

/// The fixture fleet in git: a base revision where payments had a reason,
/// shop.yaml held reports-db and legacy's folder existed with a protected
/// server, then the fixture as it is.
fn fleet_in_git(name: &str) -> PathBuf {
    let dir = tempdir(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let git = |args: &[&str]| git_in(&dir, args);
    git(&["init", "-q"]);
    copy_dir(&fleet(), &dir);
    let edit = |file: &str, from: &str, to: &str| {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file}");
        std::fs::write(&path, text.replace(from, to)).unwrap();
    };
    edit(
        "components/apps/base/payments.yaml",
        "reconcile.fluxcd.io/suspended: \"true\"",
        "reconcile.fluxcd.io/suspended: \"INC-7 the payment provider is down\"",
    );
    let server = |name: &str| {
        format!(
            "apiVersion: dbforpostgresql.azure.com/v1api20230601preview\nkind: FlexibleServer\n\
             metadata:\n  name: {name}\n  namespace: shop\nspec:\n  location: westeurope\n"
        )
    };
    let shop = dir.join("components/infra/base/shop.yaml");
    let text = std::fs::read_to_string(&shop).unwrap();
    std::fs::write(&shop, format!("{text}---\n{}", server("reports-db"))).unwrap();
    let legacy = dir.join("components/legacy/staging");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(legacy.join("db.yaml"), server("legacy-db")).unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    std::fs::remove_dir_all(dir.join("components")).unwrap();
    copy_dir(&fleet().join("components"), &dir.join("components"));
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "head"]);
    dir
}

#[test]
fn fixes_for_objects_read_from_git_are_edits_of_their_manifests() {
    let dir = fleet_in_git("fleet-git");
    let (code, stdout, stderr) = check_in(&dir, &["--base-revision", "HEAD~1", "."], "");
    assert_eq!(code, 1, "{stderr}");
    // The refused suspension names the file, the line and the annotation.
    assert!(
        stdout.contains("components/apps/base/payments.yaml:1 (document 1): Kustomization flux-system/payments: UPDATE refused by flux-suspend:"),
        "{stdout}"
    );
    assert!(
        stdout.contains("in the manifest at components/apps/base/payments.yaml:1, set metadata.annotations.reconcile.fluxcd.io/suspended: \"<ticket> <why>\" (a change in Git, not kubectl: Flux would undo it)"),
        "{stdout}"
    );
    // The refused prune keeps the manifest one more commit, with the
    // annotation that detaches or confirms.
    assert!(
        stdout.contains("HEAD~1:components/infra/base/shop.yaml:29 (document 4): FlexibleServer shop/reports-db: DELETE refused by aso-reconcile"),
        "{stdout}"
    );
    assert!(
        stdout.contains("detach it first: keep the manifest (it was at HEAD~1:components/infra/base/shop.yaml:29) and in it set metadata.annotations.serviceoperator.azure.com/reconcile-policy: \"detach-on-delete\"; once Flux has applied that, remove the manifest in a later commit."),
        "{stdout}"
    );
    assert!(!stdout.contains("kubectl annotate"), "{stdout}");
    assert!(!stdout.contains("kubectl patch"), "{stdout}");
    // legacy's build fails: Flux prunes nothing of it, so its server's
    // deletion is not judged.
    assert!(
        stdout.contains("clusters/staging/legacy.yaml:3 (document 1): Kustomization flux-system/legacy: UPDATE not applied by kustomize-controller"),
        "{stdout}"
    );
    assert!(!stdout.contains("legacy-db"), "{stdout}");
}

/// A ResourceSet's generated objects are judged as Flux Operator applies
/// them: each at the ResourceSet's file, as the ResourceSet's service
/// account with Flux Operator's field manager and owner labels; what
/// cannot be rendered is named.
#[test]
fn resource_set_objects_are_rendered_and_judged() {
    let dir = root().join("tests/check/resourceset");
    let cases = tempdir("resourceset").join("cases");
    let (code, stdout, stderr) =
        check_in(&dir, &["--save-cases", cases.to_str().unwrap(), "."], "");
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("clusters/staging/tenants.yaml:3 (document 1, item 7): FlexibleServer backend/backend-db: CREATE refused by aso-reconcile"),
        "{stdout}"
    );
    // The frontend tenant has no database: nothing else is refused.
    assert!(!stdout.contains("frontend-db"), "{stdout}");
    assert!(
        stderr.contains("note: clusters/staging/previews.yaml:2 (document 1): the objects ResourceSet flux-system/previews generates are not judged (the ResourceSet itself is): its inputs come from ResourceSetInputProvider flux-system/pull-requests (spec.inputsFrom), which the repository does not hold"),
        "{stderr}"
    );
    // What check cannot render, or Flux Operator cannot either, is a
    // finding that fails the run.
    assert!(
        stdout.contains("clusters/staging/previews.yaml:19 (document 2): ResourceSet flux-system/encoded: CREATE undecided by flux-operator: the objects it generates are not judged (the ResourceSet itself is): template uses the function b64enc, which check does not render"),
        "{stdout}"
    );
    assert!(
        stdout.contains("clusters/staging/previews.yaml:38 (document 3): ResourceSet flux-system/misnamed: CREATE not applied by flux-operator: nothing it generates is applied: Flux Operator's build fails: "),
        "{stdout}"
    );
    assert!(stdout.contains("tennant"), "{stdout}");
    // A generated Kustomization reads an OCIRepository: named, not followed.
    assert!(
        stderr.contains("note: Kustomization backend/apps builds from OCIRepository backend/apps"),
        "{stderr}"
    );
    let case = conformance::case::load_case(
        &cases.join("flux-suspend/create-kustomization-frontend-apps.yaml"),
    )
    .unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    let request = case.admission_request();
    assert_eq!(
        request["userInfo"]["username"],
        "system:serviceaccount:flux-system:tenant-admin"
    );
    assert_eq!(request["options"]["fieldManager"], "flux-operator");
    assert_eq!(
        request["object"]["metadata"]["labels"],
        serde_json::json!({"resourceset.fluxcd.controlplane.io/name": "tenants",
            "resourceset.fluxcd.controlplane.io/namespace": "flux-system"})
    );
    assert_eq!(request["object"]["spec"]["path"], "./staging");
}

/// An ExternalArtifact an ArtifactGenerator copies from this repository's
/// folder is followed there, and the note says which rule mapped it.
#[test]
fn an_artifact_generator_folder_is_followed() {
    let dir = root().join("tests/check/generator");
    let (code, stdout, stderr) = check_in(&dir, &["."], "");
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("apps/staging/db.yaml:6 (document 2): FlexibleServer shop/orders-db: CREATE refused by aso-reconcile"),
        "{stdout}"
    );
    assert!(
        stderr.contains("note: Kustomization flux-system/apps builds from ExternalArtifact apps: followed to this repository's apps/staging, which ArtifactGenerator flux-system/apps copies into it"),
        "{stderr}"
    );
}

/// An OCIRepository the repository's CI fills with `flux push artifact
/// --path` is followed to that folder, and the note names the workflow.
#[test]
fn a_folder_ci_pushes_to_an_oci_repository_is_followed() {
    let dir = root().join("tests/check/pushed");
    let (code, stdout, stderr) = check_in(&dir, &["."], "");
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("deploy/staging/db.yaml:6 (document 2): FlexibleServer shop/orders-db: CREATE refused by aso-reconcile"),
        "{stdout}"
    );
    assert!(
        stderr.contains("note: Kustomization flux-system/apps builds from OCIRepository flux-system/apps: followed to this repository's deploy/staging, as .github/workflows/push.yaml pushes deploy to oci://registry.example.com/shop/deploy"),
        "{stderr}"
    );
}

/// An ArtifactGenerator whose artifact is not one folder as it is (an
/// `exclude`, a `Merge` or `Extract` strategy, several copies) is not
/// followed: the note says its objects are not checked.
#[test]
fn an_artifact_generator_that_changes_the_folder_is_not_followed() {
    let original =
        std::fs::read_to_string(root().join("tests/check/generator/clusters/staging/apps.yaml"))
            .unwrap();
    let copy = "        - from: \"@repo/apps/**\"\n          to: \"@artifact/\"\n";
    assert!(original.contains(copy));
    for (name, changed) in [
        ("exclude", format!("{copy}          exclude: [\"*.md\"]\n")),
        ("merge", format!("{copy}          strategy: Merge\n")),
        (
            "two",
            format!("{copy}        - from: \"@repo/extra/**\"\n          to: \"@artifact/\"\n"),
        ),
    ] {
        let dir = tempdir(&format!("generator-{name}"));
        copy_dir(&root().join("tests/check/generator"), &dir);
        std::fs::write(
            dir.join("clusters/staging/apps.yaml"),
            original.replace(copy, &changed),
        )
        .unwrap();
        // (`check .` still judges apps/staging as a folder of its own.)
        let (_, _, stderr) = check_in(&dir, &["."], "");
        assert!(
            stderr.contains("note: Kustomization flux-system/apps builds from ExternalArtifact flux-system/apps, not from this repository: its objects are not checked"),
            "{name}: {stderr}"
        );
    }
    // Several copies that keep one folder's layout are that folder.
    let dir = tempdir("generator-layout");
    copy_dir(&root().join("tests/check/generator"), &dir);
    let layout = "        - from: \"@repo/apps/staging/**\"\n          to: \"@artifact/staging/\"\n        - from: \"@repo/apps/base/**\"\n          to: \"@artifact/base\"\n";
    std::fs::write(
        dir.join("clusters/staging/apps.yaml"),
        original.replace(copy, layout),
    )
    .unwrap();
    let (code, stdout, stderr) = check_in(&dir, &["."], "");
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("FlexibleServer shop/orders-db: CREATE refused by aso-reconcile"),
        "{stdout}"
    );
}

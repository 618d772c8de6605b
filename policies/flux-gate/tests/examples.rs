//! The commands flux-gate ships in its examples, run as their writer runs
//! them: admitted, and what they write outlasts the next apply of the Gate
//! from Git (`conformance::commands::check_shipped`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The documents of a multi-document YAML file.
fn documents(file: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(file).unwrap();
    serde_norway::Deserializer::from_str(&text)
        .map(|d| Value::deserialize(d).unwrap())
        .collect()
}

/// The `kubectl` command of the CronJob's `sh -c` script.
fn cronjob_command(docs: &[Value]) -> (String, String) {
    let cronjob = docs.iter().find(|d| d["kind"] == "CronJob").unwrap();
    let pod = &cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    let script = pod["containers"][0]["command"][2].as_str().unwrap();
    let account = pod["serviceAccountName"].as_str().unwrap();
    let namespace = cronjob["metadata"]["namespace"].as_str().unwrap();
    (
        script.trim().to_string(),
        format!("system:serviceaccount:{namespace}:{account}"),
    )
}

#[test]
fn the_no_deploy_friday_cronjob_closes_the_gate_past_the_next_apply() {
    let docs = documents(&root().join("examples/no-deploy-friday-cronjob.yaml"));
    let (command, username) = cronjob_command(&docs);
    assert!(command.starts_with("kubectl "), "{command}");
    // The Gate the example ships, as the corpus records its apply from Git.
    let case = conformance::case::load_case(
        &root().join("../../tests/cases/flux-gate/maintenance-gate-applied-from-git-passes.yaml"),
    )
    .unwrap();
    let gate = docs.iter().find(|d| d["kind"] == "Gate").unwrap();
    let applied = &case.request["request"]["object"];
    assert_eq!(applied["spec"]["default"], gate["spec"]["default"]);
    assert_eq!(applied["spec"]["window"], gate["spec"]["window"]);
    assert_eq!(applied["metadata"]["name"], gate["metadata"]["name"]);
    let namespace = username.split(':').nth(2).unwrap().to_string();
    let user = json!({"username": username, "groups": [
        "system:serviceaccounts", format!("system:serviceaccounts:{namespace}"),
        "system:authenticated"]});
    conformance::commands::check_shipped(&flux_gate::ENTRY, &case, &command, user).unwrap();
    // Under kubectl's default field manager the next apply would drop the
    // close request; that opens the gate from Git, so it is refused, and
    // flux-system fails at every reconcile until the window ends.
    let plain = command.replace(" --field-manager=flux-gate", "");
    let user = json!({"username": username, "groups": ["system:authenticated"]});
    let err =
        conformance::commands::check_shipped(&flux_gate::ENTRY, &case, &plain, user).unwrap_err();
    assert!(
        err.contains("the owner's next apply is refused") && err.contains("would open gate"),
        "{err}"
    );
}

//! `reconcile-guard check --policies` with a `policies.yml` entry's custom
//! rejection `message`: policy-server puts it in place of the policy's own
//! message in every refusal (kubewarden/kubewarden-controller 3460bb71,
//! `crates/policy-evaluator/src/admission_response_handler.rs`,
//! `apply_custom_rejection_message`), so that is what check reports; what is
//! allowed keeps its warnings.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

#[path = "../../host-test/tests/common/mod.rs"]
mod common;

use std::process::Command;

use common::{root, scratch};

const NOW: &str = "2026-11-20T10:00:00Z";

/// Runs check on the fixture's payments Kustomization (a placeholder
/// suspension reason flux-suspend refuses) with flux-suspend configured by
/// `policies.yml` `entry`.
fn check_payments(entry: &str) -> (i32, String) {
    let dir = scratch("check-rejection-message", "run");
    let module = root().join("dist/flux-suspend.wasm");
    let policies = dir.join("policies.yml");
    std::fs::write(
        &policies,
        format!(
            "flux-suspend:\n  module: file://{}\n  settings: {{}}\n{entry}",
            module.display()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_reconcile-guard"))
        .current_dir(root())
        .args(["check", "--now", NOW, "--policies"])
        .arg(&policies)
        .arg("--dist")
        .arg(root().join("dist"))
        .arg("tests/check/repo/apps/payments.yaml")
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn a_policies_yml_message_replaces_the_refusal_check_reports() {
    let (code, own) = check_payments("");
    assert_eq!(code, 1, "{own}");
    assert!(
        own.contains("CREATE refused by flux-suspend: The suspension reason of Kustomization"),
        "{own}"
    );
    let (code, custom) = check_payments(
        "  message: Suspending a Kustomization needs a ticket; see the platform runbook\n",
    );
    assert_eq!(code, 1, "{custom}");
    assert!(
        custom.contains(
            "CREATE refused by flux-suspend: Suspending a Kustomization needs a ticket; \
             see the platform runbook\n"
        ),
        "{custom}"
    );
    assert!(!custom.contains("The suspension reason"), "{custom}");
}

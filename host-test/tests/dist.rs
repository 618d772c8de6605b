//! The shipped modules in dist/ (made by `make build`): annotated, within
//! their size budget, and answering as Kubewarden requires.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

use std::path::PathBuf;

use host_test::harness::Policy;

/// Kubewarden's own Rust policies ship at 1.7 to 3.5 MB; ours must stay far below.
const BUDGET_BYTES: u64 = 700 * 1024;

#[test]
fn every_policy_module_is_annotated_and_under_budget() {
    let dist = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../dist");
    for entry in catalog::POLICIES {
        let path = dist.join(format!("{}.wasm", entry.name));
        let size = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run `make build` first", path.display()))
            .len();
        assert!(
            size < BUDGET_BYTES,
            "{} is {size} bytes, over the {BUDGET_BYTES} budget",
            entry.name
        );
        let policy = Policy::load(&path).unwrap();
        let meta = policy
            .metadata
            .as_ref()
            .unwrap_or_else(|| panic!("{} is not annotated", entry.name));
        assert_eq!(meta.protocol_version.as_deref(), Some("v1"));
        assert!(meta.annotations.contains_key("io.kubewarden.policy.usage"));
        assert_eq!(
            meta.version(),
            Some(env_version(entry.name).as_str()),
            "{}: metadata.yml and Cargo.toml disagree on the version",
            entry.name
        );
        assert!(
            policy
                .validate_settings(&serde_json::json!({}), guard_core::Timestamp::UNIX_EPOCH)
                .is_ok(),
            "{}: defaults must be valid",
            entry.name
        );
    }
}

/// The version in the policy's Cargo.toml, the one place it is set.
fn env_version(policy: &str) -> String {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../policies")
        .join(policy)
        .join("Cargo.toml");
    let text = std::fs::read_to_string(manifest).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap()
        .to_string()
}

/// A host clock past 2554 does not fit WASI's 64-bit nanoseconds, and
/// wasmtime-wasi 48 (`p1.rs`, `clock_time_get`) answers errno `overflow`.
/// Every policy then refuses with a 500 naming the cause: no trap, and no
/// request judged at a made-up instant.
#[test]
fn an_unreadable_wall_clock_is_a_500_refusal_naming_the_cause() {
    use conformance::response::{PolicyMode, ServerOptions};
    use host_test::capabilities::{Grants, Source};
    use host_test::harness::Evaluation;
    use host_test::host::Limits;

    let dist = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../dist");
    let request = serde_json::json!({
        "uid": "0001",
        "kind": {"group": "kustomize.toolkit.fluxcd.io", "version": "v1", "kind": "Kustomization"},
        "resource": {"group": "kustomize.toolkit.fluxcd.io", "version": "v1", "resource": "kustomizations"},
        "operation": "CREATE",
        "namespace": "apps",
        "name": "web",
        "userInfo": {"username": "alice"},
        "object": {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                   "metadata": {"name": "web", "namespace": "apps"}, "spec": {"interval": "5m"}},
    });
    for entry in catalog::POLICIES {
        let policy = Policy::load(&dist.join(format!("{}.wasm", entry.name))).unwrap();
        let eval = Evaluation {
            now: "2600-01-01T00:00:00Z".parse().unwrap(),
            limits: Limits::default(),
            source: Source::Recorded(Vec::new().into()),
            grants: Grants::all_capabilities(policy.context_aware_resources()),
            server: ServerOptions {
                policy_id: entry.name.into(),
                mode: PolicyMode::Protect,
                allowed_to_mutate: true,
                rejection_message: None,
            },
        };
        // flux-gate with no binding answers a request nothing concerns
        // unread, clock and all (`Policy::unconcerned`): give it a binding so
        // it must judge this one.
        let settings = if entry.name == "flux-gate" {
            serde_json::json!({
                "gates": [{"name": "freeze", "schedules": [{"cron": "0 0 * * FRI",
                    "timeZone": "UTC", "window": "24h", "action": "close"}]}],
                "bindings": [{"gates": ["freeze"],
                    "match": {"appliedBy": [{"kind": "Kustomization", "namespace": "flux-system"}]}}],
            })
        } else {
            serde_json::json!({})
        };
        let response = policy
            .evaluate(&request, &settings, &eval)
            .0
            .unwrap_or_else(|e| panic!("{}: {e:?}", entry.name));
        assert_eq!(response["allowed"], false, "{}", entry.name);
        assert_eq!(response["status"]["code"], 500, "{}", entry.name);
        assert_eq!(
            response["status"]["message"],
            format!(
                "{}: cannot judge the request without the wall clock: the host's \
                 clock_time_get failed with WASI errno 61 (overflow: the time does not \
                 fit in 64-bit nanoseconds)",
                entry.name
            )
        );
    }
}

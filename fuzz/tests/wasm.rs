//! The wasm engine's oracles, proved with the harness' misbehaving test
//! module (host-test/test-policy, built by `make build`): each way a module
//! can fail is the finding it should be, and a finding is minimized and
//! saved as a case file `conformance::load_cases` reads.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

#[path = "../../host-test/tests/common/mod.rs"]
mod common;

use std::time::Duration;

use guard_fuzz::engine::{self, EngineKind, Thresholds, Wasm};
use guard_fuzz::minimize::Budget;
use guard_fuzz::mutate::Input;
use guard_fuzz::oracle::{Kind, Operation};
use guard_fuzz::repro::{self, Origin};
use guard_fuzz::run;
use host_test::harness::Policy;
use host_test::host::Limits;
use host_test::metadata::{self, Metadata};
use serde_json::{json, Value};

fn test_policy() -> Wasm {
    let wasm = common::test_module();
    let meta = Metadata::from_yaml(
        r#"
rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
    operations: ["CREATE"]
mutating: false
annotations:
  io.kubewarden.policy.title: test-policy
  io.kubewarden.policy.version: 0.1.0
  io.kubewarden.policy.description: misbehaves on purpose
  io.kubewarden.policy.author: reconcile-guard developers
  io.kubewarden.policy.license: Apache-2.0
"#,
    )
    .unwrap();
    let wasm = metadata::annotate(&wasm, &meta, "v1", None).unwrap();
    Wasm {
        policy: Policy::from_bytes("test-policy".into(), &wasm).unwrap(),
        resources: Vec::new(),
        limits: Limits {
            timeout_seconds: Some(1),
            memory_bytes: Some(64 << 20),
        },
        native: None,
    }
}

fn input(behaviour: &str, object: Value) -> Input {
    Input {
        index: 7,
        seed_id: "test-policy/none".into(),
        now: "2026-11-20T10:00:00Z".parse().unwrap(),
        settings: json!({"behaviour": behaviour}),
        request: json!({
            "uid": "1",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "operation": "CREATE",
            "userInfo": {"username": "alice"},
            "object": object,
        }),
        context: Vec::new(),
        raw: None,
        settings_changed: false,
        applied: Vec::new(),
    }
}

const FAST: Thresholds = Thresholds {
    slow: Duration::from_secs(5),
    max_message: 8 << 10,
};

#[test]
fn each_failure_of_a_module_is_its_finding() {
    let wasm = test_policy();
    let small = json!({"data": {"a": "b"}});
    let kinds = |behaviour: &str| -> Vec<Kind> {
        engine::evaluate(&wasm, &input(behaviour, small.clone()), FAST)
            .iter()
            .map(|f| f.kind)
            .collect()
    };
    assert_eq!(kinds("deny"), Vec::<Kind>::new());
    assert_eq!(kinds("echo"), Vec::<Kind>::new());
    assert_eq!(kinds("panic"), [Kind::Trap]);
    assert_eq!(kinds("garbage"), [Kind::InvalidReply]);
    assert_eq!(kinds("error"), [Kind::GuestError]);
    assert_eq!(kinds("loop"), [Kind::Timeout]);
    assert_eq!(kinds("alloc"), [Kind::MemoryExhausted]);
    // The echo's message quotes the whole request.
    let big = json!({"data": {"a": "x".repeat(20_000)}});
    let findings = engine::evaluate(&wasm, &input("echo", big), FAST);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].kind, Kind::OversizedMessage);
    assert_eq!(
        findings[0].signature,
        "message echoes /request/object/data/a (string)"
    );
    // Changed settings are validated too.
    let mut changed = input("deny", small);
    changed.settings_changed = true;
    assert_eq!(engine::evaluate(&wasm, &changed, FAST), Vec::new());
    assert_eq!(
        engine::payloads(&changed).settings.unwrap(),
        br#"{"behaviour":"deny"}"#
    );
}

#[test]
fn a_trap_is_signed_by_where_it_happened() {
    let wasm = test_policy();
    let findings = engine::evaluate(&wasm, &input("panic", json!({})), FAST);
    let f = &findings[0];
    assert_eq!((f.kind, f.operation), (Kind::Trap, Operation::Validate));
    assert!(f.signature.starts_with("wasm trap at 0x"), "{f:?}");
    // Another input that panics in the same place has the same signature.
    let again = engine::evaluate(&wasm, &input("panic", json!({"x": 1})), FAST);
    assert_eq!(again[0].signature, f.signature);
}

#[test]
fn a_finding_is_minimized_and_saved_as_a_loadable_case() {
    let wasm = test_policy();
    let mut noisy = input(
        "echo",
        json!({
            "metadata": {"name": "n", "labels": {"a": "b", "c": "d"}},
            "data": {"big": "x".repeat(40_000), "other": "y".repeat(3000), "n": [1, 2, 3]},
        }),
    );
    noisy.settings = json!({"behaviour": "echo", "unused": [1, 2, 3]});
    let findings = engine::evaluate(&wasm, &noisy, FAST);
    assert_eq!(findings.len(), 1);
    let finding = &findings[0];
    let (minimized, stats) = run::minimize_input(&wasm, &noisy, finding, Budget::default(), FAST);
    assert!(stats.accepted > 0 && !stats.exhausted, "{stats:?}");
    // Only the long strings the message needs are left (hoisted out of
    // `data`), shortened until the echo is just over the bound.
    let object = minimized.request["object"].as_object().unwrap();
    let keys: Vec<&String> = object.keys().collect();
    assert!(
        !object.contains_key("metadata") && keys.len() <= 3,
        "{keys:?}"
    );
    let echoed = serde_json::to_string(&minimized.request).unwrap().len();
    assert!(echoed > 8 << 10 && echoed < 12 << 10, "{echoed}");
    assert!(minimized.settings.get("unused").is_none());
    assert!(engine::evaluate(&wasm, &minimized, FAST)
        .iter()
        .any(|f| f.same_as(finding)));

    let out = common::target()
        .join("fuzz-tests")
        .join(format!("saved-{}", std::process::id()));
    let origin = Origin {
        policy: "test-policy",
        engine: EngineKind::Wasm,
        seed: 5,
    };
    let saved = repro::save(&out, &origin, finding, &minimized).unwrap();
    assert!(saved.case_exact);
    assert!(saved.case.starts_with(out.join("test-policy")));
    let cases = conformance::load_cases(&saved.case).unwrap();
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].admission_request(), minimized.request);
    assert!(cases[0].description.contains("oversized-message"));
    assert!(!cases[0].expect.allowed);
    let payload = std::fs::read(&saved.payload).unwrap();
    assert_eq!(payload, engine::payloads(&minimized).validate);
    std::fs::remove_dir_all(&out).unwrap();
}

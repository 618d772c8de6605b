//! The harness' own tests: each policy-server behaviour it reproduces, proved
//! with a purpose-built misbehaving module (host-test/test-policy), built by
//! `make build` for wasm32-wasip1.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

mod common;

use std::time::{Duration, Instant};

use conformance::cluster::Recorded;
use conformance::response::{decoded_patch, PolicyMode, ServerOptions};
use conformance::Reply;
use guard_core::Timestamp;
use host_test::capabilities::{load_session, ContextAwareResource, Grants, Source};
use host_test::harness::{Evaluation, Policy};
use host_test::host::{Limits, TIMEOUT_MESSAGE};
use host_test::metadata::{self, Metadata};
use serde_json::{json, Value};

/// The test module annotated to be granted Namespace lookups only.
fn policy() -> Policy {
    let meta = Metadata::from_yaml(
        r#"
rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["namespaces"]
    operations: ["CREATE"]
mutating: true
contextAwareResources:
  - apiVersion: v1
    kind: Namespace
annotations:
  io.kubewarden.policy.title: test-policy
  io.kubewarden.policy.version: 0.1.0
  io.kubewarden.policy.description: misbehaves on purpose
  io.kubewarden.policy.author: reconcile-guard developers
  io.kubewarden.policy.license: Apache-2.0
"#,
    )
    .unwrap();
    let wasm = metadata::annotate(&common::test_module(), &meta, "v1", Some("usage")).unwrap();
    Policy::from_bytes("test-policy".into(), &wasm).unwrap()
}

fn now() -> Timestamp {
    "2026-11-20T10:00:00Z".parse().unwrap()
}

fn eval_with(
    mode: PolicyMode,
    allowed_to_mutate: bool,
    limits: Limits,
    source: Source,
) -> Evaluation {
    Evaluation {
        now: now(),
        limits,
        source,
        grants: Grants::all_capabilities(vec![ContextAwareResource {
            api_version: "v1".into(),
            kind: "Namespace".into(),
        }]),
        server: ServerOptions {
            policy_id: "test-policy".into(),
            mode,
            allowed_to_mutate,
            rejection_message: None,
        },
    }
}

fn eval() -> Evaluation {
    eval_with(
        PolicyMode::Protect,
        true,
        Limits::default(),
        Source::Recorded(namespace_context().into()),
    )
}

fn namespace_context() -> Vec<Recorded> {
    vec![Recorded {
        api_version: "v1".into(),
        kind: "Namespace".into(),
        namespace: String::new(),
        name: "team-a".into(),
        object: Some(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
        ),
        error: None,
    }]
}

fn request() -> Value {
    json!({
        "uid": "0001",
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "operation": "CREATE",
        "namespace": "team-a",
        "name": "cm",
        "userInfo": {"username": "alice"},
        "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "labels": {"a": "b"}}},
        "oldObject": null,
        "subResource": null,
        "options": null,
    })
}

fn run(p: &Policy, settings: Value, e: &Evaluation) -> Value {
    p.evaluate(&request(), &settings, e).0.unwrap()
}

fn status(r: &Value) -> (bool, u64, String) {
    (
        r["allowed"].as_bool().unwrap(),
        r["status"]["code"].as_u64().unwrap_or(0),
        r["status"]["message"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn answers_protocol_version_v1_and_validates_settings() {
    let p = policy();
    assert_eq!(p.protocol_version().unwrap(), "v1");
    // Like policy-server, the harness reads the version from the annotation.
    let err = Policy::from_bytes("bare".into(), &common::test_module())
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .starts_with("Policy is missing protocol version"),
        "{err}"
    );
    assert!(p.validate_settings(&json!({}), now()).is_ok());
    let err = p
        .validate_settings(&json!({"behaviour": "invalid-settings"}), now())
        .unwrap_err();
    assert_eq!(err.to_string(), "behaviour: invalid-settings is refused");
}

/// The instant at which the test policy's `wapc_init` traps.
fn init_trap_instant() -> Timestamp {
    "2000-01-01T00:00:00Z".parse().unwrap()
}

/// A module that traps in `wapc_init`: at boot, policy-server's settings
/// validation rehydrates it and fails, so policy-server does not start; a
/// rehydration that fails later, for a request, is HTTP 500 "Something went
/// wrong" whatever the mode (see `harness::rehydrate_failure` for the sources).
#[test]
fn a_module_that_traps_in_wapc_init_is_answered_as_policy_server_does() {
    let p = policy();
    let err = p
        .validate_settings(&json!({}), init_trap_instant())
        .unwrap_err()
        .to_string();
    let expected = "policy-server does not start: WebAssembly failure: cannot rehydrate \
                    PolicyEvaluatorPre: unable to rehydrate wapc module: cannot build Wapc host: \
                    Initialization failed: Initialization failed: ";
    assert!(err.starts_with(expected), "{err}");
    // wasmtime-provider keeps the trap's Display: its backtrace, not its cause.
    assert!(
        err[expected.len()..].starts_with("error while executing at wasm backtrace:"),
        "{err}"
    );
    assert!(p.validate_settings(&json!({}), now()).is_ok());
    for mode in [PolicyMode::Protect, PolicyMode::Monitor] {
        let mut e = eval_with(
            mode,
            true,
            Limits::default(),
            Source::Recorded(Vec::new().into()),
        );
        e.now = init_trap_instant();
        let failure = p.evaluate(&request(), &json!({}), &e).0.unwrap_err();
        assert_eq!(failure.status, 500);
        assert!(
            failure.reason.starts_with(&format!(
                "Something went wrong; its log: Evaluation error: {}",
                expected.trim_start_matches("policy-server does not start: ")
            )),
            "{failure}"
        );
    }
    // A second later it initialises again.
    let e = eval();
    assert_eq!(run(&p, json!({}), &e)["allowed"], true);
}

#[test]
fn an_endless_loop_is_interrupted_at_the_deadline() {
    let p = policy();
    let limits = Limits {
        timeout_seconds: Some(1),
        ..Limits::default()
    };
    let e = eval_with(
        PolicyMode::Protect,
        true,
        limits,
        Source::Recorded(vec![].into()),
    );
    let start = Instant::now();
    let r = run(&p, json!({"behaviour": "loop"}), &e);
    // One tick a second: a one-second deadline cuts the call within a second.
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(status(&r), (false, 500, TIMEOUT_MESSAGE.to_string()));
    assert_eq!(r["uid"], "0001");
}

#[test]
fn unbounded_allocation_stops_at_the_memory_cap() {
    let p = policy();
    assert_eq!(
        Limits::default().memory_bytes,
        None,
        "policy-server has no cap"
    );
    let limits = Limits {
        memory_bytes: Some(32 << 20),
        ..Limits::default()
    };
    let e = eval_with(
        PolicyMode::Protect,
        true,
        limits,
        Source::Recorded(vec![].into()),
    );
    let (allowed, code, message) = status(&run(&p, json!({"behaviour": "alloc"}), &e));
    assert!(!allowed);
    assert_eq!(code, 500);
    assert!(message.contains("memory limit of 32 MiB"), "{message}");
}

#[test]
fn after_a_trap_the_next_evaluation_works() {
    let p = policy();
    let (allowed, code, message) = status(&run(&p, json!({"behaviour": "panic"}), &eval()));
    assert!(!allowed);
    assert_eq!(code, 500);
    assert!(
        message.starts_with("internal server error: Guest call failure: "),
        "{message}"
    );
    let r = run(&p, json!({"behaviour": "deny"}), &eval());
    assert_eq!(status(&r), (false, 403, "denied on purpose".to_string()));
    assert_eq!(r["warnings"], json!(["a warning"]));
    assert_eq!(r["auditAnnotations"], json!({"k": "v"}));
}

#[test]
fn guest_errors_and_garbage_replies_are_internal_errors() {
    let p = policy();
    let r = run(&p, json!({"behaviour": "error"}), &eval());
    assert_eq!(
        status(&r),
        (
            false,
            500,
            "internal server error: Guest call failure: the test policy fails on purpose"
                .to_string()
        )
    );
    let (allowed, code, message) = status(&run(&p, json!({"behaviour": "garbage"}), &eval()));
    assert!(
        !allowed
            && code == 500
            && message.starts_with("internal server error: invalid response from policy: "),
        "{message}"
    );
}

#[test]
fn a_mutation_becomes_a_json_patch() {
    let p = policy();
    let r = run(&p, json!({"behaviour": "mutate"}), &eval());
    assert_eq!(r["allowed"], true);
    assert_eq!(r["patchType"], "JSONPatch");
    assert_eq!(
        decoded_patch(&r).unwrap(),
        vec![json!({"op": "add", "path": "/metadata/labels/mutated-by", "value": "test-policy"})]
    );
}

#[test]
fn mutations_are_refused_when_not_allowed_or_on_delete() {
    let p = policy();
    let e = eval_with(
        PolicyMode::Protect,
        false,
        Limits::default(),
        Source::Recorded(vec![].into()),
    );
    let r = run(&p, json!({"behaviour": "mutate"}), &e);
    assert_eq!(
        r["status"],
        json!({"message": "Request rejected by policy test-policy. The policy attempted to \
            mutate the request, but it is currently configured to not allow mutations."}),
        "no code: the API server reports 400"
    );
    assert_eq!(r["allowed"], false);

    let mut delete = request();
    delete["operation"] = json!("DELETE");
    delete["oldObject"] = delete["object"].take();
    let (r, _) = p.evaluate(&delete, &json!({"behaviour": "mutate"}), &eval());
    let r = r.unwrap();
    assert_eq!(
        r["status"],
        json!({"message": "Incoming object is null, which happens only with DELETE operations, \
            but the policy is attempting a mutation. This is not allowed"})
    );
}

#[test]
fn monitor_mode_allows_and_drops_patch_and_status() {
    let p = policy();
    let e = eval_with(
        PolicyMode::Monitor,
        true,
        Limits::default(),
        Source::Recorded(vec![].into()),
    );
    let r = run(&p, json!({"behaviour": "deny"}), &e);
    assert_eq!(
        r,
        json!({"uid": "0001", "allowed": true, "warnings": ["a warning"], "auditAnnotations": {"k": "v"}})
    );
    let r = run(&p, json!({"behaviour": "mutate"}), &e);
    assert_eq!(
        r,
        json!({"uid": "0001", "allowed": true, "warnings": null, "auditAnnotations": null})
    );
    // Failures too: monitor mode is applied to every reply.
    for behaviour in ["error", "panic", "garbage"] {
        let r = run(&p, json!({ "behaviour": behaviour }), &e);
        assert_eq!(r["allowed"], true, "{behaviour}: {r}");
        assert!(r.get("status").is_none(), "{behaviour}: {r}");
    }
}

#[test]
fn the_request_reaches_the_policy_as_policy_server_reserializes_it() {
    let p = policy();
    let mut sent = request();
    sent["object"]["metadata"]["annotations"] = json!({"kept": null});
    let (r, _) = p.evaluate(&sent, &json!({"behaviour": "echo"}), &eval());
    let r = r.unwrap();
    let seen: Value = serde_json::from_str(r["status"]["message"].as_str().unwrap()).unwrap();
    // Top-level nulls go (typed struct), nulls inside the object stay (raw extension).
    assert!(seen.get("oldObject").is_none() && seen.get("options").is_none());
    assert!(seen.get("subResource").is_none());
    assert_eq!(
        seen["object"]["metadata"]["annotations"],
        json!({"kept": null})
    );
}

#[test]
fn the_guest_wall_clock_is_pinned() {
    let p = policy();
    let r = run(&p, json!({"behaviour": "clock"}), &eval());
    assert_eq!(r["status"]["message"], now().as_second().to_string());
}

fn host_call(kind: &str, namespace: &str, operation: &str, name: &str) -> Value {
    json!({"behaviour": "host-call", "call": {"namespace": namespace, "operation": operation,
        "payload": {"api_version": "v1", "kind": kind, "name": name, "disable_cache": false}}})
}

#[test]
fn kubernetes_lookups_are_answered_from_recorded_context() {
    let p = policy();
    let r = run(
        &p,
        host_call("Namespace", "kubernetes", "get_resource", "team-a"),
        &eval(),
    );
    let object: Value = serde_json::from_str(r["status"]["message"].as_str().unwrap()).unwrap();
    assert_eq!(object["metadata"]["name"], "team-a");
    let (allowed, _, message) = status(&run(
        &p,
        host_call("Namespace", "kubernetes", "get_resource", "nope"),
        &eval(),
    ));
    assert!(!allowed);
    assert_eq!(
        message,
        "Host error: Callback evaluation failure: Cannot find v1/Namespace named 'nope' \
         inside of namespace 'None'"
    );
}

/// Namespace and ConfigMap lookups, a ConfigMap LIST in team-a refused by RBAC.
fn refusing_eval(limits: Limits) -> Evaluation {
    let mut context = namespace_context();
    context.push(Recorded {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: "team-a".into(),
        name: "cm".into(),
        object: None,
        error: Some(r#"configmaps is forbidden: User "system:serviceaccount:kubewarden:policy-server" cannot list resource "configmaps" in API group "" at the cluster scope"#.into()),
    });
    let mut e = eval_with(
        PolicyMode::Protect,
        true,
        limits,
        Source::Recorded(context.into()),
    );
    e.grants.context_aware_resources.push(ContextAwareResource {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
    });
    e
}

fn list_call(kind: &str, namespace: Option<&str>) -> Value {
    let (operation, payload) = match namespace {
        Some(ns) => (
            "list_resources_by_namespace",
            json!({"api_version": "v1", "kind": kind, "namespace": ns}),
        ),
        None => (
            "list_resources_all",
            json!({"api_version": "v1", "kind": kind}),
        ),
    };
    json!({"behaviour": "host-call", "call": {"namespace": "kubernetes", "operation": operation, "payload": payload}})
}

/// policy-server's reflector retries a refused LIST for ever and the review
/// waits (`conformance::NoAnswer`): the host stops the guest at the call, at
/// once rather than at the deadline, and says so; monitor mode changes nothing.
#[test]
fn a_refused_list_is_never_answered_and_the_host_stops_the_call() {
    let p = policy();
    for mode in [PolicyMode::Protect, PolicyMode::Monitor] {
        let mut e = refusing_eval(Limits::default());
        e.server.mode = mode;
        let started = Instant::now();
        let (reply, trace) = p.evaluate_traced(&request(), &list_call("ConfigMap", None), &e);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        let Ok(Reply::NoAnswer(none)) = reply else {
            panic!("expected no answer, got {reply:?}");
        };
        assert_eq!(none.lookup, "v1/ConfigMap");
        assert_eq!(none.refusal.code, 403);
        // The kwctl session keeps the refusal as the error a LIST that ended would give.
        let session = host_test::capabilities::write_session(&trace.session);
        assert!(session.contains("!KubernetesListResourceAll"), "{session}");
        assert!(
            session.contains("ApiError: configmaps is forbidden"),
            "{session}"
        );
        // `evaluate` gives the corpus's form of it.
        let (json_reply, _) = p.evaluate(&request(), &list_call("ConfigMap", None), &e);
        let text = json_reply.unwrap()["noAnswer"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(text.starts_with("policy-server never answers: kube-apiserver refused the LIST of v1/ConfigMap (403 "), "{text}");
    }
    // The same LIST in a namespace nothing refuses is answered.
    let r = run(
        &p,
        list_call("ConfigMap", Some("team-b")),
        &refusing_eval(Limits::default()),
    );
    assert_eq!(r["allowed"], true, "{r}");
}

/// kubewarden-controller 3460bb71, `callback_handler/kubernetes/client.rs`:
/// `list_resources_by_namespace` refuses a cluster-scoped kind and
/// `get_resource` a namespaced kind without a namespace; a cluster-scoped
/// kind is got by name whatever namespace is given.
#[test]
fn lookups_that_mistake_a_kinds_scope_are_refused_as_policy_server_does() {
    let p = policy();
    let e = refusing_eval(Limits::default());
    let (allowed, _, message) = status(&run(&p, list_call("Namespace", Some("team-a")), &e));
    assert!(!allowed);
    assert_eq!(
        message,
        "Host error: Callback evaluation failure: resource v1/Namespace is cluster wide. \
         Cannot search for it inside of a namespace"
    );
    let (allowed, _, message) = status(&run(
        &p,
        host_call("ConfigMap", "kubernetes", "get_resource", "cm"),
        &e,
    ));
    assert!(!allowed);
    assert_eq!(
        message,
        "Host error: Callback evaluation failure: Resource v1/ConfigMap is namespaced, \
         but no namespace was provided"
    );
    let mut call = host_call("Namespace", "kubernetes", "get_resource", "team-a");
    call["call"]["payload"]["namespace"] = json!("elsewhere");
    let r = run(&p, call, &e);
    assert_eq!(r["allowed"], true, "{r}");
}

#[test]
fn lookups_outside_context_aware_resources_and_other_capabilities_are_refused() {
    let p = policy();
    let (allowed, _, message) = status(&run(
        &p,
        host_call("Secret", "kubernetes", "get_resource", "s"),
        &eval(),
    ));
    assert!(!allowed);
    assert!(
        message.ends_with(
            "Policy has not been granted access to Kubernetes v1/Secret resources. \
             The violation has been reported."
        ),
        "{message}"
    );
    // Grants come from the deployment, not from the module's metadata.
    let mut e = eval();
    e.grants = Grants {
        host_capabilities: Vec::new(),
        context_aware_resources: e.grants.context_aware_resources.clone(),
    };
    let (allowed, _, message) = status(&run(
        &p,
        host_call("Namespace", "kubernetes", "get_resource", "team-a"),
        &e,
    ));
    assert!(!allowed);
    assert!(
        message.ends_with(
            "Policy has not been granted access to the 'kubernetes/get_resource' host \
             capability. The violation has been reported."
        ),
        "{message}"
    );
    e.grants = Grants::all_capabilities(Vec::new());
    let (allowed, _, message) = status(&run(
        &p,
        host_call("Namespace", "kubernetes", "get_resource", "team-a"),
        &e,
    ));
    assert!(
        !allowed && message.contains("Kubernetes v1/Namespace"),
        "{message}"
    );
}

#[test]
fn kwctl_session_recordings_are_replayed_in_order() {
    let session = load_session(
        r#"
- type: Exchange
  request: |
    !KubernetesGetResource
    api_version: v1
    kind: Namespace
    name: team-b
    namespace: null
    disable_cache: false
  response:
    type: Success
    payload: '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-b"}}'
"#,
    )
    .unwrap();
    let p = policy();
    let e = eval_with(
        PolicyMode::Protect,
        true,
        Limits::default(),
        Source::Session(session.clone()),
    );
    let r = run(
        &p,
        host_call("Namespace", "kubernetes", "get_resource", "team-b"),
        &e,
    );
    assert!(r["status"]["message"].as_str().unwrap().contains("team-b"));
    let e = eval_with(
        PolicyMode::Protect,
        true,
        Limits::default(),
        Source::Session(session),
    );
    let (allowed, _, message) = status(&run(
        &p,
        host_call("Namespace", "kubernetes", "get_resource", "team-c"),
        &e,
    ));
    assert!(
        !allowed && message.contains("Callback evaluation failure: replay"),
        "{message}"
    );
}

#[test]
fn log_lines_are_collected() {
    let p = policy();
    let (r, logs) = p.evaluate(&request(), &json!({"behaviour": "log"}), &eval());
    assert_eq!(r.unwrap()["allowed"], true);
    assert!(logs.iter().any(|l| l.contains("hello")), "{logs:?}");
    assert!(logs.iter().any(|l| l == "console hello"), "{logs:?}");
}

#[test]
fn annotate_stores_metadata_once_and_keeps_the_module_runnable() {
    let p = policy();
    let meta = p.metadata.clone().unwrap();
    assert_eq!(meta.protocol_version.as_deref(), Some("v1"));
    assert_eq!(meta.annotations["io.kubewarden.policy.usage"], "usage");
    // Re-annotating replaces the section rather than adding a second one.
    let once = metadata::annotate(&common::test_module(), &meta, "v1", None).unwrap();
    let twice = metadata::annotate(&once, &meta, "v1", None).unwrap();
    assert_eq!(once, twice);
    assert!(Policy::from_bytes("again".into(), &twice).is_ok());
}

#[test]
fn metadata_checks_name_what_is_wrong() {
    let err = Metadata::from_yaml("rules: []\nannotations: {}\n").unwrap_err();
    assert!(format!("{err:#}").contains("mutating"), "{err:#}");
}

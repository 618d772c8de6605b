//! Builders shared by the unit tests: settings documents, a Kustomization
//! and the requests that write it, the policy evaluated at one instant, and
//! recorded objects whose every read fails.

use conformance::cluster::Recorded;
use guard_core::testing::RequestBuilder;
use guard_core::{AdmissionRequest, Cluster, Context, Policy, Verdict};
use serde_json::{json, Value};

use crate::decide::decide;
use crate::decision::Decision;
use crate::{Compiled, FluxGate};

const NOW: &str = "2026-12-21T10:00:00Z";

pub(crate) fn settings(v: Value) -> Compiled {
    parse(&v.to_string()).unwrap()
}

/// Every request is held by gate `freeze` (closed at [`NOW`]); `alice` is
/// break-glass, group `oncall` may use the emergency override.
pub(crate) fn freeze() -> Compiled {
    settings(json!({
        "gates": [{"name": "freeze", "freezes": [{"start": "2026-12-18T00:00:00Z", "end": "2027-01-04T00:00:00Z"}]}],
        "bindings": [{"gates": ["freeze"]}],
        "breakGlass": {"users": ["alice"]},
        "emergencyOverride": {"groups": ["oncall"]}
    }))
}

pub(crate) fn object(spec: Value, annotations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "apps", "namespace": "flux-system", "annotations": annotations}, "spec": spec})
}

pub(crate) fn request(
    op: &str,
    old: Value,
    new: Value,
    user: &str,
    groups: &[&str],
) -> AdmissionRequest {
    RequestBuilder::new(op)
        .name("apps")
        .namespace("flux-system")
        .kind("kustomize.toolkit.fluxcd.io", "v1", "Kustomization")
        .user(user, groups)
        .object(new)
        .old_object(old)
        .build()
}

pub(crate) fn eval(req: &AdmissionRequest, s: &Compiled, cluster: &dyn Cluster) -> Verdict {
    FluxGate::evaluate(req, s, &Context::new(now(), cluster))
}

/// The instant every test evaluates at.
pub(crate) fn now() -> jiff::Timestamp {
    NOW.parse().unwrap()
}

/// The decision about `req`, at [`NOW`].
pub(crate) fn decision<'a>(
    req: &AdmissionRequest,
    s: &'a Compiled,
    cluster: &dyn Cluster,
) -> Decision<'a> {
    decide(req, s, &Context::new(now(), cluster))
}

pub(crate) fn update(
    path: &str,
    suspend: bool,
    annotations: Value,
    user: &str,
    groups: &[&str],
) -> AdmissionRequest {
    let old = object(json!({"path": "./a"}), json!({}));
    let mut spec = json!({"path": path});
    if suspend {
        spec["suspend"] = json!(true);
    }
    request("UPDATE", old, object(spec, annotations), user, groups)
}

/// `namespace/name` of `api_version` `kind`, whose every read times out.
pub(crate) fn timing_out(api_version: &str, kind: &str, namespace: &str, name: &str) -> Recorded {
    Recorded::failing(api_version, kind, namespace, name, "timeout")
}

/// Settings as policy-server passes them: `Err` is the whole message.
pub(crate) fn parse(json: &str) -> Result<Compiled, String> {
    guard_core::settings::parse::<Compiled>(json.as_bytes()).map_err(|e| e.to_string())
}

pub(crate) fn err(json: &str) -> String {
    parse(json).unwrap_err()
}

/// One gate `g` with these fields.
pub(crate) fn gate_doc(inner: &str) -> String {
    format!(r#"{{"gates":[{{"name":"g",{inner}}}]}}"#)
}

/// Gate `g` with one valid schedule, these fields replaced.
pub(crate) fn sched_doc(inner: &str) -> String {
    let mut s = json!({"cron": "0 0 * * FRI", "window": "24h", "action": "close"});
    let over: Value = serde_json::from_str(&format!("{{{inner}}}")).unwrap();
    for (k, v) in over.as_object().unwrap() {
        s[k] = v.clone();
    }
    gate_doc(&format!(r#""schedules":[{s}]"#))
}

/// One binding to gate `x` with these fields.
pub(crate) fn binding_doc(inner: &str) -> String {
    format!(r#"{{"bindings":[{{"gates":["x"],{inner}}}]}}"#)
}

/// Each document is refused with a message containing its text.
pub(crate) fn assert_errors(cases: Vec<(String, &str)>) {
    for (json, want) in cases {
        let e = err(&json);
        assert!(e.starts_with("invalid settings: "), "{e}");
        assert!(e.contains(want), "{json}\n  got: {e}\n want: {want}");
    }
}

//! Builders for the scenario tests: a Kustomization, requests, and readers
//! of what the verdict changed.

use guard_core::testing::RequestBuilder;
use guard_core::{AdmissionRequest, Context, NoCluster, Timestamp, Verdict};
use serde_json::{json, Value};

use crate::decide::decide;
use crate::decision::Decision;
use crate::render;
use crate::settings::Settings;

/// The reason annotation, the key most tests write.
pub(crate) const R: &str = "reconcile.fluxcd.io/suspended";

fn now() -> Timestamp {
    "2026-11-20T10:00:00Z".parse().unwrap()
}

fn settings(json: &str) -> Settings {
    guard_core::settings::parse::<Settings>(json.as_bytes()).unwrap()
}

/// Kustomization `flux-system/apps` with these annotations and spec.
pub(crate) fn ks(annotations: Value, spec: Value) -> Value {
    json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
           "metadata": {"name": "apps", "namespace": "flux-system", "annotations": annotations},
           "spec": spec})
}

/// `apps` suspended through `spec.suspend`, with a reason, as stored.
pub(crate) fn suspended() -> Value {
    ks(
        json!({R: "INC-1 database migration"}),
        json!({"suspend": true}),
    )
}

/// `user` removes the reason of [`suspended`], leaving `spec.suspend`.
pub(crate) fn reason_removed_by(user: &str) -> AdmissionRequest {
    request(
        "UPDATE",
        user,
        ks(json!({}), json!({"suspend": true})),
        suspended(),
    )
}

pub(crate) fn request(op: &str, user: &str, object: Value, old: Value) -> AdmissionRequest {
    request_of(
        "kustomize.toolkit.fluxcd.io",
        "Kustomization",
        op,
        user,
        object,
        old,
    )
}

pub(crate) fn request_of(
    group: &str,
    kind: &str,
    op: &str,
    user: &str,
    object: Value,
    old: Value,
) -> AdmissionRequest {
    // The resource kube-apiserver names beside the kind: its plural.
    let plural = guard_core::model::kinds::find(group, kind).map_or("", |k| k.plural);
    RequestBuilder::new(op)
        .uid("u")
        .kind(group, "v1", kind)
        .resource(group, "v1", plural)
        .name("apps")
        .namespace("flux-system")
        .user(user, &["sre", "system:authenticated"])
        .object(object)
        .old_object(old)
        .build()
}

/// Decided at the corpus's `now`, with these settings (JSON), before any text.
pub(crate) fn decided<'a>(r: &'a AdmissionRequest, s: &str) -> Decision<'a> {
    decide(r, &settings(s), &Context::new(now(), &NoCluster))
}

/// Judged at the corpus's `now`, with these settings (JSON).
pub(crate) fn run(r: &AdmissionRequest, s: &str) -> Verdict {
    let settings = settings(s);
    render::verdict(
        &decide(r, &settings, &Context::new(now(), &NoCluster)),
        r,
        &settings,
    )
}

pub(crate) fn message(v: &Verdict) -> &str {
    v.message.as_deref().unwrap_or("")
}

pub(crate) fn suspend_of(v: &Verdict) -> Option<Value> {
    v.mutated_value()
        .and_then(|o| o.pointer("/spec/suspend").cloned())
}

pub(crate) fn annotation_of(v: &Verdict, key: &str) -> Option<Value> {
    v.mutated_value()?
        .get("metadata")?
        .get("annotations")?
        .get(key)
        .cloned()
}

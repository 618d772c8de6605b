//! Helpers of the unit tests: the verdict users would read for what a rule
//! found on an object named by a request.

use guard_core::object::ObjectName;
use guard_core::testing::RequestBuilder;
use guard_core::{AdmissionRequest, Context, NoCluster, Verdict};

use crate::decision::{Decision, Finding, Review, Target};
use crate::findings::Findings;
use crate::render;
use crate::settings::Settings;
use crate::template::Chart;

/// A CREATE of `kind` (resource `resource` in `group`) `namespace/name`, by `user`.
pub(crate) fn request(
    group: &str,
    kind: &str,
    resource: &str,
    namespace: &str,
    name: &str,
    user: &str,
) -> AdmissionRequest {
    RequestBuilder::new("CREATE")
        .name(name)
        .namespace(namespace)
        .kind(group, "v1", kind)
        .resource(group, "v1", resource)
        .username(user)
        .build()
}

/// The HelmRelease `apps/podinfo`, written by `user`.
pub(crate) fn podinfo(user: &str) -> AdmissionRequest {
    request(
        "helm.toolkit.fluxcd.io",
        "HelmRelease",
        "helmreleases",
        "apps",
        "podinfo",
        user,
    )
}

/// The verdict on `findings` about the object `request` names.
pub(crate) fn verdict(
    findings: Findings<Finding>,
    chart: Option<Chart>,
    request: &AdmissionRequest,
    settings: &Settings,
) -> Verdict {
    let name = ObjectName::of(request, None);
    let review = Review {
        target: Target {
            namespace: name.namespace.to_string(),
            name: name.name.to_string(),
        },
        origin: None,
        chart,
        findings,
    };
    render::verdict(&Decision::Reviewed(review), request, settings)
}

/// A request for `flux-system/podinfo` with `annotations`, by alice, as JSON:
/// the tests edit it before it is read.
pub(crate) fn json_request(
    group: &str,
    kind: &str,
    resource: &str,
    op: &str,
    annotations: serde_json::Value,
) -> serde_json::Value {
    RequestBuilder::new(op)
        .name("podinfo")
        .namespace("flux-system")
        .kind(group, "v1", kind)
        .resource(group, "v1", resource)
        .user("alice@example.com", &["system:authenticated"])
        .object(serde_json::json!({"metadata": {"name": "podinfo", "namespace": "flux-system", "annotations": annotations}, "spec": {}}))
        .json()
}

/// `run` on `request` and `settings` read from JSON, at the tests' `now`,
/// with no cluster.
pub(crate) fn with_request<T>(
    request: serde_json::Value,
    settings: serde_json::Value,
    run: impl FnOnce(&AdmissionRequest, &Settings, &Context<'_>) -> T,
) -> T {
    let request: AdmissionRequest = serde_json::from_value(request).unwrap();
    let settings: Settings = serde_json::from_value(settings).unwrap();
    let ctx = Context::new("2026-11-20T10:00:00Z".parse().unwrap(), &NoCluster);
    run(&request, &settings, &ctx)
}

/// UPDATEs of a HelmRelease and of an Alert whose stored object has a
/// number among its annotations, by kind.
pub(crate) fn unreadable_old_objects() -> Vec<(&'static str, serde_json::Value)> {
    [
        ("helm.toolkit.fluxcd.io", "HelmRelease", "helmreleases"),
        (guard_core::model::kinds::NOTIFICATION, "Alert", "alerts"),
    ]
    .into_iter()
    .map(|(group, kind, resource)| {
        let mut r = json_request(group, kind, resource, "UPDATE", serde_json::json!({}));
        r["oldObject"] =
            serde_json::json!({"metadata": {"annotations": {"example.com/replicas": 3}}});
        (kind, r)
    })
    .collect()
}

/// A CREATE of a Provider, a kind that emits no events, with an event annotation.
pub(crate) fn annotated_provider() -> serde_json::Value {
    json_request(
        guard_core::model::kinds::NOTIFICATION,
        "Provider",
        "providers",
        "CREATE",
        serde_json::json!({"event.toolkit.fluxcd.io/team": "payments"}),
    )
}

/// A CREATE of a HelmRelease that carries no object.
pub(crate) fn without_object() -> serde_json::Value {
    let mut r = json_request(
        "helm.toolkit.fluxcd.io",
        "HelmRelease",
        "helmreleases",
        "CREATE",
        serde_json::json!({}),
    );
    r["object"] = serde_json::Value::Null;
    r
}

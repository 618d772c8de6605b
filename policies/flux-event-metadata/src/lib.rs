//! flux-event-metadata: valid `event.toolkit.fluxcd.io/*` annotations and
//! Alert metadata (Flux RFC-0008).
//!
//! Flux copies every object annotation with the `event.toolkit.fluxcd.io/`
//! prefix into the metadata of the object's events, unchecked, and
//! notification-controller settles key clashes silently: controller keys beat
//! an Alert's `.spec.summary`, which beats its `.spec.eventMetadata`, which
//! beats the object's annotations. A mistake is invisible until a notification
//! is wrong, or a commit status lands on the wrong commit. This policy makes
//! those mistakes visible at `kubectl apply`:
//!
//! - on the kinds that emit events ([`kinds`]): key syntax, keys that always
//!   lose to the controller's own, routing keys (`commit`, `change_request`),
//!   the cluster's tenant rules, and keys an Alert selecting the object also
//!   sets ([`object_rules`], [`conflicts`]);
//! - on Alerts: `.spec.eventMetadata` and the deprecated `.spec.summary`
//!   ([`alert_rules`]);
//! - elsewhere: a warning that the annotations do nothing.
//!
//! On UPDATE, what the object already had is reported as a warning, never
//! refused, so that existing objects stay editable by people and controllers.
//! Objects being deleted are checked the same way: their controllers still
//! send events (with the annotations) while they finalize, and the writes
//! that finish a deletion (a finalizer removed) change no annotation.

// No trapping arithmetic or truncating casts, as in guard-core (its lib.rs says why).
#![cfg_attr(
    not(test),
    deny(
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        clippy::cast_sign_loss
    )
)]

pub mod alert;
pub mod alert_rules;
pub mod annotations;
pub mod conflicts;
pub mod generated;
pub mod kinds;
pub mod object_rules;
pub mod report;
pub mod settings;
pub mod template;
pub mod values;

use guard_core::{AdmissionRequest, Context, Metadata, Operation, Policy, Verdict, Which};
use serde::Deserialize;
use serde_json::Value;

use crate::alert::Alert;
use crate::kinds::PREFIX;
use crate::object_rules::Subject;
use crate::report::Findings;
pub use crate::settings::Settings;
use guard_core::flux::{HELM, NOTIFICATION};
use guard_core::object::ObjectName;

pub struct FluxEventMetadata;

guard_core::kubewarden_policy!(FluxEventMetadata);

pub const ENTRY: guard_core::Entry =
    guard_core::Entry::of::<FluxEventMetadata>(include_str!("../metadata.yml"));

/// An Alert reduced to what its rules read.
#[derive(Deserialize)]
struct AlertHead {
    #[serde(default, deserialize_with = "guard_core::request::null_default")]
    metadata: Metadata,
    #[serde(default)]
    spec: Option<Value>,
}

impl Policy for FluxEventMetadata {
    const NAME: &'static str = "flux-event-metadata";
    type Settings = Settings;

    fn evaluate(request: &AdmissionRequest, settings: &Settings, ctx: &Context<'_>) -> Verdict {
        if !matches!(request.operation, Operation::Create | Operation::Update) {
            return Verdict::allow();
        }
        if request.kind.group == NOTIFICATION && request.kind.kind == "Alert" {
            return evaluate_alert(request, settings);
        }
        let meta = match request.metadata(Which::Object) {
            Ok(Some(meta)) => meta,
            Ok(None) => return no_object(request),
            Err(e) => return Verdict::deny(annotations::explain_malformed(request, e)),
        };
        let old = match old_object(request, |r| r.metadata(Which::OldObject)) {
            Ok(old) => old,
            Err(e) => return Verdict::deny(e),
        };
        let target = ObjectName::of(request, Some(&meta));
        if kinds::emits_events(&request.kind.group, &request.kind.kind) {
            let origin = generated::origin(request, &meta, settings);
            let mut findings = match &origin {
                Some(origin) => Findings::for_generated(origin.note()),
                None => Findings::default(),
            };
            let subject = Subject {
                group: &request.kind.group,
                target,
                meta: &meta,
                old: old.as_ref(),
                origin,
                template: None,
            };
            let user = &request.user_info;
            let entries = object_rules::check(&subject, settings, user, &mut findings);
            conflicts::check(&subject, &entries, settings, ctx.cluster, &mut findings);
            if request.kind.group == HELM && request.kind.kind == "HelmRelease" {
                let release = &subject.target;
                if let Err(e) =
                    template::check(request, release, settings, user, ctx.cluster, &mut findings)
                {
                    return Verdict::deny(e);
                }
            }
            findings.into_verdict(&subject.target)
        } else {
            let mut findings = Findings::default();
            check_inert(&target, &meta, old.as_ref(), settings, &mut findings);
            findings.into_verdict(&target)
        }
    }
}

fn evaluate_alert(request: &AdmissionRequest, settings: &Settings) -> Verdict {
    let head = match request.object_as::<AlertHead>(Which::Object) {
        Ok(Some(head)) => head,
        Ok(None) => return no_object(request),
        Err(e) => return Verdict::deny(annotations::explain_malformed(request, e)),
    };
    let old = match old_object(request, |r| r.object_as::<AlertHead>(Which::OldObject)) {
        Ok(old) => old,
        Err(e) => return Verdict::deny(e),
    };
    let target = ObjectName::of(request, Some(&head.metadata));
    let alert = Alert::new(&target.name, target.namespace, head.spec.as_ref());
    let old_alert = old
        .as_ref()
        .map(|o| Alert::new(&target.name, target.namespace, o.spec.as_ref()));
    let mut findings = Findings::default();
    check_inert(
        &target,
        &head.metadata,
        old.as_ref().map(|o| &o.metadata),
        settings,
        &mut findings,
    );
    alert_rules::check(
        &alert,
        old_alert.as_ref(),
        &target,
        settings,
        &request.user_info,
        &mut findings,
    );
    findings.into_verdict(&target)
}

/// The old object of an UPDATE. One that cannot be read is refused, naming
/// the field: read as absent, it would silently turn what the object already
/// had into new findings (refused instead of warned about) and name none of
/// the cause. kube-apiserver sends the stored object, so this is bad input.
fn old_object<T>(
    request: &AdmissionRequest,
    read: impl FnOnce(&AdmissionRequest) -> Result<Option<T>, String>,
) -> Result<Option<T>, String> {
    if request.operation == Operation::Update {
        read(request).map_err(|e| annotations::explain_malformed_in(request, Which::OldObject, e))
    } else {
        Ok(None)
    }
}

fn no_object(request: &AdmissionRequest) -> Verdict {
    Verdict::deny(format!(
        "the {} request for {} {} carries no object to check",
        request.operation.as_str(),
        request.kind.kind,
        guard_core::names::quote(&request.name)
    ))
}

/// Event annotations on a kind that emits no events do nothing at all.
fn check_inert(
    target: &ObjectName<'_>,
    meta: &Metadata,
    old: Option<&Metadata>,
    settings: &Settings,
    findings: &mut Findings,
) {
    const SHOWN: usize = 5;
    let mut keys = Vec::new();
    let mut count = 0usize;
    let mut all_unchanged = true;
    for entry in annotations::entries(meta, old) {
        count = count.saturating_add(1);
        all_unchanged &= entry.unchanged;
        if keys.len() < SHOWN {
            keys.push(format!("{PREFIX}{}", entry.key));
        }
    }
    if count == 0 {
        return;
    }
    if count > SHOWN {
        keys.push(format!("and {} more", count.saturating_sub(SHOWN)));
    }
    let hint = if target.kind == "Alert"
        && target.resource.strip_prefix("alerts.") == Some(NOTIFICATION)
    {
        "; metadata for every notification of this Alert belongs in spec.eventMetadata"
    } else {
        ""
    };
    findings.report(settings.inert_annotations, all_unchanged, || {
        format!(
            "{} emits no Flux events, so its annotations {} have no effect: put them on the Flux \
             objects whose events should carry them{hint}.",
            target.describe(),
            keys.join(", ")
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::testing::RequestBuilder;
    use guard_core::NoCluster;
    use serde_json::json;

    fn evaluate(request: Value, settings: Value) -> Verdict {
        let request: AdmissionRequest = serde_json::from_value(request).unwrap();
        let settings: Settings = serde_json::from_value(settings).unwrap();
        let ctx = Context::new("2026-11-20T10:00:00Z".parse().unwrap(), &NoCluster);
        FluxEventMetadata::evaluate(&request, &settings, &ctx)
    }

    /// The request as JSON: the tests edit it before it is read.
    fn request(group: &str, kind: &str, resource: &str, op: &str, annotations: Value) -> Value {
        RequestBuilder::new(op)
            .name("podinfo")
            .namespace("flux-system")
            .kind(group, "v1", kind)
            .resource(group, "v1", resource)
            .user("alice@example.com", &["system:authenticated"])
            .object(json!({"metadata": {"name": "podinfo", "namespace": "flux-system", "annotations": annotations}, "spec": {}}))
            .json()
    }

    #[test]
    fn emitting_kinds_are_checked() {
        let v = evaluate(
            request(
                "kustomize.toolkit.fluxcd.io",
                "Kustomization",
                "kustomizations",
                "CREATE",
                json!({"event.toolkit.fluxcd.io/originRevision": "x"}),
            ),
            json!({}),
        );
        assert!(v
            .message
            .unwrap()
            .contains("kustomize-controller sends its own `originRevision`"));
    }

    #[test]
    fn delete_and_connect_are_not_checked() {
        let mut r = request(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            "helmreleases",
            "DELETE",
            json!({"event.toolkit.fluxcd.io/revision": "x"}),
        );
        assert_eq!(evaluate(r.clone(), json!({})), Verdict::allow());
        r["operation"] = json!("CONNECT");
        assert_eq!(evaluate(r, json!({})), Verdict::allow());
    }

    /// An unreadable oldObject is refused, naming it, instead of being read
    /// as no old object (which dropped the grandfathering of what the object
    /// already had, and said nothing of the cause).
    #[test]
    fn an_unreadable_old_object_is_refused() {
        for (group, kind, resource) in [
            ("helm.toolkit.fluxcd.io", "HelmRelease", "helmreleases"),
            (NOTIFICATION, "Alert", "alerts"),
        ] {
            let mut r = request(group, kind, resource, "UPDATE", json!({}));
            r["oldObject"] = json!({"metadata": {"annotations": {"example.com/replicas": 3}}});
            let v = evaluate(r.clone(), json!({}));
            assert_eq!(
                v.message.as_deref(),
                Some(
                    format!(
                        "cannot read the stored {kind} \"podinfo\" (oldObject): \
                         metadata.annotations[\"example.com/replicas\"] must be a string, not a \
                         number; quote the value in YAML (e.g. \"true\", \"42\")"
                    )
                    .as_str()
                ),
                "{kind}"
            );
            // Being deleted changes nothing: the stored object is read all the same.
            r["object"]["metadata"]["deletionTimestamp"] = json!("2026-11-20T09:59:00Z");
            assert!(!evaluate(r, json!({})).allowed, "{kind}");
        }
    }

    /// Controllers still send events while they finalize an object, so a key
    /// added to an object being deleted is judged; one it already had only
    /// warns, so the finalizer removal that ends the deletion always passes.
    #[test]
    fn objects_being_deleted_are_judged_like_any_update() {
        let mut r = request(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            "helmreleases",
            "UPDATE",
            json!({"event.toolkit.fluxcd.io/revision": "x"}),
        );
        r["object"]["metadata"]["deletionTimestamp"] = json!("2026-11-20T09:59:00Z");
        r["oldObject"] =
            json!({"metadata": {"name": "podinfo", "namespace": "flux-system"}, "spec": {}});
        assert!(!evaluate(r.clone(), json!({})).allowed);
        r["oldObject"]["metadata"]["annotations"] =
            json!({"event.toolkit.fluxcd.io/revision": "x"});
        let v = evaluate(r, json!({}));
        assert!(v.allowed && v.warnings[0].contains("always loses"), "{v:?}");
    }

    #[test]
    fn inert_annotations_warn() {
        let v = evaluate(
            request(
                NOTIFICATION,
                "Provider",
                "providers",
                "CREATE",
                json!({"event.toolkit.fluxcd.io/team": "payments"}),
            ),
            json!({}),
        );
        assert!(v.allowed);
        assert_eq!(v.warnings, ["Provider flux-system/podinfo emits no Flux events, so its annotations event.toolkit.fluxcd.io/team have no effect: put them on the Flux objects whose events should carry them."]);
        let v = evaluate(
            request(
                NOTIFICATION,
                "Alert",
                "alerts",
                "CREATE",
                json!({"event.toolkit.fluxcd.io/env": "prod"}),
            ),
            json!({"inertAnnotations": "deny"}),
        );
        assert!(v
            .message
            .unwrap()
            .ends_with("belongs in spec.eventMetadata."));
        let v = evaluate(
            request(
                "example.com",
                "HelmRelease",
                "helmreleases",
                "CREATE",
                json!({"event.toolkit.fluxcd.io/revision": "x"}),
            ),
            json!({}),
        );
        assert!(v.allowed && v.warnings[0].contains("emits no Flux events"));
        let v = evaluate(
            request(
                NOTIFICATION,
                "Receiver",
                "receivers",
                "CREATE",
                json!({"a/b": "c"}),
            ),
            json!({}),
        );
        assert_eq!(v, Verdict::allow());
    }

    #[test]
    fn malformed_objects_are_refused_by_field() {
        let v = evaluate(
            request(
                "helm.toolkit.fluxcd.io",
                "HelmRelease",
                "helmreleases",
                "CREATE",
                json!({"event.toolkit.fluxcd.io/replicas": 3}),
            ),
            json!({}),
        );
        assert!(v.message.unwrap().contains("metadata.annotations[\"event.toolkit.fluxcd.io/replicas\"] must be a string, not a number"));
        let mut r = request(NOTIFICATION, "Alert", "alerts", "CREATE", json!({}));
        r["object"]["spec"] = json!({"eventMetadata": ["env"]});
        assert!(evaluate(r.clone(), json!({}))
            .message
            .unwrap()
            .contains("spec.eventMetadata must be a map"));
        r["object"]["metadata"] = json!(5);
        assert!(evaluate(r, json!({}))
            .message
            .unwrap()
            .contains("metadata must be a map, not a number"));
        let mut r = request(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            "helmreleases",
            "CREATE",
            json!({}),
        );
        r["object"] = Value::Null;
        assert_eq!(
            evaluate(r, json!({})).message.unwrap(),
            "the CREATE request for HelmRelease \"podinfo\" carries no object to check"
        );
    }

    #[test]
    fn alert_objects_are_checked() {
        let mut r = request(NOTIFICATION, "Alert", "alerts", "CREATE", json!({}));
        r["object"]["spec"] = json!({"eventSources": [{"kind": "HelmRelease", "name": "*"}], "eventMetadata": {"oci-digest": "x"}});
        assert!(evaluate(r, json!({}))
            .message
            .unwrap()
            .contains("helm-controller sends its own `oci-digest`"));
    }
}

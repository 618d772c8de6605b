//! The flow: which rules a request meets, in which order, and what they
//! found. No text is written here (see `render`).

use guard_core::json_text::{metadata_keeping, Keys};
use guard_core::model::kinds::{HELM, NOTIFICATION};
use guard_core::object::ObjectName;
use guard_core::request::ReadError;
use guard_core::{AdmissionRequest, Context, Metadata, Operation, Which};
use serde::Deserialize;
use serde_json::Value;

use crate::alert::Alert;
use crate::annotations::Malformed;
use crate::decision::{Decision, Review, Target};
use crate::findings::Findings;
use crate::settings::Settings;
use crate::subject::{On, Subject};
use crate::{alert_rules, annotations, conflicts, generated, inert, kinds, object_rules, template};

/// An Alert reduced to what its rules read.
#[derive(Deserialize)]
struct AlertHead {
    #[serde(default, deserialize_with = "guard_core::request::null_default")]
    metadata: Metadata,
    #[serde(default)]
    spec: Option<Value>,
}

/// An object reduced to the kind of its source (`spec.sourceRef.kind`).
#[derive(Deserialize)]
struct SourceHead {
    #[serde(default)]
    spec: Option<SourceSpec>,
}

#[derive(Deserialize)]
struct SourceSpec {
    #[serde(default, rename = "sourceRef")]
    source_ref: Option<SourceRef>,
}

#[derive(Deserialize)]
struct SourceRef {
    #[serde(default)]
    kind: Option<String>,
}

impl SourceHead {
    fn kind(&self) -> Option<&str> {
        self.spec.as_ref()?.source_ref.as_ref()?.kind.as_deref()
    }
}

pub(crate) fn decide(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Decision {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return Decision::NotChecked;
    }
    if request.kind.group == NOTIFICATION && request.kind.kind == "Alert" {
        return decide_alert(request, settings);
    }
    // The rules read every label of the object (an Alert may select on any)
    // and, of the stored one, only annotations.
    let meta = match metadata_keeping(request, Which::Object, Keys::All, Keys::All) {
        Ok(Some(meta)) => meta,
        Ok(None) => return Decision::NoObject,
        Err(e) => return unreadable(request, Which::Object, e),
    };
    let stored =
        |r: &AdmissionRequest| metadata_keeping(r, Which::OldObject, Keys::Only(&[]), Keys::All);
    let old = match old_object(request, stored) {
        Ok(old) => old,
        Err(malformed) => {
            return Decision::Unreadable {
                which: Which::OldObject,
                malformed,
            }
        }
    };
    let target = ObjectName::of(request, Some(&meta));
    if kinds::emits_events(&request.kind.group, &request.kind.kind) {
        return decide_emitter(request, settings, ctx, target, &meta, old.as_ref());
    }
    // What a Flux controller generates is never refused, inert or not.
    let origin = generated::origin(request, &meta, settings);
    let mut findings = Findings::new(origin.is_some());
    inert::check(&target, &meta, old.as_ref(), settings, &mut findings);
    Decision::Reviewed(Review {
        target: target_of(&target),
        origin,
        chart: None,
        findings,
    })
}

/// An object that emits events: its annotations, the Alerts that select
/// it, and a HelmRelease's chart template.
fn decide_emitter(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
    target: ObjectName<'_>,
    meta: &Metadata,
    old: Option<&Metadata>,
) -> Decision {
    let origin = generated::origin(request, meta, settings);
    let mut findings = Findings::new(origin.is_some());
    // Unreadable, it is not known: every key its controller may send counts.
    let source = request
        .object_as::<SourceHead>(Which::Object)
        .ok()
        .flatten();
    let subject = Subject {
        group: &request.kind.group,
        target,
        meta,
        old,
        generated: origin.is_some(),
        source_kind: source.as_ref().and_then(SourceHead::kind),
        on: On::Object,
    };
    let user = &request.user_info;
    let entries = object_rules::check(&subject, settings, user, &mut findings);
    conflicts::check(&subject, &entries, settings, ctx.cluster, &mut findings);
    let mut chart = None;
    if request.kind.group == HELM && request.kind.kind == "HelmRelease" {
        let release = &subject.target;
        match template::check(request, release, settings, user, ctx.cluster, &mut findings) {
            Ok(generated) => chart = generated,
            Err(e) => {
                return Decision::UnreadableTemplate {
                    release: target_of(release),
                    which: e.which,
                    malformed: e.malformed,
                }
            }
        }
    }
    Decision::Reviewed(Review {
        target: target_of(&subject.target),
        origin,
        chart,
        findings,
    })
}

fn decide_alert(request: &AdmissionRequest, settings: &Settings) -> Decision {
    let head = match request.object_as::<AlertHead>(Which::Object) {
        Ok(Some(head)) => head,
        Ok(None) => return Decision::NoObject,
        Err(e) => return unreadable(request, Which::Object, e),
    };
    let old = match old_object(request, |r| r.object_as::<AlertHead>(Which::OldObject)) {
        Ok(old) => old,
        Err(malformed) => {
            return Decision::Unreadable {
                which: Which::OldObject,
                malformed,
            }
        }
    };
    let target = ObjectName::of(request, Some(&head.metadata));
    let alert = Alert::new(&target.name, target.namespace, head.spec.as_ref());
    let old_alert = old
        .as_ref()
        .map(|o| Alert::new(&target.name, target.namespace, o.spec.as_ref()));
    let mut findings = Findings::new(false);
    let old_meta = old.as_ref().map(|o| &o.metadata);
    inert::check(&target, &head.metadata, old_meta, settings, &mut findings);
    let user = &request.user_info;
    alert_rules::check(&alert, old_alert.as_ref(), settings, user, &mut findings);
    Decision::Reviewed(Review {
        target: target_of(&target),
        origin: None,
        chart: None,
        findings,
    })
}

/// The old object of an UPDATE. One that cannot be read is refused, naming
/// the field: read as absent, it would silently turn what the object already
/// had into new findings (refused instead of warned about) and name none of
/// the cause. kube-apiserver sends the stored object, so this is bad input.
fn old_object<T>(
    request: &AdmissionRequest,
    read: impl FnOnce(&AdmissionRequest) -> Result<Option<T>, ReadError>,
) -> Result<Option<T>, Malformed> {
    if request.operation == Operation::Update {
        read(request).map_err(|e| annotations::malformed(request, Which::OldObject, e))
    } else {
        Ok(None)
    }
}

fn unreadable(request: &AdmissionRequest, which: Which, error: ReadError) -> Decision {
    Decision::Unreadable {
        which,
        malformed: annotations::malformed(request, which, error),
    }
}

fn target_of(name: &ObjectName<'_>) -> Target {
    Target {
        namespace: name.namespace.to_string(),
        name: name.name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alert::FieldError;
    use crate::alert_rules;
    use crate::decision::Finding;
    use crate::findings::{Accepted, Warning};
    use crate::test_support::{self, json_request as request};
    use guard_core::model::kinds::NOTIFICATION;
    use serde_json::json;

    fn decision(request: Value, settings: Value) -> Decision {
        test_support::with_request(request, settings, decide)
    }

    fn review(decision: Decision) -> Review {
        match decision {
            Decision::Reviewed(review) => review,
            other => panic!("not reviewed: {other:?}"),
        }
    }

    fn object_finding(problem: object_rules::Problem) -> Finding {
        Finding::Object(object_rules::Finding {
            on: On::Object,
            problem,
        })
    }

    fn revision(removable: bool) -> Finding {
        object_finding(object_rules::Problem::ControllerKey {
            key: "app-version".into(),
            value: "x".into(),
            removable,
        })
    }

    #[test]
    fn emitting_kinds_are_checked() {
        let r = review(decision(
            request(
                "kustomize.toolkit.fluxcd.io",
                "Kustomization",
                "kustomizations",
                "CREATE",
                json!({"event.toolkit.fluxcd.io/originRevision": "x"}),
            ),
            json!({}),
        ));
        assert_eq!(
            r.target,
            Target {
                namespace: "flux-system".into(),
                name: "podinfo".into()
            }
        );
        assert_eq!(
            r.findings.refusals,
            [
                object_finding(object_rules::Problem::ControllerKey {
                    key: "originRevision".into(),
                    value: "x".into(),
                    removable: false,
                }),
                object_finding(object_rules::Problem::RoutingFormat {
                    key: "originRevision".into(),
                    value: "x".into(),
                    format: crate::values::RoutingFormat::NotSha1,
                })
            ]
        );
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
        assert_eq!(decision(r.clone(), json!({})), Decision::NotChecked);
        r["operation"] = json!("CONNECT");
        assert_eq!(decision(r, json!({})), Decision::NotChecked);
    }

    /// An unreadable oldObject is refused, naming it, instead of being read
    /// as no old object (which dropped the grandfathering of what the object
    /// already had, and said nothing of the cause).
    #[test]
    fn an_unreadable_old_object_is_refused() {
        for (kind, mut r) in test_support::unreadable_old_objects() {
            let refused = Decision::Unreadable {
                which: Which::OldObject,
                malformed: Malformed::NotAString {
                    field: "annotations",
                    key: "example.com/replicas".into(),
                    found: "a number",
                },
            };
            assert_eq!(decision(r.clone(), json!({})), refused, "{kind}");
            // Being deleted changes nothing: the stored object is read all the same.
            r["object"]["metadata"]["deletionTimestamp"] = json!("2026-11-20T09:59:00Z");
            assert_eq!(decision(r, json!({})), refused, "{kind}");
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
            json!({"event.toolkit.fluxcd.io/app-version": "x"}),
        );
        r["object"]["metadata"]["deletionTimestamp"] = json!("2026-11-20T09:59:00Z");
        r["oldObject"] =
            json!({"metadata": {"name": "podinfo", "namespace": "flux-system"}, "spec": {}});
        let found = review(decision(r.clone(), json!({}))).findings;
        assert_eq!(found.refusals, [revision(false)]);
        r["oldObject"]["metadata"]["annotations"] =
            json!({"event.toolkit.fluxcd.io/app-version": "x"});
        let found = review(decision(r, json!({}))).findings;
        assert!(found.refusals.is_empty());
        assert_eq!(
            found.warnings,
            [Warning {
                finding: revision(true),
                accepted: Some(Accepted::Preexisting)
            }]
        );
    }

    fn inert(keys: &[&str], on_alert: bool) -> Finding {
        Finding::Inert(inert::Finding {
            keys: keys.iter().map(|k| k.to_string()).collect(),
            count: keys.len(),
            on_alert,
        })
    }

    #[test]
    fn inert_annotations_warn() {
        let found = review(decision(
            crate::test_support::annotated_provider(),
            json!({}),
        ))
        .findings;
        assert_eq!(
            found.warnings,
            [Warning {
                finding: inert(&["event.toolkit.fluxcd.io/team"], false),
                accepted: None
            }]
        );
        let found = review(decision(
            request(
                NOTIFICATION,
                "Alert",
                "alerts",
                "CREATE",
                json!({"event.toolkit.fluxcd.io/env": "prod"}),
            ),
            json!({"inertAnnotations": "deny"}),
        ))
        .findings;
        assert_eq!(
            found.refusals,
            [inert(&["event.toolkit.fluxcd.io/env"], true)]
        );
        // Not Flux's HelmRelease: its annotations do nothing either.
        let found = review(decision(
            request(
                "example.com",
                "HelmRelease",
                "helmreleases",
                "CREATE",
                json!({"event.toolkit.fluxcd.io/revision": "x"}),
            ),
            json!({}),
        ))
        .findings;
        assert_eq!(found.warnings.len(), 1);
        assert!(matches!(found.warnings[0].finding, Finding::Inert(_)));
        let found = review(decision(
            request(
                NOTIFICATION,
                "Receiver",
                "receivers",
                "CREATE",
                json!({"a/b": "c"}),
            ),
            json!({}),
        ))
        .findings;
        assert_eq!(found, Findings::new(false));
    }

    #[test]
    fn malformed_objects_are_refused_by_field() {
        let d = decision(
            request(
                "helm.toolkit.fluxcd.io",
                "HelmRelease",
                "helmreleases",
                "CREATE",
                json!({"event.toolkit.fluxcd.io/replicas": 3}),
            ),
            json!({}),
        );
        assert_eq!(
            d,
            Decision::Unreadable {
                which: Which::Object,
                malformed: Malformed::NotAString {
                    field: "annotations",
                    key: "event.toolkit.fluxcd.io/replicas".into(),
                    found: "a number"
                }
            }
        );
        let mut r = request(NOTIFICATION, "Alert", "alerts", "CREATE", json!({}));
        r["object"]["spec"] = json!({"eventMetadata": ["env"]});
        assert_eq!(
            review(decision(r.clone(), json!({}))).findings.refusals,
            [Finding::Alert(alert_rules::Finding::Unreadable(
                FieldError::MetadataNotMap { found: "a list" }
            ))]
        );
        r["object"]["metadata"] = json!(5);
        assert_eq!(
            decision(r, json!({})),
            Decision::Unreadable {
                which: Which::Object,
                malformed: Malformed::NotAMap { found: "a number" }
            }
        );
        let r = crate::test_support::without_object();
        assert_eq!(decision(r, json!({})), Decision::NoObject);
    }

    #[test]
    fn alert_objects_are_checked() {
        let mut r = request(NOTIFICATION, "Alert", "alerts", "CREATE", json!({}));
        r["object"]["spec"] = json!({"eventSources": [{"kind": "HelmRelease", "name": "*"}], "eventMetadata": {"oci-digest": "x"}});
        assert_eq!(
            review(decision(r, json!({}))).findings.refusals,
            [Finding::Alert(alert_rules::Finding::ControllerKey {
                key: "oci-digest".into(),
                kind: "HelmRelease".into(),
                group: HELM,
            })]
        );
    }
}

//! A Namespace's DELETE: where the deletion of the Flux objects it holds is
//! judged, once.
//!
//! The namespace controller then deletes them with requests this policy
//! lets through ([`guard_core::model::controllers::is_namespace_controller`]); refusing those
//! would leave the Namespace stuck in Terminating with nobody told why. So
//! each object the Namespace holds of a kind that matters, read from the
//! cluster (`contextAwareResources`: every suspendable kind), is judged here
//! as the DELETE of it by the person deleting the Namespace
//! ([`crate::deletion::check`]): the deletion hazard of every kind whose
//! deletion deletes more ([`Kind::may_collect`]), and, with `resumers`
//! listed, who may end a suspension of any kind by deleting it (a parent
//! Kustomization re-creates the Namespace and its children from Git,
//! unsuspended).

use guard_core::context::ShapeError;
use guard_core::model::kinds as flux;
use guard_core::{AdmissionRequest, ClusterError, Context};

use crate::deletion;
use crate::kinds::{self, Kind};
use crate::settings::Settings;
use crate::warnings::Warning;

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The objects of a kind cannot be listed: the kind, the cluster's error.
    Unlisted(&'static str, ClusterError),
    /// One of them cannot be read as a request: the kind, serde's error.
    Unreadable(&'static str, ShapeError),
    /// The deletes of some of them are refused.
    Deletes(Vec<deletion::Refused>),
}

/// Is this the DELETE of a Namespace?
pub(crate) fn is_namespace(request: &AdmissionRequest) -> bool {
    request.kind.group.is_empty() && request.kind.kind == "Namespace"
}

/// The kinds whose objects a Namespace's deletion is judged for: those
/// whose deletion deletes more, and, with `resumers` listed, every
/// suspendable kind (the model's order, which metadata.yml's
/// `contextAwareResources` follows).
pub(crate) fn judged_kinds(settings: &Settings) -> impl Iterator<Item = Kind> + '_ {
    flux::KINDS
        .iter()
        .filter_map(|k| kinds::find(k.group, k.kind))
        .filter(|k| k.may_collect() || !settings.resumers.is_empty())
}

pub(crate) fn check_delete(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Result<Vec<Warning>, Refused> {
    let mut refusals = Vec::new();
    let mut warnings = Vec::new();
    for kind in judged_kinds(settings) {
        check_kind(request, &kind, settings, ctx, &mut refusals, &mut warnings)?;
    }
    if refusals.is_empty() {
        return Ok(warnings);
    }
    Err(Refused::Deletes(refusals))
}

/// Judges the objects of `kind` the Namespace holds.
fn check_kind(
    request: &AdmissionRequest,
    kind: &Kind,
    settings: &Settings,
    ctx: &Context<'_>,
    refusals: &mut Vec<deletion::Refused>,
    warnings: &mut Vec<Warning>,
) -> Result<(), Refused> {
    let api_version = kind.api_version();
    let namespace = request.name.as_str();
    let items = match ctx.cluster.list(&api_version, kind.kind, Some(namespace)) {
        Ok(items) => items,
        // A kind whose CRD is not installed (Flux Operator's, in a cluster
        // without it) has no objects to judge.
        Err(e) if e.is_unserved(&api_version, kind.kind) => return Ok(()),
        Err(e) => return Err(Refused::Unlisted(kind.kind, e)),
    };
    for item in &items {
        // Judged as a DELETE of it by whoever deletes the Namespace: the
        // namespace controller's own follow-up is let through.
        let text = format!(
            r#"{{"operation":"DELETE","kind":{{"group":"{g}","version":"{v}","kind":"{k}"}},"resource":{{"group":"{g}","version":"{v}","resource":"{r}"}},"namespace":{ns},"oldObject":{item}}}"#,
            g = kind.group,
            v = kind.versions.first().copied().unwrap_or_default(),
            k = kind.kind,
            r = kind.plural,
            ns = serde_json::Value::String(namespace.to_string()),
            item = item.get()
        );
        let mut one = serde_json::from_str::<AdmissionRequest>(&text)
            .map_err(|e| Refused::Unreadable(kind.kind, ShapeError(e)))?;
        one.user_info = request.user_info.clone();
        match deletion::check(&one, kind, settings) {
            Ok(warning) => warnings.extend(warning),
            Err(refused) => refusals.push(refused),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::decide;
    use crate::render;
    use conformance::cluster::{Recorded, RecordedCluster};
    use guard_core::testing::RequestBuilder;
    use guard_core::{Timestamp, Verdict};
    use serde_json::{json, Value};

    /// A Kustomization `tenant-a/apps` as the cluster holds it, or the
    /// error kube-apiserver answers for the list.
    fn recorded(object: Option<Value>, error: Option<&str>) -> Recorded {
        Recorded {
            api_version: "kustomize.toolkit.fluxcd.io/v1".into(),
            kind: "Kustomization".into(),
            namespace: "tenant-a".into(),
            name: "apps".into(),
            object,
            error: error.map(str::to_string),
        }
    }

    fn judged(objects: &[Recorded]) -> Verdict {
        judged_with(objects, "{}")
    }

    fn judged_with(objects: &[Recorded], settings: &str) -> Verdict {
        let cluster = RecordedCluster::new(objects);
        let r = RequestBuilder::new("DELETE")
            .kind("", "v1", "Namespace")
            .resource("", "v1", "namespaces")
            .name("tenant-a")
            .namespace("tenant-a")
            .user("alice", &["system:authenticated"])
            .old_object(json!({"apiVersion": "v1", "kind": "Namespace",
                               "metadata": {"name": "tenant-a"}}))
            .build();
        let now: Timestamp = "2026-11-20T10:00:00Z".parse().unwrap();
        let settings = guard_core::settings::parse::<Settings>(settings.as_bytes()).unwrap();
        render::verdict(
            &decide(&r, &settings, &Context::new(now, &cluster)),
            &r,
            &settings,
        )
    }

    fn kustomization(annotations: Value, spec: Value) -> Value {
        json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
               "metadata": {"name": "apps", "namespace": "tenant-a", "annotations": annotations},
               "spec": spec, "status": {"inventory": {"entries": [{"id": "a", "v": "v1"}]}}})
    }

    #[test]
    fn a_namespace_holding_the_prune_hazard_is_refused_and_others_pass() {
        let hazard = kustomization(
            json!({"reconcile.fluxcd.io/suspended": "INC-1 cutover"}),
            json!({"prune": true}),
        );
        let v = judged(&[recorded(Some(hazard), None)]);
        assert!(!v.allowed);
        assert!(v.message.as_deref().unwrap_or("").contains(
            "\nDeleting Kustomization tenant-a/apps would garbage-collect the 1 object in its \
             inventory"
        ));
        let suspended = kustomization(json!({}), json!({"prune": true, "suspend": true}));
        let v = judged(&[recorded(Some(suspended), None)]);
        assert!(v.allowed && v.warnings.len() == 1, "{v:?}");
        assert_eq!(judged(&[]), Verdict::allow());
    }

    /// With `resumers` listed, deleting the Namespace of a suspended
    /// Kustomization ends its suspension as deleting it would: only they may.
    #[test]
    fn only_resumers_may_delete_a_namespace_holding_a_suspension() {
        let suspended = kustomization(
            json!({"reconcile.fluxcd.io/suspended": "INC-1 cutover"}),
            json!({"prune": true, "suspend": true}),
        );
        let objects = [recorded(Some(suspended), None)];
        let v = judged_with(&objects, r#"{"resumers":{"groups":["platform"]}}"#);
        assert!(!v.allowed);
        assert!(v
            .message
            .as_deref()
            .unwrap_or("")
            .contains("\nalice may not delete Kustomization tenant-a/apps while it is suspended"));
        let v = judged_with(&objects, r#"{"resumers":{"users":["alice"]}}"#);
        assert!(v.allowed, "{v:?}");
        let running = kustomization(json!({}), json!({"prune": true}));
        let v = judged_with(
            &[recorded(Some(running), None)],
            r#"{"resumers":{"groups":["platform"]}}"#,
        );
        assert!(v.allowed, "{v:?}");
    }

    #[test]
    fn a_list_that_fails_is_refused_naming_the_failure() {
        let v = judged(&[recorded(None, Some("connection refused"))]);
        assert!(!v.allowed);
        // The recorded cluster words the failure as policy-server hands it
        // on (conformance `cluster.rs`); the refusal must carry it whole.
        let m = v.message.as_deref().unwrap_or("");
        assert!(
            m.starts_with(
                "Deleting Namespace tenant-a deletes the Flux objects it holds, and its \
                 Kustomizations cannot be listed to see whether that would delete what they \
                 manage: "
            ),
            "{m}"
        );
        assert!(m.contains("(500 connection refused)"), "{m}");
    }

    /// metadata.yml grants exactly the kinds a Namespace's deletion lists
    /// with `resumers` set (all of them), each at its storage version.
    #[test]
    fn context_aware_resources_are_every_judged_kind() {
        let metadata = include_str!("../metadata.yml");
        let listed: Vec<String> = metadata
            .split("contextAwareResources:\n")
            .nth(1)
            .unwrap()
            .lines()
            .take_while(|l| l.starts_with("  "))
            .collect::<Vec<_>>()
            .chunks(2)
            .map(|c| {
                format!(
                    "{} {}",
                    c[0].trim_start_matches("  - apiVersion: "),
                    c[1].trim_start_matches("    kind: ")
                )
            })
            .collect();
        let settings =
            guard_core::settings::parse::<Settings>(br#"{"resumers":{"users":["x"]}}"#).unwrap();
        let judged: Vec<String> = judged_kinds(&settings)
            .map(|k| format!("{} {}", k.api_version(), k.kind))
            .collect();
        assert_eq!(listed, judged);
        let without = guard_core::settings::parse::<Settings>(b"{}").unwrap();
        let judged: Vec<&str> = judged_kinds(&without).map(|k| k.kind).collect();
        assert_eq!(
            judged,
            [
                "Kustomization",
                "HelmRelease",
                "FluxInstance",
                "ResourceSet"
            ]
        );
    }

    fn helm_release(annotations: Value, spec: Value) -> Recorded {
        Recorded {
            api_version: "helm.toolkit.fluxcd.io/v2".into(),
            kind: "HelmRelease".into(),
            namespace: "tenant-a".into(),
            name: "podinfo".into(),
            object: Some(
                json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": "podinfo", "namespace": "tenant-a", "annotations": annotations},
                "spec": spec, "status": {"history": [{"name": "podinfo", "version": 1}]}}),
            ),
            error: None,
        }
    }

    /// Every kind whose deletion deletes more is checked, and with
    /// `resumers` every suspended kind, not only Kustomizations.
    #[test]
    fn a_namespace_holding_a_suspended_helmrelease_is_judged() {
        let annotation_only = helm_release(
            json!({"reconcile.fluxcd.io/suspended": "INC-1 cutover"}),
            json!({}),
        );
        let v = judged(&[annotation_only]);
        assert!(!v.allowed);
        assert!(
            v.message.as_deref().unwrap_or("").contains(
                "\nDeleting HelmRelease tenant-a/podinfo would uninstall its Helm release"
            ),
            "{v:?}"
        );
        let suspended = helm_release(
            json!({"reconcile.fluxcd.io/suspended": "INC-1 cutover"}),
            json!({"suspend": true}),
        );
        let v = judged_with(&[suspended], r#"{"resumers":{"groups":["platform"]}}"#);
        assert!(!v.allowed);
        assert!(
            v.message.as_deref().unwrap_or("").contains(
                "\nalice may not delete HelmRelease tenant-a/podinfo while it is suspended"
            ),
            "{v:?}"
        );
    }
}

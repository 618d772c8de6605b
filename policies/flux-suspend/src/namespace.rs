//! A Namespace's DELETE: where the deletion of the Kustomizations it holds
//! is judged, once.
//!
//! The namespace controller then deletes them with requests this policy
//! lets through ([`guard_core::model::controllers::is_namespace_controller`]); refusing those
//! would leave the Namespace stuck in Terminating with nobody told why. So
//! each Kustomization the Namespace holds, read from the cluster
//! (`contextAwareResources`: Kustomizations), is judged here as the DELETE of
//! it by the person deleting the Namespace ([`crate::deletion::check`]): the
//! prune hazard, and, with `resumers` listed, who may end a suspension by
//! deleting it (a parent Kustomization re-creates the Namespace and its
//! children from Git, unsuspended).

use guard_core::model::kinds::KUSTOMIZE;
use guard_core::{AdmissionRequest, Context};

use crate::deletion;
use crate::kinds;
use crate::settings::Settings;
use crate::warnings::Warning;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The Kustomizations cannot be listed: the cluster's error.
    Unlisted(String),
    /// One of them cannot be read as a request: serde's error.
    Unreadable(String),
    /// The deletes of some of them are refused.
    Deletes(Vec<deletion::Refused>),
}

/// Is this the DELETE of a Namespace?
pub(crate) fn is_namespace(request: &AdmissionRequest) -> bool {
    request.kind.group.is_empty() && request.kind.kind == "Namespace"
}

pub(crate) fn check_delete(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Result<Vec<Warning>, Refused> {
    let Some(kind) = kinds::find(KUSTOMIZE, "Kustomization") else {
        return Ok(Vec::new());
    };
    let api_version = kind.api_version();
    let namespace = request.name.as_str();
    let items = ctx
        .cluster
        .list(&api_version, kind.kind, Some(namespace))
        .map_err(|e| Refused::Unlisted(e.to_string()))?;
    let mut refusals = Vec::new();
    let mut warnings = Vec::new();
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
            .map_err(|e| Refused::Unreadable(e.to_string()))?;
        one.user_info = request.user_info.clone();
        match deletion::check(&one, &kind, settings) {
            Ok(warning) => warnings.extend(warning),
            Err(refused) => refusals.push(refused),
        }
    }
    if refusals.is_empty() {
        return Ok(warnings);
    }
    Err(Refused::Deletes(refusals))
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
                "Deleting Namespace tenant-a deletes the Kustomizations it holds, and they \
                 cannot be listed to see whether that would garbage-collect what they applied: "
            ),
            "{m}"
        );
        assert!(m.contains("(500 connection refused)"), "{m}");
    }
}

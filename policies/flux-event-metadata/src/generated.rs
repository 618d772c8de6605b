//! Objects that Flux controllers generate for a user's object: the HelmChart
//! helm-controller applies for each HelmRelease, the ExternalArtifacts
//! source-watcher applies for each ArtifactGenerator. Their annotations come
//! only from a template in the owner, so refusing one for a missing key would
//! stall the owner forever; the fix belongs in the owner's template.
//!
//! An object counts as generated when all three hold: the requester is one of
//! the `fluxControllers` identities, it names that controller's field manager,
//! and the object carries the ownership marks that controller writes. None
//! alone is enough (anyone can copy labels or name a field manager; a
//! controller identity also writes objects it does not generate). A HelmChart
//! must also not be a Helm release object: helm-controller installs charts
//! with the same identity and field manager, and a chart can carry any labels.
//!
//! Such a write is never refused, only warned about: the author of the owner
//! hears of a problem when the owner's template is written ([`crate::template`]).

use guard_core::model::{controllers, keys};
use guard_core::{AdmissionRequest, Metadata, Which};
use serde::Deserialize;

use crate::settings::Settings;

/// helm-controller marks the HelmChart with its owner's name and namespace.
pub const HELM_OWNER_NAME: &str = keys::HELM_RELEASE_OWNER.name;
pub const HELM_OWNER_NAMESPACE: &str = keys::HELM_RELEASE_OWNER.namespace;
/// The ownership marks Helm merges onto every object of a release, over what
/// the chart says (helm/helm v4 `pkg/action/validate.go` `setMetadataVisitor`,
/// 002ac7844eb621bf2ed2a5214c08d8d0da7c5c8f); helm-controller's drift
/// correction sets them too (`internal/action/diff.go` `setHelmMetadata`).
const HELM_RELEASE_NAME: &str = "meta.helm.sh/release-name";
const HELM_RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";
const HELM_MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "Helm");

/// Helm sets all three marks on every object it writes; asking for all three
/// keeps a template that copies one of them by chance from losing its
/// HelmChart the exemption.
fn is_helm_release_object(meta: &Metadata) -> bool {
    meta.annotations.contains_key(HELM_RELEASE_NAME)
        && meta.annotations.contains_key(HELM_RELEASE_NAMESPACE)
        && meta.labels.get(HELM_MANAGED_BY.0) == Some(HELM_MANAGED_BY.1)
}

/// Where a generated object comes from.
#[derive(Debug, PartialEq)]
pub(crate) struct Origin {
    pub(crate) controller: &'static str,
    pub(crate) owner_kind: &'static str,
    pub(crate) owner_namespace: String,
    pub(crate) owner_name: String,
    /// The owner's field whose annotations the controller copies.
    pub(crate) template: &'static str,
}

#[derive(Deserialize)]
struct ExternalArtifactHead {
    #[serde(default)]
    spec: Option<ExternalArtifactSpec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExternalArtifactSpec {
    #[serde(default)]
    source_ref: Option<SourceRef>,
}

#[derive(Deserialize)]
struct SourceRef {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
}

/// The origin of the object under review, when a Flux controller generated it.
pub(crate) fn origin(
    request: &AdmissionRequest,
    meta: &Metadata,
    settings: &Settings,
) -> Option<Origin> {
    if !settings.flux_controllers.matches(&request.user_info) {
        return None;
    }
    // An unreadable options block names no field manager, so no controller.
    let manager = request.field_manager().ok()?;
    let (controller, generates) = controllers::generator(&request.kind.group, &request.kind.kind)?;
    if manager != generates.field_manager {
        return None;
    }
    match generates.kind {
        // helm-controller's field manager is its controller name
        // (helm-controller `main.go`, `controllerName`, passed as
        // `FieldManager` to `NewHelmChartTemplate`), which fluxcd/pkg `ssa`
        // v0.76.0 sends as `client.FieldOwner` on the dry-run and the apply
        // (`ssa/manager_apply.go` `dryRunApply`, `apply`).
        "HelmChart" => {
            let name = meta.labels.get(HELM_OWNER_NAME)?;
            let namespace = meta.labels.get(HELM_OWNER_NAMESPACE)?;
            // helm-controller sets `kube.ManagedFieldsManager` to its
            // controller name (`main.go`), so Helm installs and upgrades a
            // release, and drift correction re-creates its objects
            // (`internal/action/diff.go` `ApplyDiff`), as helm-controller with
            // field manager `helm-controller`. A HelmChart in a chart is such
            // an object: its author is judged like any other.
            if is_helm_release_object(meta) {
                return None;
            }
            // The chart's name is `<namespace>-<name>` of its HelmRelease
            // (api/v2 `GetHelmChartName`): labels naming another release are
            // not helm-controller's.
            if meta.name != format!("{namespace}-{name}") {
                return None;
            }
            Some(Origin {
                controller: controller.name,
                owner_kind: generates.owner_kind,
                owner_namespace: namespace.to_string(),
                owner_name: name.to_string(),
                template: generates.template,
            })
        }
        "ExternalArtifact" => {
            meta.labels.get(keys::GENERATOR_LABEL)?;
            let head = request
                .object_as::<ExternalArtifactHead>(Which::Object)
                .ok()??;
            let source = head.spec?.source_ref?;
            if source.kind != generates.owner_kind || source.name.is_empty() {
                return None;
            }
            // source-watcher writes the generator's namespace; an empty one is the object's own.
            let owner_namespace = if source.namespace.is_empty() {
                meta.namespace.clone()
            } else {
                source.namespace
            };
            Some(Origin {
                controller: controller.name,
                owner_kind: generates.owner_kind,
                owner_namespace,
                owner_name: source.name,
                template: generates.template,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::testing::RequestBuilder;
    use serde_json::json;

    fn request(kind: &str, user: &str, labels: serde_json::Value) -> AdmissionRequest {
        let manager = user.rsplit(':').next().unwrap_or(user);
        request_by(kind, user, manager, labels)
    }

    fn request_by(
        kind: &str,
        user: &str,
        manager: &str,
        labels: serde_json::Value,
    ) -> AdmissionRequest {
        request_with(kind, user, manager, json!({"labels": labels}))
    }

    /// A request for the object `apps/apps-podinfo` with `meta` as its metadata.
    fn request_with(
        kind: &str,
        user: &str,
        manager: &str,
        meta: serde_json::Value,
    ) -> AdmissionRequest {
        let mut object = json!({"metadata": {"name": "apps-podinfo", "namespace": "apps"},
                                "spec": {"sourceRef": {"kind": "ArtifactGenerator", "name": "gen"}}});
        if let (Some(m), Some(extra)) = (object["metadata"].as_object_mut(), meta.as_object()) {
            m.extend(extra.clone());
        }
        RequestBuilder::new("CREATE")
            .name("apps-podinfo")
            .namespace("apps")
            .kind(guard_core::model::kinds::SOURCE, "v1", kind)
            .username(user)
            .object(object)
            .options(json!({"kind": "CreateOptions", "fieldManager": manager}))
            .build()
    }

    fn origin_of(r: &AdmissionRequest) -> Option<Origin> {
        let meta = r.metadata(Which::Object).unwrap().unwrap();
        origin(r, &meta, &Settings::default())
    }

    const HELM: &str = "system:serviceaccount:flux-system:helm-controller";
    const WATCHER: &str = "system:serviceaccount:flux-system:source-watcher";

    #[test]
    fn helm_charts_need_the_controller_and_its_owner_labels() {
        let owned = json!({HELM_OWNER_NAME: "podinfo", HELM_OWNER_NAMESPACE: "apps"});
        let o = origin_of(&request("HelmChart", HELM, owned.clone())).unwrap();
        assert_eq!(
            o,
            Origin {
                controller: "helm-controller",
                owner_kind: "HelmRelease",
                owner_namespace: "apps".into(),
                owner_name: "podinfo".into(),
                template: "spec.chart.metadata.annotations",
            }
        );
        assert!(origin_of(&request("HelmChart", "bob", owned)).is_none());
        assert!(origin_of(&request("HelmChart", HELM, json!({HELM_OWNER_NAME: "p"}))).is_none());
        // The controller's identity with another field manager: kubectl run
        // with its token, say.
        let owned = json!({HELM_OWNER_NAME: "podinfo", HELM_OWNER_NAMESPACE: "apps"});
        assert!(origin_of(&request_by(
            "HelmChart",
            HELM,
            "kubectl-edit",
            owned.clone()
        ))
        .is_none());
        // Labels naming another release than the chart's name says.
        let other = json!({HELM_OWNER_NAME: "shop", HELM_OWNER_NAMESPACE: "apps"});
        assert!(origin_of(&request("HelmChart", HELM, other)).is_none());
    }

    /// Helm, run inside helm-controller, writes a chart's objects with the
    /// controller's identity and field manager, and marks each as the
    /// release's: a HelmChart among them is not generated from a template.
    #[test]
    fn helm_release_objects_are_not_generated() {
        let labels = json!({HELM_OWNER_NAME: "podinfo", HELM_OWNER_NAMESPACE: "apps"});
        let mut managed = labels.clone();
        managed["app.kubernetes.io/managed-by"] = json!("Helm");
        let marks = json!({"meta.helm.sh/release-name": "tools",
                           "meta.helm.sh/release-namespace": "apps"});
        let release_object = json!({"labels": managed.clone(), "annotations": marks});
        assert!(origin_of(&request_with(
            "HelmChart",
            HELM,
            "helm-controller",
            release_object
        ))
        .is_none());
        // One mark alone, copied from a template, is not Helm's write.
        for meta in [
            json!({"labels": managed}),
            json!({"labels": labels.clone(),
                            "annotations": {"meta.helm.sh/release-name": "tools"}}),
        ] {
            assert!(
                origin_of(&request_with(
                    "HelmChart",
                    HELM,
                    "helm-controller",
                    meta.clone()
                ))
                .is_some(),
                "{meta}"
            );
        }
        let meta = json!({"labels": labels});
        assert!(origin_of(&request_with("HelmChart", HELM, "helm-controller", meta)).is_some());
    }

    #[test]
    fn external_artifacts_need_source_watcher_and_a_generator() {
        let owned = json!({keys::GENERATOR_LABEL: "4e5f6a7b"});
        let o = origin_of(&request("ExternalArtifact", WATCHER, owned.clone())).unwrap();
        assert_eq!(
            (
                o.owner_kind,
                o.owner_namespace.as_str(),
                o.owner_name.as_str()
            ),
            ("ArtifactGenerator", "apps", "gen")
        );
        assert!(origin_of(&request("ExternalArtifact", HELM, json!({}))).is_none());
        assert!(origin_of(&request("ExternalArtifact", "bob", owned.clone())).is_none());
        assert!(origin_of(&request("GitRepository", WATCHER, owned)).is_none());
    }
}

//! The AdmissionRequests kube-apiserver sends while Flux's
//! kustomize-controller applies a revision of the manifests.
//!
//! kustomize-controller applies each object by server-side apply as field
//! manager `kustomize-controller` with forced ownership, and prunes objects
//! gone from the revision with background propagation
//! (fluxcd/kustomize-controller 186fb3b2, `main.go`, `controllerName`;
//! `internal/controller/kustomization_controller.go`, `ssa.Owner`,
//! `SetOwnerLabels`, `PropagationPolicy`; fluxcd/pkg e2cfd1a2,
//! `ssa/manager_apply.go`, `apply`). An apply patch that creates an object
//! reaches admission as CREATE with `CreateOptions`, one that changes it as
//! UPDATE with `UpdateOptions`, carrying the patch's field manager
//! (kubernetes/apiserver 24a394e5, `pkg/endpoints/handlers/patch.go`,
//! `patchToCreateOptions`, `patchToUpdateOptions`). kustomize-controller
//! dry-runs every apply first; that request is the same with `dryRun: true`.

use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};

use guard_core::Operation;

use super::identity::Identity;

/// Who writes: Flux's kustomize-controller unless told otherwise.
#[derive(Debug, Clone)]
pub struct Writer {
    pub username: String,
    pub groups: Vec<String>,
    pub field_manager: String,
}

impl Writer {
    /// A user; a service account (`system:serviceaccount:NS:NAME`) gets the
    /// groups kube-apiserver gives every service account token, and every
    /// user `system:authenticated` (kubernetes/apiserver 24a394e5,
    /// `pkg/authentication/serviceaccount/util.go`, `MakeGroupNames`;
    /// `pkg/authentication/group/authenticated_group_adder.go`).
    pub fn new(username: &str, groups: Vec<String>, field_manager: &str) -> Self {
        let groups = if groups.is_empty() {
            match username
                .strip_prefix("system:serviceaccount:")
                .and_then(|rest| rest.split_once(':'))
            {
                Some((namespace, _)) => vec![
                    "system:serviceaccounts".to_string(),
                    format!("system:serviceaccounts:{namespace}"),
                    "system:authenticated".to_string(),
                ],
                None => vec!["system:authenticated".to_string()],
            }
        } else {
            groups
        };
        Self {
            username: username.to_string(),
            groups,
            field_manager: field_manager.to_string(),
        }
    }
}

/// kustomize-controller's own identity in the standard install (the model's).
pub fn kustomize_controller() -> String {
    guard_core::model::controllers::KUSTOMIZE_CONTROLLER
        .service_account
        .username()
}

/// The AdmissionRequest for `operation` on `id`; `object` is the new object
/// (none for a DELETE), `old` the stored one (none for a CREATE).
pub fn admission_request(
    id: &Identity,
    operation: Operation,
    object: Option<&Value>,
    old: Option<&Value>,
    writer: &Writer,
    salt: &str,
) -> Value {
    let options = match operation {
        Operation::Create => json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1",
                                     "fieldManager": writer.field_manager}),
        Operation::Update => json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1",
                                     "fieldManager": writer.field_manager}),
        Operation::Delete => json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                     "propagationPolicy": "Background"}),
        // Applying manifests never connects.
        Operation::Connect => Value::Null,
    };
    let kind = json!({"group": id.group, "version": id.version, "kind": id.kind});
    let resource = json!({"group": id.group, "version": id.version, "resource": id.resource()});
    // A request on a Namespace carries its name as its namespace: the path
    // of an apply or a delete is `/api/v1/namespaces/{name}`
    // (kubernetes/apiserver 24a394e5, `pkg/endpoints/request/requestinfo.go`,
    // `NewRequestInfo`).
    let namespace = if id.is_namespace() {
        Some(id.name.as_str())
    } else {
        id.namespace.as_deref()
    };
    json!({
        "uid": uid(&format!("{salt}\0{id}\0{}", operation.as_str())),
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "name": id.name,
        "operation": operation.as_str(),
        "userInfo": {"username": writer.username, "groups": writer.groups},
        "object": object.cloned().unwrap_or(Value::Null),
        "oldObject": old.cloned().unwrap_or(Value::Null),
        "dryRun": false,
        "options": options,
        "namespace": namespace,
    })
}

/// A UUID-shaped id that is the same for the same request, so that reports
/// of two runs compare.
pub fn uid(seed: &str) -> String {
    let h = Sha256::digest(seed.as_bytes());
    let hex: String = h.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_account_gets_its_groups() {
        let w = Writer::new(&kustomize_controller(), Vec::new(), "kustomize-controller");
        assert_eq!(
            w.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:flux-system",
                "system:authenticated"
            ]
        );
        assert_eq!(uid("a").len(), 36);
        assert_eq!(uid("a"), uid("a"));
    }
}

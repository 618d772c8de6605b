//! `flux resume` of an object suspended only by the annotation, recognised by
//! what the request carries.
//!
//! `flux resume` sets `spec.suspend = false` on the typed object and sends
//! controller-runtime's `client.MergeFrom` diff (fluxcd/flux2
//! `cmd/flux/resume.go` `resumeCommand.patch`, `setUnsuspended` in
//! `cmd/flux/resume_kustomization.go` and its siblings; commit da2d22d3,
//! v2.9.0+36). `Suspend` is `omitempty`, so when the stored object has no
//! `spec.suspend: true` the diff is `{}`: the UPDATE kube-apiserver sends
//! has an object identical to `oldObject` (a no-op leaves managedFields,
//! resourceVersion and generation alone). Its client names no field manager
//! (`utils.KubeClient` in `internal/utils/utils.go` sets none), and
//! kube-apiserver copies the PatchOptions' empty `fieldManager` into the
//! admission `UpdateOptions` (k8s.io/apiserver
//! `pkg/endpoints/handlers/patch.go` `patchToUpdateOptions`). kubectl, by
//! contrast, always names one (`kubectl-annotate`, `kubectl-patch`, ...),
//! even when its patch is empty.

use guard_core::{AdmissionRequest, Operation, Which};

/// Is this the empty patch `flux resume` sends: an UPDATE that changes
/// nothing and names no field manager? `Err` when the request's options or
/// objects cannot be read, so the question cannot be answered.
pub fn is_empty_resume(request: &AdmissionRequest) -> Result<bool, String> {
    if request.operation != Operation::Update || !request.field_manager()?.is_empty() {
        return Ok(false);
    }
    // Compared as JSON values without building them: a 2 MiB request of
    // small nested members would take tens of MiB as two `Value`s.
    let (Some(new), Some(old)) = (request.raw(Which::Object), request.raw(Which::OldObject)) else {
        return Ok(false);
    };
    Ok(guard_core::json_eq::equal(new.get(), old.get()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn request(options: Value, object: Value, old: Value) -> AdmissionRequest {
        serde_json::from_value(json!({
            "operation": "UPDATE", "options": options, "object": object, "oldObject": old
        }))
        .unwrap()
    }

    fn ks(annotations: Value) -> Value {
        json!({"metadata": {"name": "apps", "annotations": annotations}, "spec": {"prune": true}})
    }

    #[test]
    fn an_empty_patch_without_a_field_manager_is_flux_resume() {
        let o = ks(json!({"reconcile.fluxcd.io/suspended": "INC-1 x"}));
        let flux = json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"});
        assert!(is_empty_resume(&request(flux.clone(), o.clone(), o.clone())).unwrap());
        let kubectl = json!({"kind": "UpdateOptions", "fieldManager": "kubectl-annotate"});
        assert!(!is_empty_resume(&request(kubectl, o.clone(), o.clone())).unwrap());
        assert!(!is_empty_resume(&request(flux, ks(json!({})), o.clone())).unwrap());
        // Unreadable options are not "no field manager".
        let unreadable = json!({"kind": "UpdateOptions", "fieldManager": 7});
        let err = is_empty_resume(&request(unreadable, o.clone(), o)).unwrap_err();
        assert!(err.starts_with("malformed options:"), "{err}");
    }
}

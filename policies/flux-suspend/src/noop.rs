//! Writes that change nothing: an UPDATE naming no field manager whose
//! object equals `oldObject`, `metadata.managedFields` aside.
//!
//! Three writers send one, and the request alone cannot tell them apart:
//! - `flux resume` of an object whose `spec.suspend` is not set: it sets
//!   `spec.suspend = false` on the typed object and sends controller-runtime's
//!   `client.MergeFrom` diff, which is `{}` as `suspend` is `omitempty`
//!   (fluxcd/flux2 `cmd/flux/resume.go` `resumeCommand.patch`,
//!   `setUnsuspended` in `cmd/flux/resume_kustomization.go`; commit da2d22d3,
//!   v2.9.0+36);
//! - `flux migrate`, on every Flux object after a CRD storage-version change
//!   (flux2 `cmd/flux/migrate.go` `ClusterMigrator.migrateCR`, same commit);
//! - Flux Operator's storage-version migration on each Flux upgrade
//!   (controlplaneio-fluxcd/flux-operator
//!   `internal/controller/fluxinstance_migrator.go` `migrateCR`, commit
//!   17c6aead, v0.58.1+2).
//!
//! The migrations send the merge patch `{}`, or, when a managedFields entry
//! names an older apiVersion, a JSON patch replacing `metadata.managedFields`
//! (fluxcd/pkg `ssa/patch.go` `PatchMigrateToVersion`, commit e2cfd1a2). None
//! of them names a field manager (flux2 `internal/utils/utils.go`
//! `KubeClient`, and the manager's client in Flux Operator, set none), and
//! kube-apiserver copies the PatchOptions' empty `fieldManager` into the
//! admission `UpdateOptions` (k8s.io/apiserver
//! `pkg/endpoints/handlers/patch.go` `patchToUpdateOptions`, commit 24a394e5).
//! kubectl always names one (`kubectl-annotate`, `kubectl-patch`, ...).
//!
//! A migration must leave every object as stored, so such a write never
//! changes the suspension: not a resume, not a reason to mirror.

use guard_core::json_text;
use guard_core::{AdmissionRequest, Operation, UserInfo, Which};

use crate::kinds::{Honours, Kind};
use crate::view::State;

/// Is this a write that changes nothing and names no field manager? The
/// field manager is the request's, already read from its options (which, when
/// unreadable, the caller refuses).
pub(crate) fn is_noop(request: &AdmissionRequest, field_manager: &str) -> bool {
    if request.operation != Operation::Update || !field_manager.is_empty() {
        return false;
    }
    let (Some(new), Some(old)) = (request.raw(Which::Object), request.raw(Which::OldObject)) else {
        return false;
    };
    equal_but_managed_fields(new.get(), old.get())
}

/// A write that changes nothing leaves the suspension as stored. When a
/// person sends it and the object is suspended only by the annotation, it
/// may have been `flux resume`, which cannot resume it: they are to be told
/// the command that does. A service account's no-op (Flux Operator's
/// migration) gets no such hint: no one reads it.
pub(crate) fn keeps_annotation_only(old: Option<&State>, kind: &Kind, user: &UserInfo) -> bool {
    kind.honours == Honours::SpecSuspend
        && old.is_some_and(State::annotation_only)
        && !user.username.starts_with("system:serviceaccount:")
}

/// Equal as JSON values once `metadata.managedFields` is left out of both,
/// compared member by member without building the objects.
fn equal_but_managed_fields(a: &str, b: &str) -> bool {
    if json_text::equal(a, b) {
        return true;
    }
    let (Some(x), Some(y)) = (json_text::members(a), json_text::members(b)) else {
        return false;
    };
    x.len() == y.len()
        && x.iter().zip(&y).all(|((kx, vx), (ky, vy))| {
            kx == ky
                && if kx == "metadata" {
                    equal_without(vx.get(), vy.get(), "managedFields")
                } else {
                    json_text::equal(vx.get(), vy.get())
                }
        })
}

/// An object's members but `skip`.
fn kept<'a>(members: json_text::Members<'a>, skip: &str) -> json_text::Members<'a> {
    members.into_iter().filter(|(k, _)| k != skip).collect()
}

/// Two objects equal but for the member `skip`.
fn equal_without(a: &str, b: &str, skip: &str) -> bool {
    let (Some(x), Some(y)) = (json_text::members(a), json_text::members(b)) else {
        return json_text::equal(a, b);
    };
    let (x, y) = (kept(x, skip), kept(y, skip));
    x.len() == y.len()
        && x.iter()
            .zip(&y)
            .all(|((kx, vx), (ky, vy))| kx == ky && json_text::equal(vx.get(), vy.get()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn request(object: Value, old: Value) -> AdmissionRequest {
        serde_json::from_value(json!({"operation": "UPDATE", "object": object, "oldObject": old}))
            .unwrap()
    }

    fn ks(annotations: Value, managed: &str) -> Value {
        json!({"metadata": {"name": "apps", "annotations": annotations,
                            "managedFields": [{"manager": "flux", "apiVersion": managed}]},
               "spec": {"prune": true}})
    }

    #[test]
    fn an_empty_patch_or_a_managed_fields_migration_without_a_field_manager_is_a_noop() {
        let o = ks(json!({"reconcile.fluxcd.io/suspended": "INC-1 x"}), "v1");
        let r = |object: &Value| request(object.clone(), o.clone());
        assert!(is_noop(&r(&o), ""));
        let migrated = ks(json!({"reconcile.fluxcd.io/suspended": "INC-1 x"}), "v2");
        assert!(is_noop(&r(&migrated), ""));
        assert!(!is_noop(&r(&o), "kubectl-annotate"));
        assert!(!is_noop(&r(&ks(json!({}), "v1")), ""));
    }
}

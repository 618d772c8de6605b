//! Flux's own applies, recognised by what they send.
//!
//! kustomize-controller applies every object of a Kustomization with
//! server-side apply under field manager `kustomize-controller`
//! (fluxcd/kustomize-controller `main.go` `controllerName`, passed as
//! `ssa.Owner.Field` in `internal/controller/kustomization_controller.go`
//! `apply`; commit 186fb3b2, v1.9.0+36), and sends its metadata cleanup under
//! the same manager (fluxcd/pkg `ssa/manager_apply.go` `cleanupMetadata`,
//! commit e2cfd1a2). Its identity is its own service account, or, with
//! `spec.serviceAccountName`, the tenant's service account it impersonates
//! (fluxcd/pkg `runtime/client/impersonator.go` `setImpersonationConfig`):
//! the field manager is the one thing every apply of it shares.

use guard_core::managed_fields;
use guard_core::{AdmissionRequest, Which};

use crate::kinds::SUSPEND_ANNOTATION;

/// The field manager of kustomize-controller's applies.
const KUSTOMIZE_CONTROLLER: &str = "kustomize-controller";

/// Does this field manager name an apply of Git by Flux? Anyone may name
/// it; what it changes is only that the annotation the manifest states wins
/// over a `spec.suspend` the apply dropped, which keeps a suspension.
pub(crate) fn applies(field_manager: &str) -> bool {
    field_manager == KUSTOMIZE_CONTROLLER
}

/// Who keeps the annotation when a reconciler's apply keeps a suspension:
/// the manifest it applies, or managers outside it (`kubectl annotate`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeptBy {
    /// The applier's own apply entry owns the annotation: Git states it.
    Manifest,
    /// Other field managers own it (none when nobody does).
    Others(Vec<String>),
}

/// Whether the reconciler's own apply states the annotation (its `Apply`
/// entry under the request's field manager owns it) or others set it.
pub(crate) fn kept_by(request: &AdmissionRequest, field_manager: &str) -> KeptBy {
    let owners = managed_fields::annotation_owners(request, Which::Object, SUSPEND_ANNOTATION);
    if owners
        .iter()
        .any(|o| o.manager == field_manager && o.applies())
    {
        return KeptBy::Manifest;
    }
    KeptBy::Others(owners.into_iter().map(|o| o.manager).collect())
}

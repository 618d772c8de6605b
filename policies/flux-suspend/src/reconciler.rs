//! Flux's own applies, recognised by what they send: the field manager of
//! a Flux controller's applies ([`controllers::flux_applier`]), the one
//! thing every apply of it shares, whether it is sent as the controller or
//! as the tenant it impersonates (kustomize-controller, helm-controller and
//! Flux Operator under `spec.serviceAccountName`).

use guard_core::managed_fields;
use guard_core::model::controllers;
use guard_core::{AdmissionRequest, Which};

use crate::kinds::SUSPEND_ANNOTATION;

/// Does this field manager name an apply of Git by Flux? Anyone may name
/// it; what it changes is only that the annotation the manifest states wins
/// over a `spec.suspend` the apply dropped, which keeps a suspension.
pub(crate) fn applies(field_manager: &str) -> bool {
    controllers::flux_applier(field_manager).is_some()
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

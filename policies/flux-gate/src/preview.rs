//! Previews: a server-side dry run under a Flux applier's field manager from
//! an identity that is not the applier's. `flux diff kustomization` sends
//! exactly that: a server-side apply dry run of each built object with field
//! manager `kustomize-controller`, from whoever runs it (a CI job), with the
//! Kustomization's owner labels on every object (fluxcd/flux2
//! `internal/build/diff.go` `Manager`, `internal/build/build.go`
//! `setOwnerLabels`, commit da2d22d3; the model's `flux diff kustomization`
//! client). It changes nothing, so a freeze lets it through, warned.
//!
//! kustomize-controller's own dry run before each apply (fluxcd/pkg ssa
//! `ApplyAll`) is sent as the applier: its own service account, or the
//! service account it impersonates for the Kustomization. That one is held
//! on purpose: it is how the hold reaches the Kustomization's `Ready`
//! condition before any object of the stage is applied. So a dry run is a
//! preview only when its identity is neither the controller's own nor the
//! applier of any Flux object its owner labels name; when an owner cannot
//! be read, or the object names none, it is held as before.

use guard_core::model::controllers;
use guard_core::{AdmissionRequest, Context, Metadata};

use crate::emergency_override::owner_appliers;
use crate::settings::Compiled;

/// Is this request a preview that a freeze lets through?
pub(crate) fn is_preview(
    request: &AdmissionRequest,
    meta: &Metadata,
    c: &Compiled,
    ctx: &Context<'_>,
) -> bool {
    if !request.dry_run {
        return false;
    }
    let Ok(manager) = request.field_manager() else {
        return false;
    };
    let Some(controller) = controllers::flux_applier(&manager) else {
        return false;
    };
    let username = &request.user_info.username;
    if controller.is_itself(username, &c.flux_namespace) {
        return false;
    }
    match owner_appliers(meta, c, ctx) {
        Ok(appliers) => !appliers.is_empty() && !appliers.contains(username),
        Err(_) => false,
    }
}

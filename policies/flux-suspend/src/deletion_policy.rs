//! What kustomize-controller deletes when a Kustomization is deleted.
//!
//! The rule is kustomize-controller's `finalizerShouldDeleteResources`
//! (fluxcd/kustomize-controller `internal/controller/kustomization_controller.go`,
//! commit 186fb3b2, v1.9.0+36): nothing is deleted when `spec.suspend` is
//! true or the inventory is empty; otherwise `deletionPolicy` decides:
//! `MirrorPrune` (the default, `GetDeletionPolicy` in `api/v1/kustomization_types.go`)
//! follows `spec.prune`, `Delete` and `WaitForTermination` always delete, and
//! `Orphan` (or any other value) never does.

/// Why deleting a Kustomization would delete its inventory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Collects {
    /// `deletionPolicy` MirrorPrune (or unset) with `spec.prune: true`.
    Prune,
    /// `deletionPolicy: Delete`.
    Delete,
    /// `deletionPolicy: WaitForTermination`.
    WaitForTermination,
}

/// kustomize-controller's deletion policy, suspension and inventory aside.
pub(crate) fn collects(deletion_policy: Option<&str>, prune: bool) -> Option<Collects> {
    match deletion_policy.unwrap_or("") {
        "" | "MirrorPrune" => prune.then_some(Collects::Prune),
        "Delete" => Some(Collects::Delete),
        "WaitForTermination" => Some(Collects::WaitForTermination),
        _ => None,
    }
}

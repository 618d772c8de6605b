//! What a Flux applier's managedFields cleanup takes over before each
//! server-side apply: the entries of these field managers are renamed into
//! the applier's own `Apply` entry (fluxcd/pkg `ssa/patch.go`
//! `PatchReplaceFieldsManagers`, sent by `ssa/manager_apply.go`
//! `cleanupMetadata` as a JSON patch under the applier's field manager,
//! commit e2cfd1a2), so the apply that follows removes every field they set
//! that the manifest in Git does not state. A command meant to last past
//! the next reconcile of an object applied from Git writes under a field
//! manager none of these match ([`takes_over`]).
//!
//! An entry matches (`ssa/patch.go` `matchFieldManager`) when its operation
//! is the row's, it is not a subresource's, and its manager starts with the
//! row's name, or equals it for an exact row.
//!
//! Each applier also takes over every `--override-manager` flag value (as
//! `Apply` and `Update`), which only the cluster's operator knows: a command
//! is safe only under a manager nobody listed there.

use super::controllers;
use super::Source;

/// `metadata.managedFields[].operation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    /// The operation as managedFields write it.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "Apply" => Some(Self::Apply),
            "Update" => Some(Self::Update),
            _ => None,
        }
    }
}

/// One `ssa.FieldManager` of a cleanup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TakenOver {
    pub name: &'static str,
    pub operation: Operation,
    /// `ExactMatch`: the name whole, not as a prefix.
    pub exact: bool,
}

const fn prefix(name: &'static str, operation: Operation) -> TakenOver {
    TakenOver {
        name,
        operation,
        exact: false,
    }
}

const fn exact(name: &'static str, operation: Operation) -> TakenOver {
    TakenOver {
        name,
        operation,
        exact: true,
    }
}

/// An applier's cleanup: the applier's field manager and what it takes over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cleanup {
    /// The applier's field manager (the model's `controllers`).
    pub applier: &'static str,
    /// What it applies with this cleanup.
    pub applies: &'static str,
    pub takes_over: &'static [TakenOver],
    pub source: Source,
}

/// kustomize-controller applying a Kustomization's objects.
pub const KUSTOMIZE_CONTROLLER: Cleanup = Cleanup {
    applier: controllers::KUSTOMIZE_CONTROLLER.name,
    applies: "a Kustomization's objects",
    takes_over: &[
        prefix("kubectl", Operation::Apply),
        prefix("kubectl", Operation::Update),
        prefix("before-first-apply", Operation::Update),
        prefix(controllers::KUSTOMIZE_CONTROLLER.name, Operation::Update),
    ],
    source: Source::new(
        "fluxcd/kustomize-controller `internal/controller/kustomization_controller.go` \
         `apply` (`fieldManagers`, `ApplyCleanupOptions.FieldManagers`; `r.ControllerName` \
         is `kustomize-controller`), commit 186fb3b2; fluxcd/pkg `ssa/patch.go` \
         `matchFieldManager`, `PatchReplaceFieldsManagers`, commit e2cfd1a2",
    ),
};

/// Flux Operator applying a ResourceSet's objects.
pub const FLUX_OPERATOR_RESOURCESET: Cleanup = Cleanup {
    applier: controllers::FLUX_OPERATOR.name,
    applies: "a ResourceSet's objects",
    takes_over: &[
        exact(controllers::KUSTOMIZE_CONTROLLER.name, Operation::Apply),
        exact("helm", Operation::Update),
        prefix("kubectl", Operation::Update),
        prefix("before-first-apply", Operation::Update),
        prefix("kubectl", Operation::Apply),
    ],
    source: Source::new(
        "controlplaneio-fluxcd/flux-operator `internal/controller/resourceset_controller.go` \
         `apply` (`takeOwnershipFrom(r.OverrideFieldManagers)`), `internal/controller/common.go` \
         `takeOwnershipFrom`, commit 17c6aead",
    ),
};

/// Every cleanup of an applier that may apply a user's object from Git.
pub const CLEANUPS: &[Cleanup] = &[KUSTOMIZE_CONTROLLER, FLUX_OPERATOR_RESOURCESET];

impl TakenOver {
    /// `matchFieldManager`: does this row take over the entry?
    pub fn matches(&self, manager: &str, operation: Operation, subresource: &str) -> bool {
        operation == self.operation
            && subresource.is_empty()
            && if self.exact {
                manager == self.name
            } else {
                manager.starts_with(self.name)
            }
    }
}

impl Cleanup {
    /// Does this cleanup take over the entry?
    pub fn takes_over(&self, manager: &str, operation: Operation, subresource: &str) -> bool {
        self.takes_over
            .iter()
            .any(|t| t.matches(manager, operation, subresource))
    }
}

/// Does any applier's cleanup take over what `manager` wrote with
/// `operation` on the main resource?
pub fn takes_over(manager: &str, operation: Operation) -> bool {
    CLEANUPS
        .iter()
        .any(|c| c.takes_over(manager, operation, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_is_taken_over_by_prefix_and_a_manager_of_ones_own_is_not() {
        assert!(takes_over("kubectl-annotate", Operation::Update));
        assert!(takes_over("kubectl-client-side-apply", Operation::Update));
        assert!(takes_over("kubectl", Operation::Apply));
        assert!(takes_over("before-first-apply", Operation::Update));
        assert!(takes_over("helm", Operation::Update));
        assert!(!takes_over("helm-controller", Operation::Update));
        for operation in [Operation::Apply, Operation::Update] {
            assert!(!takes_over(
                crate::model::keys::gating::COMMAND_FIELD_MANAGER,
                operation
            ));
        }
        assert!(!takes_over("flux", Operation::Update));
        // kustomize-controller's own Update entries, never its Apply.
        assert!(KUSTOMIZE_CONTROLLER.takes_over("kustomize-controller", Operation::Update, ""));
        assert!(!KUSTOMIZE_CONTROLLER.takes_over("kustomize-controller", Operation::Apply, ""));
        assert!(!KUSTOMIZE_CONTROLLER.takes_over("kubectl-annotate", Operation::Update, "status"));
    }

    #[test]
    fn every_cleanup_belongs_to_a_flux_applier() {
        for c in CLEANUPS {
            assert!(
                controllers::flux_applier(c.applier).is_some(),
                "{}",
                c.applier
            );
            assert!(!c.source.text().is_empty());
        }
    }
}

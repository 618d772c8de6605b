//! The Flux kinds that can be suspended (guard-core's table of Flux kinds),
//! and the mechanism their controller honours.

pub use guard_core::model::keys::SUSPENDED as SUSPEND_ANNOTATION;
pub(crate) use guard_core::model::kinds::{is_disable_annotation, is_disabled, DISABLED};

pub(crate) use guard_core::model::kinds::Honours;
use guard_core::model::kinds::{self as flux, Deletion, InventoryRule};

/// A Flux kind that can be suspended: the shared table's entry with the
/// mechanism its controller honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kind {
    flux: &'static flux::Kind,
    pub(crate) honours: Honours,
}

impl std::ops::Deref for Kind {
    type Target = flux::Kind;

    fn deref(&self) -> &flux::Kind {
        self.flux
    }
}

impl Kind {
    /// The table's entry as a suspendable kind; `None` when nothing suspends it.
    fn of(flux: &'static flux::Kind) -> Option<Self> {
        Some(Kind {
            flux,
            honours: flux.honours?,
        })
    }

    /// Deleting it has its controller delete what it applied as its
    /// `spec.deletionPolicy` and `spec.prune` say (a Kustomization), which
    /// are then read.
    pub(crate) fn prunes(&self) -> bool {
        self.deletion == Deletion::Inventory(InventoryRule::DeletionPolicy)
    }

    /// What deleting an object of this kind makes its controller delete
    /// besides it unless the controller reads it as suspended, from the
    /// model's [`Deletion`]: a Kustomization's inventory as `policy` (its
    /// `spec.deletionPolicy` and `spec.prune`) says; a FluxInstance's or
    /// ResourceSet's whole inventory; a HelmRelease's Helm release. What a
    /// suspension does not stop (an ArtifactGenerator's ExternalArtifacts)
    /// or nothing at all is `None`: no suspension changes it.
    pub(crate) fn collects(&self, policy: Option<flux::Collects>) -> Option<Collects> {
        match self.deletion {
            Deletion::Inventory(InventoryRule::DeletionPolicy) => policy.map(Collects::Policy),
            Deletion::Inventory(InventoryRule::Always) => Some(Collects::Inventory),
            Deletion::HelmUninstall => Some(Collects::Release),
            Deletion::Itself | Deletion::Generated => None,
        }
    }
}

impl Kind {
    /// Can deleting it delete more than it, as long as its controller does
    /// not read it as suspended?
    pub(crate) fn may_collect(&self) -> bool {
        self.collects(Some(flux::Collects::Prune)).is_some()
    }
}

/// What deleting an object not suspended as its controller reads it deletes
/// besides it, and why (the model's [`Deletion`] of its kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Collects {
    /// A Kustomization's inventory, as its deletion policy says.
    Policy(flux::Collects),
    /// The whole inventory, always (FluxInstance, ResourceSet: flux-operator
    /// `uninstall` unless `IsDisabled`).
    Inventory,
    /// The Helm release, every object of its chart (HelmRelease:
    /// helm-controller `reconcileDelete` unless `spec.suspend`).
    Release,
}

/// The suspendable kinds: every Flux kind but ExternalArtifact, which has no
/// suspend at all; metadata.yml lists the same resources.
#[cfg(test)]
pub(crate) fn suspendable() -> impl Iterator<Item = Kind> {
    flux::KINDS.iter().filter_map(Kind::of)
}

/// The suspendable kind of a request, or `None` for any other kind.
pub(crate) fn find(group: &str, kind: &str) -> Option<Kind> {
    flux::find(group, kind).and_then(Kind::of)
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::model::kinds::{
        HELM, IMAGE, KUSTOMIZE, NOTIFICATION, OPERATOR, SOURCE, SOURCE_EXTENSIONS,
    };

    #[test]
    fn every_table_group_is_known_by_group_and_kind() {
        assert_eq!(
            find(KUSTOMIZE, "Kustomization").unwrap().plural,
            "kustomizations"
        );
        assert_eq!(
            find(HELM, "HelmRelease").unwrap().honours,
            Honours::SpecSuspend
        );
        assert_eq!(
            find(NOTIFICATION, "Provider").unwrap().honours,
            Honours::SpecSuspend
        );
        assert_eq!(
            find(SOURCE_EXTENSIONS, "ArtifactGenerator")
                .unwrap()
                .honours,
            Honours::DisableAnnotation("source.extensions.fluxcd.io/reconcile")
        );
        assert_eq!(
            find(OPERATOR, "ResourceSet").unwrap().honours,
            Honours::DisableAnnotation("fluxcd.controlplane.io/reconcile")
        );
        assert_eq!(suspendable().count(), 18);
    }

    #[test]
    fn other_kinds_are_not_judged() {
        assert!(find(SOURCE, "ExternalArtifact").is_none());
        assert!(find("apps", "Deployment").is_none());
        assert!(find(KUSTOMIZE, "kustomization").is_none());
    }

    #[test]
    fn only_kustomizations_prune() {
        assert!(find(KUSTOMIZE, "Kustomization").unwrap().prunes());
        assert!(!find(HELM, "HelmRelease").unwrap().prunes());
    }

    /// Every kind whose deletion a suspension stops has its hazard; the
    /// rest have none, whatever its deletion policy would say.
    #[test]
    fn what_a_deletion_collects_follows_the_model() {
        let prune = Some(flux::Collects::Prune);
        let collecting: Vec<(&str, Collects)> = suspendable()
            .filter_map(|k| k.collects(prune).map(|c| (k.kind, c)))
            .collect();
        assert_eq!(
            collecting,
            [
                ("Kustomization", Collects::Policy(flux::Collects::Prune)),
                ("HelmRelease", Collects::Release),
                ("FluxInstance", Collects::Inventory),
                ("ResourceSet", Collects::Inventory),
            ]
        );
        assert_eq!(
            find(KUSTOMIZE, "Kustomization").unwrap().collects(None),
            None
        );
    }

    #[test]
    fn resources_and_disable_annotations_read_as_kubectl_and_users_write_them() {
        let k = find(IMAGE, "ImagePolicy").unwrap();
        assert_eq!(k.resource(), "imagepolicies.image.toolkit.fluxcd.io");
        assert!(is_disable_annotation("fluxcd.controlplane.io/reconcile"));
        assert!(!is_disable_annotation(SUSPEND_ANNOTATION));
    }
}

//! The kinds the policies and `check` reason about: Flux's toolkit kinds
//! and Flux Operator's; for each, its group, served
//! versions and scope, the controller that reconciles it, what stops that
//! controller (suspension), what deleting it deletes, and the events its
//! controller sends.
//!
//! Kinds are matched by group and kind, never by version: `spec.suspend`,
//! metadata and events read the same in every served version
//! (`upstream/crd-kinds-*.txt` records the CRDs' versions; a test keeps this
//! table equal to them). The emitters come first, in the order of the Alert
//! CRD's `eventSources[].kind` enum as Flux Operator extends it
//! (`upstream/alert-event-source-kinds.txt`).

use super::controllers::{
    Controller, FLUX_OPERATOR, HELM_CONTROLLER, IMAGE_AUTOMATION_CONTROLLER,
    IMAGE_REFLECTOR_CONTROLLER, KUSTOMIZE_CONTROLLER, NOTIFICATION_CONTROLLER, SOURCE_CONTROLLER,
    SOURCE_WATCHER,
};
use super::Source;

pub const SOURCE: &str = "source.toolkit.fluxcd.io";
pub const KUSTOMIZE: &str = "kustomize.toolkit.fluxcd.io";
pub const HELM: &str = "helm.toolkit.fluxcd.io";
pub const IMAGE: &str = "image.toolkit.fluxcd.io";
pub const NOTIFICATION: &str = "notification.toolkit.fluxcd.io";
pub const SOURCE_EXTENSIONS: &str = "source.extensions.fluxcd.io";
pub const OPERATOR: &str = "fluxcd.controlplane.io";
/// The gating RFC's group (fluxcd/flux2 `rfcs/` "Gating Flux reconciliation";
/// no Flux release serves it: flux-gate's own CRD, `policies/flux-gate/crds`).
pub const GATING: &str = "gating.toolkit.fluxcd.io";

/// Is this group one of Flux's or Flux Operator's?
pub fn is_flux_group(group: &str) -> bool {
    KINDS.iter().any(|k| k.group == group)
}

/// What a kind's controller honours to stop reconciling an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Honours {
    /// `spec.suspend: true` (the toolkit kinds).
    SpecSuspend,
    /// `<key>: disabled`, as Go's `strings.ToLower` compares it, untrimmed
    /// ([`is_disabled`]; ArtifactGenerator and the Flux Operator kinds, which
    /// have no `spec.suspend`).
    DisableAnnotation(&'static str),
}

/// The value a `<group>/reconcile` annotation takes to stop reconciliation.
pub const DISABLED: &str = "disabled";

/// Does a `<group>/reconcile` value stop reconciliation? As its controllers
/// read it: `strings.ToLower(val) == "disabled"`, untrimmed
/// (controlplaneio-fluxcd/flux-operator `api/v1/resourceset_types.go`
/// `ResourceSet.IsDisabled` and its siblings for FluxInstance, FluxReport and
/// ResourceSetInputProvider, commit 17c6aead; fluxcd/source-watcher
/// `api/v1beta1/artifactgenerator_types.go` `ArtifactGenerator.IsDisabled`,
/// commit 825fa15b).
pub fn is_disabled(value: &str) -> bool {
    let mut chars = value.chars();
    DISABLED
        .chars()
        .all(|want| chars.next().is_some_and(|c| go_to_lower(c) == want))
        && chars.next().is_none()
}

/// Go's `unicode.ToLower` where the result can be ASCII, which is all a
/// comparison with `disabled` needs: ASCII letters, and the two code points
/// whose simple lower-case mapping is ASCII, U+0130 (İ, to `i`) and U+212A
/// (Kelvin sign, to `k`) (Go `unicode/tables.go` `_CaseRanges`; Unicode's
/// `UnicodeData.txt`). Every other character lowers to itself or to a
/// character beyond ASCII, so it is returned as it is: it can never equal an
/// ASCII letter. No case table is linked for this.
fn go_to_lower(c: char) -> char {
    match c {
        '\u{130}' => 'i',
        '\u{212A}' => 'k',
        c => c.to_ascii_lowercase(),
    }
}

/// What deleting an object makes its controller delete besides it (its
/// finalizer runs before the object goes), and what stops that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    /// The object alone; what its controller keeps outside the cluster (an
    /// artifact in storage) goes with it.
    Itself,
    /// The objects it applied, listed in `status.inventory.entries`, unless
    /// it is suspended as its controller reads it, and as the rule says.
    Inventory(InventoryRule),
    /// Its Helm release (every object of the chart, and the release's
    /// history), unless `spec.suspend` is true.
    HelmUninstall,
    /// The objects it generated, whether or not it is suspended.
    Generated,
}

/// When an inventory goes with its object (suspension aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InventoryRule {
    /// A Kustomization's `spec.deletionPolicy` and `spec.prune`
    /// ([`kustomization_deletion`]).
    DeletionPolicy,
    /// Always.
    Always,
}

/// Why deleting a Kustomization deletes its inventory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collects {
    /// `deletionPolicy` MirrorPrune (or unset) with `spec.prune: true`.
    Prune,
    /// `deletionPolicy: Delete`.
    Delete,
    /// `deletionPolicy: WaitForTermination`.
    WaitForTermination,
}

/// kustomize-controller's deletion policy, suspension and inventory aside:
/// `finalizerShouldDeleteResources` (fluxcd/kustomize-controller
/// `internal/controller/kustomization_controller.go`, commit 186fb3b2):
/// nothing is deleted when `spec.suspend` is true or the inventory is empty;
/// otherwise `MirrorPrune` (the default, `GetDeletionPolicy` in
/// `api/v1/kustomization_types.go`) follows `spec.prune`, `Delete` and
/// `WaitForTermination` always delete, and `Orphan` (or any other value)
/// never does.
pub fn kustomization_deletion(deletion_policy: Option<&str>, prune: bool) -> Option<Collects> {
    match deletion_policy.unwrap_or("") {
        "" | "MirrorPrune" => prune.then_some(Collects::Prune),
        "Delete" => Some(Collects::Delete),
        "WaitForTermination" => Some(Collects::WaitForTermination),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Namespaced,
    Cluster,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    pub group: &'static str,
    pub kind: &'static str,
    /// The resource name `kubectl` takes, used in the commands messages suggest.
    pub plural: &'static str,
    pub scope: Scope,
    /// Every served version, the storage version first.
    pub versions: &'static [&'static str],
    /// The controller that reconciles it.
    pub controller: &'static Controller,
    /// `None`: nothing suspends it (ExternalArtifact).
    pub honours: Option<Honours>,
    pub deletion: Deletion,
    /// Its controller sends events, and an Alert can select them (the kind
    /// is in the Alert CRD's `eventSources[].kind` enum).
    pub emits_events: bool,
    pub source: Source,
}

impl Kind {
    /// `kustomizations.kustomize.toolkit.fluxcd.io`: unambiguous for `kubectl`.
    pub fn resource(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    /// `kustomize.toolkit.fluxcd.io/v1`: the storage version.
    pub fn api_version(&self) -> String {
        format!(
            "{}/{}",
            self.group,
            self.versions.first().copied().unwrap_or("")
        )
    }

    /// Does deleting it make its controller delete more than the object?
    pub fn deletes_more(&self) -> bool {
        self.deletion != Deletion::Itself
    }
}

const SPEC: Option<Honours> = Some(Honours::SpecSuspend);
const AG_RECONCILE: Option<Honours> = Some(Honours::DisableAnnotation(
    "source.extensions.fluxcd.io/reconcile",
));
const OPERATOR_RECONCILE: Option<Honours> = Some(Honours::DisableAnnotation(
    "fluxcd.controlplane.io/reconcile",
));

#[expect(clippy::too_many_arguments, reason = "one row of the table")]
const fn kind(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    versions: &'static [&'static str],
    controller: &'static Controller,
    honours: Option<Honours>,
    deletion: Deletion,
    emits_events: bool,
    source: &'static str,
) -> Kind {
    Kind {
        group,
        kind,
        plural,
        scope: Scope::Namespaced,
        versions,
        controller,
        honours,
        deletion,
        emits_events,
        source: Source::new(source),
    }
}

use Deletion::{HelmUninstall, Itself};
const PRUNE: Deletion = Deletion::Inventory(InventoryRule::DeletionPolicy);
const INVENTORY: Deletion = Deletion::Inventory(InventoryRule::Always);

const SOURCE_API: &str = "fluxcd/source-controller `api/v1/*_types.go` `Spec.Suspend`; \
    deletion: `reconcileDelete` garbage-collects the artifacts in storage only; commit 39b711b1";

pub const KUSTOMIZATION: Kind = kind(
    KUSTOMIZE,
    "Kustomization",
    "kustomizations",
    &["v1"],
    &KUSTOMIZE_CONTROLLER,
    SPEC,
    PRUNE,
    true,
    "fluxcd/kustomize-controller `api/v1/kustomization_types.go` `Suspend`, \
     `GetDeletionPolicy`; `internal/controller/kustomization_controller.go` `finalize`, \
     `finalizerShouldDeleteResources`; commit 186fb3b2",
);

pub const HELM_RELEASE: Kind = kind(
    HELM,
    "HelmRelease",
    "helmreleases",
    &["v2"],
    &HELM_CONTROLLER,
    SPEC,
    HelmUninstall,
    true,
    "fluxcd/helm-controller `api/v2/helmrelease_types.go` `Suspend`; \
     `internal/controller/helmrelease_controller.go` `reconcileDelete`, \
     `reconcileReleaseDeletion` (uninstall unless `spec.suspend`); commit 0f61a860",
);

pub const FLUX_INSTANCE: Kind = kind(
    OPERATOR,
    "FluxInstance",
    "fluxinstances",
    &["v1"],
    &FLUX_OPERATOR,
    OPERATOR_RECONCILE,
    INVENTORY,
    true,
    "controlplaneio-fluxcd/flux-operator `api/v1/fluxinstance_types.go` `IsDisabled`; \
     `internal/controller/fluxinstance_controller.go` `uninstall`; commit 17c6aead",
);

pub const RESOURCE_SET: Kind = kind(
    OPERATOR,
    "ResourceSet",
    "resourcesets",
    &["v1"],
    &FLUX_OPERATOR,
    OPERATOR_RECONCILE,
    INVENTORY,
    true,
    "controlplaneio-fluxcd/flux-operator `api/v1/resourceset_types.go` `IsDisabled`; \
     `internal/controller/resourceset_controller.go` `uninstall`; commit 17c6aead",
);

pub const ALERT: Kind = kind(
    NOTIFICATION,
    "Alert",
    "alerts",
    &["v1beta3"],
    &NOTIFICATION_CONTROLLER,
    SPEC,
    Itself,
    false,
    "fluxcd/notification-controller `api/v1beta3/alert_types.go` `Suspend`, commit 2e46958a",
);

/// Every kind the policies know: the event emitters first, in the Alert
/// CRD's order, then the rest.
pub const KINDS: &[Kind] = &[
    kind(SOURCE, "Bucket", "buckets", &["v1"], &SOURCE_CONTROLLER, SPEC, Itself, true, SOURCE_API),
    kind(SOURCE, "GitRepository", "gitrepositories", &["v1"], &SOURCE_CONTROLLER, SPEC, Itself, true, SOURCE_API),
    KUSTOMIZATION,
    HELM_RELEASE,
    kind(SOURCE, "HelmChart", "helmcharts", &["v1"], &SOURCE_CONTROLLER, SPEC, Itself, true, SOURCE_API),
    kind(SOURCE, "HelmRepository", "helmrepositories", &["v1"], &SOURCE_CONTROLLER, SPEC, Itself, true, SOURCE_API),
    kind(
        IMAGE, "ImageRepository", "imagerepositories", &["v1"], &IMAGE_REFLECTOR_CONTROLLER, SPEC, Itself, true,
        "fluxcd/image-reflector-controller `api/v1/imagerepository_types.go` `Suspend`, commit debe2aaa",
    ),
    kind(
        IMAGE, "ImagePolicy", "imagepolicies", &["v1"], &IMAGE_REFLECTOR_CONTROLLER, SPEC, Itself, true,
        "fluxcd/image-reflector-controller `api/v1/imagepolicy_types.go` `Suspend`, commit debe2aaa",
    ),
    kind(
        IMAGE, "ImageUpdateAutomation", "imageupdateautomations", &["v1"], &IMAGE_AUTOMATION_CONTROLLER, SPEC, Itself, true,
        "fluxcd/image-automation-controller `api/v1/imageupdateautomation_types.go` `Suspend`, \
         commit d36e2ea0",
    ),
    kind(SOURCE, "OCIRepository", "ocirepositories", &["v1"], &SOURCE_CONTROLLER, SPEC, Itself, true, SOURCE_API),
    kind(
        SOURCE_EXTENSIONS, "ArtifactGenerator", "artifactgenerators", &["v1beta1"], &SOURCE_WATCHER, AG_RECONCILE, Deletion::Generated, true,
        "fluxcd/source-watcher `api/v1beta1/artifactgenerator_types.go` `IsDisabled`; \
         `internal/controller/artifactgenerator_finalize.go` deletes its ExternalArtifacts, \
         disabled or not; commit 825fa15b",
    ),
    kind(
        SOURCE, "ExternalArtifact", "externalartifacts", &["v1"], &SOURCE_WATCHER, None, Itself, true,
        "fluxcd/source-controller `api/v1/externalartifact_types.go` (no suspend; written by \
         its generator, source-watcher), commit 39b711b1",
    ),
    FLUX_INSTANCE,
    RESOURCE_SET,
    kind(
        OPERATOR, "ResourceSetInputProvider", "resourcesetinputproviders", &["v1"], &FLUX_OPERATOR, OPERATOR_RECONCILE, Itself, true,
        "controlplaneio-fluxcd/flux-operator `api/v1/resourcesetinputprovider_types.go` \
         `IsDisabled`, commit 17c6aead",
    ),
    kind(
        NOTIFICATION, "Receiver", "receivers", &["v1"], &NOTIFICATION_CONTROLLER, SPEC, Itself, false,
        "fluxcd/notification-controller `api/v1/receiver_types.go` `Suspend`, commit 2e46958a",
    ),
    ALERT,
    kind(
        NOTIFICATION, "Provider", "providers", &["v1beta3"], &NOTIFICATION_CONTROLLER, SPEC, Itself, false,
        "fluxcd/notification-controller `api/v1beta3/provider_types.go` `Suspend`, commit 2e46958a",
    ),
    kind(
        OPERATOR, "FluxReport", "fluxreports", &["v1"], &FLUX_OPERATOR, OPERATOR_RECONCILE, Itself, false,
        "controlplaneio-fluxcd/flux-operator `api/v1/fluxreport_types.go` `IsDisabled`, commit 17c6aead",
    ),
];

/// The kind of this group and kind (exact spelling), if the model knows it.
pub fn find(group: &str, kind: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.group == group && k.kind == kind)
}

/// The kinds an Alert can select, in the CRD's enum order.
pub fn emitters() -> impl Iterator<Item = &'static Kind> {
    KINDS.iter().filter(|k| k.emits_events)
}

/// Is this annotation key a disable annotation some kind honours?
pub fn is_disable_annotation(key: &str) -> bool {
    KINDS
        .iter()
        .any(|k| matches!(k.honours, Some(Honours::DisableAnnotation(d)) if d == key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_found_by_group_and_exact_kind() {
        assert_eq!(
            find(KUSTOMIZE, "Kustomization").unwrap().plural,
            "kustomizations"
        );
        assert!(find(KUSTOMIZE, "kustomization").is_none());
        assert!(find("apps", "Deployment").is_none());
        assert_eq!(find(SOURCE, "ExternalArtifact").unwrap().honours, None);
        assert_eq!(
            find(IMAGE, "ImagePolicy").unwrap().resource(),
            "imagepolicies.image.toolkit.fluxcd.io"
        );
        assert_eq!(
            find(HELM, "HelmRelease").unwrap().api_version(),
            "helm.toolkit.fluxcd.io/v2"
        );
    }

    /// Go's `strings.ToLower`, untrimmed: padding keeps it reconciling, a
    /// dotted capital I lowers to `i`.
    #[test]
    fn disabled_is_read_as_go_lowers_it() {
        for yes in [
            "disabled",
            "Disabled",
            "DISABLED",
            "d\u{130}sabled",
            "D\u{130}SABLED",
        ] {
            assert!(is_disabled(yes), "{yes:?}");
        }
        for no in [
            "disabled ",
            " disabled",
            "disabled\n",
            "enabled",
            "disable",
            "",
            "d\u{131}sabled",
        ] {
            assert!(!is_disabled(no), "{no:?}");
        }
    }

    #[test]
    fn deletions_that_delete_more() {
        let more: Vec<&str> = KINDS
            .iter()
            .filter(|k| k.deletes_more())
            .map(|k| k.kind)
            .collect();
        assert_eq!(
            more,
            [
                "Kustomization",
                "HelmRelease",
                "ArtifactGenerator",
                "FluxInstance",
                "ResourceSet"
            ]
        );
        assert_eq!(kustomization_deletion(None, true), Some(Collects::Prune));
        assert_eq!(kustomization_deletion(Some("MirrorPrune"), false), None);
        assert_eq!(
            kustomization_deletion(Some("Delete"), false),
            Some(Collects::Delete)
        );
        assert_eq!(kustomization_deletion(Some("Orphan"), true), None);
        assert_eq!(kustomization_deletion(Some("orphan"), true), None);
    }

    #[test]
    fn disable_annotations_are_those_the_kinds_honour() {
        assert!(is_disable_annotation("fluxcd.controlplane.io/reconcile"));
        assert!(is_disable_annotation(
            "source.extensions.fluxcd.io/reconcile"
        ));
        assert!(!is_disable_annotation("reconcile.fluxcd.io/suspended"));
    }
}

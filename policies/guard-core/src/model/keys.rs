//! Annotations and labels whose meaning a controller (or an RFC the
//! policies implement) defines. Disable annotations are in
//! [`super::kinds::Honours`], with the kinds that honour them.

/// The annotation RFC-0006 proposed (fluxcd/flux2 `rfcs/0006-cdk8s-suspend`
/// "alternative suspend control"). No Flux release honours it; flux-suspend
/// makes it carry the reason and keeps it in step with what controllers honour.
pub const SUSPENDED: &str = "reconcile.fluxcd.io/suspended";

/// `flux reconcile`'s request (fluxcd/pkg `apis/meta/annotations.go`
/// `ReconcileRequestAnnotation`).
pub const RECONCILE_REQUESTED_AT: &str = "reconcile.fluxcd.io/requestedAt";

/// Flux Operator's record of who suspended an object: its Web UI writes the
/// user's name here beside `fluxcd.controlplane.io/reconcile: disabled` (or
/// `spec.suspend: true` on Flux's kinds) and deletes it on resume
/// (controlplaneio-fluxcd/flux-operator `internal/web/resource_action.go`
/// `setSuspension`, commit 17c6aead); its CLI does not write it.
/// flux-suspend's default `suspenderAnnotation`.
pub const SUSPENDED_BY: &str = "fluxcd.controlplane.io/suspendedBy";

/// The annotation prefix Flux copies into event metadata (RFC-0008;
/// fluxcd/pkg `runtime/events/recorder.go` `AnnotatedEventf`,
/// `apis/event/v1beta1/event.go` `Group`).
pub const EVENT_PREFIX: &str = "event.toolkit.fluxcd.io/";

/// Annotations and labels kustomize-controller's apply removes as
/// bookkeeping, never from Git (fluxcd/kustomize-controller 186fb3b,
/// `kustomization_controller.go` `apply`, `applyOpts.Cleanup`; sent by
/// fluxcd/pkg ssa/v0.77.0 `ssa/manager_apply.go` `cleanupMetadata` as a
/// JSON patch under the controller's field manager).
pub const CLEANED_UP: [&str; 4] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    "kustomize.toolkit.fluxcd.io/checksum",
    "fluxcd.io/sync-checksum",
    "fluxcd.io/sync-gc-mark",
];

/// `kustomize.toolkit.fluxcd.io/substitute: disabled` on an object keeps
/// kustomize-controller's post-build substitution off it
/// (fluxcd/pkg `kustomize/kustomize_varsub.go` `SubstituteVariables`,
/// `varsubDisabled`).
pub const SUBSTITUTE: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// The labels an applier puts on every object it applies, naming the
/// object that applied it: `<group>/name` and `<group>/namespace` of the
/// `ssa.Owner.Group` it applies with (fluxcd/pkg `ssa`
/// `ResourceManager.SetOwnerLabels`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerLabels {
    pub name: &'static str,
    pub namespace: &'static str,
}

/// kustomize-controller's, with its API group
/// (`internal/controller/kustomization_controller.go` `apply`, commit 186fb3b2).
pub const KUSTOMIZATION_OWNER: OwnerLabels = OwnerLabels {
    name: "kustomize.toolkit.fluxcd.io/name",
    namespace: "kustomize.toolkit.fluxcd.io/namespace",
};

/// helm-controller's, on the HelmChart it generates and, through its
/// post-renderer `OriginLabels`, on a release's objects
/// (`internal/reconcile/helmchart_template.go`, `internal/postrender/origin_labels.go`,
/// commit 0f61a860).
pub const HELM_RELEASE_OWNER: OwnerLabels = OwnerLabels {
    name: "helm.toolkit.fluxcd.io/name",
    namespace: "helm.toolkit.fluxcd.io/namespace",
};

/// Flux Operator's on what a ResourceSet applies (`ssa.Owner{Group:
/// "resourceset.fluxcd.controlplane.io"}`, `internal/controller/resourceset_controller.go`
/// `apply`, commit 17c6aead).
pub const RESOURCE_SET_OWNER: OwnerLabels = OwnerLabels {
    name: "resourceset.fluxcd.controlplane.io/name",
    namespace: "resourceset.fluxcd.controlplane.io/namespace",
};

/// source-watcher labels each ExternalArtifact with its generator's UID
/// (fluxcd/source-watcher `internal/controller/artifactgenerator_controller.go`
/// `reconcileExternalArtifact`, commit 825fa15b).
pub const GENERATOR_LABEL: &str = "source.extensions.fluxcd.io/generator";

/// The gating RFC's API (fluxcd/flux2 RFC "Gating Flux reconciliation",
/// `../shared/seeds/flux-rfc-gating-reconciliation.md`): the Gate kind's
/// version and the annotations that open, close, bind and override gates.
pub mod gating {
    pub const GATE_KIND: &str = "Gate";
    pub const GATE_API_VERSION: &str = "gating.toolkit.fluxcd.io/v1alpha1";
    pub const OPEN_ANNOTATION: &str = "open.gate.fluxcd.io/requestedAt";
    pub const CLOSE_ANNOTATION: &str = "close.gate.fluxcd.io/requestedAt";
    /// Gates an object names itself: `name` or `namespace/name`, comma-separated.
    pub const GATES_ANNOTATION: &str = "gating.toolkit.fluxcd.io/gates";
    /// Emergency override; its value is the reason.
    pub const OVERRIDE_ANNOTATION: &str = "gating.toolkit.fluxcd.io/emergency-override";
    /// The field manager flux-gate's commands (its refusals' and warnings'
    /// gate requests, the override, its examples) write with: no Flux
    /// applier's managedFields cleanup takes it over
    /// ([`crate::model::cleanup::takes_over`]), so what they write lasts
    /// past the next apply of a Gate or Flux object applied from Git.
    pub const COMMAND_FIELD_MANAGER: &str = "flux-gate";
}

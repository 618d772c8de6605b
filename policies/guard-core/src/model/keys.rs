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

/// Flux Operator's record of who suspended an object, written beside the
/// disable annotation by its Web UI (controlplaneio-fluxcd/flux-operator
/// `api/v1` `SuspendedByAnnotation`? see `upstream/README.md`); flux-suspend's
/// default `suspenderAnnotation`.
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

/// The labels Flux's appliers put on every object they apply, naming the
/// object that applied it: `<group>/name` and `<group>/namespace` of the
/// applier's group (fluxcd/pkg `ssa` `ResourceManager.SetOwnerLabels`, as
/// kustomize-controller calls it with its API group; helm-controller's
/// post-renderer `OriginLabels` and the HelmChart template).
pub fn owner_labels(group: &str) -> (String, String) {
    (format!("{group}/name"), format!("{group}/namespace"))
}

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
}

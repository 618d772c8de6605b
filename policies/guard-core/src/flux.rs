//! The Flux kinds, one table for every policy: group, kind, the resource
//! name `kubectl` takes, what stops its reconciliation and whether its
//! controller sends events.
//!
//! Kinds are matched by group and kind, never by version: `spec.suspend`,
//! metadata and events read the same in every served version. Sources:
//! the toolkit APIs' `Suspend` fields; source-watcher's and the Flux
//! Operator's `<group>/reconcile: disabled` annotation (their kinds have no
//! `spec.suspend`); the Alert CRD's `eventSources[].kind` enum
//! (fluxcd/notification-controller 2e46958, `api/v1/reference_types.go`,
//! `CrossNamespaceObjectReference.Kind`), whose order the event emitters keep
//! here.

pub const SOURCE: &str = "source.toolkit.fluxcd.io";
pub const KUSTOMIZE: &str = "kustomize.toolkit.fluxcd.io";
pub const HELM: &str = "helm.toolkit.fluxcd.io";
pub const IMAGE: &str = "image.toolkit.fluxcd.io";
pub const NOTIFICATION: &str = "notification.toolkit.fluxcd.io";
pub const SOURCE_EXTENSIONS: &str = "source.extensions.fluxcd.io";
pub const OPERATOR: &str = "fluxcd.controlplane.io";

/// What a kind's controller honours to stop reconciling an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Honours {
    /// `spec.suspend: true` (the toolkit kinds).
    SpecSuspend,
    /// `<key>: disabled`, compared case-insensitively (ArtifactGenerator and
    /// the Flux Operator kinds, which have no `spec.suspend`).
    DisableAnnotation(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    pub group: &'static str,
    pub kind: &'static str,
    /// The resource name `kubectl` takes, used in the commands messages suggest.
    pub plural: &'static str,
    /// `None`: nothing suspends it (ExternalArtifact).
    pub honours: Option<Honours>,
    /// Its controller sends events an Alert can select.
    pub emits_events: bool,
}

impl Kind {
    /// `kustomizations.kustomize.toolkit.fluxcd.io`: unambiguous for `kubectl`.
    pub fn resource(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }
}

const SPEC: Option<Honours> = Some(Honours::SpecSuspend);
const AG_RECONCILE: Option<Honours> = Some(Honours::DisableAnnotation(
    "source.extensions.fluxcd.io/reconcile",
));
const OPERATOR_RECONCILE: Option<Honours> = Some(Honours::DisableAnnotation(
    "fluxcd.controlplane.io/reconcile",
));

const fn kind(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    honours: Option<Honours>,
    emits_events: bool,
) -> Kind {
    Kind {
        group,
        kind,
        plural,
        honours,
        emits_events,
    }
}

/// Every Flux kind the policies know: the event emitters first, in the
/// Alert CRD's order, then the rest.
pub const KINDS: &[Kind] = &[
    kind(SOURCE, "Bucket", "buckets", SPEC, true),
    kind(SOURCE, "GitRepository", "gitrepositories", SPEC, true),
    kind(KUSTOMIZE, "Kustomization", "kustomizations", SPEC, true),
    kind(HELM, "HelmRelease", "helmreleases", SPEC, true),
    kind(SOURCE, "HelmChart", "helmcharts", SPEC, true),
    kind(SOURCE, "HelmRepository", "helmrepositories", SPEC, true),
    kind(IMAGE, "ImageRepository", "imagerepositories", SPEC, true),
    kind(IMAGE, "ImagePolicy", "imagepolicies", SPEC, true),
    kind(
        IMAGE,
        "ImageUpdateAutomation",
        "imageupdateautomations",
        SPEC,
        true,
    ),
    kind(SOURCE, "OCIRepository", "ocirepositories", SPEC, true),
    kind(
        SOURCE_EXTENSIONS,
        "ArtifactGenerator",
        "artifactgenerators",
        AG_RECONCILE,
        true,
    ),
    kind(SOURCE, "ExternalArtifact", "externalartifacts", None, true),
    kind(NOTIFICATION, "Receiver", "receivers", SPEC, false),
    kind(NOTIFICATION, "Alert", "alerts", SPEC, false),
    kind(NOTIFICATION, "Provider", "providers", SPEC, false),
    kind(
        OPERATOR,
        "FluxInstance",
        "fluxinstances",
        OPERATOR_RECONCILE,
        false,
    ),
    kind(
        OPERATOR,
        "FluxReport",
        "fluxreports",
        OPERATOR_RECONCILE,
        false,
    ),
    kind(
        OPERATOR,
        "ResourceSet",
        "resourcesets",
        OPERATOR_RECONCILE,
        false,
    ),
    kind(
        OPERATOR,
        "ResourceSetInputProvider",
        "resourcesetinputproviders",
        OPERATOR_RECONCILE,
        false,
    ),
];

/// The Flux kind of this group and kind (exact spelling), if it is one.
pub fn find(group: &str, kind: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.group == group && k.kind == kind)
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
    }

    #[test]
    fn the_emitters_are_the_alert_crds_enum_in_its_order() {
        let emitters: Vec<&str> = KINDS
            .iter()
            .filter(|k| k.emits_events)
            .map(|k| k.kind)
            .collect();
        assert_eq!(
            emitters.join(";"),
            "Bucket;GitRepository;Kustomization;HelmRelease;HelmChart;HelmRepository;\
             ImageRepository;ImagePolicy;ImageUpdateAutomation;OCIRepository;\
             ArtifactGenerator;ExternalArtifact"
        );
    }
}

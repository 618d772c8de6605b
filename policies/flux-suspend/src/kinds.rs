//! The Flux kinds that can be suspended, and the mechanism their controller honours.
//!
//! Kinds are matched by group and kind, never by version: `spec.suspend` and
//! metadata read the same in every served version.

/// The annotation RFC-0006 proposed. No Flux release honours it; this policy
/// makes it carry the reason and keeps it in step with what controllers honour.
pub const SUSPEND_ANNOTATION: &str = "reconcile.fluxcd.io/suspended";

/// The value a `<group>/reconcile` annotation takes to stop reconciliation.
pub const DISABLED: &str = "disabled";

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
    pub honours: Honours,
}

impl Kind {
    /// Only a Kustomization garbage-collects what it applied (`spec.prune`).
    pub fn prunes(&self) -> bool {
        self.group == KUSTOMIZE && self.kind == "Kustomization"
    }

    /// `kustomizations.kustomize.toolkit.fluxcd.io`: unambiguous for `kubectl`.
    pub fn resource(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    /// How the honoured mechanism reads in messages.
    pub fn honoured_mechanism(&self) -> String {
        match self.honours {
            Honours::SpecSuspend => "spec.suspend: true".to_string(),
            Honours::DisableAnnotation(key) => format!("annotation {key}: {DISABLED}"),
        }
    }
}

const SOURCE: &str = "source.toolkit.fluxcd.io";
const KUSTOMIZE: &str = "kustomize.toolkit.fluxcd.io";
const HELM: &str = "helm.toolkit.fluxcd.io";
const IMAGE: &str = "image.toolkit.fluxcd.io";
const NOTIFICATION: &str = "notification.toolkit.fluxcd.io";
const SOURCE_EXTENSIONS: &str = "source.extensions.fluxcd.io";
const OPERATOR: &str = "fluxcd.controlplane.io";

const fn spec(group: &'static str, kind: &'static str, plural: &'static str) -> Kind {
    Kind {
        group,
        kind,
        plural,
        honours: Honours::SpecSuspend,
    }
}

const fn annotated(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    key: &'static str,
) -> Kind {
    Kind {
        group,
        kind,
        plural,
        honours: Honours::DisableAnnotation(key),
    }
}

/// Every kind the policy judges; metadata.yml lists the same resources.
pub const KINDS: &[Kind] = &[
    spec(SOURCE, "GitRepository", "gitrepositories"),
    spec(SOURCE, "OCIRepository", "ocirepositories"),
    spec(SOURCE, "Bucket", "buckets"),
    spec(SOURCE, "HelmRepository", "helmrepositories"),
    spec(SOURCE, "HelmChart", "helmcharts"),
    spec(KUSTOMIZE, "Kustomization", "kustomizations"),
    spec(HELM, "HelmRelease", "helmreleases"),
    spec(IMAGE, "ImageRepository", "imagerepositories"),
    spec(IMAGE, "ImagePolicy", "imagepolicies"),
    spec(IMAGE, "ImageUpdateAutomation", "imageupdateautomations"),
    spec(NOTIFICATION, "Receiver", "receivers"),
    spec(NOTIFICATION, "Alert", "alerts"),
    spec(NOTIFICATION, "Provider", "providers"),
    annotated(
        SOURCE_EXTENSIONS,
        "ArtifactGenerator",
        "artifactgenerators",
        "source.extensions.fluxcd.io/reconcile",
    ),
    annotated(
        OPERATOR,
        "FluxInstance",
        "fluxinstances",
        "fluxcd.controlplane.io/reconcile",
    ),
    annotated(
        OPERATOR,
        "FluxReport",
        "fluxreports",
        "fluxcd.controlplane.io/reconcile",
    ),
    annotated(
        OPERATOR,
        "ResourceSet",
        "resourcesets",
        "fluxcd.controlplane.io/reconcile",
    ),
    annotated(
        OPERATOR,
        "ResourceSetInputProvider",
        "resourcesetinputproviders",
        "fluxcd.controlplane.io/reconcile",
    ),
];

/// The suspendable kind of a request, or `None` for any other kind
/// (ExternalArtifact, say, which has no suspend at all).
pub fn find(group: &str, kind: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.group == group && k.kind == kind)
}

/// Is this annotation key a disable annotation some kind honours?
pub fn is_disable_annotation(key: &str) -> bool {
    KINDS
        .iter()
        .any(|k| matches!(k.honours, Honours::DisableAnnotation(d) if d == key))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(KINDS.len(), 18);
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

    #[test]
    fn resources_and_mechanisms_read_as_kubectl_and_users_write_them() {
        let k = find(IMAGE, "ImagePolicy").unwrap();
        assert_eq!(k.resource(), "imagepolicies.image.toolkit.fluxcd.io");
        assert_eq!(k.honoured_mechanism(), "spec.suspend: true");
        let ag = find(SOURCE_EXTENSIONS, "ArtifactGenerator").unwrap();
        assert_eq!(
            ag.honoured_mechanism(),
            "annotation source.extensions.fluxcd.io/reconcile: disabled"
        );
        assert!(is_disable_annotation("fluxcd.controlplane.io/reconcile"));
        assert!(!is_disable_annotation(SUSPEND_ANNOTATION));
    }
}

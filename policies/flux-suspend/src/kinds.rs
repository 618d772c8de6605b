//! The Flux kinds that can be suspended (guard-core's table of Flux kinds),
//! and the mechanism their controller honours.

/// The annotation RFC-0006 proposed. No Flux release honours it; this policy
/// makes it carry the reason and keeps it in step with what controllers honour.
pub const SUSPEND_ANNOTATION: &str = "reconcile.fluxcd.io/suspended";

/// The value a `<group>/reconcile` annotation takes to stop reconciliation.
pub(crate) const DISABLED: &str = "disabled";

/// Does a `<group>/reconcile` value stop reconciliation? As its controllers
/// read it: `strings.ToLower(val) == "disabled"`, untrimmed
/// (controlplaneio-fluxcd/flux-operator `api/v1/resourceset_types.go`
/// `ResourceSet.IsDisabled` and its siblings for FluxInstance, FluxReport and
/// ResourceSetInputProvider, commit 17c6aead; fluxcd/source-watcher
/// `api/v1beta1/artifactgenerator_types.go` `ArtifactGenerator.IsDisabled`,
/// commit 825fa15b).
pub(crate) fn is_disabled(value: &str) -> bool {
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

pub(crate) use guard_core::flux::Honours;
use guard_core::flux::{self, KUSTOMIZE};

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

    /// Only a Kustomization garbage-collects what it applied (`spec.prune`).
    pub(crate) fn prunes(&self) -> bool {
        self.group == KUSTOMIZE && self.kind == "Kustomization"
    }
}

/// The suspendable kinds: every Flux kind but ExternalArtifact, which has no
/// suspend at all; metadata.yml lists the same resources.
pub(crate) fn suspendable() -> impl Iterator<Item = Kind> {
    flux::KINDS.iter().filter_map(Kind::of)
}

/// The suspendable kind of a request, or `None` for any other kind.
pub(crate) fn find(group: &str, kind: &str) -> Option<Kind> {
    flux::find(group, kind).and_then(Kind::of)
}

/// Is this annotation key a disable annotation some kind honours?
pub(crate) fn is_disable_annotation(key: &str) -> bool {
    suspendable().any(|k| matches!(k.honours, Honours::DisableAnnotation(d) if d == key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::flux::{HELM, IMAGE, NOTIFICATION, OPERATOR, SOURCE, SOURCE_EXTENSIONS};

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
    fn only_kustomizations_prune() {
        assert!(find(KUSTOMIZE, "Kustomization").unwrap().prunes());
        assert!(!find(HELM, "HelmRelease").unwrap().prunes());
    }

    #[test]
    fn resources_and_disable_annotations_read_as_kubectl_and_users_write_them() {
        let k = find(IMAGE, "ImagePolicy").unwrap();
        assert_eq!(k.resource(), "imagepolicies.image.toolkit.fluxcd.io");
        assert!(is_disable_annotation("fluxcd.controlplane.io/reconcile"));
        assert!(!is_disable_annotation(SUSPEND_ANNOTATION));
    }
}

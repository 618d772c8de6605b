//! Which Flux kinds emit events, and which metadata keys their controllers
//! send themselves: the model's ([`guard_core::model::kinds::emitters`],
//! [`guard_core::model::events`]).

/// The annotation prefix Flux copies into event metadata (RFC-0008).
pub use guard_core::model::keys::EVENT_PREFIX as PREFIX;

use guard_core::model::events::{self, COMMIT_KEYS};
use guard_core::model::kinds as flux;

/// Does a controller send events about objects of this group and kind, so
/// that their annotations reach notifications? Not every kind an Alert can
/// select: nobody sends events about an ExternalArtifact.
pub fn emits_events(group: &str, kind: &str) -> bool {
    events::of(group, kind).is_some_and(|e| e.sender.is_some())
}

/// Is this the name of a kind whose objects' annotations reach events?
pub fn is_emitting_kind_name(kind: &str) -> bool {
    emitting_kind_names().contains(&kind)
}

pub fn emitting_kind_names() -> Vec<&'static str> {
    events::EVENTS
        .iter()
        .filter(|e| e.sender.is_some())
        .map(|e| e.kind)
        .collect()
}

/// The group an Alert's `eventSources[].kind` names.
pub fn group_of_kind(kind: &str) -> Option<&'static str> {
    flux::emitters().find(|k| k.kind == kind).map(|k| k.group)
}

/// Does the controller of this group and kind send this key in some of its
/// events (for an object whose source is of `source_kind`, when known)? An
/// annotation or Alert key of the same name loses to it on those events,
/// and is what the others carry.
pub fn controller_sends(group: &str, kind: &str, key: &str, source_kind: Option<&str>) -> bool {
    events::of(group, kind).is_some_and(|e| e.sends(key, source_kind))
}

/// Is this key one the git notifiers take the commit from (`commit`,
/// `originRevision`, `revision`, in that order)?
pub fn is_commit_key(key: &str) -> bool {
    COMMIT_KEYS.contains(&key)
}

/// Can an annotation of this key on an object of this group and kind pick
/// the commit the git notifiers report on? The model decides it per kind.
pub fn picks_commit(group: &str, kind: &str, key: &str) -> bool {
    events::of(group, kind).is_some_and(|e| e.picks_commit(key))
}

/// The commit keys the git notifiers read before this one.
pub fn commit_keys_before(key: &str) -> &'static [&'static str] {
    let at = COMMIT_KEYS.iter().position(|k| *k == key).unwrap_or(0);
    COMMIT_KEYS.get(..at).unwrap_or(&[])
}

/// The controller that sends events for objects of this group and kind, for messages.
pub fn controller_name(group: &str, kind: &str) -> &'static str {
    events::of(group, kind)
        .and_then(|e| e.sender)
        .map_or("its controller", |c| c.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::model::kinds::{HELM, IMAGE, KUSTOMIZE, SOURCE, SOURCE_EXTENSIONS};

    #[test]
    fn emitters_are_matched_by_group_and_kind() {
        assert!(emits_events(HELM, "HelmRelease"));
        assert!(emits_events(flux::OPERATOR, "FluxInstance"));
        assert!(emits_events(flux::OPERATOR, "ResourceSetInputProvider"));
        assert!(!emits_events(SOURCE, "ExternalArtifact"));
        assert!(!emits_events(flux::OPERATOR, "FluxReport"));
        assert!(!emits_events("example.com", "HelmRelease"));
        assert!(!emits_events(flux::NOTIFICATION, "Alert"));
        assert!(emits_events(flux::OPERATOR, "ResourceSet"));
        assert!(emits_events(SOURCE_EXTENSIONS, "ArtifactGenerator"));
        assert_eq!(emitting_kind_names().len(), 14);
        assert!(!is_emitting_kind_name("ExternalArtifact"));
    }

    #[test]
    fn controller_keys_per_group() {
        assert!(controller_sends(SOURCE, "GitRepository", "revision", None));
        assert!(!controller_sends(SOURCE, "GitRepository", "digest", None));
        assert!(controller_sends(
            KUSTOMIZE,
            "Kustomization",
            "commit_status",
            None
        ));
        assert!(controller_sends(HELM, "HelmRelease", "app-version", None));
        assert!(!controller_sends(IMAGE, "ImagePolicy", "revision", None));
        assert!(controller_sends(
            flux::OPERATOR,
            "FluxInstance",
            "revision",
            None
        ));
        assert!(!controller_sends(
            flux::OPERATOR,
            "ResourceSet",
            "revision",
            None
        ));
        assert!(!controller_sends(
            SOURCE_EXTENSIONS,
            "ArtifactGenerator",
            "revision",
            None
        ));
        assert!(picks_commit(KUSTOMIZE, "Kustomization", "originRevision"));
        let git = Some("GitRepository");
        assert!(!controller_sends(
            KUSTOMIZE,
            "Kustomization",
            "originRevision",
            git
        ));
        assert!(controller_sends(
            KUSTOMIZE,
            "Kustomization",
            "revision",
            git
        ));
        assert!(picks_commit(IMAGE, "ImagePolicy", "revision"));
        assert!(!picks_commit(SOURCE, "ExternalArtifact", "commit"));
        assert!(!picks_commit(KUSTOMIZE, "Kustomization", "commit_status"));
        assert_eq!(commit_keys_before("revision"), ["commit", "originRevision"]);
        assert!(commit_keys_before("commit").is_empty());
        assert_eq!(
            controller_name(SOURCE, "ExternalArtifact"),
            "its controller"
        );
        assert_eq!(group_of_kind("Kustomization"), Some(KUSTOMIZE));
        assert_eq!(group_of_kind("Alert"), None);
        assert_eq!(controller_name(HELM, "HelmRelease"), "helm-controller");
    }
}

//! Which Flux kinds emit events, and which metadata keys their controllers
//! send themselves: the model's ([`guard_core::model::kinds::emitters`],
//! [`guard_core::model::controllers::Controller::event_keys`]).

/// The annotation prefix Flux copies into event metadata (RFC-0008).
pub use guard_core::model::keys::EVENT_PREFIX as PREFIX;

use guard_core::model::kinds as flux;

/// Does an object of this group and kind emit Flux events?
pub fn emits_events(group: &str, kind: &str) -> bool {
    flux::find(group, kind).is_some_and(|k| k.emits_events)
}

pub fn is_emitting_kind_name(kind: &str) -> bool {
    flux::emitters().any(|k| k.kind == kind)
}

pub fn emitting_kind_names() -> Vec<&'static str> {
    flux::emitters().map(|k| k.kind).collect()
}

/// The group an Alert's `eventSources[].kind` names.
pub fn group_of_kind(kind: &str) -> Option<&'static str> {
    flux::emitters().find(|k| k.kind == kind).map(|k| k.group)
}

/// The controller-emitted keys that survive into dispatch for objects of
/// this group and kind. An annotation or Alert key of the same name always
/// loses to them.
pub fn controller_keys(group: &str, kind: &str) -> &'static [&'static str] {
    flux::find(group, kind).map_or(&[], |k| k.controller.event_keys)
}

/// The controller that sends events for objects of this group and kind, for messages.
pub fn controller_name(group: &str, kind: &str) -> &'static str {
    flux::find(group, kind).map_or("its controller", |k| k.controller.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::model::kinds::{HELM, IMAGE, KUSTOMIZE, SOURCE, SOURCE_EXTENSIONS};

    #[test]
    fn emitters_are_matched_by_group_and_kind() {
        assert!(emits_events(HELM, "HelmRelease"));
        assert!(!emits_events("example.com", "HelmRelease"));
        assert!(!emits_events(flux::NOTIFICATION, "Alert"));
        assert!(emits_events(flux::OPERATOR, "ResourceSet"));
        assert!(emits_events(SOURCE_EXTENSIONS, "ArtifactGenerator"));
        assert_eq!(emitting_kind_names().len(), 15);
    }

    #[test]
    fn controller_keys_per_group() {
        assert_eq!(controller_keys(SOURCE, "GitRepository"), ["revision"]);
        assert!(controller_keys(KUSTOMIZE, "Kustomization").contains(&"commit_status"));
        assert!(controller_keys(HELM, "HelmRelease").contains(&"app-version"));
        assert!(controller_keys(IMAGE, "ImagePolicy").is_empty());
        assert!(controller_keys(SOURCE_EXTENSIONS, "ArtifactGenerator").is_empty());
        assert_eq!(group_of_kind("Kustomization"), Some(KUSTOMIZE));
        assert_eq!(group_of_kind("Alert"), None);
        assert_eq!(controller_name(HELM, "HelmRelease"), "helm-controller");
    }
}

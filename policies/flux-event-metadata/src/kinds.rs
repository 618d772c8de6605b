//! Which Flux kinds emit events, and which metadata keys their controllers
//! send themselves. The kinds are the Alert CRD's `eventSources[].kind` enum
//! (fluxcd/notification-controller 2e46958, `api/v1/reference_types.go`,
//! `CrossNamespaceObjectReference.Kind`); the keys are read in each
//! controller's `event` calls (kustomize-controller 186fb3b,
//! `internal/controller/kustomization_controller.go`; helm-controller
//! 0f61a86, `internal/reconcile/release.go`, `metaOCIDigestKey` and
//! `metaAppVersionKey`) and notification-controller's `cleanupMetadata`
//! (`internal/server/event_server.go`) and `excludeInternalMetadata`
//! (`internal/server/event_handlers.go`), which drop the rest.

/// The annotation prefix Flux copies into event metadata (RFC-0008).
pub const PREFIX: &str = "event.toolkit.fluxcd.io/";

use guard_core::flux::{self, HELM, IMAGE, KUSTOMIZE, SOURCE, SOURCE_EXTENSIONS};

/// The kinds allowed in an Alert's `.spec.eventSources[].kind`, in the CRD's order.
fn emitters() -> impl Iterator<Item = &'static flux::Kind> {
    flux::KINDS.iter().filter(|k| k.emits_events)
}

/// Does an object of this group and kind emit Flux events?
pub fn emits_events(group: &str, kind: &str) -> bool {
    flux::find(group, kind).is_some_and(|k| k.emits_events)
}

pub fn is_emitting_kind_name(kind: &str) -> bool {
    emitters().any(|k| k.kind == kind)
}

pub fn emitting_kind_names() -> Vec<&'static str> {
    emitters().map(|k| k.kind).collect()
}

/// The group an Alert's `eventSources[].kind` names.
pub fn group_of_kind(kind: &str) -> Option<&'static str> {
    emitters().find(|k| k.kind == kind).map(|k| k.group)
}

/// The controller-emitted keys that survive into dispatch for objects of
/// `group` (notification-controller drops `checksum`, `digest` and `token`
/// earlier). An annotation or Alert key of the same name always loses to them.
pub fn controller_keys(group: &str) -> &'static [&'static str] {
    match group {
        SOURCE => &["revision"],
        KUSTOMIZE => &["revision", "originRevision", "commit_status"],
        HELM => &["revision", "oci-digest", "app-version"],
        _ => &[],
    }
}

/// The controller that sends events for objects of `group`, for messages.
pub fn controller_name(group: &str) -> &'static str {
    match group {
        SOURCE => "source-controller",
        KUSTOMIZE => "kustomize-controller",
        HELM => "helm-controller",
        IMAGE => "the image controllers",
        SOURCE_EXTENSIONS => "source-watcher",
        _ => "its controller",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emitters_are_matched_by_group_and_kind() {
        assert!(emits_events(HELM, "HelmRelease"));
        assert!(!emits_events("example.com", "HelmRelease"));
        assert!(!emits_events(flux::NOTIFICATION, "Alert"));
        assert!(emits_events(SOURCE_EXTENSIONS, "ArtifactGenerator"));
        assert_eq!(emitting_kind_names().len(), 12);
    }

    #[test]
    fn controller_keys_per_group() {
        assert_eq!(controller_keys(SOURCE), ["revision"]);
        assert!(controller_keys(KUSTOMIZE).contains(&"commit_status"));
        assert!(controller_keys(HELM).contains(&"app-version"));
        assert!(controller_keys(IMAGE).is_empty());
        assert_eq!(group_of_kind("Kustomization"), Some(KUSTOMIZE));
        assert_eq!(group_of_kind("Alert"), None);
        assert_eq!(controller_name(HELM), "helm-controller");
    }
}

//! What reaches a notification about each kind an Alert can select: who
//! sends its events, and which metadata keys that sender puts in them, as the
//! notifiers read them (notification-controller strips the object's group
//! from the sender's `<group>/<key>` keys and drops `checksum`, `digest` and
//! `token`: fluxcd/notification-controller `internal/server/event_server.go`
//! `cleanupMetadata`, `internal/server/event_handlers.go`
//! `combineEventMetadata`, `excludeInternalMetadata`, commit 2e46958a).
//!
//! No sender puts a key in every event: each key is sent only on the events
//! its row says (failure events before the source is read carry none of
//! them). On the other events an annotation or an Alert's
//! `.spec.eventMetadata` value of the same name is what the notification
//! carries. [`Kind::emits_events`](super::kinds::Kind::emits_events) says
//! what an Alert may select; this says what is ever sent.

use super::controllers::{
    Controller, FLUX_OPERATOR, HELM_CONTROLLER, IMAGE_AUTOMATION_CONTROLLER,
    IMAGE_REFLECTOR_CONTROLLER, KUSTOMIZE_CONTROLLER, SOURCE_CONTROLLER, SOURCE_WATCHER,
};
use super::kinds::{HELM, IMAGE, KUSTOMIZE, OPERATOR, SOURCE, SOURCE_EXTENSIONS};
use super::Source;

/// The keys the git notifiers (GitHub, GitLab, Gitea, Bitbucket, Bitbucket
/// Server, Azure DevOps commit statuses) take the commit from, in the order
/// fluxcd/pkg `apis/event/v1beta1/event.go` `Event.GetRevision` reads them:
/// the first one present is the commit (fluxcd/notification-controller
/// `internal/notifier/github.go` and siblings, commit 2e46958a). Failure
/// events reach those notifiers whatever their metadata
/// (`internal/server/event_handlers.go` `getNotificationParams`).
pub const COMMIT_KEYS: [&str; 3] = ["commit", "originRevision", "revision"];

/// A key a sender puts in some of its events about a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventKey {
    /// As the notifiers read it, without the sender's group.
    pub key: &'static str,
    /// The kinds of source (a Kustomization's `spec.sourceRef.kind`) whose
    /// artifacts never give the sender this key: with them it is never sent.
    pub never_from: &'static [&'static str],
    /// On which events, and where that was read.
    pub when: Source,
}

/// The events about one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindEvents {
    pub group: &'static str,
    pub kind: &'static str,
    /// The controller that sends events about it to notification-controller;
    /// `None`: none does, so nothing on it reaches a notification.
    pub sender: Option<&'static Controller>,
    pub keys: &'static [EventKey],
    pub source: Source,
}

const fn key(key: &'static str, when: &'static str) -> EventKey {
    EventKey {
        key,
        never_from: &[],
        when: Source::new(when),
    }
}

const fn events(
    group: &'static str,
    kind: &'static str,
    sender: Option<&'static Controller>,
    keys: &'static [EventKey],
    source: &'static str,
) -> KindEvents {
    KindEvents {
        group,
        kind,
        sender,
        keys,
        source: Source::new(source),
    }
}

const SOURCE_KEYS: &[EventKey] = &[key(
    "revision",
    "the artifact's revision, only on new-artifact and recovery events; failure events carry \
     none (fluxcd/source-controller `internal/controller/*_controller.go` `notify`, \
     `internal/reconcile/summarize/processor.go`, commit 39b711b1)",
)];
const SOURCE_EVENTS: &str = "fluxcd/source-controller `main.go` (events recorder), commit 39b711b1";

const KUSTOMIZATION_KEYS: &[EventKey] = &[
    key(
        "revision",
        "the source artifact's revision, when known; not on the failures before the source is \
         read (invalid CEL, access denied, feature gate) (fluxcd/kustomize-controller \
         `internal/controller/kustomization_controller.go` `event`, commit 186fb3b2)",
    ),
    EventKey {
        key: "originRevision",
        never_from: &["GitRepository", "Bucket"],
        when: Source::new(
            "the artifact's `org.opencontainers.image.revision` metadata, only when it has one \
             (an OCIRepository artifact pushed with it); source-controller gives a GitRepository \
             or Bucket artifact no metadata (fluxcd/kustomize-controller \
             `internal/controller/kustomization_controller.go` `getOriginRevision`, commit \
             186fb3b2; fluxcd/source-controller `internal/controller/gitrepository_controller.go`, \
             `bucket_controller.go` `reconcileArtifact`, commit 39b711b1)",
        ),
    },
    key(
        "commit_status",
        "`update`, only on the success event sent when the Kustomization is Ready \
         (`Reconcile`'s deferred event, commit 186fb3b2)",
    ),
];

const HELM_RELEASE_KEYS: &[EventKey] = &[
    key(
        "revision",
        "the chart version, on Helm action events only (install, upgrade, test, rollback, \
         uninstall, remediation, drift correction); not on dependency, ACL or CEL failures \
         (fluxcd/helm-controller `internal/reconcile/release.go` `eventMeta`, commit 0f61a860)",
    ),
    key(
        "app-version",
        "on Helm action events, when the chart has an appVersion (`eventMeta`, commit 0f61a860)",
    ),
    key(
        "oci-digest",
        "on Helm action events, when the chart came from an OCI source (`eventMeta`, commit \
         0f61a860)",
    ),
];

const OPERATOR_REVISION: &[EventKey] = &[key(
    "revision",
    "`fluxcd.controlplane.io/revision`: on a FluxInstance's notified events when \
     `status.lastAttemptedRevision` is set (`internal/controller/fluxinstance_controller.go` \
     `notify`); on a ResourceSetInputProvider's `ReconciliationSucceeded`, sent only when the \
     exported revision changed (`resourcesetinputprovider_controller.go`); \
     controlplaneio-fluxcd/flux-operator commit 17c6aead",
)];

/// Every kind an Alert can select, in the Alert CRD's order.
pub const EVENTS: &[KindEvents] = &[
    events(SOURCE, "Bucket", Some(&SOURCE_CONTROLLER), SOURCE_KEYS, SOURCE_EVENTS),
    events(SOURCE, "GitRepository", Some(&SOURCE_CONTROLLER), SOURCE_KEYS, SOURCE_EVENTS),
    events(
        KUSTOMIZE,
        "Kustomization",
        Some(&KUSTOMIZE_CONTROLLER),
        KUSTOMIZATION_KEYS,
        "fluxcd/kustomize-controller `main.go` (events recorder), commit 186fb3b2",
    ),
    events(
        HELM,
        "HelmRelease",
        Some(&HELM_CONTROLLER),
        HELM_RELEASE_KEYS,
        "fluxcd/helm-controller `main.go` (events recorder), commit 0f61a860",
    ),
    events(SOURCE, "HelmChart", Some(&SOURCE_CONTROLLER), SOURCE_KEYS, SOURCE_EVENTS),
    events(SOURCE, "HelmRepository", Some(&SOURCE_CONTROLLER), SOURCE_KEYS, SOURCE_EVENTS),
    events(
        IMAGE,
        "ImageRepository",
        Some(&IMAGE_REFLECTOR_CONTROLLER),
        &[],
        "fluxcd/image-reflector-controller `internal/controller/imagerepository_controller.go` \
         `eventLogf`, `notify` (no metadata keys), commit debe2aaa",
    ),
    events(
        IMAGE,
        "ImagePolicy",
        Some(&IMAGE_REFLECTOR_CONTROLLER),
        &[],
        "fluxcd/image-reflector-controller `internal/controller/imagepolicy_controller.go` \
         (no metadata keys), commit debe2aaa",
    ),
    events(
        IMAGE,
        "ImageUpdateAutomation",
        Some(&IMAGE_AUTOMATION_CONTROLLER),
        &[],
        "fluxcd/image-automation-controller \
         `internal/controller/imageupdateautomation_controller.go` `notify` (no metadata keys; \
         the pushed commit only in the message), commit d36e2ea0",
    ),
    events(SOURCE, "OCIRepository", Some(&SOURCE_CONTROLLER), SOURCE_KEYS, SOURCE_EVENTS),
    events(
        SOURCE_EXTENSIONS,
        "ArtifactGenerator",
        Some(&SOURCE_WATCHER),
        &[],
        "fluxcd/source-watcher `internal/controller/artifactgenerator_controller.go` \
         (`r.Event`, no metadata keys), commit 825fa15b",
    ),
    events(
        SOURCE,
        "ExternalArtifact",
        None,
        &[],
        "no controller sends events about it: source-watcher's are about the ArtifactGenerator \
         (fluxcd/source-watcher `internal/controller/artifactgenerator_controller.go`, commit \
         825fa15b); source-controller does not reconcile ExternalArtifacts (fluxcd/source-controller \
         `main.go`, commit 39b711b1)",
    ),
    events(
        OPERATOR,
        "FluxInstance",
        Some(&FLUX_OPERATOR),
        OPERATOR_REVISION,
        "controlplaneio-fluxcd/flux-operator `internal/notifier/notifier.go` `New` (fluxcd/pkg \
         events recorder, copies the `event.toolkit.fluxcd.io/` annotations), \
         `internal/controller/fluxinstance_controller.go` `notify`, commit 17c6aead",
    ),
    events(
        OPERATOR,
        "ResourceSet",
        Some(&FLUX_OPERATOR),
        &[],
        "controlplaneio-fluxcd/flux-operator `internal/controller/resourceset_controller.go` \
         `notify` (no metadata keys), commit 17c6aead",
    ),
    events(
        OPERATOR,
        "ResourceSetInputProvider",
        Some(&FLUX_OPERATOR),
        OPERATOR_REVISION,
        "controlplaneio-fluxcd/flux-operator \
         `internal/controller/resourcesetinputprovider_controller.go`, commit 17c6aead",
    ),
];

/// The events about this group and kind, if an Alert can select it.
pub fn of(group: &str, kind: &str) -> Option<&'static KindEvents> {
    EVENTS.iter().find(|e| e.group == group && e.kind == kind)
}

impl KindEvents {
    /// Does its sender put this key in some of its events? `source_kind`:
    /// the kind of the object's source, when it has one (a Kustomization).
    pub fn sends(&self, key: &str, source_kind: Option<&str>) -> bool {
        self.keys
            .iter()
            .any(|k| k.key == key && !source_kind.is_some_and(|s| k.never_from.contains(&s)))
    }

    /// Can an annotation or Alert value of this key be the commit the git
    /// notifiers report on? Every key of [`COMMIT_KEYS`], on every kind
    /// whose events are sent: no sender puts any of them in every event.
    pub fn picks_commit(&self, key: &str) -> bool {
        self.sender.is_some() && COMMIT_KEYS.contains(&key)
    }
}

#[cfg(test)]
mod tests {
    use super::super::kinds::emitters;
    use super::*;

    #[test]
    fn every_alert_source_kind_has_a_row_in_the_enum_order() {
        let rows: Vec<(&str, &str)> = EVENTS.iter().map(|e| (e.group, e.kind)).collect();
        let kinds: Vec<(&str, &str)> = emitters().map(|k| (k.group, k.kind)).collect();
        assert_eq!(rows, kinds);
    }

    #[test]
    fn senders_are_the_kinds_controllers_where_there_is_one() {
        for e in EVENTS {
            if let Some(sender) = e.sender {
                let kind = super::super::kinds::find(e.group, e.kind).unwrap();
                assert_eq!(kind.controller.name, sender.name, "{}", e.kind);
            }
        }
        assert!(of(SOURCE, "ExternalArtifact").unwrap().sender.is_none());
    }

    #[test]
    fn commit_keys_pick_on_every_kind_with_events() {
        let k = of(KUSTOMIZE, "Kustomization").unwrap();
        assert!(k.sends("originRevision", None) && k.picks_commit("originRevision"));
        assert!(k.sends("originRevision", Some("OCIRepository")));
        assert!(!k.sends("originRevision", Some("GitRepository")));
        assert!(k.sends("revision", Some("GitRepository")));
        assert!(k.picks_commit("commit") && !k.picks_commit("commit_status"));
        assert!(of(OPERATOR, "FluxInstance")
            .unwrap()
            .sends("revision", None));
        assert!(!of(OPERATOR, "ResourceSet").unwrap().sends("revision", None));
        assert!(!of(SOURCE, "ExternalArtifact")
            .unwrap()
            .picks_commit("commit"));
        assert!(of(IMAGE, "ImagePolicy").unwrap().picks_commit("revision"));
    }
}

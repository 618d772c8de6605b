//! What is recorded of who suspended: audit annotations, and the suspender
//! annotation of `recordSuspender`.

use guard_core::UserInfo;

use crate::kinds::Kind;
use crate::mirror::Edit;
use crate::settings::Settings;
use crate::view::{Object, State};
use crate::write::{Change, Write};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Suspend,
    ChangeReason,
    Resume,
}

/// The audit annotations of a suspend, resume or reason change: the action,
/// and the suspension it made or ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Audit {
    pub(crate) action: Action,
    pub(crate) kind: Kind,
    pub(crate) shown: State,
}

/// What a write records, if anything.
pub(crate) fn entry(write: &Write<'_>) -> Option<Audit> {
    let (action, shown) = match write.change {
        Change::Enter => (Action::Suspend, Some(&write.state)),
        Change::Stay {
            reason_changed: true,
        } => (Action::ChangeReason, Some(&write.state)),
        Change::Leave => (Action::Resume, write.old.as_ref()),
        Change::Unsuspended
        | Change::Stay {
            reason_changed: false,
        } => return None,
    };
    Some(Audit {
        action,
        kind: write.kind,
        shown: shown?.clone(),
    })
}

/// `recordSuspender`: the policy owns the suspender annotation. Set on
/// suspend and reason change, removed on resume, restored when a request
/// merely edits it.
pub(crate) fn record(
    change: Change,
    new: &Object,
    old: Option<&Object>,
    settings: &Settings,
    user: &UserInfo,
) -> Option<Edit> {
    let key = &settings.suspender_annotation;
    let now_value = new.metadata.annotation(key);
    let old_value = old.and_then(|o| o.metadata.annotation(key));
    let set = |v: &str| Edit::SetAnnotation(key.clone(), v.to_string());
    match change {
        Change::Enter
        | Change::Stay {
            reason_changed: true,
        } => {
            // A username longer than a message is recorded shortened, as
            // a message would show it, so the reply stays bounded.
            let who = guard_core::names::bounded(if user.username.is_empty() {
                "system:anonymous"
            } else {
                &user.username
            });
            (now_value != Some(&*who)).then(|| set(&who))
        }
        Change::Leave => now_value.map(|_| Edit::RemoveAnnotation(key.clone())),
        Change::Stay {
            reason_changed: false,
        } if now_value != old_value => Some(match old_value {
            Some(v) => set(v),
            None => Edit::RemoveAnnotation(key.clone()),
        }),
        Change::Stay { .. } | Change::Unsuspended => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use serde_json::json;

    #[test]
    fn removing_the_annotation_resumes_and_flux_resume_drops_it() {
        let old = suspended();
        let r = reason_removed_by("alice");
        let v = run(&r, "{}");
        assert!(v.allowed);
        assert_eq!(suspend_of(&v), Some(json!(false)));
        assert_eq!(
            v.audit_annotations.get("action").map(String::as_str),
            Some("resume")
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            old.clone(),
        );
        let v = run(&r, "{}");
        assert!(v.allowed);
        assert_eq!(
            v.mutated_value().unwrap()["metadata"]["annotations"],
            json!({})
        );
        assert!(v
            .warnings
            .iter()
            .any(|w| w.contains("resumed through spec.suspend; the stale annotation")));
        // The same request from kustomize-controller re-applies Git: it stays suspended.
        let r = request(
            "UPDATE",
            "system:serviceaccount:flux-system:kustomize-controller",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            old,
        );
        let v = run(&r, "{}");
        assert_eq!(suspend_of(&v), Some(json!(true)));
        assert!(v.audit_annotations.is_empty(), "{:?}", v.audit_annotations);
    }

    #[test]
    fn the_suspender_is_recorded_and_owned_by_the_policy() {
        let s = r#"{"recordSuspender":true}"#;
        let key = "fluxcd.controlplane.io/suspendedBy";
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            ks(json!({}), json!({})),
        );
        assert_eq!(annotation_of(&run(&r, s), key), Some(json!("alice")));
        let old = ks(
            json!({R: "INC-1 database migration", key: "alice"}),
            json!({"suspend": true}),
        );
        let r = request(
            "UPDATE",
            "mallory",
            ks(
                json!({R: "INC-1 database migration", key: "bob"}),
                json!({"suspend": true}),
            ),
            old.clone(),
        );
        assert_eq!(annotation_of(&run(&r, s), key), Some(json!("alice")));
        let r = request(
            "UPDATE",
            "bob",
            ks(json!({key: "alice"}), json!({"suspend": true})),
            old,
        );
        let v = run(&r, s);
        assert_eq!(annotation_of(&v, key), None);
        assert_eq!(suspend_of(&v), Some(json!(false)));
    }

    #[test]
    fn a_username_longer_than_a_message_is_recorded_shortened_and_kept() {
        let s = r#"{"recordSuspender":true}"#;
        let key = "fluxcd.controlplane.io/suspendedBy";
        let long = "alice@example.com".repeat(1_000);
        let r = request(
            "UPDATE",
            &long,
            ks(json!({R: "INC-1 database migration"}), json!({})),
            ks(json!({}), json!({})),
        );
        let recorded = annotation_of(&run(&r, s), key).unwrap();
        let recorded = recorded.as_str().unwrap();
        assert!(recorded.len() <= guard_core::names::MAX_MESSAGE);
        assert!(recorded.starts_with("alice@example.comalice@"));
        assert!(recorded.contains("bytes not shown"));
        // Already recorded: a later edit by the same user leaves it alone.
        let old = ks(
            json!({R: "INC-1 database migration", key: recorded}),
            json!({"suspend": true}),
        );
        let r = request(
            "UPDATE",
            &long,
            ks(
                json!({R: "INC-2 other", key: recorded}),
                json!({"suspend": true}),
            ),
            old,
        );
        assert_eq!(annotation_of(&run(&r, s), key), None);
    }
}

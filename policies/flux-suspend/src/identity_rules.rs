//! Who may suspend and resume: the `suspenders` and `resumers` settings.

use guard_core::identity::Identities;
use guard_core::UserInfo;

use crate::settings::Settings;
use crate::write::{Change, Origin, Write};

/// What someone not listed was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Act {
    Suspend,
    ChangeReason,
    Resume,
    /// Deleting a suspended object: created again unsuspended, it would be
    /// resumed.
    Delete,
}

impl Act {
    /// The setting that lists who may.
    pub(crate) fn listed(self, settings: &Settings) -> &Identities {
        match self {
            Act::Suspend | Act::ChangeReason => &settings.suspenders,
            Act::Resume | Act::Delete => &settings.resumers,
        }
    }
}

/// `suspenders` and `resumers`, on CREATE too (deleting and re-creating an
/// object suspended must not bypass them), except for the audit scanner's
/// replays, which say nothing of who suspended.
pub(crate) fn refused(write: &Write<'_>, settings: &Settings) -> Option<Act> {
    if write.origin == Origin::Replay {
        return None;
    }
    let act = match write.change {
        Change::Enter => Act::Suspend,
        Change::Stay {
            reason_changed: true,
        } => Act::ChangeReason,
        Change::Leave => Act::Resume,
        Change::Unsuspended
        | Change::Stay {
            reason_changed: false,
        } => return None,
    };
    (!may(act, settings, write.user)).then_some(act)
}

/// Whether `user` may do `act`: anyone when the setting lists nobody.
pub(crate) fn may(act: Act, settings: &Settings, user: &UserInfo) -> bool {
    let list = act.listed(settings);
    list.is_empty() || list.matches(user)
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use serde_json::{json, Value};

    #[test]
    fn identity_rules_apply_to_updates_and_creates_but_not_audit_replays() {
        let s = r#"{"suspenders":{"groups":["platform"]},"resumers":{"users":["bob"]}}"#;
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            ks(json!({}), json!({})),
        );
        let v = run(&r, s);
        assert_eq!(v.code, Some(403));
        assert_eq!(message(&v), "alice may not suspend Kustomization flux-system/apps: the flux-suspend policy allows only its suspenders (groups platform). Ask one of them, or an administrator to extend the suspenders setting.");
        let old = suspended();
        let r = reason_removed_by("alice");
        assert!(message(&run(&r, s)).starts_with("alice may not resume"));
        let r = request(
            "UPDATE",
            "bob",
            ks(json!({}), json!({"suspend": true})),
            old.clone(),
        );
        assert!(run(&r, s).allowed);
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-9 another reason"}), json!({"suspend": true})),
            old,
        );
        assert!(message(&run(&r, s)).contains("may not change the suspension reason of"));
        let r = request(
            "CREATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            Value::Null,
        );
        assert!(message(&run(&r, s)).starts_with("alice may not suspend"));
        // The audit scanner's replay carries no userInfo.
        let r = request(
            "CREATE",
            "",
            ks(
                json!({R: "INC-1 database migration"}),
                json!({"suspend": true}),
            ),
            Value::Null,
        );
        assert!(run(&r, s).allowed);
    }
}

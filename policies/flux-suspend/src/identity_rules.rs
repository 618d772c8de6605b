//! Who may suspend and resume: the `suspenders` and `resumers` settings.

use guard_core::identity::{self, Identities};
use guard_core::object::ObjectName;
use guard_core::{UserInfo, Verdict};

use crate::judge::Change;
use crate::settings::Settings;

/// Kubewarden's audit scanner replays stored objects as CREATEs without any
/// userInfo (kubewarden/audit-scanner `internal/scanner/admission_request.go`
/// `newAdmissionRequest`, commit 8472a7cf; policy-server's `/audit` handler
/// passes the request on as it is). kube-apiserver never sends an empty
/// username: an unauthenticated request is `system:anonymous`
/// (k8s.io/apiserver `pkg/authentication/request/anonymous`).
pub(crate) fn audit_replay(create: bool, user: &UserInfo) -> bool {
    create && user.username.is_empty()
}

/// `suspenders` and `resumers`, on CREATE too (deleting and re-creating an
/// object suspended must not bypass them), except for the audit scanner's
/// replays, which say nothing of who suspended.
pub(crate) fn check_identity(
    create: bool,
    change: Change,
    settings: &Settings,
    user: &UserInfo,
    target: &ObjectName<'_>,
) -> Option<Verdict> {
    if audit_replay(create, user) {
        return None;
    }
    let (list, setting, act) = match change {
        Change::Enter => (&settings.suspenders, "suspenders", "suspend"),
        Change::Stay {
            reason_changed: true,
        } => (
            &settings.suspenders,
            "suspenders",
            "change the suspension reason of",
        ),
        Change::Leave => (&settings.resumers, "resumers", "resume"),
        Change::Unsuspended
        | Change::Stay {
            reason_changed: false,
        } => return None,
    };
    if list.is_empty() || list.matches(user) {
        return None;
    }
    Some(Verdict::deny_with_code(
        format!(
            "{} may not {act} {}: the flux-suspend policy allows only its {setting} ({}). \
             Ask one of them, or an administrator to extend the {setting} setting.",
            identity::describe(user),
            target.describe(),
            list_identities(list)
        ),
        403,
    ))
}

/// Deleting a suspended object, with `resumers` listed: re-created
/// unsuspended it would be resumed, so only the resumers may delete it.
pub(crate) fn check_delete(
    settings: &Settings,
    user: &UserInfo,
    target: &ObjectName<'_>,
) -> Option<Verdict> {
    let list = &settings.resumers;
    if list.is_empty() || list.matches(user) {
        return None;
    }
    Some(Verdict::deny_with_code(
        format!(
            "{} may not delete {} while it is suspended: created again without the suspension, \
             it would be resumed, and the flux-suspend policy allows only its resumers ({}) to \
             resume it. Ask one of them to resume it first, or an administrator to extend the \
             resumers setting.",
            identity::describe(user),
            target.describe(),
            list_identities(list)
        ),
        403,
    ))
}

/// The listed identities as the refusal names them, so the person knows whom to ask.
pub(crate) fn list_identities(ids: &Identities) -> String {
    let mut parts = Vec::new();
    for (label, list) in [
        ("users", &ids.users),
        ("groups", &ids.groups),
        ("service accounts", &ids.service_accounts),
    ] {
        if !list.is_empty() {
            parts.push(format!("{label} {}", list.join(", ")));
        }
    }
    parts.join("; ")
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

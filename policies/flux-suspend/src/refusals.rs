//! Refusal messages: what was refused and the command that does it right.

use guard_core::names;
use guard_core::object::ObjectName;

use crate::commands;
use crate::judge::Change;
use crate::kinds::{Honours, Kind, SUSPEND_ANNOTATION};
use crate::settings::Settings;
use crate::view::State;

/// What kind of write brought the refused state: the fix differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Write {
    /// A CREATE someone sends: the manifest needs the fix.
    Create,
    /// The audit scanner's replay of a stored object: it exists, so the fix
    /// is a command on it (a new reason or expiry, or a resume).
    Replay,
    Update,
}

/// No annotation where one is required: a reason (`requireReason`), or,
/// without it, the expiry `requireExpiry` or `maxDuration` asks for. The fix
/// depends on how the object got suspended (a manifest, `flux suspend`, or
/// the annotation removed).
pub(crate) fn missing_reason(
    how: Write,
    change: Change,
    state: &State<'_>,
    target: &ObjectName<'_>,
    kind: &Kind,
    settings: &Settings,
) -> String {
    let mechanisms = state.mechanisms(kind);
    let (without, wanted) = if settings.require_reason {
        ("a reason", "one")
    } else {
        ("an expiry", "an until=<RFC 3339 time> expiry")
    };
    if how == Write::Replay {
        return format!(
            "{} is stored suspended ({mechanisms}) without {without}. This cluster requires \
             {wanted} in annotation {SUSPEND_ANNOTATION}. Add it with:\n  {}\nor resume it \
             with:\n  {}",
            target.describe(),
            commands::suspend(target, kind, settings, None),
            commands::resume(target, kind, settings)
        );
    }
    if how == Write::Create {
        return format!(
            "{} is created suspended ({mechanisms}) without {without}. This cluster requires \
             {wanted} in annotation {SUSPEND_ANNOTATION}; add to its manifest:\n{}",
            target.describe(),
            commands::manifest(settings)
        );
    }
    if change == Change::Enter {
        // `flux suspend` sets spec.suspend only; the disable annotation of
        // the other kinds is written by hand or by the Flux Operator UI.
        let (how, cannot) = match kind.honours {
            Honours::SpecSuspend => (
                ", as `flux suspend` does",
                ", which `flux suspend` cannot write",
            ),
            Honours::DisableAnnotation(_) => ("", ""),
        };
        return format!(
            "{} is being suspended ({mechanisms}{how}) without {without}. This cluster requires \
             {wanted} in annotation {SUSPEND_ANNOTATION}{cannot}. Suspend it with:\n  {}",
            target.describe(),
            commands::suspend(target, kind, settings, None)
        );
    }
    format!(
        "Annotation {SUSPEND_ANNOTATION} was removed from {}, which stays suspended ({mechanisms}) \
         without {without}. Keep the annotation, or resume it with:\n  {}",
        target.describe(),
        commands::resume(target, kind, settings)
    )
}

/// A reason that `reason::check` refused, quoted, with a way to suspend
/// correctly (and, when it was already suspended, to resume instead).
pub(crate) fn refused_reason(
    how: Write,
    change: Change,
    value: &str,
    why: &str,
    target: &ObjectName<'_>,
    kind: &Kind,
    settings: &Settings,
) -> String {
    let fix = if how == Write::Create {
        format!(
            "Write a reason in its manifest:\n{}",
            commands::manifest(settings)
        )
    } else if change == Change::Enter && how == Write::Update {
        format!(
            "Suspend it with a reason such as:\n  {}",
            commands::suspend(target, kind, settings, None)
        )
    } else {
        format!(
            "Suspend it with a reason such as:\n  {}\nor resume it:\n  {}",
            commands::suspend(target, kind, settings, None),
            commands::resume(target, kind, settings)
        )
    };
    format!(
        "The suspension reason of {} in annotation {SUSPEND_ANNOTATION} is refused: {why}. \
         The value is {}. {fix}",
        target.describe(),
        names::quote(value)
    )
}

/// `deny-annotation-only` mode: the annotation alone would be left, whether
/// suspending or resuming; the one merge patch that sets both is shown.
pub(crate) fn annotation_only_refused(
    target: &ObjectName<'_>,
    kind: &Kind,
    resuming: bool,
    state: &State<'_>,
    settings: &Settings,
) -> String {
    let honoured = kind.honoured_mechanism();
    if resuming {
        return format!(
            "Resuming {} leaves annotation {SUSPEND_ANNOTATION} behind: it would still read as \
             suspended while Flux reconciles it. Remove the annotation in the same request:\n  {}",
            target.describe(),
            commands::resume(target, kind, settings)
        );
    }
    format!(
        "{} would be suspended only by annotation {SUSPEND_ANNOTATION}, which no Flux release \
         honours: it would keep reconciling. Set {honoured} in the same request:\n  {}",
        target.describe(),
        commands::suspend(target, kind, settings, state.reason)
    )
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use serde_json::json;

    #[test]
    fn flux_suspend_without_a_reason_is_refused_with_the_command() {
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({}), json!({"suspend": true})),
            ks(json!({}), json!({})),
        );
        let v = run(&r, "{}");
        assert!(!v.allowed);
        assert_eq!(v.code, Some(400));
        let m = message(&v);
        assert!(m.starts_with("Kustomization flux-system/apps is being suspended (spec.suspend: true, as `flux suspend` does) without a reason"), "{m}");
        assert!(m.contains("kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --overwrite reconcile.fluxcd.io/suspended='<ticket> <why>'"), "{m}");
        assert!(run(&r, r#"{"requireReason":false}"#).allowed);
    }

    #[test]
    fn deny_annotation_only_mode_refuses_the_annotation_alone() {
        let s = r#"{"mode":"deny-annotation-only"}"#;
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            ks(json!({}), json!({})),
        );
        let m = run(&r, s).message.unwrap();
        assert!(
            m.contains("which no Flux release honours") && m.contains(r#""spec":{"suspend":true}"#),
            "{m}"
        );
        let old = ks(
            json!({R: "INC-1 database migration"}),
            json!({"suspend": true}),
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            old,
        );
        let m = run(&r, s).message.unwrap();
        assert!(
            m.starts_with("Resuming Kustomization flux-system/apps leaves annotation"),
            "{m}"
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(
                json!({R: "INC-1 database migration"}),
                json!({"suspend": true}),
            ),
            ks(json!({}), json!({})),
        );
        let v = run(&r, s);
        assert!(v.allowed && v.mutated_object.is_none());
    }

    #[test]
    fn removing_the_reason_of_a_spec_suspension_is_refused_outside_mirror_mode() {
        let r = reason_removed_by("alice");
        let m = run(&r, r#"{"mode":"annotation-only"}"#).message.unwrap();
        assert!(m.starts_with("Annotation reconcile.fluxcd.io/suspended was removed from Kustomization flux-system/apps, which stays suspended"), "{m}");
        assert!(m.contains(r#""spec":{"suspend":null}"#), "{m}");
    }
}

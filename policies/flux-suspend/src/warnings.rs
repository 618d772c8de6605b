//! Warnings: what mirroring changed and the effective state the request left.

use guard_core::object::ObjectName;
use guard_core::{names, Timestamp, UserInfo};

use crate::commands;
use crate::identity_rules::list_identities;
use crate::judge::Change;
use crate::kinds::{Kind, SUSPEND_ANNOTATION};
use crate::mirror::Mirrored;
use crate::reason;
use crate::settings::Settings;
use crate::view::State;

/// Who keeps the annotation when a reconciler's apply keeps a suspension:
/// the manifest it applies, or managers outside it (`kubectl annotate`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeptBy {
    /// The applier's own apply entry owns the annotation: Git states it.
    Manifest,
    /// Other field managers own it (none when nobody does).
    Others(Vec<String>),
}

/// How `user` resumes: the command, or, when `resumers` are listed and they
/// are not one, whom to ask (a command they would be refused is no help).
/// Follows "to resume" or "to resume it".
pub(crate) fn resume_hint(
    target: &ObjectName<'_>,
    kind: &Kind,
    settings: &Settings,
    user: &UserInfo,
) -> String {
    let resumers = &settings.resumers;
    if resumers.is_empty() || resumers.matches(user) {
        return format!("run `{}`", commands::resume(target, kind, settings));
    }
    format!(
        "ask one of the flux-suspend policy's resumers ({})",
        list_identities(resumers)
    )
}

/// What mirroring did to the request, which the person did not ask for.
pub(crate) fn mirror_note(
    how: Mirrored,
    kept_by: &KeptBy,
    target: &ObjectName<'_>,
    kind: &Kind,
    settings: &Settings,
    user: &UserInfo,
) -> String {
    let honoured = kind.honoured_mechanism();
    let what = target.describe();
    match how {
        Mirrored::Honoured => format!(
            "{what}: suspended via annotation {SUSPEND_ANNOTATION}; {honoured} mirrored so every \
             Flux release stops reconciling it"
        ),
        Mirrored::Reasserted => match kept_by {
            KeptBy::Manifest => format!(
                "{what}: the applied manifest states annotation {SUSPEND_ANNOTATION}, so \
                 {honoured} is kept; to resume, remove the annotation from the manifest in Git"
            ),
            KeptBy::Others(managers) => format!(
                "{what}: the apply left annotation {SUSPEND_ANNOTATION}, which was set outside \
                 the manifest{}, so {honoured} is kept; to resume {}",
                if managers.is_empty() {
                    String::new()
                } else {
                    format!(" (field manager {})", managers.join(", "))
                },
                resume_hint(target, kind, settings, user)
            ),
        },
        Mirrored::ResumedByAnnotation => format!(
            "{what}: annotation {SUSPEND_ANNOTATION} removed; {honoured} unset in step, so Flux \
             reconciles it again"
        ),
        Mirrored::ResumedByMechanism => format!(
            "{what}: resumed through {}; the stale annotation {SUSPEND_ANNOTATION} was removed \
             with it",
            honoured.replace(": true", "").replace(": disabled", "")
        ),
    }
}

/// Warnings on the effective state the person could not see.
#[expect(
    clippy::too_many_arguments,
    reason = "the change, both states and the object, each from a different step of judge"
)]
pub(crate) fn state_warnings(
    change: Change,
    old: Option<&State<'_>>,
    state: &State<'_>,
    expiry: Option<Timestamp>,
    target: &ObjectName<'_>,
    kind: &Kind,
    settings: &Settings,
    now: Timestamp,
) -> Vec<String> {
    let what = target.describe();
    let mut warnings = Vec::new();
    let shown = |r: Option<&str>| {
        r.map_or_else(
            || "no reason".to_string(),
            |r| format!("reason {}", names::quote(r)),
        )
    };
    match change {
        Change::Enter => {
            let until = expiry
                .map(|at| format!(", until {}", guard_core::rfc3339::format(at)))
                .unwrap_or_default();
            warnings.push(format!(
                "{what} is now suspended by {} ({}{until})",
                state.mechanisms(kind),
                shown(state.reason)
            ));
        }
        Change::Leave => warnings.push(format!("{what} is resumed: Flux reconciles it again")),
        Change::Stay {
            reason_changed: true,
        } => warnings.push(format!(
            "{what} stays suspended, now with {}",
            shown(state.reason)
        )),
        Change::Stay {
            reason_changed: false,
        } => {
            if old.is_some_and(|o| o.honoured() != state.honoured()) {
                warnings.push(format!(
                    "{what} is now suspended by {}",
                    state.mechanisms(kind)
                ));
            }
            if let Some(Some(at)) = state.reason.map(reason::until) {
                match at {
                    Ok(at) if at <= now => warnings.push(format!(
                        "The suspension of {what} expired at {}; resume it with `{}` or renew \
                         the until= time in annotation {SUSPEND_ANNOTATION}",
                        guard_core::rfc3339::format(at),
                        commands::resume(target, kind, settings)
                    )),
                    Ok(_) => {}
                    Err(e) => warnings.push(format!(
                        "The suspension reason of {what} has an unreadable expiry: {e}"
                    )),
                }
            }
        }
        Change::Unsuspended => {}
    }
    if state.annotation_only() && !matches!(change, Change::Unsuspended) {
        let prune = state
            .collects
            .map(|c| {
                format!(
                    " and deleting it would delete everything it applied ({})",
                    c.deciding()
                )
            })
            .unwrap_or_default();
        warnings.push(format!(
            "{what} is suspended only by annotation {SUSPEND_ANNOTATION}: Flux releases that do \
             not implement RFC-0006 keep reconciling it{prune}; to be sure, also run `{}`",
            commands::honour(target, kind)
        ));
    }
    warnings
}

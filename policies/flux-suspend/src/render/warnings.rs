//! Warnings: what mirroring changed and the effective state the request left.

use guard_core::{names, Timestamp, UserInfo};

use super::{deciding, honoured_mechanism, inventory, mechanisms, resume_hint, shown};
use crate::commands;
use crate::kinds::Collects;
use crate::kinds::{Kind, SUSPEND_ANNOTATION};
use crate::mirror::Mirrored;
use crate::reason;
use crate::reconciler::KeptBy;
use crate::settings::Settings;
use crate::view::Target;
use crate::warnings::Warning;

pub(super) fn text(warning: &Warning, settings: &Settings, user: &UserInfo) -> String {
    match warning {
        Warning::NoopKeepsSuspension { target, kind } => noop_note(target, kind, settings, user),
        Warning::Mirrored {
            how,
            kept_by,
            target,
            kind,
        } => mirror_note(*how, kept_by, target, kind, settings, user),
        Warning::Suspended {
            target,
            kind,
            state,
            until,
        } => {
            let until = until
                .map(|at| format!(", until {}", guard_core::rfc3339::format(at)))
                .unwrap_or_default();
            format!(
                "{} is now suspended by {} ({}{until})",
                target.object().describe(),
                mechanisms(state, kind),
                shown(state.reason.as_deref())
            )
        }
        Warning::Resumed { target } => format!(
            "{} is resumed: Flux reconciles it again",
            target.object().describe()
        ),
        Warning::ReasonChanged { target, reason } => format!(
            "{} stays suspended, now with {}",
            target.object().describe(),
            shown(reason.as_deref())
        ),
        Warning::MechanismsChanged {
            target,
            kind,
            state,
        } => format!(
            "{} is now suspended by {}",
            target.object().describe(),
            mechanisms(state, kind)
        ),
        Warning::Expired { target, kind, at } => expired_note(target, kind, *at, settings, user),
        Warning::UnreadableExpiry { target, problem } => format!(
            "The suspension reason of {} has an unreadable expiry: {}",
            target.object().describe(),
            unreadable_expiry(problem)
        ),
        Warning::AnnotationOnly {
            target,
            kind,
            collects,
        } => annotation_only_note(target, kind, *collects),
        Warning::SpecStaged {
            target,
            kind,
            annotated,
        } => {
            let target = target.object();
            format!(
                "{} is suspended: the spec changes in this request are stored but not applied \
                 until it is resumed; to resume it {}",
                target.describe(),
                resume_hint(&target, kind, settings, user, *annotated)
            )
        }
        Warning::InventoryKept {
            target,
            kind,
            objects,
            collects,
        } => kept_note(target, kind, *objects, *collects),
    }
}

/// A suspended object deleted: what it manages stays, unmanaged.
fn kept_note(target: &Target, kind: &Kind, objects: usize, collects: Collects) -> String {
    format!(
        "{} is suspended ({}), so {} deletes it without deleting {}{}: they stay in the \
         cluster, unmanaged",
        target.object().describe(),
        honoured_mechanism(kind),
        kind.controller.name,
        inventory(collects, objects),
        match collects {
            Collects::Policy(_) => format!(" although {}", deciding(collects, kind)),
            Collects::Inventory | Collects::Release => String::new(),
        }
    )
}

/// An expiry passed while the suspension stays.
/// An expiry is written in the annotation, so the object carries it.
fn expired_note(
    target: &Target,
    kind: &Kind,
    at: Timestamp,
    settings: &Settings,
    user: &UserInfo,
) -> String {
    let target = target.object();
    format!(
        "The suspension of {} expired at {}; renew the until= time in annotation \
         {SUSPEND_ANNOTATION}, or, to resume it, {}",
        target.describe(),
        guard_core::rfc3339::format(at),
        resume_hint(&target, kind, settings, user, true)
    )
}

/// A write that changed nothing left a suspension by annotation alone.
fn noop_note(target: &Target, kind: &Kind, settings: &Settings, user: &UserInfo) -> String {
    let target = target.object();
    format!(
        "{} stays suspended by annotation {SUSPEND_ANNOTATION}: this request changed nothing \
         and named no field manager, as `flux resume` sends when spec.suspend is not set (and \
         as `flux migrate` and Flux Operator's storage migration do); to resume it {}",
        target.describe(),
        resume_hint(&target, kind, settings, user, true)
    )
}

/// Suspended by the annotation alone: what still reconciles, and the fix.
fn annotation_only_note(target: &Target, kind: &Kind, collects: Option<Collects>) -> String {
    let target = target.object();
    let prune = collects
        .map(|c| {
            format!(
                " and deleting it would delete {} ({})",
                match c {
                    Collects::Release => "its Helm release",
                    Collects::Policy(_) | Collects::Inventory => "everything it applied",
                },
                deciding(c, kind)
            )
        })
        .unwrap_or_default();
    format!(
        "{} is suspended only by annotation {SUSPEND_ANNOTATION}: Flux releases that do not \
         implement RFC-0006 keep reconciling it{prune}; to be sure, also run `{}`",
        target.describe(),
        commands::honour(&target, kind)
    )
}

/// Why an `until=` cannot be read, as refusals and warnings say it.
pub(super) fn unreadable_expiry(problem: &reason::Unreadable) -> String {
    match problem {
        reason::Unreadable::MoreThanOne => "it has more than one until= time; keep one".to_string(),
        reason::Unreadable::NotATime(text) => format!(
            "until={} is not an RFC 3339 time; write it like until=2026-11-22T18:00:00Z",
            names::quote(text)
        ),
    }
}

/// What mirroring did to the request, which the person did not ask for.
fn mirror_note(
    how: Mirrored,
    kept_by: &KeptBy,
    target: &Target,
    kind: &Kind,
    settings: &Settings,
    user: &UserInfo,
) -> String {
    let honoured = honoured_mechanism(kind);
    let target = target.object();
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
                resume_hint(&target, kind, settings, user, true)
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

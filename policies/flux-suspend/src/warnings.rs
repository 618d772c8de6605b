//! Warnings: what mirroring changed and the effective state the request left.

use guard_core::object::ObjectName;
use guard_core::{names, Timestamp};

use crate::commands;
use crate::judge::Change;
use crate::kinds::{Kind, SUSPEND_ANNOTATION};
use crate::mirror::Mirrored;
use crate::reason;
use crate::settings::Settings;
use crate::view::State;

/// What mirroring did to the request, which the person did not ask for.
pub(crate) fn mirror_note(how: Mirrored, target: &ObjectName<'_>, kind: &Kind) -> String {
    let honoured = kind.honoured_mechanism();
    let what = target.describe();
    match how {
        Mirrored::Honoured => format!(
            "{what}: suspended via annotation {SUSPEND_ANNOTATION}; {honoured} mirrored so every \
             Flux release stops reconciling it"
        ),
        Mirrored::Reasserted => format!(
            "{what}: the applied manifest still carries annotation {SUSPEND_ANNOTATION}, so \
             {honoured} is kept; remove the annotation from Git to resume"
        ),
        Mirrored::ResumedByAnnotation => format!(
            "{what}: annotation {SUSPEND_ANNOTATION} removed; {honoured} unset in step, so Flux \
             reconciles it again"
        ),
        Mirrored::ResumedByFluxResume => format!(
            "{what}: `flux resume` sent no change, as spec.suspend was not set; annotation \
             {SUSPEND_ANNOTATION}, the only thing suspending it, was removed so Flux reconciles it"
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

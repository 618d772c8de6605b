//! What the person should know of a request the policy lets through: what
//! mirroring changed and the effective state the request left.

use guard_core::Timestamp;

use crate::kinds::Collects;
use crate::kinds::Kind;
use crate::mirror::Mirrored;
use crate::reason;
use crate::reconciler::KeptBy;
use crate::view::{State, Target};
use crate::write::{Change, Write};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Warning {
    /// A write that changed nothing left a suspension by annotation alone
    /// ([`crate::noop`]): it may have been `flux resume`, which cannot end it.
    NoopKeepsSuspension {
        target: Target,
        kind: Kind,
    },
    /// What mirroring did, which the person did not ask for.
    Mirrored {
        how: Mirrored,
        kept_by: KeptBy,
        target: Target,
        kind: Kind,
    },
    Suspended {
        target: Target,
        kind: Kind,
        state: State,
        until: Option<Timestamp>,
    },
    Resumed {
        target: Target,
    },
    ReasonChanged {
        target: Target,
        reason: Option<String>,
    },
    /// Still suspended, by other mechanisms.
    MechanismsChanged {
        target: Target,
        kind: Kind,
        state: State,
    },
    Expired {
        target: Target,
        kind: Kind,
        at: Timestamp,
    },
    UnreadableExpiry {
        target: Target,
        problem: reason::Unreadable,
    },
    /// Suspended by the annotation alone.
    AnnotationOnly {
        target: Target,
        kind: Kind,
        collects: Option<Collects>,
    },
    /// Spec changes on a suspended object wait for the resume.
    SpecStaged {
        target: Target,
        kind: Kind,
        /// The stored object carries the annotation (the resume command
        /// differs when it does not).
        annotated: bool,
    },
    /// A suspended Kustomization deleted: its inventory stays, unmanaged.
    InventoryKept {
        target: Target,
        kind: Kind,
        objects: usize,
        collects: Collects,
    },
}

/// Warnings on the effective state the person could not see.
pub(crate) fn of_state(
    write: &Write<'_>,
    expiry: Option<Timestamp>,
    now: Timestamp,
) -> Vec<Warning> {
    let (target, kind, state) = (&write.target, write.kind, &write.state);
    let mut warnings = Vec::new();
    match write.change {
        Change::Enter => warnings.push(Warning::Suspended {
            target: target.clone(),
            kind,
            state: state.clone(),
            until: expiry,
        }),
        Change::Leave => warnings.push(Warning::Resumed {
            target: target.clone(),
        }),
        Change::Stay {
            reason_changed: true,
        } => warnings.push(Warning::ReasonChanged {
            target: target.clone(),
            reason: state.reason.clone(),
        }),
        Change::Stay {
            reason_changed: false,
        } => {
            if write
                .old
                .as_ref()
                .is_some_and(|o| o.honoured() != state.honoured())
            {
                warnings.push(Warning::MechanismsChanged {
                    target: target.clone(),
                    kind,
                    state: state.clone(),
                });
            }
            match state.reason.as_deref().and_then(reason::until) {
                Some(Ok(at)) if at <= now => warnings.push(Warning::Expired {
                    target: target.clone(),
                    kind,
                    at,
                }),
                Some(Err(problem)) => warnings.push(Warning::UnreadableExpiry {
                    target: target.clone(),
                    problem,
                }),
                Some(Ok(_)) | None => {}
            }
        }
        Change::Unsuspended => {}
    }
    if state.annotation_only() && !matches!(write.change, Change::Unsuspended) {
        warnings.push(Warning::AnnotationOnly {
            target: target.clone(),
            kind,
            collects: state.collects,
        });
    }
    warnings
}

//! The conflicts between ASO's annotations that ADR 2023-02 creates: two
//! ways of saying what happens to an existing Azure resource (options 4.1
//! and 4.2), `reconcile-policy-if-exists` beside the `reconcile-policy` the
//! operator writes from it, and `if-exists` changed after the operator read it.

use guard_core::Metadata;

use crate::values::{
    ReconcilePolicy, ADOPTION_POLICY, FINALIZER, RECONCILE_POLICY, RECONCILE_POLICY_IF_EXISTS,
};

/// Two annotations this request leaves together that cannot be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Conflict {
    /// `adoption-policy` and `reconcile-policy-if-exists`: they can disagree.
    AdoptionWithIfExists { adoption: String, if_exists: String },
    /// `reconcile-policy` and `reconcile-policy-if-exists` before ASO took
    /// the resource over; `finalizer_set`: the finalizer came with a manifest.
    BothBeforeTakeover {
        reconcile: String,
        if_exists: String,
        finalizer_set: bool,
    },
}

/// The conflict this request makes, if any. `operator`: the request is the
/// operator's; `finalized`: ASO has taken the resource over; `changed`:
/// whether the request changes an annotation.
pub(crate) fn conflict(
    new: &Metadata,
    old: Option<&Metadata>,
    operator: bool,
    finalized: bool,
    changed: impl Fn(&str) -> bool,
) -> Option<Conflict> {
    let rp = new.annotation(RECONCILE_POLICY);
    let ie = new.annotation(RECONCILE_POLICY_IF_EXISTS);
    // Nobody, the operator included, needs both: the ADR's operator writes
    // only `reconcile-policy`.
    if let (Some(a), Some(i)) = (new.annotation(ADOPTION_POLICY), ie) {
        if changed(ADOPTION_POLICY) || changed(RECONCILE_POLICY_IF_EXISTS) {
            return Some(Conflict::AdoptionWithIfExists {
                adoption: a.to_string(),
                if_exists: i.to_string(),
            });
        }
    }
    // A pair only stored (such as one written by `explicitDefaults` next to
    // the requester's `if-exists`) is no collision of this request's making.
    let sets_either = changed(RECONCILE_POLICY) || changed(RECONCILE_POLICY_IF_EXISTS);
    match (rp, ie) {
        (Some(r), Some(i)) if !operator && !finalized && sets_either => {
            Some(Conflict::BothBeforeTakeover {
                reconcile: r.to_string(),
                if_exists: i.to_string(),
                // A finalizer without ASO's status came with a manifest.
                finalizer_set: old.is_some_and(|o| o.finalizers.iter().any(|f| f == FINALIZER)),
            })
        }
        _ => None,
    }
}

/// How `reconcile-policy-if-exists` changed after ASO took over, which it
/// reads only before; `fix` is the `reconcile-policy` with the effect meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IfExistsChange {
    pub was: Option<String>,
    pub now: Option<String>,
    pub fix: Option<ReconcilePolicy>,
}

/// The change of `reconcile-policy-if-exists` ASO ignores, if the request
/// makes one: `new_value` is the new value as read (`None` when absent or
/// not valid).
pub(crate) fn late_if_exists(
    new: &Metadata,
    old: Option<&Metadata>,
    finalized: bool,
    new_value: Option<ReconcilePolicy>,
) -> Option<IfExistsChange> {
    let was = old.and_then(|o| o.annotation(RECONCILE_POLICY_IF_EXISTS));
    let now = new.annotation(RECONCILE_POLICY_IF_EXISTS);
    (finalized && was != now).then(|| IfExistsChange {
        was: was.map(str::to_string),
        now: now.map(str::to_string),
        fix: new_value,
    })
}

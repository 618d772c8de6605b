//! ADR 2023-02's adoption matrix (option 4.1) and the outcome it gives an object.
//!
//! The ADR lists 13 rows "where there is overlap" and the rule behind them:
//! "the most restrictive of the two options would be used". [`behaviour`]
//! is that rule over the whole cross product, so no combination is left to
//! guesswork; the ADR's rows are its tests.

use crate::effective::Resolved;
use crate::values::{AdoptionPolicy, ReconcilePolicy};

/// What ASO does with the Azure resource, given `reconcile-policy` (`None`:
/// unspecified, which is `manage`, the ADR's decided default), `adoption-policy`
/// and whether the Azure resource already existed. `skip` beats
/// `detach-on-delete` beats `manage`; `adopt-if-exists` restricts nothing, and
/// an adoption policy says nothing about a resource ASO creates.
pub(crate) fn behaviour(
    reconcile: Option<ReconcilePolicy>,
    adoption: Option<AdoptionPolicy>,
    exists_in_azure: bool,
) -> ReconcilePolicy {
    let base = reconcile.unwrap_or(ReconcilePolicy::Manage);
    match adoption {
        Some(a) if exists_in_azure => base.max(a.restriction()),
        _ => base,
    }
}

/// What will happen to the Azure resource of an object, announced on its
/// CREATE and on each change of the annotations that decide it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// When the Azure resource already exists.
    pub existing: ReconcilePolicy,
    /// When ASO creates it.
    pub missing: ReconcilePolicy,
    pub effective: Resolved,
    /// The ADR annotation that decides for an existing resource, if any.
    pub by: Option<By>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum By {
    /// `reconcile-policy-if-exists`, before ASO took the resource over.
    IfExists(ReconcilePolicy),
    /// `adoption-policy`: the more restrictive applies to an existing resource.
    Adoption(AdoptionPolicy),
}

/// The outcome under `effective`, with `if_exists` (read only before ASO
/// took over: ADR 4.2, the operator writes it as `reconcile-policy` when it
/// first finds the resource) and `adoption`.
pub(crate) fn outcome(
    effective: Resolved,
    if_exists: Option<ReconcilePolicy>,
    adoption: Option<AdoptionPolicy>,
) -> Outcome {
    let existing = match (if_exists, adoption) {
        (Some(p), _) => p,
        (None, a) => behaviour(Some(effective.policy), a, true),
    };
    Outcome {
        existing,
        missing: behaviour(Some(effective.policy), adoption, false),
        by: match (if_exists, adoption) {
            (Some(p), _) => Some(By::IfExists(p)),
            (None, Some(a)) => Some(By::Adoption(a)),
            (None, None) => None,
        },
        effective,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AdoptionPolicy::*;
    use ReconcilePolicy::*;

    /// The ADR's table, row by row: reconcile-policy, adoption-policy, exists, behaviour.
    #[test]
    fn the_adrs_thirteen_rows_hold_exactly() {
        let rows: [(
            Option<ReconcilePolicy>,
            Option<AdoptionPolicy>,
            bool,
            ReconcilePolicy,
        ); 13] = [
            (None, None, true, Manage),
            (None, Some(SkipIfExists), true, Skip),
            (None, Some(SkipIfExists), false, Manage),
            (Some(DetachOnDelete), Some(SkipIfExists), true, Skip),
            (
                Some(DetachOnDelete),
                Some(SkipIfExists),
                false,
                DetachOnDelete,
            ),
            (Some(Skip), Some(SkipIfExists), true, Skip),
            (Some(Skip), Some(SkipIfExists), false, Skip),
            (None, Some(DetachOnDeleteIfExists), true, DetachOnDelete),
            (None, Some(DetachOnDeleteIfExists), false, Manage),
            (
                Some(DetachOnDelete),
                Some(DetachOnDeleteIfExists),
                true,
                DetachOnDelete,
            ),
            (
                Some(DetachOnDelete),
                Some(DetachOnDeleteIfExists),
                false,
                DetachOnDelete,
            ),
            (Some(Skip), Some(DetachOnDeleteIfExists), true, Skip),
            (Some(Skip), Some(DetachOnDeleteIfExists), false, Skip),
        ];
        for (i, (reconcile, adoption, exists, expected)) in rows.into_iter().enumerate() {
            assert_eq!(
                behaviour(reconcile, adoption, exists),
                expected,
                "ADR row {}: {reconcile:?} {adoption:?} exists={exists}",
                i + 1
            );
        }
    }

    /// The whole cross product: 4 x 4 x 2 = 32 combinations, each defined.
    #[test]
    fn the_full_cross_product_follows_most_restrictive_wins() {
        let reconciles = [None, Some(Manage), Some(Skip), Some(DetachOnDelete)];
        let adoptions = [
            None,
            Some(AdoptIfExists),
            Some(DetachOnDeleteIfExists),
            Some(SkipIfExists),
        ];
        let mut seen = 0;
        for r in reconciles {
            for a in adoptions {
                for exists in [true, false] {
                    let got = behaviour(r, a, exists);
                    let base = r.unwrap_or(Manage);
                    // Never less restrictive than reconcile-policy alone.
                    assert!(got >= base);
                    // An adoption policy only matters for an existing resource.
                    if !exists || a.is_none() {
                        assert_eq!(got, base);
                    }
                    // Unspecified reads as manage.
                    assert_eq!(
                        behaviour(None, a, exists),
                        behaviour(Some(Manage), a, exists)
                    );
                    // adopt-if-exists restricts nothing.
                    assert_eq!(behaviour(r, Some(AdoptIfExists), exists), base);
                    seen += 1;
                }
            }
        }
        assert_eq!(seen, 32);
        assert_eq!(behaviour(Some(Manage), Some(SkipIfExists), true), Skip);
        assert_eq!(
            behaviour(Some(Manage), Some(DetachOnDeleteIfExists), true),
            DetachOnDelete
        );
        assert_eq!(behaviour(Some(Skip), Some(AdoptIfExists), true), Skip);
        assert_eq!(
            behaviour(Some(DetachOnDelete), Some(AdoptIfExists), true),
            DetachOnDelete
        );
    }
}

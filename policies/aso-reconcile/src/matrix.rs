//! ADR 2023-02's adoption matrix (option 4.1) and the words for each outcome.
//!
//! The ADR lists 13 rows "where there is overlap" and the rule behind them:
//! "the most restrictive of the two options would be used". [`behaviour`]
//! is that rule over the whole cross product, so no combination is left to
//! guesswork; the ADR's rows are its tests.

use crate::values::{AdoptionPolicy, ReconcilePolicy};

/// What ASO does with the Azure resource, given `reconcile-policy` (`None`:
/// unspecified, which is `manage`, the ADR's decided default), `adoption-policy`
/// and whether the Azure resource already existed. `skip` beats
/// `detach-on-delete` beats `manage`; `adopt-if-exists` restricts nothing, and
/// an adoption policy says nothing about a resource ASO creates.
pub fn behaviour(
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

/// What happens to an Azure resource that already exists, under `policy`.
pub fn when_exists(policy: ReconcilePolicy) -> &'static str {
    match policy {
        ReconcilePolicy::Manage => {
            "adopted, updated to match, and deleted in Azure when the object is deleted"
        }
        ReconcilePolicy::DetachOnDelete => "adopted and updated, never deleted in Azure",
        ReconcilePolicy::Skip => "used as it is: never updated, never deleted in Azure",
    }
}

/// What happens when the Azure resource does not exist yet, under `policy`.
pub fn when_missing(policy: ReconcilePolicy) -> &'static str {
    match policy {
        ReconcilePolicy::Manage => {
            "created and fully managed, deleted in Azure when the object is deleted"
        }
        ReconcilePolicy::DetachOnDelete => "created and updated, never deleted in Azure",
        ReconcilePolicy::Skip => {
            "not created (skip only reads from Azure), so the object waits for it to appear"
        }
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

    #[test]
    fn words_for_each_outcome() {
        assert!(when_exists(DetachOnDelete).contains("never deleted"));
        assert!(when_missing(Manage).contains("created and fully managed"));
        assert!(when_missing(Skip).contains("not created"));
        assert!(when_exists(Skip).contains("never updated"));
    }
}

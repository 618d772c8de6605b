//! A confirmation belongs to the Azure resource the object named when it was
//! given. ASO's delete reads `resource-id` afresh (`deleteResource`), so an
//! object confirmed and then re-pointed would delete, on the strength of the
//! old confirmation, a resource nobody confirmed. A change that re-points an
//! object which keeps a confirmation it already carried is refused; removing
//! the confirmation, or writing it, in the same change is what makes the
//! re-point pass (a confirmation written with the new id in view counts).

use guard_core::Metadata;

use crate::values::RESOURCE_ID;

/// `resource-id` changed from `from` to `to` under a carried confirmation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Repoint {
    pub from: String,
    pub to: String,
}

/// The re-point that would carry `key`'s confirmation (the object's `name`)
/// over to another Azure resource. ASO's own first write of the id is no
/// re-point: `from` must name one.
pub(crate) fn carried(old: &Metadata, new: &Metadata, key: &str, name: &str) -> Option<Repoint> {
    let from = old.annotation(RESOURCE_ID).filter(|id| !id.is_empty())?;
    let to = new.annotation(RESOURCE_ID).unwrap_or_default();
    let kept = old.annotation(key) == Some(name) && new.annotation(key) == Some(name);
    (kept && from != to).then(|| Repoint {
        from: from.to_string(),
        to: to.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::test_support::*;

    const KEY: &str = "reconcile-guard.io/confirm-delete";

    fn meta(pairs: &[(&str, &str)]) -> Metadata {
        let mut m = Metadata {
            name: "scratch-rg".into(),
            ..Metadata::default()
        };
        for (k, v) in pairs {
            m.annotations.insert((*k).into(), (*v).into());
        }
        m
    }

    #[test]
    fn only_a_kept_confirmation_is_carried_to_another_id() {
        let old = meta(&[(RESOURCE_ID, "/rg/scratch"), (KEY, "scratch-rg")]);
        let moved = meta(&[(RESOURCE_ID, "/rg/prod"), (KEY, "scratch-rg")]);
        assert_eq!(
            carried(&old, &moved, KEY, "scratch-rg"),
            Some(Repoint {
                from: "/rg/scratch".into(),
                to: "/rg/prod".into()
            })
        );
        // Removed in the same change, or written in it: nothing carried.
        let removed = meta(&[(RESOURCE_ID, "/rg/prod")]);
        assert_eq!(carried(&old, &removed, KEY, "scratch-rg"), None);
        let unconfirmed = meta(&[(RESOURCE_ID, "/rg/scratch")]);
        assert_eq!(carried(&unconfirmed, &moved, KEY, "scratch-rg"), None);
        // Another value confirms nothing; the same id moves nothing.
        let other = meta(&[(RESOURCE_ID, "/rg/scratch"), (KEY, "other")]);
        assert_eq!(carried(&other, &moved, KEY, "scratch-rg"), None);
        assert_eq!(carried(&old, &old, KEY, "scratch-rg"), None);
        // ASO's first write of the id.
        let unclaimed = meta(&[(KEY, "scratch-rg")]);
        assert_eq!(carried(&unclaimed, &moved, KEY, "scratch-rg"), None);
    }

    #[test]
    fn a_person_s_re_point_is_refused_and_aso_s_is_not() {
        let key = "reconcile-guard.io/confirm-delete";
        let protect = json!({"deletionProtection": {"kinds": [{"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer"}]}});
        let old = server(
            json!({ RESOURCE_ID: "/a/orders-db", key: "orders-db" }),
            &[],
        );
        let new = server(
            json!({ RESOURCE_ID: "/b/orders-db", key: "orders-db" }),
            &[],
        );
        let refused = eval(
            &request("UPDATE", ALICE, Some(new.clone()), Some(old.clone())),
            protect.clone(),
            &NoCluster,
        );
        assert!(
            message(&refused).starts_with(
                "FlexibleServer shop/orders-db: annotation reconcile-guard.io/confirm-delete was \
                 given while serviceoperator.azure.com/resource-id named \"/a/orders-db\""
            ),
            "{refused:?}"
        );
        let by_aso = eval(
            &request("UPDATE", ASO, Some(new), Some(old)),
            protect,
            &NoCluster,
        );
        assert!(by_aso.allowed, "{by_aso:?}");
    }
}

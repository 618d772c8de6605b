//! Objects already being deleted. Once `deletionTimestamp` is set, ASO reads
//! the reconcile policy on each reconcile until it removes its finalizer
//! (`GenericReconciler.delete`): an object deleted while detached (allowed)
//! whose policy is switched to `manage` before ASO let it go is deleted in
//! Azure on the next reconcile. So that switch needs what a DELETE of it
//! would need: the confirmation, or nothing protected at stake. The same
//! holds for a change of its `resource-id` while it is under `manage`: ASO's
//! delete reads that annotation afresh (`deleteResource`), so the id the
//! object is re-pointed to is what Azure deletes.

use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Context, Metadata};

use crate::deletion::{assess, Assessment};
use crate::effective::{namespace_object, namespace_policy, resolve_with, Effective, Resolved};
use crate::failure::{Failure, NamespaceError};
use crate::settings::Settings;
use crate::values::{ReconcilePolicy, FINALIZER, RECONCILE_POLICY, RESOURCE_ID};

/// A change that turns a terminating object's deletion into one in Azure.
#[derive(Debug, PartialEq)]
pub(crate) struct Turn {
    /// The effective policy before the change.
    pub before: Resolved,
    /// The policy stays `manage` and `resource-id` changes to this id
    /// (empty when removed).
    pub repointed: Option<String>,
    /// The deletion as a DELETE would be judged now.
    pub assessment: Assessment,
}

/// `None` when the request does not turn a terminating object's deletion
/// into one in Azure.
pub(crate) fn turn(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
    target: &ObjectName<'_>,
    new: &Metadata,
    old: &Metadata,
) -> Result<Option<Turn>, Failure> {
    let waiting = old.deletion_timestamp.is_some()
        && old.finalizers.iter().any(|f| f == FINALIZER)
        && new.finalizers.iter().any(|f| f == FINALIZER);
    let repointed = old.annotation(RESOURCE_ID) != new.annotation(RESOURCE_ID);
    if !waiting
        || !settings.deletion_protection.is_enabled()
        || (old.annotation(RECONCILE_POLICY) == new.annotation(RECONCILE_POLICY) && !repointed)
    {
        return Ok(None);
    }
    // The Namespace is looked up once for both, and only when one needs it.
    let looked = std::cell::OnceCell::new();
    let namespace = || match looked.get_or_init(|| namespace_object(target.namespace, ctx.cluster))
    {
        Ok(raw) => namespace_policy(raw.as_deref()),
        Err(e) => Err(NamespaceError::Lookup(e.clone())),
    };
    let effective = |meta: &Metadata| -> Result<Effective, Failure> {
        resolve_with(
            meta.annotation(RECONCILE_POLICY),
            target.namespace,
            settings,
            namespace,
        )
    };
    let before = effective(old)?;
    let after = effective(new)?;
    if after.policy != ReconcilePolicy::Manage
        || (before.policy == ReconcilePolicy::Manage && !repointed)
    {
        return Ok(None);
    }
    let repointed = (before.policy == ReconcilePolicy::Manage)
        .then(|| new.annotation(RESOURCE_ID).unwrap_or_default().to_string());
    // A confirmation carried over from another id was refused before this
    // (`repoint`): one the object carries here was given with this id in view.
    let assessment = assess(request, settings, ctx, target, new, Some(after), None);
    Ok(Some(Turn {
        before: before.resolved(),
        repointed,
        assessment,
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::decision::{Decision, Refusal, Switch};
    use crate::deletion::Protected;
    use crate::effective::{Resolved, Source};
    use crate::test_support::*;
    use crate::values::*;

    fn protect() -> Value {
        json!({"deletionProtection": {"kinds": [{"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer"}]}})
    }

    /// An UPDATE of `orders-db` being deleted, from `old` to `new` annotations.
    fn switch(old: Value, new: Value, finalizers: &[&str]) -> guard_core::AdmissionRequest {
        let mut before = server(old, &[FINALIZER]);
        before["metadata"]["deletionTimestamp"] = json!("2026-11-20T09:58:41Z");
        let mut after = server(new, finalizers);
        after["metadata"]["deletionTimestamp"] = json!("2026-11-20T09:58:41Z");
        request("UPDATE", ALICE, Some(after), Some(before))
    }

    #[test]
    fn a_switch_to_manage_inherited_or_set_is_judged_as_a_delete() {
        // Detached by the Namespace; the object's own manage overrides it.
        let req = switch(
            json!({}),
            json!({ RECONCILE_POLICY: "manage" }),
            &[FINALIZER],
        );
        let ns = with_namespace("shop", Some("skip"));
        let ns = RecordedCluster::new(&ns);
        let protected = Protected {
            effective: Resolved {
                policy: ReconcilePolicy::Manage,
                source: Source::Object,
            },
            children: Vec::new(),
            name: "orders-db".into(),
            confirmation: None,
            stated_by: None,
            more: None,
        };
        let switched = Switch {
            before: Resolved {
                policy: ReconcilePolicy::Skip,
                source: Source::Namespace("shop".into()),
            },
            repointed: None,
        };
        let refusal = Refusal::Protected {
            protected: Box::new(protected),
            switch: Some(Box::new(switched)),
        };
        assert_eq!(
            decide(&req, protect(), &ns),
            Decision::refuse(orders_db(), refusal)
        );
        // Removing the object's detach-on-delete falls to the operator default, manage.
        let req = switch(
            json!({ RECONCILE_POLICY: "detach-on-delete" }),
            json!({}),
            &[FINALIZER],
        );
        let d = decide(&req, protect(), &NoCluster);
        assert!(
            matches!(&d.refusal, Some(Refusal::Protected { switch: Some(s), .. })
                if s.before.policy == ReconcilePolicy::DetachOnDelete),
            "{d:?}"
        );
    }

    #[test]
    fn a_managed_object_re_pointed_while_it_waits_is_judged_as_a_delete() {
        let id = "/subscriptions/3f2c/resourceGroups/rg-shop-prod/providers/Microsoft.DBforPostgreSQL/flexibleServers/";
        let req = switch(
            json!({ RESOURCE_ID: format!("{id}scratch") }),
            json!({ RESOURCE_ID: format!("{id}orders-db") }),
            &[FINALIZER],
        );
        let m = message(&eval(&req, protect(), &NoCluster)).to_string();
        assert!(
            m.starts_with(
                "FlexibleServer shop/orders-db is being deleted and waits for ASO's finalizer, \
                 under manage (the operator default); with this change its \
                 serviceoperator.azure.com/resource-id, the Azure resource ASO deletes, changes, \
                 and it is protected from deletion: ASO would delete"
            ),
            "{m}"
        );
        // Detached, the id it names is kept whatever it is.
        let req = switch(
            json!({ RECONCILE_POLICY: "skip", RESOURCE_ID: format!("{id}scratch") }),
            json!({ RECONCILE_POLICY: "skip", RESOURCE_ID: format!("{id}orders-db") }),
            &[FINALIZER],
        );
        assert!(eval(&req, protect(), &NoCluster).allowed);
    }

    #[test]
    fn other_changes_of_a_terminating_object_pass() {
        let detached = json!({ RECONCILE_POLICY: "detach-on-delete" });
        // ASO removing its finalizer, a switch between policies that keep the
        // Azure resource, and nothing protected.
        for (old, new, finalizers, settings) in [
            (detached.clone(), detached.clone(), &[][..], protect()),
            (
                detached.clone(),
                json!({ RECONCILE_POLICY: "skip" }),
                &[FINALIZER][..],
                protect(),
            ),
            (
                detached.clone(),
                json!({ RECONCILE_POLICY: "manage" }),
                &[FINALIZER][..],
                json!({}),
            ),
            (
                detached,
                json!({ RECONCILE_POLICY: "manage" }),
                &[][..],
                protect(),
            ),
        ] {
            let v = eval(&switch(old, new, finalizers), settings, &NoCluster);
            assert!(v.allowed, "{v:?}");
        }
    }
}

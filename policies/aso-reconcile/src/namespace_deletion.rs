//! A Namespace's DELETE, judged once for everything in it. Once the Namespace
//! is deleted, the namespace controller deletes its content (kubernetes
//! `pkg/controller/namespace/deletion`, `deleteCollection`/`deleteEachItem`)
//! and ASO deletes in Azure what it manages. Refusing those deletes one by one
//! would leave the Namespace stuck in Terminating, with the reason only in its
//! status conditions; refusing the Namespace's own DELETE tells the person
//! deleting it, before anything has started.

use guard_core::{context, Context};

use crate::effective::resolve_with;
use crate::failure::{Failure, LookupError, Search};
use crate::owners::{self, Child, Listed};
use crate::settings::Settings;
use crate::values::{ReconcilePolicy, FINALIZER, RECONCILE_POLICY};

/// The protected objects in `namespace` whose deletion ASO would carry
/// into Azure: selected, finalized, under `manage`, not confirmed by name.
/// `inherited` is the Namespace's own `reconcile-policy`, as stored.
pub(crate) fn at_stake(
    namespace: &str,
    inherited: Option<String>,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Result<Vec<Child>, Failure> {
    protected_in(namespace, settings, ctx, |listed| {
        let own = listed.metadata.annotations.get(RECONCILE_POLICY);
        let effective = resolve_with(own, namespace, settings, || Ok(inherited.clone()))?;
        Ok(effective.policy == ReconcilePolicy::Manage)
    })
}

/// The protected objects in `namespace` already being deleted, waiting for
/// ASO's finalizer and unconfirmed, that follow the Namespace's policy
/// (no usable annotation of their own): a change of the Namespace's
/// `reconcile-policy` to `manage` makes ASO delete them in Azure.
pub(crate) fn terminating_inheriting(
    namespace: &str,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Result<Vec<Child>, Failure> {
    protected_in(namespace, settings, ctx, |listed| {
        let own = listed.metadata.annotations.get(RECONCILE_POLICY);
        Ok(listed.metadata.deletion_timestamp.is_some() && own.is_none_or(str::is_empty))
    })
}

/// The objects of the protected kinds in `namespace` that are selected,
/// finalized, not confirmed by name, and for which `at_stake` holds.
fn protected_in(
    namespace: &str,
    settings: &Settings,
    ctx: &Context<'_>,
    at_stake: impl Fn(&Listed<'_>) -> Result<bool, Failure>,
) -> Result<Vec<Child>, Failure> {
    const SEARCH: Search = Search::InNamespace;
    let p = &settings.deletion_protection;
    let key = p.confirmation_annotation.as_str();
    let mut held = Vec::new();
    for (k, items) in owners::list(p, Some(namespace), SEARCH, ctx.cluster)? {
        for raw in &items {
            let listed: Listed<'_> = context::read(raw)
                .map_err(|e| owners::cannot(k, Some(namespace), SEARCH, LookupError::Shape(e)))?;
            let m = &listed.metadata;
            if !m.finalizers.iter().any(|f| f == FINALIZER)
                || m.annotations.get(key) == Some(m.name.as_ref())
                || !listed.selected(p)?
                || !at_stake(&listed)?
            {
                continue;
            }
            held.push(Child {
                kind: k.kind.clone(),
                namespace: namespace.to_string(),
                name: m.name.to_string(),
            });
        }
    }
    Ok(held)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::test_support::*;
    use crate::values::*;

    fn protect() -> Value {
        json!({"deletionProtection": {"kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer", "version": "v1api20230601preview"}]}})
    }

    fn listed(name: &str, annotations: Value, finalized: bool) -> Value {
        let mut s = server(annotations, if finalized { &[FINALIZER] } else { &[] });
        s["metadata"]["name"] = json!(name);
        s
    }

    fn delete_namespace(annotations: Value) -> guard_core::AdmissionRequest {
        let mut ns = namespace("shop", None);
        ns["metadata"]["annotations"] = annotations;
        namespace_request("DELETE", None, Some(ns))
    }

    #[test]
    fn a_namespace_holding_protected_managed_resources_is_refused() {
        let cluster = recorded(vec![
            listed("orders-db", json!({}), true),
            listed(
                "kept-db",
                json!({ RECONCILE_POLICY: "detach-on-delete" }),
                true,
            ),
            listed("new-db", json!({}), false),
            listed(
                "gone-db",
                json!({"reconcile-guard.io/confirm-delete": "gone-db"}),
                true,
            ),
        ]);
        let cluster = RecordedCluster::new(&cluster);
        let v = eval(&delete_namespace(json!({})), protect(), &cluster);
        assert_eq!(
            message(&v),
            "Namespace shop holds resources protected from deletion: deleting it makes the \
             namespace controller delete them, and ASO would delete their Azure resources as \
             well, with anything inside them, because their effective \
             serviceoperator.azure.com/reconcile-policy is manage: FlexibleServer \"orders-db\". \
             Their own deletes would be refused and the Namespace left in Terminating. To delete \
             them in Azure too, confirm with the Namespace's name: `kubectl annotate namespaces \
             shop reconcile-guard.io/confirm-delete=shop --overwrite --field-manager=aso-reconcile`. To keep them, set \
             serviceoperator.azure.com/reconcile-policy=detach-on-delete on each first. Then \
             delete again."
        );
        // The Namespace's own policy reaches those without one.
        let v = eval(
            &delete_namespace(json!({ RECONCILE_POLICY: "detach-on-delete" })),
            protect(),
            &cluster,
        );
        assert!(v.allowed, "{v:?}");
        let v = eval(
            &delete_namespace(json!({"reconcile-guard.io/confirm-delete": "shop"})),
            protect(),
            &cluster,
        );
        assert!(v.allowed, "{v:?}");
        warning(
            &v,
            "deletion confirmed by reconcile-guard.io/confirm-delete",
        );
    }

    #[test]
    fn unprotected_namespaces_and_settings_without_lookups_pass() {
        let cluster = recorded(vec![listed("orders-db", json!({}), true)]);
        let cluster = RecordedCluster::new(&cluster);
        let req = delete_namespace(json!({}));
        assert!(eval(&req, json!({}), &cluster).allowed);
        let elsewhere = json!({"deletionProtection": {"namespaces": ["prod"], "kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer", "version": "v1"}]}});
        assert!(eval(&req, elsewhere, &cluster).allowed);
        let no_version = json!({"deletionProtection": {"kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer"}]}});
        assert!(eval(&req, no_version, &cluster).allowed);
        let no_old = namespace_request("DELETE", None, None);
        assert!(message(&eval(&no_old, protect(), &cluster)).contains("carries no oldObject"));
    }
}

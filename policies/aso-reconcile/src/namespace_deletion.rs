//! A Namespace's DELETE, judged once for everything in it. Once the Namespace
//! is deleted, the namespace controller deletes its content (kubernetes
//! `pkg/controller/namespace/deletion`, `deleteCollection`/`deleteEachItem`)
//! and ASO deletes in Azure what it manages. Refusing those deletes one by one
//! would leave the Namespace stuck in Terminating, with the reason only in its
//! status conditions; refusing the Namespace's own DELETE tells the person
//! deleting it, before anything has started.

use guard_core::object::ObjectName;
use guard_core::{context, AdmissionRequest, Context, Verdict, Which};

use crate::effective::resolve_with;
use crate::owners::{self, Child, Listed};
use crate::settings::Settings;
use crate::values::{annotate, ReconcilePolicy, Vocabulary, FINALIZER, RECONCILE_POLICY};

pub fn check(request: &AdmissionRequest, settings: &Settings, ctx: &Context<'_>) -> Verdict {
    let p = &settings.deletion_protection;
    if !p.is_enabled() || !owners::needed(p) {
        return Verdict::allow();
    }
    let old = match request.metadata(Which::OldObject) {
        Ok(old) => old,
        Err(e) => return Verdict::deny(format!("Namespace {}: {e}", request.name)),
    };
    let name = match &old {
        Some(o) if !o.name.is_empty() => o.name.clone(),
        _ => request.name.clone(),
    };
    let target = ObjectName::new("Namespace", "namespaces", "", &name);
    let who = target.describe();
    let Some(old) = old else {
        return Verdict::deny(format!(
            "{who}: the DELETE request carries no oldObject, so deletion protection cannot read \
             the Namespace's {RECONCILE_POLICY}; kube-apiserver always sends it"
        ));
    };
    if !p.namespaces.is_empty() && !p.namespaces.contains(&name) {
        return Verdict::allow();
    }
    let key = p.confirmation_annotation.as_str();
    if old.annotation(key) == Some(name.as_str()) {
        return Verdict::allow().warn(format!(
            "{who}: deletion confirmed by {key}: the namespace controller deletes everything in \
             it, and ASO deletes in Azure the resources it manages there, with anything inside \
             them."
        ));
    }
    let inherited = old.annotation(RECONCILE_POLICY).map(str::to_string);
    let held = match at_stake(&name, inherited, settings, ctx) {
        Ok(held) => held,
        Err(message) => return Verdict::deny(format!("{who}: {message}")),
    };
    if held.is_empty() {
        return Verdict::allow();
    }
    Verdict::deny(format!(
        "{who} holds resources protected from deletion: deleting it makes the namespace \
         controller delete them, and ASO would delete their Azure resources as well, with \
         anything inside them, because their effective {RECONCILE_POLICY} is manage: {}. Their \
         own deletes would be refused and the Namespace left in Terminating. To delete them in \
         Azure too, confirm with the Namespace's name: `{}`. To keep them, set {RECONCILE_POLICY}=\
         {} on each first. Then delete again.",
        owners::describe(&held, &name),
        annotate(&target, key, &name),
        ReconcilePolicy::DetachOnDelete.as_str()
    ))
}

/// The protected objects in `namespace` whose deletion ASO would carry
/// into Azure: selected, finalized, under `manage`, not confirmed by name.
/// `inherited` is the Namespace's own `reconcile-policy`, as stored.
fn at_stake(
    namespace: &str,
    inherited: Option<String>,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Result<Vec<Child>, String> {
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
) -> Result<Vec<Child>, String> {
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
    at_stake: impl Fn(&Listed<'_>) -> Result<bool, String>,
) -> Result<Vec<Child>, String> {
    const WHY: &str = "the protected resources in it";
    let p = &settings.deletion_protection;
    let key = p.confirmation_annotation.as_str();
    let mut held = Vec::new();
    for (k, items) in owners::list(p, Some(namespace), WHY, ctx.cluster)? {
        for raw in &items {
            let listed: Listed<'_> =
                context::read(raw).map_err(|e| owners::cannot(k, Some(namespace), WHY, &e))?;
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
        let cluster = listing(vec![
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
        let cluster = listing(vec![listed("orders-db", json!({}), true)]);
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

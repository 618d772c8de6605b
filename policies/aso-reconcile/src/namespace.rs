//! Namespaces: their `reconcile-policy` annotation is inherited by every ASO
//! resource in them that has none of its own, so a typo there silently
//! reaches many Azure resources at once.

use guard_core::names::quote;
use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Context, Operation, Verdict, Which};

use crate::matrix::{when_exists, when_missing};
use crate::resource::AUDIT_KEY;
use crate::settings::Settings;
use crate::values::{
    legacy_warning, refusal, Read, ReconcilePolicy, Vocabulary, ADOPTION_POLICY, RECONCILE_POLICY,
    RECONCILE_POLICY_IF_EXISTS,
};
use crate::{namespace_deletion, owners};

pub fn admit(request: &AdmissionRequest, settings: &Settings, ctx: &Context<'_>) -> Verdict {
    let new = match request.metadata(Which::Object) {
        Ok(Some(meta)) => meta,
        Ok(None) => {
            return Verdict::deny(format!(
                "{}: the {} request carries no object to check",
                namespace_target(request, None).describe(),
                request.operation.as_str()
            ))
        }
        Err(e) => {
            return Verdict::deny(format!(
                "{}: {e}",
                namespace_target(request, None).describe()
            ))
        }
    };
    let target = namespace_target(request, Some(&new));
    let who = target.describe();
    let old = match request.operation {
        Operation::Update => match request.metadata(Which::OldObject) {
            Ok(old) => old,
            Err(e) => return Verdict::deny(format!("{who}: {e}")),
        },
        _ => None,
    };
    let changed = |key: &str| match &old {
        None => new.annotation(key).is_some(),
        Some(o) => o.annotation(key) != new.annotation(key),
    };
    let default = settings.default_reconcile_policy;
    let mut warnings = Vec::new();
    for key in [RECONCILE_POLICY_IF_EXISTS, ADOPTION_POLICY] {
        if changed(key) && new.annotation(key).is_some() {
            warnings.push(format!(
                "{who}: annotation {key} has no effect on a Namespace: it is read only on each \
                 ASO resource (and ASO releases to date do not implement it)."
            ));
        }
    }
    let value = new.annotation(RECONCILE_POLICY);
    if !changed(RECONCILE_POLICY) {
        if let Some(v) = value.filter(|v| {
            Read::<ReconcilePolicy>::of(v, settings.accept_legacy_values) == Read::Invalid
        }) {
            warnings.push(format!(
                "{who}: annotation {RECONCILE_POLICY} keeps the value {}, which ASO does not know: \
                 ASO resources here without their own annotation get the operator default, {}.",
                quote(v),
                default.as_str()
            ));
        }
        return Verdict::allow().with_warnings(warnings);
    }
    let (policy, source) = match value {
        None => (
            default,
            "the operator default, as the Namespace no longer sets it".to_string(),
        ),
        Some(v) => match Read::<ReconcilePolicy>::of(v, settings.accept_legacy_values) {
            Read::Valid(p) => (p, "set on the Namespace".to_string()),
            // ASO reads a legacy value as unknown: its default.
            Read::Legacy(p) => {
                warnings.push(format!(
                    "{who}: {}",
                    legacy_warning(RECONCILE_POLICY, v, p.as_str(), default.as_str())
                ));
                (
                    default,
                    "the operator default, as ASO does not know the Namespace's value".to_string(),
                )
            }
            Read::Invalid => {
                let consequence = format!(
                    "ASO would silently apply its default, {}, to every ASO resource in this \
                     namespace without an annotation of its own",
                    default.as_str()
                );
                return Verdict::deny(format!(
                    "{who}: {}",
                    refusal::<ReconcilePolicy>(RECONCILE_POLICY, v, &consequence)
                ))
                .with_warnings(warnings);
            }
        },
    };
    let before = old.as_ref().map_or(default, |o| {
        inherited_policy(o.annotation(RECONCILE_POLICY), default)
    });
    if policy == ReconcilePolicy::Manage && before != ReconcilePolicy::Manage {
        if let Some(refusal) = switches_terminating(&target, settings, ctx, before) {
            return refusal.with_warnings(warnings);
        }
    }
    warnings.push(format!(
        "{who}: ASO resources in this namespace without their own {RECONCILE_POLICY} annotation \
         now follow {} ({source}): if the Azure resource already exists, it is {}; otherwise it \
         is {}.",
        policy.as_str(),
        when_exists(policy),
        when_missing(policy)
    ));
    Verdict::allow()
        .with_warnings(warnings)
        .audit(AUDIT_KEY, policy.as_str())
}

/// What ASO makes of a Namespace's `reconcile-policy` for the objects that
/// inherit it: a value it knows, else the operator default.
fn inherited_policy(value: Option<&str>, default: ReconcilePolicy) -> ReconcilePolicy {
    value.and_then(ReconcilePolicy::parse).unwrap_or(default)
}

/// The refusal of a switch to `manage` that ASO would carry out as deletes
/// in Azure: protected objects here already being deleted, waiting for
/// ASO's finalizer, unconfirmed, following the Namespace's policy (the same
/// rule as a switch on the object itself, `terminating`).
fn switches_terminating(
    target: &ObjectName<'_>,
    settings: &Settings,
    ctx: &Context<'_>,
    before: ReconcilePolicy,
) -> Option<Verdict> {
    let p = &settings.deletion_protection;
    let name = target.name.as_ref();
    if !owners::needed(p) || (!p.namespaces.is_empty() && !p.namespaces.iter().any(|n| n == name)) {
        return None;
    }
    let who = target.describe();
    match namespace_deletion::terminating_inheriting(name, settings, ctx) {
        Ok(held) if held.is_empty() => None,
        Ok(held) => Some(Verdict::deny(format!(
            "{who}: changing {RECONCILE_POLICY} from {} to manage makes ASO delete in Azure the \
             protected resources here that are being deleted and follow the Namespace's policy: \
             {}. Confirm each with its name first ({} set to the object's name), or keep the \
             Namespace's policy.",
            before.as_str(),
            owners::describe(&held, name),
            p.confirmation_annotation
        ))),
        Err(message) => Some(Verdict::deny(format!("{who}: {message}"))),
    }
}

/// A Namespace is cluster-scoped: kube-apiserver sets the request's
/// namespace to its own name, which is not a namespace it lives in.
fn namespace_target<'a>(
    request: &'a AdmissionRequest,
    meta: Option<&'a guard_core::Metadata>,
) -> ObjectName<'a> {
    ObjectName {
        namespace: "",
        ..ObjectName::of(request, meta)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::resource::AUDIT_KEY;
    use crate::test_support::*;
    use crate::values::*;

    #[test]
    fn setting_the_namespace_policy_says_what_it_means() {
        let req = namespace_request(
            "UPDATE",
            Some(namespace("shop", Some("detach-on-delete"))),
            Some(namespace("shop", None)),
        );
        let v = eval(&req, json!({}), &Namespaces::none());
        assert!(v.allowed);
        assert_eq!(
            v.warnings,
            vec!["Namespace shop: ASO resources in this namespace without their own \
                  serviceoperator.azure.com/reconcile-policy annotation now follow detach-on-delete \
                  (set on the Namespace): if the Azure resource already exists, it is adopted and \
                  updated, never deleted in Azure; otherwise it is created and updated, never \
                  deleted in Azure."
                .to_string()]
        );
        assert_eq!(v.audit_annotations[AUDIT_KEY], "detach-on-delete");
    }

    #[test]
    fn a_switch_to_manage_that_deletes_terminating_protected_resources_is_refused() {
        let settings = json!({"deletionProtection": {"kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer", "version": "v1"}]}});
        let mut terminating = server(json!({}), &[FINALIZER]);
        terminating["metadata"]["deletionTimestamp"] = json!("2026-11-20T09:58:41Z");
        let mut own = terminating.clone();
        own["metadata"]["name"] = json!("own-db");
        own["metadata"]["annotations"] = json!({ RECONCILE_POLICY: "skip" });
        let cluster = listing(vec![terminating, own, server(json!({}), &[FINALIZER])]);
        let req = namespace_request(
            "UPDATE",
            Some(namespace("shop", Some("manage"))),
            Some(namespace("shop", Some("skip"))),
        );
        assert_eq!(
            message(&eval(&req, settings.clone(), &cluster)),
            "Namespace shop: changing serviceoperator.azure.com/reconcile-policy from skip to \
             manage makes ASO delete in Azure the protected resources here that are being deleted \
             and follow the Namespace's policy: FlexibleServer \"orders-db\". Confirm each with \
             its name first (reconcile-guard.io/confirm-delete set to the object's name), or keep \
             the Namespace's policy."
        );
        // Removing the Namespace's skip falls to the default, manage: the same.
        let req = namespace_request(
            "UPDATE",
            Some(namespace("shop", None)),
            Some(namespace("shop", Some("detach-on-delete"))),
        );
        assert!(!eval(&req, settings.clone(), &cluster).allowed);
        // Nothing terminating, or a switch that keeps the Azure resources.
        let calm = listing(vec![server(json!({}), &[FINALIZER])]);
        let req = namespace_request(
            "UPDATE",
            Some(namespace("shop", Some("manage"))),
            Some(namespace("shop", Some("skip"))),
        );
        assert!(eval(&req, settings.clone(), &calm).allowed);
        let req = namespace_request(
            "UPDATE",
            Some(namespace("shop", Some("detach-on-delete"))),
            Some(namespace("shop", Some("skip"))),
        );
        assert!(eval(&req, settings, &cluster).allowed);
    }

    #[test]
    fn removing_it_falls_back_to_the_operator_default() {
        let req = namespace_request(
            "UPDATE",
            Some(namespace("shop", None)),
            Some(namespace("shop", Some("skip"))),
        );
        let v = eval(
            &req,
            json!({"defaultReconcilePolicy": "manage"}),
            &Namespaces::none(),
        );
        warning(
            &v,
            "now follow manage (the operator default, as the Namespace no longer sets it)",
        );
    }

    #[test]
    fn typos_and_legacy_values_on_a_namespace() {
        let req = namespace_request(
            "CREATE",
            Some(namespace("shop", Some("Detach-On-Delete"))),
            None,
        );
        let m = message(&eval(&req, json!({}), &Namespaces::none())).to_string();
        assert!(
            m.starts_with("Namespace shop: annotation serviceoperator.azure.com/reconcile-policy"),
            "{m}"
        );
        assert!(
            m.contains("to every ASO resource in this namespace")
                && m.contains("Did you mean \"detach-on-delete\"?"),
            "{m}"
        );
        let req = namespace_request("CREATE", Some(namespace("shop", Some("run"))), None);
        assert!(message(&eval(&req, json!({}), &Namespaces::none())).contains("legacy value"));
        let v = eval(
            &req,
            json!({"acceptLegacyValues": true}),
            &Namespaces::none(),
        );
        assert!(v.allowed);
        warning(&v, "applies its default, manage");
        warning(
            &v,
            "now follow manage (the operator default, as ASO does not know",
        );
    }

    #[test]
    fn unrelated_changes_pass_quietly() {
        let req = namespace_request("CREATE", Some(namespace("shop", None)), None);
        assert_eq!(
            eval(&req, json!({}), &Namespaces::none()),
            guard_core::Verdict::allow()
        );
        let mut labelled = namespace("shop", Some("bogus"));
        labelled["metadata"]["labels"] = json!({"team": "orders"});
        let req = namespace_request(
            "UPDATE",
            Some(labelled),
            Some(namespace("shop", Some("bogus"))),
        );
        let v = eval(&req, json!({}), &Namespaces::none());
        assert!(v.allowed);
        warning(&v, "keeps the value \"bogus\", which ASO does not know");
        let req = namespace_request("DELETE", None, Some(namespace("shop", Some("bogus"))));
        assert!(eval(&req, json!({}), &Namespaces::none()).allowed);
    }

    #[test]
    fn proposal_annotations_on_a_namespace_do_nothing() {
        let mut ns = namespace("shop", None);
        ns["metadata"]["annotations"][ADOPTION_POLICY] = json!("skip-if-exists");
        let v = eval(
            &namespace_request("CREATE", Some(ns), None),
            json!({}),
            &Namespaces::none(),
        );
        assert!(v.allowed);
        warning(&v, "has no effect on a Namespace");
    }

    #[test]
    fn malformed_namespaces() {
        let v = eval(
            &namespace_request("CREATE", None, None),
            json!({}),
            &Namespaces::none(),
        );
        assert!(message(&v).contains("carries no object"));
        let v = eval(
            &namespace_request("CREATE", Some(json!("x")), None),
            json!({}),
            &Namespaces::none(),
        );
        assert!(message(&v).contains("malformed object"));
    }
}

//! Namespaces: their `reconcile-policy` annotation is inherited by every ASO
//! resource in them that has none of its own, so a typo there silently
//! reaches many Azure resources at once.

use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Context};

use crate::failure::Failure;
use crate::namespace_deletion;
use crate::owners::{self, Child};
use crate::settings::Settings;
use crate::values::{ReconcilePolicy, Vocabulary};

/// What ASO makes of a Namespace's `reconcile-policy` for the objects that
/// inherit it: a value it knows, else the operator default.
pub(crate) fn inherited_policy(value: Option<&str>, default: ReconcilePolicy) -> ReconcilePolicy {
    value.and_then(ReconcilePolicy::parse).unwrap_or(default)
}

/// The protected objects a switch of Namespace `name` to `manage` would
/// have ASO delete in Azure: those here already being deleted, waiting for
/// ASO's finalizer, unconfirmed, following the Namespace's policy (the same
/// rule as a switch on the object itself, `terminating`). Empty when the
/// Namespace is not protected or no kind can be listed.
pub(crate) fn deleted_by_switch(
    name: &str,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Result<Vec<Child>, Failure> {
    let p = &settings.deletion_protection;
    if !owners::needed(p) || (!p.namespaces.is_empty() && !p.namespaces.iter().any(|n| n == name)) {
        return Ok(Vec::new());
    }
    namespace_deletion::terminating_inheriting(name, settings, ctx)
}

/// A Namespace is cluster-scoped: kube-apiserver sets the request's
/// namespace to its own name, which is not a namespace it lives in.
pub(crate) fn target<'a>(
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

    use guard_core::Which;

    use crate::decision::{Audit, Decision, Inherited, Refusal, Subject, Warning};
    use crate::render::AUDIT_KEY;
    use crate::test_support::*;
    use crate::values::*;

    /// `Namespace shop`, as decisions name it.
    fn shop() -> Subject {
        Subject {
            kind: "Namespace".into(),
            resource: "namespaces".into(),
            namespace: String::new(),
            name: "shop".into(),
        }
    }

    #[test]
    fn setting_the_namespace_policy_says_what_it_means() {
        let req = namespace_request(
            "UPDATE",
            Some(namespace("shop", Some("detach-on-delete"))),
            Some(namespace("shop", None)),
        );
        let v = eval(&req, json!({}), &NoCluster);
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
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer",
             "version": "v1api20230601preview"}]}});
        let mut terminating = server(json!({}), &[FINALIZER]);
        terminating["metadata"]["deletionTimestamp"] = json!("2026-11-20T09:58:41Z");
        let mut own = terminating.clone();
        own["metadata"]["name"] = json!("own-db");
        own["metadata"]["annotations"] = json!({ RECONCILE_POLICY: "skip" });
        let cluster = recorded(vec![terminating, own, server(json!({}), &[FINALIZER])]);
        let cluster = RecordedCluster::new(&cluster);
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
        let calm = recorded(vec![server(json!({}), &[FINALIZER])]);
        let calm = RecordedCluster::new(&calm);
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
        let d = decide(
            &req,
            json!({"defaultReconcilePolicy": "manage"}),
            &NoCluster,
        );
        let follows = Warning::NamespaceFollows {
            policy: ReconcilePolicy::Manage,
            why: Inherited::Removed,
        };
        let expected = Decision::pass(shop())
            .warned([follows])
            .audited(Audit::Policy(ReconcilePolicy::Manage));
        assert_eq!(d, expected);
    }

    #[test]
    fn typos_and_legacy_values_on_a_namespace() {
        let req = namespace_request(
            "CREATE",
            Some(namespace("shop", Some("Detach-On-Delete"))),
            None,
        );
        let m = message(&eval(&req, json!({}), &NoCluster)).to_string();
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
        let d = decide(&req, json!({}), &NoCluster);
        let refusal = Refusal::InvalidOnNamespace {
            value: "run".into(),
        };
        assert_eq!(d, Decision::refuse(shop(), refusal));
        let d = decide(&req, json!({"acceptLegacyValues": true}), &NoCluster);
        let legacy = Warning::Legacy {
            key: Annotation::ReconcilePolicy,
            value: "run".into(),
            modern: "manage",
        };
        let follows = Warning::NamespaceFollows {
            policy: ReconcilePolicy::Manage,
            why: Inherited::Unknown,
        };
        assert_eq!(d.refusal, None);
        assert_eq!(d.warnings, [legacy, follows]);
    }

    #[test]
    fn unrelated_changes_pass_quietly() {
        let req = namespace_request("CREATE", Some(namespace("shop", None)), None);
        assert_eq!(decide(&req, json!({}), &NoCluster), Decision::pass(shop()));
        let mut labelled = namespace("shop", Some("bogus"));
        labelled["metadata"]["labels"] = json!({"team": "orders"});
        let req = namespace_request(
            "UPDATE",
            Some(labelled),
            Some(namespace("shop", Some("bogus"))),
        );
        let keeps = Warning::NamespaceKeepsInvalid {
            value: "bogus".into(),
        };
        assert_eq!(
            decide(&req, json!({}), &NoCluster),
            Decision::pass(shop()).warned([keeps])
        );
        let req = namespace_request("DELETE", None, Some(namespace("shop", Some("bogus"))));
        assert_eq!(decide(&req, json!({}), &NoCluster).refusal, None);
    }

    #[test]
    fn proposal_annotations_on_a_namespace_do_nothing() {
        let mut ns = namespace("shop", None);
        ns["metadata"]["annotations"][ADOPTION_POLICY] = json!("skip-if-exists");
        let d = decide(
            &namespace_request("CREATE", Some(ns), None),
            json!({}),
            &NoCluster,
        );
        let no_effect = Warning::NoEffectOnNamespace(Annotation::AdoptionPolicy);
        assert_eq!(d, Decision::pass(shop()).warned([no_effect]));
    }

    #[test]
    fn malformed_namespaces() {
        let d = decide(
            &namespace_request("CREATE", None, None),
            json!({}),
            &NoCluster,
        );
        assert_eq!(d.refusal, Some(Refusal::NoObject(Which::Object)));
        let d = decide(
            &namespace_request("CREATE", Some(json!("x")), None),
            json!({}),
            &NoCluster,
        );
        assert!(
            matches!(&d.refusal, Some(Refusal::Malformed(m)) if m.part == guard_core::request::Part::Object),
            "{d:?}"
        );
    }
}

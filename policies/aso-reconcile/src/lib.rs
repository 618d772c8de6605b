//! aso-reconcile: Azure Service Operator reconcile policy, the adoption
//! matrix of ASO's ADR 2023-02, and protection from accidental deletes.
//!
//! ASO accepts any value of `serviceoperator.azure.com/reconcile-policy` and
//! falls back to its default (normally `manage`) on one it does not know, so
//! a typo such as `detach-on-deletee` means a real delete in Azure. ASO has no
//! webhook for this annotation; this policy is that webhook, and the one the
//! ADR asks for around `reconcile-policy-if-exists`.
//!
//! Each request goes through `decide` (the flow, to a `Decision`) and then
//! `render` (every word users read). The rules: `values` (the accepted
//! values), `conflicts` (the ADR's conflicts), `matrix` (the adoption
//! matrix), `effective` (the policy ASO will really apply: object,
//! Namespace, operator default), `explicit_default` (the mutation),
//! `deletion` (deletion protection) with `owners` (what is inside a deleted
//! resource) and `terminating` (objects already being deleted), `namespace`
//! (the Namespace-level annotation) and `namespace_deletion` (a Namespace's
//! DELETE, judged once for what is in it).

// No trapping arithmetic or truncating casts, as in guard-core (its lib.rs says why).
#![cfg_attr(
    not(test),
    deny(
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        clippy::cast_sign_loss
    )
)]

mod conflicts;
mod decide;
mod decision;
mod deletion;
mod effective;
mod explicit_default;
mod failure;
mod lookups;
mod matrix;
mod namespace;
mod namespace_deletion;
mod owners;
mod render;
mod repoint;
pub mod settings;
mod stored;
mod takeover;
mod terminating;
mod values;

/// Whether an API group is one of ASO's, for tools that list them.
pub use values::is_aso_group;
/// ASO's finalizer, for tools that model a reconciled object.
pub use values::FINALIZER;

use guard_core::{AdmissionRequest, Context, Verdict};

pub use settings::Settings;

pub struct AsoReconcile;

impl guard_core::Policy for AsoReconcile {
    const NAME: &'static str = "aso-reconcile";
    type Settings = Settings;

    /// The protected kinds decide what is listed, so the manifests grant exactly those.
    fn lookups(settings: &Settings) -> Option<guard_core::Lookups> {
        Some(lookups::needed(settings))
    }

    fn evaluate(request: &AdmissionRequest, settings: &Settings, ctx: &Context<'_>) -> Verdict {
        render::verdict(&decide::decide(request, settings, ctx), request, settings)
    }
}

guard_core::kubewarden_policy!(AsoReconcile);

pub const ENTRY: guard_core::Entry =
    guard_core::Entry::of::<AsoReconcile>(include_str!("../metadata.yml"));

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests {
    use guard_core::{NoCluster, Timestamp, Verdict};
    use serde_json::json;

    use super::*;

    fn run(request: serde_json::Value, settings: serde_json::Value) -> Verdict {
        let payload =
            serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
        let ctx = Context::new(Timestamp::UNIX_EPOCH, &NoCluster);
        guard_core::policy::evaluate_payload::<AsoReconcile>(&payload, &ctx)
    }

    #[test]
    fn scope_is_aso_groups_and_namespaces() {
        assert!(is_aso_group("resources.azure.com"));
        assert!(is_aso_group("network.frontdoor.azure.com"));
        assert!(!is_aso_group("azure.com"));
        assert!(!is_aso_group("azure.com.example.org"));
        let bad = json!({"metadata": {"annotations": {values::RECONCILE_POLICY: "typo"}}});
        let kustomization = json!({"uid": "1", "operation": "CREATE",
            "kind": {"group": "kustomize.toolkit.fluxcd.io", "version": "v1", "kind": "Kustomization"},
            "object": bad});
        assert_eq!(run(kustomization, json!({})), Verdict::allow());
        let aso = json!({"uid": "1", "operation": "CREATE",
            "kind": {"group": "resources.azure.com", "version": "v1api20200601", "kind": "ResourceGroup"},
            "object": bad});
        assert!(!run(aso.clone(), json!({})).allowed);
        let mut status = aso;
        status["subResource"] = json!("status");
        assert_eq!(run(status, json!({})), Verdict::allow());
    }

    #[test]
    fn invalid_settings_are_a_server_error() {
        let req = json!({"uid": "1", "operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "Namespace"}});
        let v = run(
            req,
            json!({"deletionProtection": {"kinds": [{"group": "apps", "kind": "Deployment"}]}}),
        );
        assert_eq!(v.code, Some(500));
        assert!(v
            .message
            .unwrap()
            .contains("deletionProtection.kinds[0].group"));
    }
}

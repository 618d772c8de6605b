//! A Namespace's DELETE: where the deletion of the Kustomizations it holds
//! is judged, once.
//!
//! The namespace controller then deletes them with requests this policy
//! lets through ([`crate::deletion::NAMESPACE_CONTROLLER`]); refusing those
//! would leave the Namespace stuck in Terminating with nobody told why. So
//! the prune hazard of each Kustomization the Namespace holds is judged here,
//! with the rule a DELETE of it gets ([`crate::prune::delete`]), read from
//! the cluster (`contextAwareResources`: Kustomizations).

use guard_core::{AdmissionRequest, Context, Verdict};

use crate::kinds;
use crate::prune;

/// The Kustomization API the policy lists.
const KUSTOMIZATION_API: &str = "kustomize.toolkit.fluxcd.io/v1";

/// Is this the DELETE of a Namespace?
pub fn is_namespace(request: &AdmissionRequest) -> bool {
    request.kind.group.is_empty() && request.kind.kind == "Namespace"
}

pub fn delete(request: &AdmissionRequest, ctx: &Context<'_>) -> Verdict {
    let Some(kind) = kinds::find(guard_core::flux::KUSTOMIZE, "Kustomization") else {
        return Verdict::allow();
    };
    let namespace = request.name.as_str();
    let items = match ctx
        .cluster
        .list(KUSTOMIZATION_API, "Kustomization", Some(namespace))
    {
        Ok(items) => items,
        Err(e) => {
            return Verdict::deny(format!(
                "Deleting Namespace {namespace} deletes the Kustomizations it holds, and they \
                 cannot be listed to see whether that would garbage-collect what they applied: \
                 {e}"
            ))
        }
    };
    let mut refusals = Vec::new();
    let mut warnings = Vec::new();
    for item in &items {
        // Judged as the DELETE the namespace controller will send for it.
        let text = format!(
            r#"{{"operation":"DELETE","kind":{{"group":"{g}","version":"v1","kind":"Kustomization"}},"resource":{{"group":"{g}","version":"v1","resource":"kustomizations"}},"namespace":{ns},"oldObject":{item}}}"#,
            g = guard_core::flux::KUSTOMIZE,
            ns = serde_json::Value::String(namespace.to_string()),
            item = item.get()
        );
        let one = match serde_json::from_str::<AdmissionRequest>(&text) {
            Ok(one) => one,
            Err(e) => {
                return Verdict::deny(format!(
                    "Deleting Namespace {namespace}: a Kustomization it holds cannot be read: {e}"
                ))
            }
        };
        let verdict = prune::delete(&one, &kind);
        match verdict.message {
            Some(message) if !verdict.allowed => refusals.push(message),
            _ => warnings.extend(verdict.warnings),
        }
    }
    if refusals.is_empty() {
        return Verdict::allow().with_warnings(warnings);
    }
    Verdict::deny(format!(
        "Deleting Namespace {namespace} deletes the Kustomizations it holds, and the namespace \
         controller's deletes are not judged one by one:\n{}",
        refusals.join("\n")
    ))
}

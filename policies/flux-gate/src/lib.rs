//! flux-gate: change-freeze and approval gates for Flux, at admission.
//!
//! The Flux gating RFC (`gating.toolkit.fluxcd.io`, kind `Gate`) was never
//! implemented; this policy delivers its user stories with admission control.
//! Flux applies through the API server (kustomize-controller runs a
//! server-side apply dry-run of the whole set first), so a gate that refuses
//! writes holds a rollout back until it opens, and the refusal lands in the
//! Kustomization's Ready condition.
//!
//! A request is held by the gates bound to it (settings `bindings`, or the
//! object's `gating.toolkit.fluxcd.io/gates` annotation) when it changes the
//! desired state ([`change`]) and any of them is closed at `ctx.now`
//! ([`gate`]). [`decide`] makes the decision, [`render`] writes it. Gates
//! are declared in settings (cron schedules in IANA zones, freezes) or are
//! Gate objects read through `ctx.cluster`. Gate objects themselves are
//! validated ([`gate_object`]) and never held.

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

mod binding;
mod change;
mod cron;
mod decide;
mod decision;
mod emergency_override;
mod firing;
mod flux_owner;
mod gate;
mod gate_object;
mod gate_openers;
mod gating;
mod go_time;
mod opening;
mod preview;
mod render;
#[cfg(test)]
mod robfig_reference;
mod settings;
mod split_object;
#[cfg(test)]
mod test_support;
mod writer;
mod zones;

use guard_core::{AdmissionRequest, Context, Verdict};

pub use crate::settings::{limits, Compiled, Settings};

pub struct FluxGate;

impl guard_core::Policy for FluxGate {
    const NAME: &'static str = "flux-gate";
    type Settings = Compiled;

    fn evaluate(request: &AdmissionRequest, compiled: &Compiled, ctx: &Context<'_>) -> Verdict {
        render::verdict(&decide::decide(request, compiled, ctx), request)
    }

    /// Without bindings, only a request that names the gating group holds
    /// anything: a Gate (its kind's group), an object naming gates or
    /// setting the emergency override (annotations under the group). Any
    /// other request passes unread.
    const ASKS_UNCONCERNED: bool = true;

    fn unconcerned(settings: &[u8], payload: &[u8]) -> bool {
        settings::without_bindings(settings)
            && !guard_core::payload::contains(payload, gating::GATING_GROUP)
    }
}

guard_core::kubewarden_policy!(FluxGate);
pub const ENTRY: guard_core::Entry =
    guard_core::Entry::of::<FluxGate>(include_str!("../metadata.yml"));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gating::GATES_ANNOTATION;
    use crate::test_support::{eval, freeze, update};
    use guard_core::NoCluster;
    use serde_json::json;

    #[test]
    fn subresource_writes_are_never_held() {
        let mut status = update("./b", false, json!({}), "bob", &[]);
        status.sub_resource = "status".into();
        assert_eq!(eval(&status, &freeze(), &NoCluster), Verdict::allow());
    }

    #[test]
    fn only_requests_naming_the_gating_group_are_read_without_bindings() {
        use guard_core::policy::{prejudge, Prejudged};
        let payload = |request: serde_json::Value, settings: serde_json::Value| {
            serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap()
        };
        let plain = json!({"operation": "UPDATE", "kind": {"group": "apps", "kind": "Deployment"},
            "object": {"metadata": {"name": "web", "annotations": {"a": "b"}}}});
        let named = json!({"operation": "UPDATE", "kind": {"group": "apps", "kind": "Deployment"},
            "object": {"metadata": {"name": "web", "annotations": {GATES_ANNOTATION: "g"}}}});
        let bound = json!({"bindings": [{"gates": ["g"], "match": {}}],
                           "gates": [{"name": "g", "default": "closed"}]});
        let unconcerned = |p: &[u8]| matches!(prejudge::<FluxGate>(p), Prejudged::Unconcerned);
        assert!(unconcerned(&payload(plain.clone(), json!({}))));
        assert!(!unconcerned(&payload(named, json!({}))));
        assert!(!unconcerned(&payload(plain, bound)));
    }
}

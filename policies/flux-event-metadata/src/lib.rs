//! flux-event-metadata: valid `event.toolkit.fluxcd.io/*` annotations and
//! Alert metadata (Flux RFC-0008).
//!
//! Flux copies every object annotation with the `event.toolkit.fluxcd.io/`
//! prefix into the metadata of the object's events, unchecked, and
//! notification-controller settles key clashes silently: controller keys beat
//! an Alert's `.spec.summary`, which beats its `.spec.eventMetadata`, which
//! beats the object's annotations. A mistake is invisible until a notification
//! is wrong, or a commit status lands on the wrong commit. This policy makes
//! those mistakes visible at `kubectl apply`:
//!
//! - on the kinds that emit events (`kinds`): key syntax, keys that always
//!   lose to the controller's own, routing keys (`commit`, `change_request`),
//!   the cluster's tenant rules (`object_rules`), keys an Alert selecting the
//!   object also sets (`conflicts`), and a HelmRelease's chart template
//!   (`template`);
//! - on Alerts: `.spec.eventMetadata` and the deprecated `.spec.summary`
//!   (`alert_rules`);
//! - elsewhere: a warning that the annotations do nothing (`inert`).
//!
//! `decide` runs the rules and returns a `Decision`; `render` writes it.
//!
//! On UPDATE, what the object already had is reported as a warning, never
//! refused, so that existing objects stay editable by people and controllers.
//! Objects being deleted are checked the same way: their controllers still
//! send events (with the annotations) while they finalize, and the writes
//! that finish a deletion (a finalizer removed) change no annotation.

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

mod alert;
mod alert_rules;
mod annotations;
mod conflicts;
mod decide;
mod decision;
mod findings;
mod generated;
mod inert;
mod key_index;
mod kinds;
mod object_rules;
mod render;
mod settings;
mod subject;
mod template;
#[cfg(test)]
mod test_support;
mod values;

use guard_core::{AdmissionRequest, Context, Policy, Verdict};

pub use crate::settings::Settings;

pub struct FluxEventMetadata;

guard_core::kubewarden_policy!(FluxEventMetadata);

pub const ENTRY: guard_core::Entry =
    guard_core::Entry::of::<FluxEventMetadata>(include_str!("../metadata.yml"));

impl Policy for FluxEventMetadata {
    const NAME: &'static str = "flux-event-metadata";
    type Settings = Settings;

    fn evaluate(request: &AdmissionRequest, settings: &Settings, ctx: &Context<'_>) -> Verdict {
        render::verdict(&decide::decide(request, settings, ctx), request, settings)
    }
}

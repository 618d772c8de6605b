//! flux-suspend: suspend Flux objects with a reason, honoured by every Flux release.
//!
//! Flux RFC-0006 proposed the annotation `reconcile.fluxcd.io/suspended` as a
//! suspend switch that carries a reason. It was never merged: no controller
//! honours it, so an object "suspended" by the annotation alone keeps
//! reconciling, and a deleted Kustomization with `spec.prune` still
//! garbage-collects everything it applied. This policy makes the RFC's user
//! stories real on today's Flux:
//!
//! - a suspension needs a reason (optionally a pattern and an `until=` expiry);
//! - in `mirror` mode the annotation and the mechanism the kind's controller
//!   honours (`spec.suspend`, or `<group>/reconcile: disabled`) are kept in step;
//! - `annotation-only` and `deny-annotation-only` modes guard the RFC's
//!   version-skew hazard without mutating;
//! - settings can restrict who suspends and resumes, and record the suspender.
//!
//! [`decide`] holds the flow and returns a [`decision::Decision`]; [`render`]
//! writes every text a user reads from it; each rule has a module named for it.

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

mod annotation_only;
mod audit;
mod commands;
mod decide;
mod decision;
mod deletion;
mod identity_rules;
mod kinds;
mod mirror;
mod namespace;
mod noop;
mod operator_ui;
mod prune;
mod reason;
mod reconciler;
mod render;
pub mod settings;
mod view;
mod warnings;
mod write;

#[cfg(test)]
mod test_support;

use guard_core::{AdmissionRequest, Context, Policy, Verdict};

pub use kinds::SUSPEND_ANNOTATION;
pub use settings::Settings;

/// The flux-suspend policy.
pub struct FluxSuspend;

impl Policy for FluxSuspend {
    const NAME: &'static str = "flux-suspend";
    type Settings = Settings;

    fn evaluate(request: &AdmissionRequest, settings: &Settings, ctx: &Context<'_>) -> Verdict {
        render::verdict(&decide::decide(request, settings, ctx), request, settings)
    }
}

guard_core::kubewarden_policy!(FluxSuspend);

pub const ENTRY: guard_core::Entry =
    guard_core::Entry::of::<FluxSuspend>(include_str!("../metadata.yml"));

//! Every text a user reads: refusal messages, warnings, the commands they
//! suggest, audit annotation values, from a [`Decision`].

mod refusals;
mod settings;
mod warnings;

use guard_core::identity::{self, Identities};
use guard_core::object::ObjectName;
use guard_core::{names, AdmissionRequest, UserInfo, Verdict};

use crate::audit::{Action, Audit};
use crate::commands;
use crate::decision::{Allowed, Decision};
use crate::kinds::{Collects, Honours, Kind, DISABLED, SUSPEND_ANNOTATION};
use crate::settings::Settings;
use crate::view::State;
use guard_core::model::kinds::Collects as Policy;

pub(crate) fn verdict(
    decision: &Decision<'_>,
    request: &AdmissionRequest,
    settings: &Settings,
) -> Verdict {
    match decision {
        Decision::Allow(allowed) => allow(allowed, request, settings),
        Decision::Refuse(refusal) => refusals::verdict(refusal, request, settings),
    }
}

fn allow(allowed: &Allowed, request: &AdmissionRequest, settings: &Settings) -> Verdict {
    let user = &request.user_info;
    let mut verdict = Verdict::allow().with_warnings(
        allowed
            .warnings
            .iter()
            .map(|w| warnings::text(w, settings, user)),
    );
    if let Some(audit) = &allowed.audit {
        verdict = audited(verdict, audit, user);
    }
    match &allowed.mutated {
        Some(mutated) => verdict.mutate_raw(mutated.0.clone()),
        None => verdict,
    }
}

/// Audit annotations on every suspend, resume and reason change. Keys are
/// name parts: the API server prefixes them with the webhook's name.
fn audited(verdict: Verdict, audit: &Audit, user: &UserInfo) -> Verdict {
    let action = match audit.action {
        Action::Suspend => "suspend",
        Action::ChangeReason => "change-reason",
        Action::Resume => "resume",
    };
    let reason: String = audit
        .shown
        .reason
        .as_deref()
        .unwrap_or("")
        .chars()
        .take(256)
        .collect();
    verdict
        .audit("action", action)
        .audit("user", identity::describe(user))
        .audit("mechanism", mechanisms(&audit.shown, &audit.kind))
        .audit("reason", reason)
}

/// How the honoured mechanism reads in messages.
fn honoured_mechanism(kind: &Kind) -> String {
    match kind.honours {
        Honours::SpecSuspend => "spec.suspend: true".to_string(),
        Honours::DisableAnnotation(key) => format!("annotation {key}: {DISABLED}"),
    }
}

/// The mechanisms in effect, for messages and audit annotations.
fn mechanisms(state: &State, kind: &Kind) -> String {
    let mut parts = Vec::with_capacity(2);
    if state.honoured() {
        parts.push(honoured_mechanism(kind));
    }
    if state.reason.is_some() {
        parts.push(format!("annotation {SUSPEND_ANNOTATION}"));
    }
    parts.join(" and ")
}

/// What decides that deleting the object deletes more: a Kustomization's
/// field, or its controller's rule for the kind (named from the model).
fn deciding(collects: Collects, kind: &Kind) -> String {
    let (controller, name) = (kind.controller.name, kind.kind);
    match collects {
        Collects::Policy(Policy::Prune) => "spec.prune is true".to_string(),
        Collects::Policy(Policy::Delete) => "spec.deletionPolicy is Delete".to_string(),
        Collects::Policy(Policy::WaitForTermination) => {
            "spec.deletionPolicy is WaitForTermination".to_string()
        }
        Collects::Inventory => format!(
            "{controller} deletes the inventory of a {name} without {}",
            honoured_mechanism(kind)
        ),
        Collects::Release => format!(
            "{controller} uninstalls the Helm release of a {name} without {}",
            honoured_mechanism(kind)
        ),
    }
}

/// What deleting it would delete: `the 1 object` / `the 3 objects` in its
/// inventory, or its Helm release.
fn inventory(collects: Collects, objects: usize) -> String {
    match (collects, objects) {
        (Collects::Release, _) => "its Helm release and every object of its chart".to_string(),
        (_, 1) => "the 1 object in its inventory".to_string(),
        (_, n) => format!("the {n} objects in its inventory"),
    }
}

/// The listed identities as refusals name them, so the person knows whom to ask.
fn list_identities(ids: &Identities) -> String {
    let mut parts = Vec::new();
    for (label, list) in [
        ("users", &ids.users),
        ("groups", &ids.groups),
        ("service accounts", &ids.service_accounts),
    ] {
        if !list.is_empty() {
            parts.push(format!("{label} {}", list.join(", ")));
        }
    }
    parts.join("; ")
}

/// How `user` resumes: the command, or, when `resumers` are listed and they
/// are not one, whom to ask (a command they would be refused is no help).
/// Follows "to resume" or "to resume it".
/// `annotated`: the object the command acts on carries the annotation.
fn resume_hint(
    target: &ObjectName<'_>,
    kind: &Kind,
    settings: &Settings,
    user: &UserInfo,
    annotated: bool,
) -> String {
    let resumers = &settings.resumers;
    if resumers.is_empty() || resumers.matches(user) {
        return format!(
            "run `{}`",
            commands::resume(target, kind, settings, annotated)
        );
    }
    format!(
        "ask one of the flux-suspend policy's resumers ({})",
        list_identities(resumers)
    )
}

/// A reason as messages show it.
fn shown(reason: Option<&str>) -> String {
    reason.map_or_else(
        || "no reason".to_string(),
        |r| format!("reason {}", names::quote(r)),
    )
}

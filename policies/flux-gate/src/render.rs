//! Every word the user reads: a [`Decision`] written as the verdict,
//! its message, warnings, suggested commands and audit annotation.

mod errors;
mod words;

use guard_core::names::quote;
use guard_core::object::ObjectName;
use guard_core::{rfc3339, AdmissionRequest, Verdict};

use crate::decision::{
    Change, ClosedGates, Decision, Exempted, Exemption, Failed, ForeignOverride, GateWrite, Held,
    OverrideProblem, Passing,
};
use crate::gate::Gate;
use crate::gate_object::{LookupError, WriteError};
use crate::gating::{GATE_API_VERSION, OPEN_ANNOTATION, OVERRIDE_ANNOTATION};
use crate::opening::Opening;

/// Audit annotation recording every exemption used.
pub(crate) const AUDIT_KEY: &str = "gate-exemption";

/// The verdict for `decision`, made about `request`.
pub(crate) fn verdict(decision: &Decision<'_>, request: &AdmissionRequest) -> Verdict {
    match decision {
        Decision::Allow => Verdict::allow(),
        Decision::Unreadable(e) => Verdict::deny(e.to_string()),
        Decision::MissingObject { which, object } => {
            Verdict::deny(request.missing_object(*which, &object.object().describe()))
        }
        Decision::GateWrite(write) => gate_write(write),
        Decision::OverrideAnnotationRefused {
            object,
            user,
            groups,
        } => Verdict::deny(format!(
            "The {OVERRIDE_ANNOTATION} annotation is honoured only for members of emergencyOverride.groups ({}); {user} is not one. On {} it would let every change applied from it pass closed gates, so only those members may set it.",
            groups_text(groups),
            object.object().describe(),
        )),
        Decision::GatesAnnotationMalformed { object, error } => Verdict::deny(format!(
            "{}: {error}; a change that only fixes or removes the annotation passes",
            object.object().describe()
        )),
        Decision::Passes {
            object,
            kind,
            malformed,
            closed,
        } => {
            let who = object.object().describe();
            let mut verdict = Verdict::allow();
            if let Some(e) = malformed {
                verdict = verdict.warn(format!(
                    "{e}; changes to the desired state of {who} are refused until it is fixed"
                ));
            }
            match closed {
                Some(closed) => verdict.warn(passes_closed(*kind, closed, &who)),
                None => verdict,
            }
        }
        Decision::Unchecked(failed) => Verdict::allow().with_warnings(failed.iter().map(|f| {
            format!(
                "gate '{}' {}; not holding this change because onGateLookupError is allow",
                f.label,
                lookup_error(&f.error)
            )
        })),
        Decision::Exempt(exemption) => exempt(exemption),
        Decision::Held(held) => Verdict::deny(held_message(held, request)),
        Decision::Preview(held) => Verdict::allow().warn(preview(held, request)),
    }
}

/// A preview passes; the warning says what the apply it previews would meet,
/// and where the pipeline asks that as a verdict.
fn preview(h: &Held<'_>, request: &AdmissionRequest) -> String {
    let gates = match h.closed.as_slice() {
        [one] => format!("gate '{}' is", one.label()),
        all => format!(
            "gates {} are",
            quoted(&all.iter().map(Gate::label).collect::<Vec<_>>())
        ),
    };
    let mut text = format!(
        "preview passes: dry-run {} of {} by {} under field manager '{}' stores nothing. \
         The apply it previews would be held ({}): {gates} closed.",
        request.operation.as_str(),
        h.object.object().describe(),
        guard_core::identity::describe(&request.user_info),
        request.field_manager().unwrap_or_default(),
        change(&h.change),
    );
    if let Some(opening) = h.opening {
        text.push(' ');
        text.push_str(&words::opening(opening, &h.zones, h.closed.len() > 1));
    }
    text.push_str(
        " `reconcile-guard check` on the pull request gives admission's verdict for each change.",
    );
    text
}

fn gate_write(write: &GateWrite) -> Verdict {
    match write {
        GateWrite::Refused { object, error, now } => Verdict::deny(format!(
            "{}: {}",
            object.object().describe(),
            write_error(error, *now)
        )),
        GateWrite::Accepted {
            label,
            open,
            request_until,
            next_change,
        } => {
            let mut text = format!(
                "gate '{label}' is {}",
                if *open { "open" } else { "closed" }
            );
            match (request_until, next_change) {
                (Some(until), _) => {
                    text.push_str(&format!(" until {until}, then back to its default"))
                }
                (None, Some(t)) => text.push_str(&format!(
                    " (its default) until a request takes effect at {t}"
                )),
                (None, None) => text.push_str(" (its default)"),
            }
            Verdict::allow().warn(text)
        }
    }
}

fn write_error(error: &WriteError, now: jiff::Timestamp) -> String {
    match error {
        WriteError::Invalid(e) => e.to_string(),
        // The clock that wrote it is off: the command carries the policy's
        // instant rather than `$(date)`, which would read that clock again.
        WriteError::Ahead { key, at, gate } => format!(
            "annotation {key}: {} is {} ahead of the policy's clock ({}; tolerance {}); \
             check the clock that wrote it, or write the policy's time: `{}`",
            rfc3339::format(*at),
            words::window(at.duration_since(now)),
            rfc3339::format(now),
            words::window(gate.skew),
            words::request_at(&gate.object(), key, now),
        ),
        WriteError::OpenedFromGit { at, manager, gate } => format!(
            "written under field manager '{manager}', the apply from Git, it would open gate \
             '{}' at {} while the stored Gate keeps it closed; a commit cannot open the gate \
             that holds it. Open it as the people meant to: `{}`",
            gate.label(),
            rfc3339::format(*at),
            words::request_now(&gate.object(), crate::gating::OPEN_ANNOTATION),
        ),
        WriteError::ClosedDeleted { gate } => format!(
            "deleting gate '{}' would let through what it holds ({}); a Gate is deleted once it \
             is open by default: set spec.default to opened and let any close request expire \
             (`{}` opens it now), then delete it",
            gate.label(),
            if gate.default_open {
                "a close request holds it closed"
            } else {
                "it is closed by default"
            },
            words::request_now(&gate.object(), crate::gating::OPEN_ANNOTATION),
        ),
    }
}

fn lookup_error(error: &LookupError) -> String {
    match error {
        LookupError::NotFound => "does not exist".into(),
        LookupError::NotDeclared => "is not declared".into(),
        LookupError::Unreadable(e) => format!("cannot be read: {e}"),
        LookupError::Malformed(e) => format!("is malformed: {e}"),
    }
}

/// What a held write does, after "Held: UPDATE of …".
fn change(change: &Change) -> String {
    match change {
        Change::Creates => "creates it".into(),
        Change::Deletes => "deletes it".into(),
        Change::Field(field) => format!("changes {field}"),
        Change::FromGit { field, manager } => {
            format!("changes {field}, applied from Git by {manager}")
        }
        Change::Resumes(field) => format!("resumes it: spec.{field} is no longer true"),
        Change::RemovesGates(labels) => format!("removes gate '{}' from it", labels.join("', '")),
    }
}

/// A metadata-only or suspend-only write passes; closed gates still hold
/// the rest.
fn passes_closed(kind: Passing, closed: &ClosedGates<'_>, who: &str) -> String {
    let until = match closed.opening {
        Opening::At(t) => format!("until {}", words::instant(t, &closed.zones)),
        _ => "until the gates are opened".into(),
    };
    let kind = match kind {
        Passing::MetadataOnly => "metadata-only".to_string(),
        Passing::SuspendOnly(field) => format!("spec.{field}-only"),
    };
    let gates = match closed.labels.as_slice() {
        [one] => format!("gate '{one}' is"),
        all => format!("gates '{}' are", all.join("', '")),
    };
    format!(
        "this {kind} change passes although {gates} closed; changes to the desired state of {who} are held {until}"
    )
}

fn exempt(e: &Exemption) -> Verdict {
    let blocked = quoted(&e.blocked);
    let (user, what) = (&e.user, change(&e.change));
    let (note, remove) = match &e.by {
        Exempted::BreakGlass => {
            let note = format!("break-glass: {user} passed closed gate {blocked} ({what})");
            return Verdict::allow()
                .warn(format!("{note}; this use is recorded in the audit log"))
                .audit(AUDIT_KEY, note);
        }
        Exempted::Override {
            group,
            reason,
            object,
        } => (
            format!(
                "emergency override by {user} (group {group}) passed closed gate {blocked} ({what}): {}",
                quote(reason)
            ),
            object,
        ),
        Exempted::OwnerOverride {
            owner,
            reason,
            object,
        } => (
            format!(
                "emergency override on {} passed closed gate {blocked} for {} ({what}, sent by {user}): {}",
                owner.object().describe(),
                object.object().describe(),
                quote(reason)
            ),
            owner,
        ),
    };
    Verdict::allow()
        .warn(format!(
            "{note}; remove the override when the emergency is over: `{}`",
            remove_override(&remove.object())
        ))
        .audit(AUDIT_KEY, note)
}

/// `'a', 'b'`.
fn quoted(labels: &[String]) -> String {
    labels
        .iter()
        .map(|l| format!("'{l}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The refusal: the RFC's words, why, when it opens, how to get through.
fn held_message(h: &Held<'_>, request: &AdmissionRequest) -> String {
    let mut parts: Vec<String> = Vec::new();
    for g in &h.closed {
        let state = g.state_at(h.now);
        parts.push(format!(
            "gate '{}' is closed: {}",
            g.label(),
            words::why_closed(g, &state, h.now)
        ));
    }
    for Failed { label, error } in &h.failed {
        parts.push(format!(
            "gate '{label}' {} (a Gate object, {GATE_API_VERSION}); create it, or set onGateLookupError: allow",
            lookup_error(error)
        ));
    }
    let mut text = format!("Reconciliation is waiting approval, {}.", parts.join("; "));
    if let Some(opening) = h.opening {
        text.push(' ');
        text.push_str(&words::opening(opening, &h.zones, h.closed.len() > 1));
        for g in &h.closed {
            if let Gate::Object(o) = g {
                text.push_str(&format!(
                    " Open '{}' now: `{}`.",
                    o.label(),
                    words::request_now(&o.object(), OPEN_ANNOTATION)
                ));
            }
        }
    }
    // A dry run is judged like the real request: kustomize-controller's
    // server-side apply dry-run is what reports the gate in Ready.
    text.push_str(&format!(
        " Held: {}{} of {} ({}); suspending or pausing passes, and so do labels and annotations \
         written by anyone but the Flux controller applying it from Git.",
        if request.dry_run { "dry-run " } else { "" },
        request.operation.as_str(),
        h.object.object().describe(),
        change(&h.change)
    ));
    text.push_str(&override_notes(h));
    text
}

/// What the refusal says about emergency overrides that did not apply.
fn override_notes(h: &Held<'_>) -> String {
    let mut text = String::new();
    // An override found for someone else's writes says whose it is.
    for f in &h.foreign_overrides {
        text.push(' ');
        text.push_str(&foreign_override(f));
    }
    // A failed lookup honours no override (fail closed), and says so.
    for (owner, e) in &h.unchecked_overrides {
        text.push_str(&format!(
            " An emergency override on {} could not be checked ({}), so none is honoured \
             from it; retry.",
            owner.object().describe(),
            quote(&e.to_string())
        ));
    }
    match &h.override_problem {
        Some(OverrideProblem::NoReason) => text.push_str(&format!(
            " The emergency override needs a reason: annotate {OVERRIDE_ANNOTATION}=\"<incident and why>\"."
        )),
        Some(OverrideProblem::NotMember { user, groups }) => text.push_str(&format!(
            " The {OVERRIDE_ANNOTATION} annotation is honoured only for members of emergencyOverride.groups ({}); {user} is not one.",
            groups_text(groups)
        )),
        None => {}
    }
    text
}

fn foreign_override(f: &ForeignOverride) -> String {
    let sent = match f.manager.as_str() {
        "" => f.sender.clone(),
        m => format!("{} (field manager {m})", f.sender),
    };
    format!(
        "The emergency override on {} lets through only what its applier sends ({}, field manager {}); this request was sent by {sent}.",
        f.owner.object().describe(),
        f.applier,
        f.field_manager,
    )
}

/// The command that removes the emergency override from `object`.
fn remove_override(object: &ObjectName<'_>) -> String {
    object.kubectl("annotate", &[&format!("{OVERRIDE_ANNOTATION}-")])
}

fn groups_text(groups: &[String]) -> String {
    if groups.is_empty() {
        "none configured".to_string()
    } else {
        groups.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gating::{GATES_ANNOTATION, OVERRIDE_ANNOTATION};
    use crate::test_support::{eval, freeze, request, settings, timing_out, update};
    use conformance::RecordedCluster;
    use guard_core::NoCluster;
    use serde_json::{json, Value};

    #[test]
    fn a_closed_gate_holds_a_spec_change() {
        let v = eval(
            &update("./b", false, json!({}), "bob", &[]),
            &freeze(),
            &NoCluster,
        );
        assert!(!v.allowed);
        let m = v.message.unwrap();
        assert!(
            m.starts_with(
                "Reconciliation is waiting approval, gate 'freeze' is closed: frozen from"
            ),
            "{m}"
        );
        assert!(
            m.contains("It opens next at 2027-01-04T00:00:00Z (Mon 00:00 UTC)."),
            "{m}"
        );
        assert!(
            m.contains("Held: UPDATE of Kustomization flux-system/apps (changes spec.path)"),
            "{m}"
        );
    }

    #[test]
    fn suspend_metadata_and_no_op_changes_pass() {
        let v = eval(
            &update("./a", true, json!({}), "bob", &[]),
            &freeze(),
            &NoCluster,
        );
        assert!(v.allowed);
        assert!(v.warnings[0]
            .starts_with("this spec.suspend-only change passes although gate 'freeze' is closed"));
        let v = eval(
            &update("./a", false, json!({"x": "y"}), "bob", &[]),
            &freeze(),
            &NoCluster,
        );
        assert!(v.allowed && v.warnings[0].starts_with("this metadata-only change passes"));
        let v = eval(
            &update("./a", false, json!({}), "bob", &[]),
            &freeze(),
            &NoCluster,
        );
        assert_eq!(v, Verdict::allow());
    }

    #[test]
    fn exemptions_are_recorded() {
        let v = eval(
            &update("./b", false, json!({}), "alice", &[]),
            &freeze(),
            &NoCluster,
        );
        assert!(v.allowed);
        assert_eq!(
            v.audit_annotations[AUDIT_KEY],
            "break-glass: alice passed closed gate 'freeze' (changes spec.path)"
        );
        let reason = json!({OVERRIDE_ANNOTATION: "INC-1 outage"});
        let v = eval(
            &update("./b", false, reason.clone(), "carol", &["oncall"]),
            &freeze(),
            &NoCluster,
        );
        assert!(v.allowed);
        assert!(v.audit_annotations[AUDIT_KEY]
            .starts_with("emergency override by carol (group oncall)"));
        let v = eval(
            &update("./b", false, reason, "bob", &["dev"]),
            &freeze(),
            &NoCluster,
        );
        assert!(!v.allowed);
        assert!(v.message.unwrap().contains(
            "honoured only for members of emergencyOverride.groups (oncall); bob is not one"
        ));
    }

    #[test]
    fn gate_objects_that_cannot_be_read() {
        let named = json!({GATES_ANNOTATION: "sre-approval"});
        let req = update("./b", false, named, "bob", &[]);
        let gate = [timing_out(
            "gating.toolkit.fluxcd.io/v1alpha1",
            "Gate",
            "flux-system",
            "sre-approval",
        )];
        let v = eval(&req, &settings(json!({})), &RecordedCluster::new(&gate));
        assert!(v
            .message
            .unwrap()
            .contains("gate 'flux-system/sre-approval' cannot be read: timeout"));
        let v = eval(
            &req,
            &settings(json!({"onGateLookupError": "allow"})),
            &NoCluster,
        );
        assert!(v.allowed);
        assert_eq!(v.warnings, ["gate 'flux-system/sre-approval' does not exist; not holding this change because onGateLookupError is allow"]);
    }

    #[test]
    fn unbound_and_malformed_requests() {
        let v = eval(
            &update("./b", false, json!({}), "bob", &[]),
            &settings(json!({})),
            &NoCluster,
        );
        assert_eq!(v, Verdict::allow());
        let bad = request(
            "UPDATE",
            json!({"metadata": {}}),
            json!({"metadata": {"annotations": {"a": 1}}}),
            "bob",
            &[],
        );
        let v = eval(&bad, &freeze(), &NoCluster);
        assert!(v.message.unwrap().starts_with("malformed object"));
        let none = request("DELETE", Value::Null, Value::Null, "bob", &[]);
        let v = eval(&none, &freeze(), &NoCluster);
        assert_eq!(
            v.message.unwrap(),
            "Kustomization flux-system/apps: the DELETE request carries no oldObject"
        );
    }

    #[test]
    fn a_gate_request_from_a_fast_clock_names_the_policy_time() {
        let req: guard_core::AdmissionRequest = serde_json::from_value(json!({
            "operation": "UPDATE", "name": "g", "namespace": "flux-system",
            "kind": {"group": crate::gating::GATING_GROUP, "version": "v1alpha1", "kind": crate::gating::GATE_KIND},
            "object": {"metadata": {"name": "g", "namespace": "flux-system",
                "annotations": {"open.gate.fluxcd.io/requestedAt": "2026-12-21T12:00:00Z"}},
                "spec": {"default": "closed", "window": "1h"}}
        }))
        .unwrap();
        let v = eval(&req, &freeze(), &NoCluster);
        assert_eq!(
            v.message.unwrap(),
            "Gate flux-system/g: annotation open.gate.fluxcd.io/requestedAt: 2026-12-21T12:00:00Z \
             is 2h0m0s ahead of the policy's clock (2026-12-21T10:00:00Z; tolerance 5m0s); check \
             the clock that wrote it, or write the policy's time: `kubectl annotate \
             gates.gating.toolkit.fluxcd.io g -n flux-system --field-manager=flux-gate --overwrite \
             open.gate.fluxcd.io/requestedAt=2026-12-21T10:00:00Z`"
        );
    }
}

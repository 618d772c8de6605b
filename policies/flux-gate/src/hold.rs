//! Holding changes: a write to any object but a Gate is refused when it
//! changes the desired state ([`crate::change`]) and a gate bound to it
//! ([`crate::binding`]) is closed, unless a break-glass identity sends it or
//! an emergency override ([`crate::emergency_override`]) lets it pass.
//! Who wrote it ([`crate::writer`]) decides what counts as a change: the
//! cluster's own controllers pass, metadata is held when Flux applies it
//! from Git.

use guard_core::identity;
use guard_core::names::quote;
use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Context, Metadata, Operation, Verdict, Which};

use crate::binding;
use crate::change::{self, Change};
use crate::emergency_override::{
    guard_override_annotation, override_groups_text, owner_override, remove_override, OwnerOverride,
};
use crate::gate::Gate;
use crate::gate_object::{self, LookupError};
use crate::message;
use crate::opening::{next_opening, Opening};
use crate::settings::{Compiled, GateRef};
use crate::writer;
use crate::{AUDIT_KEY, GATES_ANNOTATION, GATE_API_VERSION, OPEN_ANNOTATION, OVERRIDE_ANNOTATION};

/// Judges a write to any object but a Gate; `Err` is the refusal's text.
pub(crate) fn hold(
    request: &AdmissionRequest,
    c: &Compiled,
    ctx: &Context<'_>,
) -> Result<Verdict, String> {
    // A freeze holds changes from Git and from people. Kubernetes' own
    // controllers completing or maintaining an object (binding a claim,
    // rolling out a ReplicaSet, the namespace controller emptying a
    // Namespace whose deletion was judged at the Namespace) pass.
    if writer::kube_controller(&request.user_info).is_some() {
        return Ok(Verdict::allow());
    }
    let new_meta = request.metadata(Which::Object)?;
    let old_meta = match request.operation {
        Operation::Create => None,
        _ => request.metadata(Which::OldObject)?,
    };
    let Some(meta) = new_meta.as_ref().or(old_meta.as_ref()) else {
        return Err(format!(
            "{}: the {} request carries no object",
            ObjectName::of(request, None).describe(),
            request.operation.as_str()
        ));
    };
    let object = ObjectName::of(request, Some(meta));
    let who = object.describe();
    if let Some(refusal) =
        guard_override_annotation(request, c, old_meta.as_ref(), new_meta.as_ref())
    {
        return Ok(refusal);
    }
    // What the write changes comes first: no-op, metadata-only and
    // suspend-only writes are never held, whatever the annotations say, so
    // that no stored object is ever locked.
    let mut change = classify(request, old_meta.as_ref(), new_meta.as_ref(), &who)?;
    if change == Change::NoOp {
        return Ok(Verdict::allow());
    }
    let bound = binding::gates_for(c, request, meta);
    let before = match (&old_meta, &new_meta) {
        (Some(old), Some(_)) => Some(binding::gates_for(c, request, old)),
        _ => None,
    };
    if let Some(e) = &bound.malformed {
        let written = |m: &Option<Metadata>| {
            m.as_ref()
                .and_then(|m| m.annotation(GATES_ANNOTATION))
                .map(str::to_string)
        };
        let rewritten = written(&old_meta) != written(&new_meta);
        if matches!(change, Change::Held(_)) || rewritten {
            return Err(format!(
                "{who}: {e}; a change that only fixes or removes the annotation passes"
            ));
        }
    }
    // Gates the old object was bound to still count, so that dropping a label
    // or an annotation cannot slip a change past them; dropping them is
    // itself held, unless the Gate object does not exist.
    let dropped: Vec<GateRef> = before
        .iter()
        .flat_map(|b| b.gates.iter())
        .filter(|r| !bound.gates.contains(r))
        .cloned()
        .collect();
    let mut refs = bound.gates.clone();
    let mut resolved: Vec<Resolved<'_>>;
    if matches!(change, Change::Held(_)) {
        refs.extend(dropped.iter().cloned());
        resolved = refs.iter().map(|r| resolve(r, c, ctx)).collect();
    } else if dropped.is_empty() {
        resolved = refs.iter().map(|r| resolve(r, c, ctx)).collect();
    } else {
        resolved = dropped.iter().map(|r| resolve(r, c, ctx)).collect();
        resolved.retain(|r| !matches!(r.gate, Err(LookupError::NotFound)));
        let names: Vec<&str> = resolved.iter().map(|r| r.label.as_str()).collect();
        if names.is_empty() {
            return Ok(Verdict::allow());
        }
        change = Change::Held(format!("removes gate '{}' from it", names.join("', '")));
    }
    if resolved.is_empty() && matches!(change, Change::Held(_)) {
        return Ok(Verdict::allow());
    }

    let gates: Vec<Gate<'_>> = resolved
        .iter()
        .filter_map(|r| r.gate.as_ref().ok().cloned())
        .collect();
    let failed: Vec<(&str, String)> = resolved
        .iter()
        .filter_map(|r| {
            r.gate
                .as_ref()
                .err()
                .map(|e| (r.label.as_str(), e.to_string()))
        })
        .collect();
    let closed: Vec<&Gate<'_>> = gates.iter().filter(|g| !g.is_open(ctx.now)).collect();
    let blocking_failures = !failed.is_empty() && !c.allow_on_lookup_error;
    let lookup_warnings = || {
        failed.iter().map(|(label, e)| {
            format!(
                "gate '{label}' {e}; not holding this change because onGateLookupError is allow"
            )
        })
    };
    let zones: Vec<_> = gates.iter().flat_map(Gate::zones).collect();

    let Change::Held(what) = &change else {
        // Metadata-only or suspend-only: passes; say what stays held.
        let mut verdict = Verdict::allow();
        if let Some(e) = &bound.malformed {
            verdict = verdict.warn(format!(
                "{e}; changes to the desired state of {who} are refused until it is fixed"
            ));
        }
        if closed.is_empty() {
            return Ok(verdict);
        }
        let until = match next_opening(&gates, ctx.now) {
            Opening::At(t) => format!("until {}", message::instant(t, &zones)),
            _ => "until the gates are opened".into(),
        };
        let kind = if change == Change::MetadataOnly {
            "metadata-only"
        } else {
            "spec.suspend-only"
        };
        return Ok(verdict.warn(format!(
            "this {kind} change passes although {} closed; changes to the desired state of {who} are held {until}",
            gate_list(&closed)
        )));
    };

    if closed.is_empty() && !blocking_failures {
        return Ok(Verdict::allow().with_warnings(lookup_warnings()));
    }

    // Exemptions: break-glass identities, then the emergency override, on
    // the object itself or on the Flux object that applies it.
    let mut blocked: Vec<String> = closed.iter().map(|g| format!("'{}'", g.label())).collect();
    if blocking_failures {
        blocked.extend(failed.iter().map(|(l, _)| format!("'{l}'")));
    }
    let user = &request.user_info;
    let username = identity::describe(user);
    let override_reason = meta.annotation(OVERRIDE_ANNOTATION).map(str::trim);
    let override_group = c.override_group(user);
    if c.break_glass_matches(user) {
        let note = format!(
            "break-glass: {username} passed closed gate {} ({what})",
            blocked.join(", ")
        );
        return Ok(Verdict::allow()
            .warn(format!("{note}; this use is recorded in the audit log"))
            .audit(AUDIT_KEY, note));
    }
    if let (Some(reason), Some(group)) = (override_reason.filter(|r| !r.is_empty()), override_group)
    {
        let note = format!(
            "emergency override by {username} (group {group}) passed closed gate {} ({what}): {}",
            blocked.join(", "),
            quote(reason)
        );
        return Ok(Verdict::allow()
            .warn(format!(
                "{note}; remove the override when the emergency is over: `{}`",
                remove_override(&object)
            ))
            .audit(AUDIT_KEY, note));
    }
    let mut unchecked_overrides = Vec::new();
    let mut refused_overrides = Vec::new();
    if !c.override_groups.is_empty() {
        let found = owner_override(meta, request, c, ctx);
        unchecked_overrides = found.unchecked;
        refused_overrides = found.refused;
        if let Some(OwnerOverride { owner, reason }) = found.honoured {
            let note = format!(
                "emergency override on {} passed closed gate {} for {who} ({what}, sent by {username}): {}",
                owner.describe(),
                blocked.join(", "),
                quote(&reason)
            );
            return Ok(Verdict::allow()
                .warn(format!(
                    "{note}; remove the override when the emergency is over: `{}`",
                    remove_override(&owner)
                ))
                .audit(AUDIT_KEY, note));
        }
    }

    // Refused: the RFC's words, why, when it opens, how to get through.
    let mut parts: Vec<String> = Vec::new();
    for g in &closed {
        let state = g.state_at(ctx.now);
        parts.push(format!(
            "gate '{}' is closed: {}",
            g.label(),
            message::why_closed(g, &state, ctx.now)
        ));
    }
    if blocking_failures {
        for (label, e) in &failed {
            parts.push(format!(
                "gate '{label}' {e} (a Gate object, {GATE_API_VERSION}); create it, or set onGateLookupError: allow"
            ));
        }
    }
    let mut text = format!("Reconciliation is waiting approval, {}.", parts.join("; "));
    if !closed.is_empty() {
        text.push(' ');
        text.push_str(&message::opening(
            next_opening(&gates, ctx.now),
            &zones,
            closed.len() > 1,
        ));
        for g in &closed {
            if let Gate::Object(o) = g {
                text.push_str(&format!(
                    " Open '{}' now: `{}`.",
                    o.label(),
                    message::request_now(&o.object(), OPEN_ANNOTATION)
                ));
            }
        }
    }
    // A dry run is judged like the real request: kustomize-controller's
    // server-side apply dry-run is what reports the gate in Ready.
    text.push_str(&format!(
        " Held: {}{} of {who} ({what}); suspending passes, and so do labels and annotations \
         written by anyone but the Flux controller applying it from Git.",
        if request.dry_run { "dry-run " } else { "" },
        request.operation.as_str()
    ));
    // An override found for someone else's writes says whose it is.
    for sentence in &refused_overrides {
        text.push(' ');
        text.push_str(sentence);
    }
    // A failed lookup honours no override (fail closed), and says so.
    for (owner, e) in &unchecked_overrides {
        text.push_str(&format!(
            " An emergency override on {owner} could not be checked ({}), so none is honoured \
             from it; retry.",
            quote(e)
        ));
    }
    match (override_reason, override_group) {
        (Some(""), Some(_)) => text.push_str(&format!(
            " The emergency override needs a reason: annotate {OVERRIDE_ANNOTATION}=\"<incident and why>\"."
        )),
        (Some(_), None) => text.push_str(&format!(
            " The {OVERRIDE_ANNOTATION} annotation is honoured only for members of emergencyOverride.groups ({}); {username} is not one.",
            override_groups_text(c)
        )),
        _ => {}
    }
    Ok(Verdict::deny(text))
}

/// A gate of the request, resolved, or why it could not be.
struct Resolved<'a> {
    label: String,
    gate: Result<Gate<'a>, LookupError>,
}

fn resolve<'a>(r: &GateRef, c: &'a Compiled, ctx: &Context<'_>) -> Resolved<'a> {
    match r {
        GateRef::Declared(i) => match c.gates.get(*i) {
            Some(g) => Resolved {
                label: g.name.clone(),
                gate: Ok(Gate::Declared(g)),
            },
            None => Resolved {
                label: format!("#{i}"),
                gate: Err(LookupError::Unusable("is not declared".into())),
            },
        },
        GateRef::Object { namespace, name } => Resolved {
            label: format!("{namespace}/{name}"),
            gate: gate_object::lookup(ctx.cluster, namespace, name).map(|mut g| {
                g.skew = c.clock_skew;
                Gate::Object(g)
            }),
        },
    }
}

/// What an UPDATE, CREATE or DELETE does, as gates see it.
fn classify(
    request: &AdmissionRequest,
    old_meta: Option<&Metadata>,
    new_meta: Option<&Metadata>,
    who: &str,
) -> Result<Change, String> {
    Ok(match request.operation {
        Operation::Create => Change::Held("creates it".into()),
        Operation::Delete => Change::Held("deletes it".into()),
        _ => match (&request.old_object, &request.object, old_meta, new_meta) {
            (Some(old), Some(new), Some(om), Some(nm)) => {
                match change::classify_update(old, new, om, nm)? {
                    Change::Held(field) => Change::Held(format!("changes {field}")),
                    // A resumed Flux object's next applies are writes the
                    // gates judge; anything else resumed (a Job, a CronJob)
                    // runs at once (kubernetes/kubernetes
                    // `pkg/controller/cronjob/cronjob_controllerv2.go`
                    // `syncCronJob` stops only while suspended).
                    Change::Resume if request.kind.group.ends_with(FLUX_GROUPS) => {
                        from_git(request, om, nm, Change::SuspendOnly)?
                    }
                    Change::Resume => {
                        Change::Held("resumes it: spec.suspend is no longer true".into())
                    }
                    // A suspend from Git may carry metadata from Git along.
                    Change::SuspendOnly => from_git(request, om, nm, Change::SuspendOnly)?,
                    Change::MetadataOnly => from_git(request, om, nm, Change::MetadataOnly)?,
                    other => other,
                }
            }
            _ => {
                return Err(format!(
                    "{who}: the UPDATE request lacks object or oldObject"
                ))
            }
        },
    })
}

/// Labels, annotations and finalizers written by the Flux applier come from
/// Git (an Ingress's auth annotations, a Namespace's pod-security labels):
/// desired state, also when they ride along with a suspend. Anyone else's
/// pass, so no object is locked.
fn from_git(
    request: &AdmissionRequest,
    old: &Metadata,
    new: &Metadata,
    otherwise: Change,
) -> Result<Change, String> {
    if writer::flux_field_manager(request)?.is_none() {
        return Ok(otherwise);
    }
    Ok(match change::metadata_difference(old, new) {
        Some(field) => Change::Held(format!(
            "changes {field}, applied from Git by {}",
            request.field_manager()?
        )),
        None => otherwise,
    })
}

/// The API groups of Flux's own kinds.
const FLUX_GROUPS: &str = ".toolkit.fluxcd.io";

fn gate_list(closed: &[&Gate<'_>]) -> String {
    let names: Vec<String> = closed.iter().map(|g| format!("'{}'", g.label())).collect();
    match names.as_slice() {
        [one] => format!("gate {one} is"),
        _ => format!("gates {} are", names.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{eval, freeze, request, settings, update, Broken};
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
        let v = eval(&req, &settings(json!({})), &Broken);
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
            "Kustomization flux-system/apps: the DELETE request carries no object"
        );
    }
}

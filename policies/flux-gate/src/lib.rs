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
//! ([`gate`]). Gates are declared in settings (cron schedules in IANA zones,
//! freezes) or are Gate objects read through `ctx.cluster`. Gate objects
//! themselves are validated ([`gate_object`]) and never held.

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

pub mod binding;
pub mod change;
pub mod cron;
pub mod firing;
pub mod gate;
pub mod gate_object;
pub mod message;
pub mod opening;
pub mod settings;
#[cfg(test)]
mod testrand;
mod zone_table;
pub mod zones;

use guard_core::identity;
use guard_core::names::quote;
use guard_core::{AdmissionRequest, Context, Metadata, ObjectRef, Operation, Verdict, Which};
use serde_json::Value;

use crate::binding::{FluxOwnerKind, GateRef};
use crate::change::Change;
use crate::gate::Gate;
use crate::gate_object::{GateView, LookupError};
use crate::opening::{next_opening, Opening};
pub use crate::settings::{Compiled, Settings};

pub const GATING_GROUP: &str = "gating.toolkit.fluxcd.io";
pub const GATE_KIND: &str = "Gate";
pub const GATE_API_VERSION: &str = "gating.toolkit.fluxcd.io/v1alpha1";
pub const OPEN_ANNOTATION: &str = "open.gate.fluxcd.io/requestedAt";
pub const CLOSE_ANNOTATION: &str = "close.gate.fluxcd.io/requestedAt";
/// Gates an object names itself: `name` or `namespace/name`, comma-separated.
pub const GATES_ANNOTATION: &str = "gating.toolkit.fluxcd.io/gates";
/// Emergency override; its value is the reason.
pub const OVERRIDE_ANNOTATION: &str = "gating.toolkit.fluxcd.io/emergency-override";
/// Audit annotation recording every exemption used.
pub const AUDIT_KEY: &str = "gate-exemption";

pub struct FluxGate;

impl guard_core::Policy for FluxGate {
    const NAME: &'static str = "flux-gate";
    type Settings = Compiled;

    fn evaluate(request: &AdmissionRequest, compiled: &Compiled, ctx: &Context<'_>) -> Verdict {
        // Status and other subresource writes never change the desired state.
        if !request.sub_resource.is_empty() || request.operation == Operation::Connect {
            return Verdict::allow();
        }
        if request.kind.group == GATING_GROUP && request.kind.kind == GATE_KIND {
            return admit_gate(request, compiled, ctx);
        }
        hold(request, compiled, ctx).unwrap_or_else(Verdict::deny)
    }
}

guard_core::kubewarden_policy!(FluxGate);
pub const ENTRY: guard_core::Entry = guard_core::Entry::of::<FluxGate>();

/// `Kustomization flux-system/apps`.
fn subject(request: &AdmissionRequest, meta: &Metadata) -> String {
    let name = request.display_name(Some(meta));
    match request.namespace.as_str() {
        "" => format!("{} {name}", request.kind.kind),
        ns => format!("{} {ns}/{name}", request.kind.kind),
    }
}

/// CREATE and UPDATE of Gate objects: well formed, no request from the future.
/// The warning shows the state the write leads to.
fn admit_gate(request: &AdmissionRequest, c: &Compiled, ctx: &Context<'_>) -> Verdict {
    if request.operation == Operation::Delete {
        return Verdict::allow();
    }
    let view = match request.object_as::<GateView>(Which::Object) {
        Ok(Some(v)) => v,
        Ok(None) => {
            return Verdict::deny(format!("Gate {}: the request has no object", request.name))
        }
        Err(e) => return Verdict::deny(format!("Gate {}: {e}", request.name)),
    };
    let namespace = if request.namespace.is_empty() {
        &view.metadata.namespace
    } else {
        &request.namespace
    };
    let label = format!("{namespace}/{}", request.display_name(Some(&view.metadata)));
    match gate_object::check_write(&view, namespace, ctx.now, c.clock_skew) {
        Err(e) => Verdict::deny(format!("Gate {label}: {e}")),
        Ok(g) => {
            let until = g.next_change_after(ctx.now);
            let gate = Gate::Object(g);
            let state = gate.state_at(ctx.now);
            let mut text = format!(
                "gate '{label}' is {}",
                if state.open { "open" } else { "closed" }
            );
            match (&state.why, until) {
                (gate::Why::Request { until, .. }, _) => {
                    text.push_str(&format!(" until {until}, then back to its default"))
                }
                (_, Some(t)) => text.push_str(&format!(
                    " (its default) until a request takes effect at {t}"
                )),
                (_, None) => text.push_str(" (its default)"),
            }
            Verdict::allow().warn(text)
        }
    }
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
            gate: gate_object::lookup(ctx.cluster, namespace, name).map(Gate::Object),
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

fn hold(request: &AdmissionRequest, c: &Compiled, ctx: &Context<'_>) -> Result<Verdict, String> {
    let new_meta = request.metadata(Which::Object)?;
    let old_meta = match request.operation {
        Operation::Create => None,
        _ => request.metadata(Which::OldObject)?,
    };
    let Some(meta) = new_meta.as_ref().or(old_meta.as_ref()) else {
        return Err(format!(
            "{} {}: the {} request carries no object",
            request.kind.kind,
            request.name,
            request.operation.as_str()
        ));
    };
    let who = subject(request, meta);
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
        let kind = if change == Change::SuspendOnly {
            "spec.suspend-only"
        } else {
            "metadata-only"
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
        let resource = request.kind.kind.to_ascii_lowercase();
        return Ok(Verdict::allow()
            .warn(format!(
                "{note}; remove the override when the emergency is over: {}",
                remove_override_command(
                    &request.namespace,
                    &resource,
                    &request.display_name(Some(meta))
                )
            ))
            .audit(AUDIT_KEY, note));
    }
    let mut unchecked_overrides = Vec::new();
    if !c.override_groups.is_empty() {
        let found = match owner_override(meta, ctx) {
            Ok(found) => found,
            Err(failed) => {
                unchecked_overrides = failed;
                None
            }
        };
        if let Some(OwnerOverride {
            owner,
            namespace: ns,
            name,
            reason,
        }) = found
        {
            let note = format!(
                "emergency override on {} {ns}/{name} passed closed gate {} for {who} ({what}, sent by {username}): {}",
                owner.kind(),
                blocked.join(", "),
                quote(&reason)
            );
            return Ok(Verdict::allow()
                .warn(format!(
                    "{note}; remove the override when the emergency is over: {}",
                    remove_override_command(ns, &owner.kind().to_ascii_lowercase(), name)
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
            message::why_closed(g, &state)
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
                    " Open '{}' now: {}",
                    o.label(),
                    message::open_command(&o.namespace, &o.name)
                ));
            }
        }
    }
    // A dry run is judged like the real request: kustomize-controller's
    // server-side apply dry-run is what reports the gate in Ready.
    text.push_str(&format!(
        " Held: {}{} of {who} ({what}); changes to metadata or spec.suspend alone pass.",
        if request.dry_run { "dry-run " } else { "" },
        request.operation.as_str()
    ));
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

fn override_groups_text(c: &Compiled) -> String {
    if c.override_groups.is_empty() {
        "none configured".to_string()
    } else {
        c.override_groups.join(", ")
    }
}

fn remove_override_command(namespace: &str, resource: &str, name: &str) -> String {
    let ns = if namespace.is_empty() {
        String::new()
    } else {
        format!("-n {namespace} ")
    };
    format!("kubectl {ns}annotate {resource}/{name} {OVERRIDE_ANNOTATION}-")
}

/// An emergency override found on the Flux object that applies a change.
struct OwnerOverride<'m> {
    owner: FluxOwnerKind,
    namespace: &'m str,
    name: &'m str,
    reason: String,
}

/// An emergency override on the Kustomization or HelmRelease that applies
/// this object, with its reason. The annotation there is trusted because
/// this policy lets only members of emergencyOverride.groups set it. `Err`
/// names the owners that could not be read (`Kind namespace/name`, error)
/// when none of those read carries an override: a failed lookup is not "no
/// override", and the refusal says so.
fn owner_override<'m>(
    meta: &'m Metadata,
    ctx: &Context<'_>,
) -> Result<Option<OwnerOverride<'m>>, Vec<(String, String)>> {
    let mut failed = Vec::new();
    for kind in [FluxOwnerKind::Kustomization, FluxOwnerKind::HelmRelease] {
        let Some((namespace, name)) = kind.owner_of(&meta.labels) else {
            continue;
        };
        let object = ObjectRef {
            api_version: kind.api_version(),
            kind: kind.kind(),
            namespace,
            name,
        };
        let owner = match ctx.cluster.get(&object) {
            Ok(Some(owner)) => owner,
            // Gone: nothing there overrides anything.
            Ok(None) => continue,
            Err(e) => {
                failed.push((format!("{} {namespace}/{name}", kind.kind()), e.to_string()));
                continue;
            }
        };
        // Read from the cluster, so metadata.annotations is a map of strings.
        let reason = owner
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(OVERRIDE_ANNOTATION))
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or_default();
        if !reason.is_empty() {
            return Ok(Some(OwnerOverride {
                owner: kind,
                namespace,
                name,
                reason: reason.to_string(),
            }));
        }
    }
    if failed.is_empty() {
        Ok(None)
    } else {
        Err(failed)
    }
}

/// Adding or changing the emergency-override annotation on a Kustomization
/// or HelmRelease is for members of emergencyOverride.groups only: there it
/// lets every change applied from that object pass closed gates, so a change
/// from Git must not be able to set it on itself.
fn guard_override_annotation(
    request: &AdmissionRequest,
    c: &Compiled,
    old: Option<&Metadata>,
    new: Option<&Metadata>,
) -> Option<Verdict> {
    if c.override_groups.is_empty()
        || FluxOwnerKind::parse(&request.kind.kind).is_none()
        || !matches!(
            request.kind.group.as_str(),
            "kustomize.toolkit.fluxcd.io" | "helm.toolkit.fluxcd.io"
        )
    {
        return None;
    }
    let value = new?.annotation(OVERRIDE_ANNOTATION)?;
    if old.and_then(|m| m.annotation(OVERRIDE_ANNOTATION)) == Some(value)
        || c.override_group(&request.user_info).is_some()
    {
        return None;
    }
    let name = request.display_name(new);
    Some(Verdict::deny(format!(
        "The {OVERRIDE_ANNOTATION} annotation is honoured only for members of emergencyOverride.groups ({}); {} is not one. On {} {}/{name} it would let every change applied from it pass closed gates, so only those members may set it.",
        override_groups_text(c),
        identity::describe(&request.user_info),
        request.kind.kind,
        request.namespace,
    )))
}

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
    use guard_core::{Cluster, ClusterError, NoCluster, ObjectRef, Policy};
    use serde_json::{json, Value};

    const NOW: &str = "2026-12-21T10:00:00Z";

    fn settings(v: Value) -> Compiled {
        guard_core::settings::parse(v.to_string().as_bytes()).unwrap()
    }

    fn freeze() -> Compiled {
        settings(json!({
            "gates": [{"name": "freeze", "freezes": [{"start": "2026-12-18T00:00:00Z", "end": "2027-01-04T00:00:00Z"}]}],
            "bindings": [{"gates": ["freeze"]}],
            "breakGlass": {"users": ["alice"]},
            "emergencyOverride": {"groups": ["oncall"]}
        }))
    }

    fn object(spec: Value, annotations: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "apps", "namespace": "flux-system", "annotations": annotations}, "spec": spec})
    }

    fn request(op: &str, old: Value, new: Value, user: &str, groups: &[&str]) -> AdmissionRequest {
        serde_json::from_value(json!({
            "uid": "1", "operation": op, "name": "apps", "namespace": "flux-system",
            "kind": {"group": "kustomize.toolkit.fluxcd.io", "version": "v1", "kind": "Kustomization"},
            "userInfo": {"username": user, "groups": groups},
            "object": new, "oldObject": old
        }))
        .unwrap()
    }

    fn eval(req: &AdmissionRequest, s: &Compiled, cluster: &dyn Cluster) -> Verdict {
        FluxGate::evaluate(req, s, &Context::new(NOW.parse().unwrap(), cluster))
    }

    fn update(
        path: &str,
        suspend: bool,
        annotations: Value,
        user: &str,
        groups: &[&str],
    ) -> AdmissionRequest {
        let old = object(json!({"path": "./a"}), json!({}));
        let mut spec = json!({"path": path});
        if suspend {
            spec["suspend"] = json!(true);
        }
        request("UPDATE", old, object(spec, annotations), user, groups)
    }

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

    struct Broken;
    impl Cluster for Broken {
        fn get(&self, _: &ObjectRef<'_>) -> Result<Option<Value>, ClusterError> {
            Err(ClusterError("timeout".into()))
        }
        fn list_all(&self, _: &str, _: &str) -> Result<Vec<Value>, ClusterError> {
            Ok(vec![])
        }
    }

    /// The owner's override is read through a lookup; when that fails the
    /// change is held (no override honoured) and the refusal says why,
    /// instead of reading as "no override" without a word.
    #[test]
    fn an_owner_override_that_cannot_be_read_is_named() {
        let labels = json!({"kustomize.toolkit.fluxcd.io/name": "apps",
                            "kustomize.toolkit.fluxcd.io/namespace": "flux-system"});
        let mut req = update("./b", false, json!({}), "bob", &[]);
        let mut new = object(json!({"path": "./b"}), json!({}));
        new["metadata"]["labels"] = labels.clone();
        let mut old = object(json!({"path": "./a"}), json!({}));
        old["metadata"]["labels"] = labels;
        req.object = Some(serde_json::value::to_raw_value(&new).unwrap());
        req.old_object = Some(serde_json::value::to_raw_value(&old).unwrap());
        let v = eval(&req, &freeze(), &Broken);
        assert!(!v.allowed);
        let m = v.message.unwrap();
        assert!(
            m.contains(
                "An emergency override on Kustomization flux-system/apps could not be checked \
                 (\"timeout\"), so none is honoured from it; retry."
            ),
            "{m}"
        );
        // The owner found, with an override: it passes.
        struct Owner;
        impl Cluster for Owner {
            fn get(&self, o: &ObjectRef<'_>) -> Result<Option<Value>, ClusterError> {
                assert_eq!(
                    (o.kind, o.namespace, o.name),
                    ("Kustomization", "flux-system", "apps")
                );
                Ok(Some(
                    json!({"metadata": {"annotations": {OVERRIDE_ANNOTATION: " INC-7 "}}}),
                ))
            }
            fn list_all(&self, _: &str, _: &str) -> Result<Vec<Value>, ClusterError> {
                Ok(vec![])
            }
        }
        let v = eval(&req, &freeze(), &Owner);
        assert!(v.allowed, "{v:?}");
        assert!(
            v.audit_annotations[AUDIT_KEY].ends_with(": \"INC-7\""),
            "{v:?}"
        );
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
    fn unbound_subresource_and_malformed_requests() {
        let v = eval(
            &update("./b", false, json!({}), "bob", &[]),
            &settings(json!({})),
            &NoCluster,
        );
        assert_eq!(v, Verdict::allow());
        let mut status = update("./b", false, json!({}), "bob", &[]);
        status.sub_resource = "status".into();
        assert_eq!(eval(&status, &freeze(), &NoCluster), Verdict::allow());
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
            "Kustomization apps: the DELETE request carries no object"
        );
    }

    #[test]
    fn gate_objects_are_validated_not_held() {
        let req: AdmissionRequest = serde_json::from_value(json!({
            "operation": "CREATE", "name": "g", "namespace": "flux-system",
            "kind": {"group": GATING_GROUP, "version": "v1alpha1", "kind": GATE_KIND},
            "object": {"metadata": {"name": "g", "namespace": "flux-system"}, "spec": {"default": "shut", "window": "1h"}}
        }))
        .unwrap();
        let v = eval(&req, &freeze(), &NoCluster);
        assert_eq!(
            v.message.unwrap(),
            "Gate flux-system/g: spec.default: \"shut\" is not accepted; use opened or closed"
        );
    }
}

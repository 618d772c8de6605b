//! The flow: a write to a Gate object is checked ([`crate::gate_object`]);
//! a write to anything else is held when it changes the desired state
//! ([`crate::change`]) and a gate bound to it ([`crate::binding`]) is
//! closed, unless a break-glass identity sends it or an emergency override
//! ([`crate::emergency_override`]) lets it pass. Who wrote it
//! ([`crate::writer`]) decides what counts as a change: the cluster's own
//! controllers pass, metadata is held when Flux applies it from Git.

use guard_core::identity;
use guard_core::model::controllers;
use guard_core::model::kinds::{self, Honours};
use guard_core::model::stops;
use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Context, Metadata, Operation, Which};

use crate::binding::{self, Bound};
use crate::change::{self, Change as Update};
use crate::decision::{
    Change, ClosedGates, Decision, Exempted, Exemption, Failed, ForeignOverride, GateWrite, Held,
    Named, OverrideProblem, Passing,
};
use crate::emergency_override::{owner_override, sets_override_without_membership};
use crate::gate::{Gate, Zone};
use crate::gate_object::{self, GateView, LookupError};
use crate::gate_openers;
use crate::gating::{GATES_ANNOTATION, GATE_KIND, GATING_GROUP, OVERRIDE_ANNOTATION};
use crate::opening::next_opening;
use crate::settings::{Compiled, GateRef};
use crate::split_object::Top;
use crate::writer::{self, Sender};

/// What the policy decides about `request`.
pub(crate) fn decide<'a>(
    request: &AdmissionRequest,
    c: &'a Compiled,
    ctx: &Context<'_>,
) -> Decision<'a> {
    // Status and other subresource writes never change the desired state.
    if !request.sub_resource.is_empty() || request.operation == Operation::Connect {
        return Decision::Allow;
    }
    if request.kind.group == GATING_GROUP && request.kind.kind == GATE_KIND {
        return gate_write(request, c, ctx);
    }
    // A freeze holds changes from Git and from people. Kubernetes' own
    // controllers completing or maintaining an object (binding a claim,
    // rolling out a ReplicaSet, the namespace controller emptying a
    // Namespace whose deletion was judged at the Namespace) pass.
    if controllers::kube_controller(&request.user_info).is_some() {
        return Decision::Allow;
    }
    held_write(request, c, ctx).unwrap_or_else(Decision::Unreadable)
}

/// CREATE and UPDATE of Gate objects: well formed, no request from the
/// future, not opened from Git; accepted, the state the write leads to.
/// DELETE: only of a Gate open by default ([`gate_openers`]).
fn gate_write<'a>(request: &AdmissionRequest, c: &Compiled, ctx: &Context<'_>) -> Decision<'a> {
    if request.operation == Operation::Delete {
        return match gate_openers::check_delete(request, c, ctx.now) {
            Ok(()) => Decision::Allow,
            Err(error) => Decision::GateWrite(GateWrite::Refused {
                object: Named::of(&ObjectName::of(request, None)),
                error,
                now: ctx.now,
            }),
        };
    }
    let unnamed = || Named::of(&ObjectName::of(request, None));
    let view = match request.object_as::<GateView>(Which::Object) {
        Ok(Some(v)) => v,
        Ok(None) => {
            return Decision::MissingObject {
                which: Which::Object,
                object: unnamed(),
            }
        }
        Err(e) => {
            return Decision::GateWrite(GateWrite::Refused {
                object: unnamed(),
                error: gate_object::WriteError::Invalid(e.to_string()),
                now: ctx.now,
            })
        }
    };
    let namespace = if request.namespace.is_empty() {
        &view.metadata.namespace
    } else {
        &request.namespace
    };
    let label = format!("{namespace}/{}", request.display_name(Some(&view.metadata)));
    Decision::GateWrite(
        match gate_object::check_write(&view, namespace, ctx.now, c.clock_skew).and_then(|g| {
            gate_openers::check_from_git(request, c, &g, ctx.now)?;
            Ok(g)
        }) {
            Err(error) => GateWrite::Refused {
                object: Named::of(&ObjectName::of(request, Some(&view.metadata))),
                error,
                now: ctx.now,
            },
            Ok(g) => {
                let next_change = g.next_change_after(ctx.now);
                let state = g.state_at(ctx.now);
                let request_until = match state.why {
                    crate::gate::Why::Request { until, .. } => Some(until),
                    _ => None,
                };
                GateWrite::Accepted {
                    label,
                    open: state.open,
                    request_until,
                    next_change,
                }
            }
        },
    )
}

/// The request's two metadata, as the operation carries them; for an
/// UPDATE, its two objects read once ([`Top`]), for both their metadata and
/// what the update changes.
struct Metas<'r> {
    old: Option<Metadata>,
    new: Option<Metadata>,
    tops: Option<Tops<'r>>,
}

/// An UPDATE's two objects (`None`: absent), or why one could not be read.
struct Tops<'r> {
    old: Option<Result<Top<'r>, String>>,
    new: Option<Result<Top<'r>, String>>,
}

impl<'r> Metas<'r> {
    fn of(request: &'r AdmissionRequest) -> Result<Self, String> {
        if request.operation != Operation::Update {
            return Ok(Metas {
                new: request.metadata(Which::Object).map_err(|e| e.to_string())?,
                old: match request.operation {
                    Operation::Create => None,
                    _ => request
                        .metadata(Which::OldObject)
                        .map_err(|e| e.to_string())?,
                },
                tops: None,
            });
        }
        let new = request
            .raw(Which::Object)
            .map(|r| Top::read(r, "object", None));
        let like = new.as_ref().and_then(|n| n.as_ref().ok());
        let old = request
            .raw(Which::OldObject)
            .map(|r| Top::read(r, "oldObject", like));
        let mut tops = Tops { new, old };
        // The metadata read with the object, or read from the whole object
        // when only that reading says what is wrong.
        let metadata = |which: Which, top: &mut Option<Result<Top<'_>, String>>| match top
            .as_mut()
            .and_then(|t| t.as_mut().ok()?.take_metadata())
        {
            Some(m) => Ok(Some(m)),
            None => request.metadata(which),
        };
        Ok(Metas {
            new: metadata(Which::Object, &mut tops.new).map_err(|e| e.to_string())?,
            old: metadata(Which::OldObject, &mut tops.old).map_err(|e| e.to_string())?,
            tops: Some(tops),
        })
    }
}

/// A write to any object but a Gate. `Err`: the request cannot be read.
fn held_write<'a>(
    request: &AdmissionRequest,
    c: &'a Compiled,
    ctx: &Context<'_>,
) -> Result<Decision<'a>, String> {
    let metas = Metas::of(request)?;
    let Some(meta) = metas.new.as_ref().or(metas.old.as_ref()) else {
        let which = match request.operation {
            Operation::Delete => Which::OldObject,
            _ => Which::Object,
        };
        let object = Named::of(&ObjectName::of(request, None));
        return Ok(Decision::MissingObject { which, object });
    };
    let object = Named::of(&ObjectName::of(request, Some(meta)));
    if sets_override_without_membership(request, c, metas.old.as_ref(), metas.new.as_ref()) {
        return Ok(Decision::OverrideAnnotationRefused {
            object,
            user: identity::describe(&request.user_info),
            groups: c.override_groups.clone(),
        });
    }
    // What the write changes comes first: no-op, metadata-only and
    // suspend-only writes are never held, whatever the annotations say, so
    // that no stored object is ever locked.
    let effect = match classify(request, &metas, c)? {
        Classified::NoOp => return Ok(Decision::Allow),
        Classified::Missing(which) => return Ok(Decision::MissingObject { which, object }),
        Classified::Effect(effect) => effect,
    };
    let bound = binding::gates_for(c, request, meta);
    if let Some(error) = &bound.malformed {
        let written = |m: &Option<Metadata>| {
            m.as_ref()
                .and_then(|m| m.annotation(GATES_ANNOTATION))
                .map(str::to_string)
        };
        let rewritten = written(&metas.old) != written(&metas.new);
        if matches!(effect, Effect::Held(_)) || rewritten {
            let error = error.clone();
            return Ok(Decision::GatesAnnotationMalformed { object, error });
        }
    }
    let Some((effect, resolved)) = gates_of(request, c, ctx, &metas, effect, &bound) else {
        return Ok(Decision::Allow);
    };
    let (gates, failed): (Vec<_>, Vec<_>) = resolved.into_iter().partition(|r| r.gate.is_ok());
    let gates: Vec<Gate<'a>> = gates.into_iter().filter_map(|r| r.gate.ok()).collect();
    let failed: Vec<Failed> = failed
        .into_iter()
        .filter_map(|r| {
            r.gate.err().map(|error| Failed {
                label: r.label,
                error,
            })
        })
        .collect();
    let found = Found {
        object,
        gates,
        failed,
        bound,
    };
    Ok(judge_gates(request, c, ctx, meta, effect, found))
}

/// What a write does, as gates see it.
enum Effect {
    Held(Change),
    Passing(Passing),
}

/// A gate of the request, resolved, or why it could not be.
struct Resolved<'a> {
    label: String,
    gate: Result<Gate<'a>, LookupError>,
}

/// The gates a write answers to, and what it does. Gates the old object was
/// bound to still count, so that dropping a label or an annotation cannot
/// slip a change past them; dropping them is itself held, unless the Gate
/// object does not exist. `None`: no gate holds it.
fn gates_of<'a>(
    request: &AdmissionRequest,
    c: &'a Compiled,
    ctx: &Context<'_>,
    metas: &Metas<'_>,
    effect: Effect,
    bound: &Bound,
) -> Option<(Effect, Vec<Resolved<'a>>)> {
    let before = match (&metas.old, &metas.new) {
        (Some(old), Some(_)) => Some(binding::gates_for(c, request, old)),
        _ => None,
    };
    let dropped: Vec<GateRef> = before
        .iter()
        .flat_map(|b| b.gates.iter())
        .filter(|r| !bound.gates.contains(r))
        .cloned()
        .collect();
    let resolve_all = |refs: &[GateRef]| -> Vec<Resolved<'a>> {
        refs.iter().map(|r| resolve(r, c, ctx)).collect()
    };
    match effect {
        Effect::Held(change) => {
            let mut refs = bound.gates.clone();
            refs.extend(dropped);
            let resolved = resolve_all(&refs);
            (!resolved.is_empty()).then_some((Effect::Held(change), resolved))
        }
        passing if dropped.is_empty() => Some((passing, resolve_all(&bound.gates))),
        Effect::Passing(_) => {
            let mut resolved = resolve_all(&dropped);
            resolved.retain(|r| !matches!(r.gate, Err(LookupError::NotFound)));
            let labels: Vec<String> = resolved.iter().map(|r| r.label.clone()).collect();
            (!labels.is_empty()).then_some((Effect::Held(Change::RemovesGates(labels)), resolved))
        }
    }
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
                gate: Err(LookupError::NotDeclared),
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

/// The gates a write answers to, resolved.
struct Found<'a> {
    object: Named,
    gates: Vec<Gate<'a>>,
    failed: Vec<Failed>,
    bound: Bound,
}

/// A write bound to gates: passes when they are open, or when it is not a
/// change they hold; else an exemption lets it pass, or it is held.
fn judge_gates<'a>(
    request: &AdmissionRequest,
    c: &'a Compiled,
    ctx: &Context<'_>,
    meta: &Metadata,
    effect: Effect,
    found: Found<'a>,
) -> Decision<'a> {
    let Found {
        object,
        gates,
        failed,
        bound,
    } = found;
    let zones: Vec<&'a Zone> = gates.iter().flat_map(Gate::zones).collect();
    let closed: Vec<Gate<'a>> = gates
        .iter()
        .filter(|g| !g.is_open(ctx.now))
        .cloned()
        .collect();
    let change = match effect {
        // Metadata-only or suspend-only: passes; say what stays held.
        Effect::Passing(kind) => {
            let closed = (!closed.is_empty()).then(|| ClosedGates {
                labels: closed.iter().map(Gate::label).collect(),
                opening: next_opening(&gates, ctx.now),
                zones,
            });
            return Decision::Passes {
                object,
                kind,
                malformed: bound.malformed,
                closed,
            };
        }
        Effect::Held(change) => change,
    };
    let blocking = !failed.is_empty() && !c.allow_on_lookup_error;
    if closed.is_empty() && !blocking {
        return if failed.is_empty() {
            Decision::Allow
        } else {
            Decision::Unchecked(failed)
        };
    }
    let mut blocked: Vec<String> = closed.iter().map(Gate::label).collect();
    if blocking {
        blocked.extend(failed.iter().map(|f| f.label.clone()));
    }
    let held = Held {
        object,
        change,
        opening: (!closed.is_empty()).then(|| next_opening(&gates, ctx.now)),
        closed,
        now: ctx.now,
        zones,
        failed: if blocking { failed } else { Vec::new() },
        foreign_overrides: Vec::new(),
        unchecked_overrides: Vec::new(),
        override_problem: None,
    };
    // A preview changes nothing: it passes, told what the apply would meet.
    if !closed_only_by_failures(&held) && crate::preview::is_preview(request, meta, c, ctx) {
        return Decision::Preview(Box::new(held));
    }
    exempt_or_hold(request, c, ctx, meta, held, blocked)
}

/// Held only because a Gate object could not be read: not a preview's to
/// pass either way.
fn closed_only_by_failures(held: &Held<'_>) -> bool {
    held.closed.is_empty()
}

/// Exemptions: break-glass identities, then the emergency override, on the
/// object itself or on the Flux object that applies it; else held.
fn exempt_or_hold<'a>(
    request: &AdmissionRequest,
    c: &'a Compiled,
    ctx: &Context<'_>,
    meta: &Metadata,
    mut held: Held<'a>,
    blocked: Vec<String>,
) -> Decision<'a> {
    let user = &request.user_info;
    let exempt = |by: Exempted, held: Held<'a>| {
        Decision::Exempt(Exemption {
            by,
            user: identity::describe(user),
            blocked: blocked.clone(),
            change: held.change,
        })
    };
    if c.break_glass_matches(user) {
        return exempt(Exempted::BreakGlass, held);
    }
    let reason = meta.annotation(OVERRIDE_ANNOTATION).map(str::trim);
    let group = c.override_group(user);
    if let (Some(reason), Some(group)) = (reason.filter(|r| !r.is_empty()), group) {
        let by = Exempted::Override {
            group: group.to_string(),
            reason: reason.to_string(),
            object: held.object.clone(),
        };
        return exempt(by, held);
    }
    if !c.override_groups.is_empty() {
        let found = owner_override(meta, request, c, ctx);
        if let Some(honoured) = found.honoured {
            let by = Exempted::OwnerOverride {
                owner: Named::of(&honoured.owner),
                reason: honoured.reason,
                object: held.object.clone(),
            };
            return exempt(by, held);
        }
        held.unchecked_overrides = found.unchecked;
        held.foreign_overrides = found
            .refused
            .into_iter()
            .map(|f| ForeignOverride {
                owner: Named::of(&f.owner),
                applier: f.applier,
                field_manager: f.field_manager,
                sender: f.sender,
                manager: f.manager,
            })
            .collect();
    }
    held.override_problem = match (reason, group) {
        (Some(""), Some(_)) => Some(OverrideProblem::NoReason),
        (Some(_), None) => Some(OverrideProblem::NotMember {
            user: identity::describe(user),
            groups: c.override_groups.clone(),
        }),
        _ => None,
    };
    Decision::Held(Box::new(held))
}

/// What an UPDATE, CREATE or DELETE does, as gates see it.
enum Classified {
    NoOp,
    /// An UPDATE without one of its objects.
    Missing(Which),
    Effect(Effect),
}

fn classify(
    request: &AdmissionRequest,
    metas: &Metas<'_>,
    c: &Compiled,
) -> Result<Classified, String> {
    let update = match request.operation {
        Operation::Create => return Ok(Classified::Effect(Effect::Held(Change::Creates))),
        Operation::Delete => return Ok(Classified::Effect(Effect::Held(Change::Deletes))),
        _ => (
            metas.tops.as_ref().and_then(|t| t.old.as_ref()),
            metas.tops.as_ref().and_then(|t| t.new.as_ref()),
            metas.old.as_ref(),
            metas.new.as_ref(),
        ),
    };
    let (Some(old), Some(new), Some(om), Some(nm)) = update else {
        return Ok(Classified::Missing(match metas.new {
            None => Which::Object,
            Some(_) => Which::OldObject,
        }));
    };
    let (old, new) = (
        old.as_ref().map_err(String::clone)?,
        new.as_ref().map_err(String::clone)?,
    );
    let stops = stops::stop_fields(&request.kind.group, &request.kind.kind);
    let effect = match change::classify_update(old, new, om, nm, stops)? {
        Update::Held(field) => Effect::Held(Change::Field(field)),
        // A resumed Flux object's next applies are writes the gates judge;
        // anything else resumed (a Job, a CronJob) runs at once
        // (kubernetes/kubernetes `pkg/controller/cronjob/cronjob_controllerv2.go`
        // `syncCronJob` stops only while suspended).
        Update::Resume(_)
            if kinds::find(&request.kind.group, &request.kind.kind)
                .is_some_and(|k| k.honours == Some(Honours::SpecSuspend)) =>
        {
            from_git(request, c, om, nm, Passing::SuspendOnly(stops::SUSPEND))?
        }
        Update::Resume(field) => Effect::Held(Change::Resumes(field)),
        // A suspend from Git may carry metadata from Git along.
        // Stopping (suspend, a Deployment's pause) passes: incident response.
        Update::SuspendOnly(field) => from_git(request, c, om, nm, Passing::SuspendOnly(field))?,
        Update::MetadataOnly => from_git(request, c, om, nm, Passing::MetadataOnly)?,
        Update::NoOp => return Ok(Classified::NoOp),
    };
    Ok(Classified::Effect(effect))
}

/// Labels, annotations and finalizers written by a Flux applier come from
/// Git (an Ingress's auth annotations, a Namespace's pod-security labels):
/// desired state, also when they ride along with a suspend. Anyone else's
/// pass, so no object is locked, and so do a Flux controller's own
/// finalizer patches on the objects it reconciles.
fn from_git(
    request: &AdmissionRequest,
    c: &Compiled,
    old: &Metadata,
    new: &Metadata,
    otherwise: Passing,
) -> Result<Effect, String> {
    let sender = writer::sender(request, c)?;
    if sender == Sender::Other {
        return Ok(Effect::Passing(otherwise));
    }
    Ok(match change::metadata_difference(old, new) {
        // The first difference is the finalizers: labels and annotations
        // are the same, and the controller keeps its own finalizer.
        Some(field) if sender == Sender::Upkeep && field == change::FINALIZERS => {
            Effect::Passing(otherwise)
        }
        Some(field) => Effect::Held(Change::FromGit {
            field,
            manager: request.field_manager().map_err(|e| e.to_string())?,
        }),
        None => Effect::Passing(otherwise),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate_object::WriteError;
    use crate::opening::Opening;
    use crate::test_support::{decision, freeze, now, request, settings, update};
    use guard_core::NoCluster;
    use serde_json::{json, Value};

    fn named(kind: &str, resource: &str, namespace: &str, name: &str) -> Named {
        Named::of(&ObjectName::new(kind, resource, namespace, name))
    }

    /// The Kustomization the test requests write (they carry no resource,
    /// so it is named from the kind).
    fn apps() -> Named {
        named(
            "Kustomization",
            "kustomization.kustomize.toolkit.fluxcd.io",
            "flux-system",
            "apps",
        )
    }

    #[test]
    fn a_closed_gate_holds_a_spec_change_until_it_opens() {
        let c = freeze();
        let req = update("./b", false, json!({}), "bob", &[]);
        let Decision::Held(held) = decision(&req, &c, &NoCluster) else {
            panic!("not held");
        };
        assert_eq!(held.object, apps());
        assert_eq!(held.change, Change::Field("spec.path".into()));
        assert_eq!(held.closed, vec![Gate::Declared(&c.gates[0])]);
        assert_eq!(
            held.opening,
            Some(Opening::At("2027-01-04T00:00:00Z".parse().unwrap()))
        );
        assert_eq!(held.now, now());
        assert!(held.failed.is_empty() && held.override_problem.is_none());
    }

    #[test]
    fn suspend_metadata_and_no_op_changes_pass() {
        let c = freeze();
        let closed = || {
            Some(ClosedGates {
                labels: vec!["freeze".into()],
                opening: Opening::At("2027-01-04T00:00:00Z".parse().unwrap()),
                zones: vec![],
            })
        };
        let passes = |kind| Decision::Passes {
            object: apps(),
            kind,
            malformed: None,
            closed: closed(),
        };
        let suspend = update("./a", true, json!({}), "bob", &[]);
        assert_eq!(
            decision(&suspend, &c, &NoCluster),
            passes(Passing::SuspendOnly("suspend"))
        );
        let labelled = update("./a", false, json!({"x": "y"}), "bob", &[]);
        assert_eq!(
            decision(&labelled, &c, &NoCluster),
            passes(Passing::MetadataOnly)
        );
        let same = update("./a", false, json!({}), "bob", &[]);
        assert_eq!(decision(&same, &c, &NoCluster), Decision::Allow);
    }

    #[test]
    fn exemptions_name_who_passed_which_gate() {
        let c = freeze();
        let req = update("./b", false, json!({}), "alice", &[]);
        assert_eq!(
            decision(&req, &c, &NoCluster),
            Decision::Exempt(Exemption {
                by: Exempted::BreakGlass,
                user: "alice".into(),
                blocked: vec!["freeze".into()],
                change: Change::Field("spec.path".into()),
            })
        );
        let reason = json!({OVERRIDE_ANNOTATION: " INC-1 "});
        let req = update("./b", false, reason.clone(), "carol", &["oncall"]);
        let Decision::Exempt(e) = decision(&req, &c, &NoCluster) else {
            panic!("not exempt");
        };
        assert_eq!(
            e.by,
            Exempted::Override {
                group: "oncall".into(),
                reason: "INC-1".into(),
                object: apps()
            }
        );
        // On a Kustomization, a non-member may not set the override at all.
        let req = update("./b", false, reason, "bob", &["dev"]);
        assert_eq!(
            decision(&req, &c, &NoCluster),
            Decision::OverrideAnnotationRefused {
                object: apps(),
                user: "bob".into(),
                groups: vec!["oncall".into()]
            }
        );
    }

    #[test]
    fn gate_objects_that_cannot_be_read() {
        let named_gate = json!({GATES_ANNOTATION: "sre-approval"});
        let req = update("./b", false, named_gate, "bob", &[]);
        let c = settings(json!({"onGateLookupError": "allow"}));
        assert_eq!(
            decision(&req, &c, &NoCluster),
            Decision::Unchecked(vec![Failed {
                label: "flux-system/sre-approval".into(),
                error: LookupError::NotFound
            }])
        );
    }

    #[test]
    fn requests_without_their_object() {
        let c = freeze();
        let none = request("DELETE", Value::Null, Value::Null, "bob", &[]);
        assert_eq!(
            decision(&none, &c, &NoCluster),
            Decision::MissingObject {
                which: Which::OldObject,
                object: apps()
            }
        );
        let old_only = request("UPDATE", json!({"metadata": {}}), Value::Null, "bob", &[]);
        assert_eq!(
            decision(&old_only, &c, &NoCluster),
            Decision::MissingObject {
                which: Which::Object,
                object: apps()
            }
        );
    }

    #[test]
    fn a_gate_opened_from_the_future_is_refused() {
        let req: AdmissionRequest = serde_json::from_value(json!({
            "operation": "UPDATE", "name": "g", "namespace": "flux-system",
            "kind": {"group": GATING_GROUP, "version": "v1alpha1", "kind": GATE_KIND},
            "object": {"metadata": {"name": "g", "namespace": "flux-system",
                "annotations": {"open.gate.fluxcd.io/requestedAt": "2026-12-21T12:00:00Z"}},
                "spec": {"default": "closed", "window": "1h"}}
        }))
        .unwrap();
        let c = freeze();
        let Decision::GateWrite(GateWrite::Refused {
            object,
            error,
            now: at,
        }) = decision(&req, &c, &NoCluster)
        else {
            panic!("not refused");
        };
        assert_eq!(
            object,
            named("Gate", "gate.gating.toolkit.fluxcd.io", "flux-system", "g")
        );
        assert_eq!(at, now());
        assert!(matches!(
            error,
            WriteError::Ahead {
                key: crate::gating::OPEN_ANNOTATION,
                ..
            }
        ));
    }
}

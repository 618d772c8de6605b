//! One request judged: mirror first, then the rules on the state the request
//! would store, then what the person should know.

use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Context, Operation, UserInfo, Verdict, Which};

use crate::audit::{audit, record};
use crate::commands;
use crate::deletion;
use crate::identity_rules::{audit_replay, check_identity};
use crate::kinds::{self, Honours, Kind, SUSPEND_ANNOTATION};
use crate::mirror;
use crate::mirror::Mirrored;
use crate::namespace;
use crate::noop;
use crate::prune;
use crate::reason;
use crate::reconciler;
use crate::refusals::{annotation_only_refused, missing_reason, refused_reason, Write};
use crate::settings::{Mode, Settings};
use crate::view::{self, State};
use crate::warnings::{mirror_note, resume_hint, state_warnings, KeptBy};
use guard_core::edit::RawObject;

/// How the request moves the object's effective suspend state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Not suspended before or after.
    Unsuspended,
    Enter,
    Leave,
    /// Suspended before and after; `reason_changed` when the annotation differs.
    Stay {
        reason_changed: bool,
    },
}

impl Change {
    fn of(old: Option<&State<'_>>, new: &State<'_>) -> Self {
        match (old.is_some_and(State::suspended), new.suspended()) {
            (false, false) => Change::Unsuspended,
            (false, true) => Change::Enter,
            (true, false) => Change::Leave,
            (true, true) => Change::Stay {
                reason_changed: old.map(|o| o.reason) != Some(new.reason),
            },
        }
    }

    /// Entering suspension or giving a new reason: the reason is judged as new.
    fn gives_reason(self) -> bool {
        matches!(
            self,
            Change::Enter
                | Change::Stay {
                    reason_changed: true
                }
        )
    }
}

pub fn judge(request: &AdmissionRequest, settings: &Settings, ctx: &Context<'_>) -> Verdict {
    // Status and other subresources never carry suspension.
    if !request.sub_resource.is_empty() {
        return Verdict::allow();
    }
    if namespace::is_namespace(request) {
        return match request.operation {
            Operation::Delete => namespace::delete(request, settings, ctx),
            _ => Verdict::allow(),
        };
    }
    let Some(kind) = kinds::find(&request.kind.group, &request.kind.kind) else {
        return Verdict::allow();
    };
    match request.operation {
        Operation::Create | Operation::Update => change(request, &kind, settings, ctx),
        Operation::Delete => deletion::delete(request, &kind, settings),
        Operation::Connect => Verdict::allow(),
    }
}

fn change(
    request: &AdmissionRequest,
    kind: &Kind,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Verdict {
    let new_object = match view::load(request, Which::Object) {
        Ok(Some(o)) => o,
        Ok(None) => {
            return Verdict::deny(format!(
                "malformed request: a {} of {} has no object",
                request.operation.as_str(),
                kind.kind
            ))
        }
        Err(e) => return Verdict::deny(e),
    };
    let old_object = match request.operation {
        Operation::Update => match view::load(request, Which::OldObject) {
            Ok(o) => o,
            Err(e) => return Verdict::deny(e),
        },
        _ => None,
    };
    let target = ObjectName::of(request, Some(&new_object.metadata));
    let new = match State::of(&new_object, kind, true) {
        Ok(s) => s,
        Err(e) => return Verdict::deny(format!("{}: {e}", target.describe())),
    };
    let old = old_object
        .as_ref()
        .and_then(|o| State::of(o, kind, false).ok());
    let user = &request.user_info;
    let field_manager = match request.field_manager() {
        Ok(m) => m,
        Err(e) => return Verdict::deny(format!("{}: {e}", target.describe())),
    };
    if noop::is_noop(request, &field_manager) {
        return noop_verdict(old.as_ref(), kind, &target, settings, user);
    }
    let reconciler = reconciler::applies(&field_manager) || settings.reconcilers.matches(user);

    let mut state = new;
    let mirrored = match settings.mode {
        Mode::Mirror => mirror::mirror(kind, old.as_ref(), &mut state, reconciler),
        Mode::AnnotationOnly | Mode::DenyAnnotationOnly => None,
    };
    let change = Change::of(old.as_ref(), &state);
    let create = request.operation == Operation::Create;
    let write = match (create, audit_replay(create, user)) {
        (true, true) => Write::Replay,
        (true, false) => Write::Create,
        (false, _) => Write::Update,
    };

    if let Some(refusal) = check_identity(create, change, settings, user, &target) {
        return refusal;
    }
    let mut expiry = None;
    if change.gives_reason() {
        match state.reason {
            // Without requireReason the expiry rules still need the annotation.
            None if settings.require_reason || settings.expiry_required() => {
                return Verdict::deny(missing_reason(
                    write, change, &state, &target, kind, settings,
                ))
            }
            None => {}
            Some(value) => match reason::check(value, settings, ctx.now) {
                Ok(at) => expiry = at,
                Err(why) => {
                    return Verdict::deny(refused_reason(
                        write, change, value, &why, &target, kind, settings,
                    ))
                }
            },
        }
    }
    let unchanged_since = |same: fn(&State<'_>) -> bool| {
        old.as_ref().is_some_and(|o| {
            same(o)
                && !matches!(
                    change,
                    Change::Stay {
                        reason_changed: true
                    }
                )
        })
    };
    let hazard = |s: &State<'_>| s.annotation_only() && s.collects.is_some();
    let resuming = old.as_ref().is_some_and(State::honoured);
    match (settings.mode, state.collects) {
        (Mode::AnnotationOnly, Some(collects)) if hazard(&state) && !unchanged_since(hazard) => {
            return Verdict::deny(prune::hazard_message(
                &target,
                collects,
                &commands::suspend(&target, kind, settings, state.reason),
                resuming
                    .then(|| commands::resume(&target, kind, settings))
                    .as_deref(),
            ));
        }
        (Mode::DenyAnnotationOnly, _)
            if state.annotation_only() && !unchanged_since(|s| s.annotation_only()) =>
        {
            return Verdict::deny(annotation_only_refused(
                &target, kind, resuming, &state, settings,
            ));
        }
        _ => {}
    }

    let mut verdict = Verdict::allow();
    let mut edits = mirrored.as_ref().map(|m| m.1.clone()).unwrap_or_default();
    if let Some((how, _)) = &mirrored {
        let kept_by = if *how == Mirrored::Reasserted {
            kept_by(request, &field_manager)
        } else {
            KeptBy::Others(Vec::new())
        };
        verdict = verdict.warn(mirror_note(*how, &kept_by, &target, kind, settings, user));
    }
    verdict = verdict.with_warnings(state_warnings(
        change,
        old.as_ref(),
        &state,
        expiry,
        &target,
        kind,
        settings,
        ctx.now,
    ));
    if let (
        Change::Stay {
            reason_changed: false,
        },
        Some(old_object),
    ) = (change, &old_object)
    {
        if view::spec_changed_besides_suspend(old_object, &new_object) {
            verdict = verdict.warn(format!(
                "{} is suspended: the spec changes in this request are stored but not applied \
                 until it is resumed (`{}`)",
                target.describe(),
                commands::resume(&target, kind, settings)
            ));
        }
    }
    if !request.dry_run {
        verdict = audit(verdict, change, old.as_ref(), &state, kind, user);
    }
    if settings.record_suspender {
        edits.extend(record(
            change,
            &new_object,
            old_object.as_ref(),
            settings,
            user,
        ));
    }
    if edits.is_empty() {
        return verdict;
    }
    let Some(raw) = request.object.as_deref() else {
        return verdict;
    };
    let mut object = match RawObject::parse(raw.get()) {
        Ok(object) => object,
        Err(e) => return Verdict::deny(format!("malformed object: {e}")),
    };
    match mirror::apply(&edits, &mut object).and_then(|()| object.to_raw()) {
        Ok(mutated) => verdict.mutate_raw(mutated),
        Err(e) => Verdict::deny(e),
    }
}

/// Whether the reconciler's own apply states the annotation (its `Apply`
/// entry under the request's field manager owns it) or others set it.
fn kept_by(request: &AdmissionRequest, field_manager: &str) -> KeptBy {
    let owners = view::annotation_owners(request, SUSPEND_ANNOTATION);
    if owners
        .iter()
        .any(|(m, op)| m == field_manager && op == "Apply")
    {
        return KeptBy::Manifest;
    }
    KeptBy::Others(owners.into_iter().map(|(m, _)| m).collect())
}

/// A write that changes nothing leaves the suspension as stored. When a
/// person sends it and the object is suspended only by the annotation, it
/// may have been `flux resume`, which cannot resume it: they are told the
/// command that does. A service account's no-op (Flux Operator's
/// migration) gets no such hint: no one reads it.
fn noop_verdict(
    old: Option<&State<'_>>,
    kind: &Kind,
    target: &ObjectName<'_>,
    settings: &Settings,
    user: &UserInfo,
) -> Verdict {
    let annotation_only =
        kind.honours == Honours::SpecSuspend && old.is_some_and(|o| o.annotation_only());
    if !annotation_only || user.username.starts_with("system:serviceaccount:") {
        return Verdict::allow();
    }
    Verdict::allow().warn(format!(
        "{} stays suspended by annotation {SUSPEND_ANNOTATION}: this request changed nothing and \
         named no field manager, as `flux resume` sends when spec.suspend is not set (and as \
         `flux migrate` and Flux Operator's storage migration do); to resume it {}",
        target.describe(),
        resume_hint(target, kind, settings, user)
    ))
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use guard_core::{AdmissionRequest, Verdict};
    use serde_json::{json, Value};

    /// A write that changes nothing and names no field manager (`flux
    /// resume` of a suspension by annotation, or a storage migration) leaves
    /// it suspended and says how to resume; options that cannot be read are
    /// refused, naming them.
    #[test]
    fn a_noop_keeps_the_suspension_and_unreadable_options_are_refused() {
        let stored = ks(
            json!({R: "INC-4711 database migration"}),
            json!({"prune": true}),
        );
        let with_options = |options: Value| -> AdmissionRequest {
            serde_json::from_value(json!({
                "uid": "u",
                "kind": {"group": "kustomize.toolkit.fluxcd.io", "version": "v1", "kind": "Kustomization"},
                "name": "apps", "namespace": "flux-system", "operation": "UPDATE",
                "userInfo": {"username": "alice", "groups": ["sre", "system:authenticated"]},
                "object": stored.clone(), "oldObject": stored.clone(), "options": options
            }))
            .unwrap()
        };
        let flux = run(&with_options(json!({"kind": "UpdateOptions"})), "{}");
        assert!(flux.allowed && flux.mutated_object.is_none(), "{flux:?}");
        assert!(flux.audit_annotations.is_empty(), "{flux:?}");
        assert_eq!(flux.warnings.len(), 1, "{flux:?}");
        assert!(
            flux.warnings[0].ends_with(
                "to resume it run `kubectl annotate kustomization.kustomize.toolkit.fluxcd.io apps \
                 -n flux-system reconcile.fluxcd.io/suspended- --field-manager=flux-suspend`"
            ),
            "{flux:?}"
        );
        let v = run(
            &with_options(json!({"kind": "UpdateOptions", "fieldManager": 7})),
            "{}",
        );
        assert!(!v.allowed, "{v:?}");
        assert!(
            message(&v).starts_with(
                "Kustomization flux-system/apps: malformed options: invalid type: integer `7`"
            ),
            "{}",
            message(&v)
        );
    }

    #[test]
    fn annotation_only_mode_refuses_the_prune_hazard_only() {
        let s = r#"{"mode":"annotation-only"}"#;
        let r = request(
            "UPDATE",
            "alice",
            ks(
                json!({R: "INC-1 database migration"}),
                json!({"prune": true}),
            ),
            ks(json!({}), json!({"prune": true})),
        );
        let v = run(&r, s);
        assert!(!v.allowed);
        assert!(message(&v).contains("would be suspended only by annotation reconcile.fluxcd.io/suspended while spec.prune is true"));
        let r = request(
            "UPDATE",
            "alice",
            ks(
                json!({R: "INC-1 database migration"}),
                json!({"prune": false}),
            ),
            ks(json!({}), json!({})),
        );
        let v = run(&r, s);
        assert!(v.allowed && v.mutated_object.is_none());
        assert!(v
            .warnings
            .iter()
            .any(|w| w.contains("suspended only by annotation")));
        // Kept hazards are warned, not refused: unrelated updates go through.
        let old = ks(
            json!({R: "INC-1 database migration"}),
            json!({"prune": true}),
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(
                json!({R: "INC-1 database migration"}),
                json!({"prune": true, "path": "./x"}),
            ),
            old,
        );
        let v = run(&r, s);
        assert!(
            v.allowed
                && v.warnings
                    .iter()
                    .any(|w| w.contains("would delete everything it applied (spec.prune is true)"))
        );
    }

    #[test]
    fn malformed_input_is_refused_naming_the_field() {
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({}), json!({"suspend": "true"})),
            ks(json!({}), json!({})),
        );
        assert_eq!(message(&run(&r, "{}")), "Kustomization flux-system/apps: spec.suspend must be a boolean (true or false), found the string \"true\"");
        let r = request(
            "CREATE",
            "alice",
            json!({"kind": "Kustomization"}),
            Value::Null,
        );
        assert_eq!(
            message(&run(&r, "{}")),
            "malformed object: it has no metadata"
        );
        let r = request("CREATE", "alice", Value::Null, Value::Null);
        assert_eq!(
            message(&run(&r, "{}")),
            "malformed request: a CREATE of Kustomization has no object"
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: 5}), json!({})),
            ks(json!({}), json!({})),
        );
        assert!(message(&run(&r, "{}"))
            .contains("metadata.annotations[\"reconcile.fluxcd.io/suspended\"] must be a string"));
    }

    #[test]
    fn other_kinds_subresources_and_dry_runs() {
        let r = request_of(
            "source.toolkit.fluxcd.io",
            "ExternalArtifact",
            "UPDATE",
            "alice",
            ks(json!({}), json!({"suspend": true})),
            Value::Null,
        );
        assert_eq!(run(&r, "{}"), Verdict::allow());
        let mut r = request(
            "UPDATE",
            "alice",
            ks(json!({}), json!({"suspend": true})),
            ks(json!({}), json!({})),
        );
        r.sub_resource = "status".into();
        assert_eq!(run(&r, "{}"), Verdict::allow());
        let mut r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            ks(json!({}), json!({})),
        );
        r.dry_run = true;
        let v = run(&r, "{}");
        assert!(v.audit_annotations.is_empty() && v.mutated_object.is_some());
    }

    #[test]
    fn unrelated_updates_pass_silently() {
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({"a": "b"}), json!({"path": "./b"})),
            ks(json!({}), json!({"path": "./a"})),
        );
        assert_eq!(run(&r, "{}"), Verdict::allow());
    }
}

//! One request decided: mirror first, then the rules on the state the
//! request would store, then what the person should know.

use guard_core::json_text;
use guard_core::model::keys::SUSPENDED_BY;
use guard_core::{AdmissionRequest, Context, Operation, Timestamp, Which};

use crate::annotation_only;
use crate::audit;
use crate::decision::{Allowed, Decision, Refusal, WriteRule};
use crate::deletion;
use crate::identity_rules;
use crate::kinds::{self, Kind};
use crate::mirror::{self, Mirrored};
use crate::namespace;
use crate::noop;
use crate::operator_ui;
use crate::reason;
use crate::reconciler::{self, KeptBy};
use crate::settings::{Mode, Settings, UiSuspensions};
use crate::view::{self, Object, State, Target, Unreadable};
use crate::warnings::{self, Warning};
use crate::write::{Change, Origin, Write};

pub(crate) fn decide<'a>(
    request: &'a AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Decision<'a> {
    // Status and other subresources never carry suspension.
    if !request.sub_resource.is_empty() {
        return Decision::allow();
    }
    if namespace::is_namespace(request) {
        return match request.operation {
            Operation::Delete => match namespace::check_delete(request, settings, ctx) {
                Ok(warnings) => Decision::warn(warnings),
                Err(refused) => Decision::Refuse(Refusal::Namespace(refused)),
            },
            _ => Decision::allow(),
        };
    }
    let Some(kind) = kinds::find(&request.kind.group, &request.kind.kind) else {
        return Decision::allow();
    };
    match request.operation {
        Operation::Create | Operation::Update => write(request, kind, settings, ctx.now),
        Operation::Delete => match deletion::check(request, &kind, settings) {
            Ok(warning) => Decision::warn(warning.into_iter().collect()),
            Err(refused) => Decision::Refuse(Refusal::Delete(refused)),
        },
        Operation::Connect => Decision::allow(),
    }
}

/// The request read once: both objects, the object it names, their states
/// and its field manager.
struct Read {
    new_object: Object,
    old_object: Option<Object>,
    target: Target,
    new: State,
    old: Option<State>,
    field_manager: String,
}

fn read(request: &AdmissionRequest, kind: &Kind, settings: &Settings) -> Result<Read, Unreadable> {
    let mut annotations = view::annotations_read(kind, Some(&settings.suspender_annotation));
    annotations.push(SUSPENDED_BY);
    let new_object = view::load_required(request, Which::Object, &annotations)?;
    let old_object = match request.operation {
        Operation::Update => {
            view::load(request, Which::OldObject, &annotations).map_err(Unreadable::Object)?
        }
        _ => None,
    };
    let target = view::target(request, Some(&new_object.metadata));
    let new = State::of(&new_object, kind, true).map_err(|error| Unreadable::Field {
        target: target.clone(),
        error,
    })?;
    let old = old_object
        .as_ref()
        .and_then(|o| State::of(o, kind, false).ok());
    let field_manager = request
        .field_manager()
        .map_err(|error| Unreadable::Options {
            target: target.clone(),
            error,
        })?;
    Ok(Read {
        new_object,
        old_object,
        target,
        new,
        old,
        field_manager,
    })
}

/// A CREATE or UPDATE of a suspendable object.
fn write<'a>(
    request: &'a AdmissionRequest,
    kind: Kind,
    settings: &Settings,
    now: Timestamp,
) -> Decision<'a> {
    let read = match read(request, &kind, settings) {
        Ok(read) => read,
        Err(e) => return Decision::Refuse(Refusal::Unreadable(e)),
    };
    let user = &request.user_info;
    if noop::is_noop(request, &read.field_manager) {
        let warned = noop::keeps_annotation_only(read.old.as_ref(), &kind, user);
        return Decision::warn(
            warned
                .then(|| Warning::NoopKeepsSuspension {
                    target: read.target.clone(),
                    kind,
                })
                .into_iter()
                .collect(),
        );
    }
    let reconciler = reconciler::applies(&read.field_manager) || settings.reconcilers.matches(user);
    let mut state = read.new.clone();
    let mirrored = match settings.mode {
        Mode::Mirror => mirror::mirror(&kind, read.old.as_ref(), &mut state, reconciler),
        Mode::AnnotationOnly | Mode::DenyAnnotationOnly => None,
    };
    let write = Write {
        kind,
        target: read.target.clone(),
        user,
        origin: Origin::of(request.operation, user),
        change: Change::of(read.old.as_ref(), &state),
        old: read.old.clone(),
        state,
        by_operator_ui: operator_ui::wrote(settings, &read.field_manager, user, &read.new_object),
    };
    match refused(&write, settings, now) {
        Ok(expiry) => allowed(request, &read, &write, mirrored, expiry, settings, now),
        Err(rule) => Decision::Refuse(Refusal::Write { write, rule }),
    }
}

/// The rules of a write, in order; the expiry of a reason given.
fn refused(
    write: &Write<'_>,
    settings: &Settings,
    now: Timestamp,
) -> Result<Option<Timestamp>, WriteRule> {
    if let Some(act) = identity_rules::refused(write, settings) {
        return Err(WriteRule::NotAllowed(act));
    }
    let expiry = match reason::check_given(write, settings, now) {
        // The UI has no field for a reason: admitted when the settings say
        // so; the background audit asks for the reason afterwards.
        Err(reason::Finding::Missing)
            if write.by_operator_ui
                && write.change == Change::Enter
                && settings.operator_ui_suspensions == UiSuspensions::Admit =>
        {
            None
        }
        checked => checked.map_err(WriteRule::Reason)?,
    };
    match annotation_only::check(write, settings) {
        Some(finding) => Err(WriteRule::Mode(finding)),
        None => Ok(expiry),
    }
}

/// A write the rules let through: what the person should know, the audit
/// record and the edits (mirroring, `recordSuspender`).
fn allowed<'a>(
    request: &AdmissionRequest,
    read: &Read,
    write: &Write<'_>,
    mirrored: Option<(Mirrored, Vec<mirror::Edit>)>,
    expiry: Option<Timestamp>,
    settings: &Settings,
    now: Timestamp,
) -> Decision<'a> {
    let mut warnings = Vec::new();
    let mut edits = Vec::new();
    if let Some((how, mirror_edits)) = mirrored {
        let kept_by = match how {
            Mirrored::Reasserted => reconciler::kept_by(request, &read.field_manager),
            _ => KeptBy::Others(Vec::new()),
        };
        warnings.push(Warning::Mirrored {
            how,
            kept_by,
            target: write.target.clone(),
            kind: write.kind,
        });
        edits = mirror_edits;
    }
    warnings.extend(warnings::of_state(write, expiry, now));
    let unchanged = Change::Stay {
        reason_changed: false,
    };
    if let (true, Some(old_object)) = (write.change == unchanged, &read.old_object) {
        if json_text::spec_changed_besides(spec(old_object), spec(&read.new_object), &["suspend"]) {
            warnings.push(Warning::SpecStaged {
                target: write.target.clone(),
                kind: write.kind,
                annotated: write.state.reason.is_some(),
            });
        }
    }
    let audit = if request.dry_run {
        None
    } else {
        audit::entry(write)
    };
    // The user the UI recorded in its fine-grained mode is the one who
    // clicked, never the service account it writes as.
    let ui_recorded = write.by_operator_ui
        && operator_ui::as_its_service_account(settings, write.user)
        && settings.suspender_annotation == SUSPENDED_BY;
    if settings.record_suspender && !ui_recorded {
        edits.extend(audit::record(
            write.change,
            &read.new_object,
            read.old_object.as_ref(),
            settings,
            write.user,
        ));
    }
    match mirror::edited(request, &edits) {
        Ok(mutated) => Decision::Allow(Allowed {
            warnings,
            audit,
            mutated,
        }),
        Err(e) => Decision::Refuse(Refusal::Unwritable(e)),
    }
}

/// An object's `spec` as its JSON text, `None` when it has none.
fn spec(object: &Object) -> Option<&str> {
    object.spec_raw.as_deref().map(|raw| raw.get())
}

#[cfg(test)]
mod tests {
    use crate::audit::Action;
    use crate::decision::{Decision, Refusal, WriteRule};
    use crate::mirror::Mirrored;
    use crate::reason;
    use crate::test_support::*;
    use crate::warnings::Warning;
    use crate::write::{Change, Origin};
    use guard_core::{AdmissionRequest, Verdict};
    use serde_json::{json, Value};

    /// `flux suspend` (spec.suspend alone) enters suspension without a reason.
    #[test]
    fn flux_suspend_without_a_reason_is_refused_by_the_reason_rule() {
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({}), json!({"suspend": true})),
            ks(json!({}), json!({})),
        );
        let Decision::Refuse(Refusal::Write { write, rule }) = decided(&r, "{}") else {
            panic!("not refused by a rule of the write");
        };
        assert_eq!(rule, WriteRule::Reason(reason::Finding::Missing));
        assert_eq!(
            (write.change, write.origin),
            (Change::Enter, Origin::Update)
        );
        assert!(write.state.spec_suspend && write.state.reason.is_none());
    }

    /// The annotation alone suspends: spec.suspend is mirrored, the person
    /// is told, the suspension is audited.
    #[test]
    fn the_annotation_is_mirrored_warned_and_audited() {
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            ks(json!({}), json!({})),
        );
        let Decision::Allow(allowed) = decided(&r, "{}") else {
            panic!("refused");
        };
        assert!(matches!(
            allowed.warnings.as_slice(),
            [
                Warning::Mirrored {
                    how: Mirrored::Honoured,
                    ..
                },
                Warning::Suspended { until: None, .. }
            ]
        ));
        let audit = allowed.audit.unwrap();
        assert_eq!(audit.action, Action::Suspend);
        assert!(audit.shown.spec_suspend);
        assert!(allowed.mutated.is_some());
    }

    #[test]
    fn unrelated_updates_decide_nothing() {
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({"a": "b"}), json!({"path": "./b"})),
            ks(json!({}), json!({"path": "./a"})),
        );
        assert_eq!(decided(&r, "{}"), Decision::allow());
    }

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
            "Kustomization flux-system/apps: the CREATE request carries no object"
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

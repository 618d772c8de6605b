//! One request judged: mirror first, then the rules on the state the request
//! would store, then what the person should know.

use guard_core::identity::{self, Identities};
use guard_core::{
    names, AdmissionRequest, Context, Operation, Timestamp, UserInfo, Verdict, Which,
};

use crate::commands::{self, Target};
use crate::flux_cli;
use crate::kinds::{self, Honours, Kind, SUSPEND_ANNOTATION};
use crate::mirror::{self, Edit, Mirrored};
use crate::prune;
use crate::reason;
use crate::settings::{Mode, Settings};
use crate::view::{self, Object, State};
use guard_core::edit::RawObject;

/// How the request moves the object's effective suspend state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
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
    let Some(kind) = kinds::find(&request.kind.group, &request.kind.kind) else {
        return Verdict::allow();
    };
    match request.operation {
        Operation::Create | Operation::Update => change(request, &kind, settings, ctx),
        Operation::Delete => prune::delete(request, &kind),
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
    let name = request.display_name(Some(&new_object.metadata));
    let target = Target {
        kind: *kind,
        name: &name,
        namespace: &request.namespace,
    };
    let new = match State::of(&new_object, kind, true) {
        Ok(s) => s,
        Err(e) => return Verdict::deny(format!("{}: {e}", target.describe())),
    };
    let old = old_object
        .as_ref()
        .and_then(|o| State::of(o, kind, false).ok());
    let user = &request.user_info;
    let reconciler = settings.reconcilers.matches(user);
    let may_be_flux_resume = kind.honours == Honours::SpecSuspend
        && !reconciler
        && old
            .as_ref()
            .is_some_and(|o| o.annotation_only() && *o == new);
    let flux_resume = match may_be_flux_resume.then(|| flux_cli::is_empty_resume(request)) {
        None => false,
        Some(Ok(empty)) => empty,
        Some(Err(e)) => {
            return Verdict::deny(format!(
                "{}: {e}; whether this is `flux resume` of a suspension by annotation cannot be \
                 judged",
                target.describe()
            ))
        }
    };

    let mut state = new;
    let mirrored = match settings.mode {
        Mode::Mirror => mirror::mirror(kind, old.as_ref(), &mut state, reconciler, flux_resume),
        Mode::AnnotationOnly | Mode::DenyAnnotationOnly if flux_resume => {
            return Verdict::deny(format!(
                "{} is suspended only by annotation {SUSPEND_ANNOTATION}, which `flux resume` \
                 leaves in place (spec.suspend is not set, so it sent an empty patch). Resume it \
                 with:\n  {}",
                target.describe(),
                commands::resume(&target, settings)
            ));
        }
        Mode::AnnotationOnly | Mode::DenyAnnotationOnly => None,
    };
    let change = Change::of(old.as_ref(), &state);
    let create = request.operation == Operation::Create;

    if let Some(refusal) = check_identity(create, change, settings, user, &target) {
        return refusal;
    }
    let mut expiry = None;
    if change.gives_reason() {
        match state.reason {
            None if settings.require_reason => {
                return Verdict::deny(missing_reason(create, change, &state, &target, settings))
            }
            None => {}
            Some(value) => match reason::check(value, settings, ctx.now) {
                Ok(at) => expiry = at,
                Err(why) => {
                    return Verdict::deny(refused_reason(
                        create, change, value, &why, &target, settings,
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
                &commands::suspend(&target, settings, state.reason),
                resuming
                    .then(|| commands::resume(&target, settings))
                    .as_deref(),
            ));
        }
        (Mode::DenyAnnotationOnly, _)
            if state.annotation_only() && !unchanged_since(|s| s.annotation_only()) =>
        {
            return Verdict::deny(annotation_only_refused(&target, resuming, &state, settings));
        }
        _ => {}
    }

    let mut verdict = Verdict::allow();
    let mut edits = mirrored.as_ref().map(|m| m.1.clone()).unwrap_or_default();
    if let Some((how, _)) = &mirrored {
        verdict = verdict.warn(mirror_note(*how, &target));
    }
    verdict = verdict.with_warnings(state_warnings(
        change,
        old.as_ref(),
        &state,
        expiry,
        &target,
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
                commands::resume(&target, settings)
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

/// Kubewarden's audit scanner replays stored objects as CREATEs without any
/// userInfo (kubewarden/audit-scanner `internal/scanner/admission_request.go`
/// `newAdmissionRequest`, commit 8472a7cf; policy-server's `/audit` handler
/// passes the request on as it is). kube-apiserver never sends an empty
/// username: an unauthenticated request is `system:anonymous`
/// (k8s.io/apiserver `pkg/authentication/request/anonymous`).
fn audit_replay(create: bool, user: &UserInfo) -> bool {
    create && user.username.is_empty()
}

/// `suspenders` and `resumers`, on CREATE too (deleting and re-creating an
/// object suspended must not bypass them), except for the audit scanner's
/// replays, which say nothing of who suspended.
fn check_identity(
    create: bool,
    change: Change,
    settings: &Settings,
    user: &UserInfo,
    target: &Target<'_>,
) -> Option<Verdict> {
    if audit_replay(create, user) {
        return None;
    }
    let (list, setting, act) = match change {
        Change::Enter => (&settings.suspenders, "suspenders", "suspend"),
        Change::Stay {
            reason_changed: true,
        } => (
            &settings.suspenders,
            "suspenders",
            "change the suspension reason of",
        ),
        Change::Leave => (&settings.resumers, "resumers", "resume"),
        Change::Unsuspended
        | Change::Stay {
            reason_changed: false,
        } => return None,
    };
    if list.is_empty() || list.matches(user) {
        return None;
    }
    Some(Verdict::deny_with_code(
        format!(
            "{} may not {act} {}: the flux-suspend policy allows only its {setting} ({}). \
             Ask one of them, or an administrator to extend the {setting} setting.",
            identity::describe(user),
            target.describe(),
            list_identities(list)
        ),
        403,
    ))
}

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

fn missing_reason(
    create: bool,
    change: Change,
    state: &State<'_>,
    target: &Target<'_>,
    settings: &Settings,
) -> String {
    let mechanisms = state.mechanisms(&target.kind);
    if create {
        return format!(
            "{} is created suspended ({mechanisms}) without a reason. This cluster requires one in \
             annotation {SUSPEND_ANNOTATION}; add to its manifest:\n{}",
            target.describe(),
            commands::manifest(settings)
        );
    }
    if change == Change::Enter {
        return format!(
            "{} is being suspended ({mechanisms}, as `flux suspend` does) without a reason. This \
             cluster requires one in annotation {SUSPEND_ANNOTATION}, which `flux suspend` cannot \
             write. Suspend it with:\n  {}",
            target.describe(),
            commands::suspend(target, settings, None)
        );
    }
    format!(
        "Annotation {SUSPEND_ANNOTATION} was removed from {}, which stays suspended ({mechanisms}) \
         without a reason. Keep a reason, or resume it with:\n  {}",
        target.describe(),
        commands::resume(target, settings)
    )
}

fn refused_reason(
    create: bool,
    change: Change,
    value: &str,
    why: &str,
    target: &Target<'_>,
    settings: &Settings,
) -> String {
    let fix = if create {
        format!(
            "Write a reason in its manifest:\n{}",
            commands::manifest(settings)
        )
    } else if change == Change::Enter {
        format!(
            "Suspend it with a reason such as:\n  {}",
            commands::suspend(target, settings, None)
        )
    } else {
        format!(
            "Suspend it with a reason such as:\n  {}\nor resume it:\n  {}",
            commands::suspend(target, settings, None),
            commands::resume(target, settings)
        )
    };
    format!(
        "The suspension reason of {} in annotation {SUSPEND_ANNOTATION} is refused: {why}. \
         The value is {}. {fix}",
        target.describe(),
        names::quote(value)
    )
}

fn annotation_only_refused(
    target: &Target<'_>,
    resuming: bool,
    state: &State<'_>,
    settings: &Settings,
) -> String {
    let honoured = target.kind.honoured_mechanism();
    if resuming {
        return format!(
            "Resuming {} leaves annotation {SUSPEND_ANNOTATION} behind: it would still read as \
             suspended while Flux reconciles it. Remove the annotation in the same request:\n  {}",
            target.describe(),
            commands::resume(target, settings)
        );
    }
    format!(
        "{} would be suspended only by annotation {SUSPEND_ANNOTATION}, which no Flux release \
         honours: it would keep reconciling. Set {honoured} in the same request:\n  {}",
        target.describe(),
        commands::suspend(target, settings, state.reason)
    )
}

fn mirror_note(how: Mirrored, target: &Target<'_>) -> String {
    let honoured = target.kind.honoured_mechanism();
    let what = target.describe();
    match how {
        Mirrored::Honoured => format!(
            "{what}: suspended via annotation {SUSPEND_ANNOTATION}; {honoured} mirrored so every \
             Flux release stops reconciling it"
        ),
        Mirrored::Reasserted => format!(
            "{what}: the applied manifest still carries annotation {SUSPEND_ANNOTATION}, so \
             {honoured} is kept; remove the annotation from Git to resume"
        ),
        Mirrored::ResumedByAnnotation => format!(
            "{what}: annotation {SUSPEND_ANNOTATION} removed; {honoured} unset in step, so Flux \
             reconciles it again"
        ),
        Mirrored::ResumedByFluxResume => format!(
            "{what}: `flux resume` sent no change, as spec.suspend was not set; annotation \
             {SUSPEND_ANNOTATION}, the only thing suspending it, was removed so Flux reconciles it"
        ),
        Mirrored::ResumedByMechanism => format!(
            "{what}: resumed through {}; the stale annotation {SUSPEND_ANNOTATION} was removed \
             with it",
            honoured.replace(": true", "").replace(": disabled", "")
        ),
    }
}

/// Warnings on the effective state the person could not see.
fn state_warnings(
    change: Change,
    old: Option<&State<'_>>,
    state: &State<'_>,
    expiry: Option<Timestamp>,
    target: &Target<'_>,
    settings: &Settings,
    now: Timestamp,
) -> Vec<String> {
    let what = target.describe();
    let mut warnings = Vec::new();
    let shown = |r: Option<&str>| {
        r.map_or_else(
            || "no reason".to_string(),
            |r| format!("reason {}", names::quote(r)),
        )
    };
    match change {
        Change::Enter => {
            let until = expiry
                .map(|at| format!(", until {}", guard_core::rfc3339::format(at)))
                .unwrap_or_default();
            warnings.push(format!(
                "{what} is now suspended by {} ({}{until})",
                state.mechanisms(&target.kind),
                shown(state.reason)
            ));
        }
        Change::Leave => warnings.push(format!("{what} is resumed: Flux reconciles it again")),
        Change::Stay {
            reason_changed: true,
        } => warnings.push(format!(
            "{what} stays suspended, now with {}",
            shown(state.reason)
        )),
        Change::Stay {
            reason_changed: false,
        } => {
            if old.is_some_and(|o| o.honoured() != state.honoured()) {
                warnings.push(format!(
                    "{what} is now suspended by {}",
                    state.mechanisms(&target.kind)
                ));
            }
            if let Some(Some(at)) = state.reason.map(reason::until) {
                match at {
                    Ok(at) if at <= now => warnings.push(format!(
                        "The suspension of {what} expired at {}; resume it with `{}` or renew \
                         the until= time in annotation {SUSPEND_ANNOTATION}",
                        guard_core::rfc3339::format(at),
                        commands::resume(target, settings)
                    )),
                    Ok(_) => {}
                    Err(e) => warnings.push(format!(
                        "The suspension reason of {what} has an unreadable expiry: {e}"
                    )),
                }
            }
        }
        Change::Unsuspended => {}
    }
    if state.annotation_only() && !matches!(change, Change::Unsuspended) {
        let prune = state
            .collects
            .map(|c| {
                format!(
                    " and deleting it would delete everything it applied ({})",
                    c.deciding()
                )
            })
            .unwrap_or_default();
        warnings.push(format!(
            "{what} is suspended only by annotation {SUSPEND_ANNOTATION}: Flux releases that do \
             not implement RFC-0006 keep reconciling it{prune}; to be sure, also run `{}`",
            commands::honour(target)
        ));
    }
    warnings
}

/// Audit annotations on every suspend, resume and reason change. Keys are
/// name parts: the API server prefixes them with the webhook's name.
fn audit(
    verdict: Verdict,
    change: Change,
    old: Option<&State<'_>>,
    state: &State<'_>,
    kind: &Kind,
    user: &UserInfo,
) -> Verdict {
    let (action, shown) = match change {
        Change::Enter => ("suspend", Some(state)),
        Change::Stay {
            reason_changed: true,
        } => ("change-reason", Some(state)),
        Change::Leave => ("resume", old),
        Change::Unsuspended
        | Change::Stay {
            reason_changed: false,
        } => return verdict,
    };
    let Some(shown) = shown else { return verdict };
    let reason: String = shown.reason.unwrap_or("").chars().take(256).collect();
    verdict
        .audit("action", action)
        .audit("user", identity::describe(user))
        .audit("mechanism", shown.mechanisms(kind))
        .audit("reason", reason)
}

/// `recordSuspender`: the policy owns the suspender annotation. Set on
/// suspend and reason change, removed on resume, restored when a request
/// merely edits it.
fn record(
    change: Change,
    new: &Object,
    old: Option<&Object>,
    settings: &Settings,
    user: &UserInfo,
) -> Option<Edit> {
    let key = &settings.suspender_annotation;
    let now_value = new.metadata.annotation(key);
    let old_value = old.and_then(|o| o.metadata.annotation(key));
    let set = |v: &str| Edit::SetAnnotation(key.clone(), v.to_string());
    match change {
        Change::Enter
        | Change::Stay {
            reason_changed: true,
        } => {
            // A username longer than a message is recorded shortened, as
            // a message would show it, so the reply stays bounded.
            let who = guard_core::names::bounded(if user.username.is_empty() {
                "system:anonymous"
            } else {
                &user.username
            });
            (now_value != Some(&*who)).then(|| set(&who))
        }
        Change::Leave => now_value.map(|_| Edit::RemoveAnnotation(key.clone())),
        Change::Stay {
            reason_changed: false,
        } if now_value != old_value => Some(match old_value {
            Some(v) => set(v),
            None => Edit::RemoveAnnotation(key.clone()),
        }),
        Change::Stay { .. } | Change::Unsuspended => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::NoCluster;
    use serde_json::{json, Value};

    const R: &str = "reconcile.fluxcd.io/suspended";

    fn now() -> Timestamp {
        "2026-11-20T10:00:00Z".parse().unwrap()
    }

    fn settings(json: &str) -> Settings {
        guard_core::settings::parse::<Settings>(json.as_bytes()).unwrap()
    }

    fn ks(annotations: Value, spec: Value) -> Value {
        json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
               "metadata": {"name": "apps", "namespace": "flux-system", "annotations": annotations},
               "spec": spec})
    }

    fn request(op: &str, user: &str, object: Value, old: Value) -> AdmissionRequest {
        request_of(
            "kustomize.toolkit.fluxcd.io",
            "Kustomization",
            op,
            user,
            object,
            old,
        )
    }

    fn request_of(
        group: &str,
        kind: &str,
        op: &str,
        user: &str,
        object: Value,
        old: Value,
    ) -> AdmissionRequest {
        serde_json::from_value(json!({
            "uid": "u", "kind": {"group": group, "version": "v1", "kind": kind},
            "name": "apps", "namespace": "flux-system", "operation": op,
            "userInfo": {"username": user, "groups": ["sre", "system:authenticated"]},
            "object": object, "oldObject": old
        }))
        .unwrap()
    }

    fn run(r: &AdmissionRequest, s: &str) -> Verdict {
        judge(r, &settings(s), &Context::new(now(), &NoCluster))
    }

    fn message(v: &Verdict) -> &str {
        v.message.as_deref().unwrap_or("")
    }

    fn suspend_of(v: &Verdict) -> Option<Value> {
        v.mutated_value()
            .and_then(|o| o.pointer("/spec/suspend").cloned())
    }

    fn annotation_of(v: &Verdict, key: &str) -> Option<Value> {
        v.mutated_value()?
            .get("metadata")?
            .get("annotations")?
            .get(key)
            .cloned()
    }

    #[test]
    fn annotating_suspends_through_spec_in_mirror_mode() {
        let r = request(
            "UPDATE",
            "alice",
            ks(
                json!({R: "INC-4711 database migration"}),
                json!({"prune": true}),
            ),
            ks(json!({}), json!({"prune": true})),
        );
        let v = run(&r, "{}");
        assert!(v.allowed, "{v:?}");
        assert_eq!(suspend_of(&v), Some(json!(true)));
        assert!(
            v.warnings
                .iter()
                .any(|w| w.contains("spec.suspend: true mirrored")),
            "{:?}",
            v.warnings
        );
        assert!(v
            .warnings
            .iter()
            .any(|w| w.contains("is now suspended by spec.suspend: true and annotation")));
        assert_eq!(
            v.audit_annotations.get("action").map(String::as_str),
            Some("suspend")
        );
        assert_eq!(
            v.audit_annotations.get("user").map(String::as_str),
            Some("alice")
        );
        assert_eq!(
            v.audit_annotations.get("reason").map(String::as_str),
            Some("INC-4711 database migration")
        );
    }

    #[test]
    fn flux_suspend_without_a_reason_is_refused_with_the_command() {
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({}), json!({"suspend": true})),
            ks(json!({}), json!({})),
        );
        let v = run(&r, "{}");
        assert!(!v.allowed);
        assert_eq!(v.code, Some(400));
        let m = message(&v);
        assert!(m.starts_with("Kustomization flux-system/apps is being suspended (spec.suspend: true, as `flux suspend` does) without a reason"), "{m}");
        assert!(m.contains("kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --overwrite reconcile.fluxcd.io/suspended='<ticket> <why>'"), "{m}");
        assert!(run(&r, r#"{"requireReason":false}"#).allowed);
    }

    #[test]
    fn creating_a_suspended_object_without_a_reason_shows_the_manifest_lines() {
        let r = request(
            "CREATE",
            "alice",
            ks(json!({}), json!({"suspend": true})),
            Value::Null,
        );
        let m = run(&r, "{}").message.unwrap();
        assert!(
            m.contains("is created suspended (spec.suspend: true) without a reason"),
            "{m}"
        );
        assert!(
            m.ends_with(
                "metadata:\n  annotations:\n    reconcile.fluxcd.io/suspended: \"<ticket> <why>\""
            ),
            "{m}"
        );
    }

    #[test]
    fn bad_reasons_are_refused_quoting_the_value() {
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "true"}), json!({})),
            ks(json!({}), json!({})),
        );
        let m = run(&r, "{}").message.unwrap();
        assert!(
            m.contains("is refused: it is a placeholder") && m.contains("The value is \"true\""),
            "{m}"
        );
        let huge = "x".repeat(64 * 1024);
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: huge}), json!({})),
            ks(json!({}), json!({})),
        );
        let m = run(&r, "{}").message.unwrap();
        assert!(
            m.contains("longer than maxReasonLength") && m.len() < 1200,
            "{}",
            m.len()
        );
    }

    #[test]
    fn a_changed_reason_is_checked_like_a_new_one() {
        let old = ks(
            json!({R: "INC-1 database migration"}),
            json!({"suspend": true}),
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "db"}), json!({"suspend": true})),
            old.clone(),
        );
        assert!(message(&run(&r, "{}")).contains("fewer than minReasonLength"));
        let r = request(
            "UPDATE",
            "alice",
            ks(
                json!({R: "INC-2 certificate rotation"}),
                json!({"suspend": true}),
            ),
            old,
        );
        let v = run(&r, "{}");
        assert!(v.allowed);
        assert_eq!(
            v.audit_annotations.get("action").map(String::as_str),
            Some("change-reason")
        );
        assert!(
            v.warnings
                .iter()
                .any(|w| w
                    .contains("stays suspended, now with reason \"INC-2 certificate rotation\""))
        );
    }

    /// `flux resume` is recognised by an UPDATE naming no field manager;
    /// options that cannot be read say nothing either way, so a no-op UPDATE
    /// of a suspension by annotation is refused, naming them, rather than
    /// taken for `flux resume` and resumed.
    #[test]
    fn unreadable_options_are_not_taken_for_flux_resume() {
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
        assert_eq!(annotation_of(&flux, R), None, "{flux:?}");
        assert!(flux.allowed && flux.mutated_value().is_some(), "{flux:?}");
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
    fn removing_the_annotation_resumes_and_flux_resume_drops_it() {
        let old = ks(
            json!({R: "INC-1 database migration"}),
            json!({"suspend": true}),
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({}), json!({"suspend": true})),
            old.clone(),
        );
        let v = run(&r, "{}");
        assert!(v.allowed);
        assert_eq!(suspend_of(&v), Some(json!(false)));
        assert_eq!(
            v.audit_annotations.get("action").map(String::as_str),
            Some("resume")
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            old.clone(),
        );
        let v = run(&r, "{}");
        assert!(v.allowed);
        assert_eq!(
            v.mutated_value().unwrap()["metadata"]["annotations"],
            json!({})
        );
        assert!(v
            .warnings
            .iter()
            .any(|w| w.contains("resumed through spec.suspend; the stale annotation")));
        // The same request from kustomize-controller re-applies Git: it stays suspended.
        let r = request(
            "UPDATE",
            "system:serviceaccount:flux-system:kustomize-controller",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            old,
        );
        let v = run(&r, "{}");
        assert_eq!(suspend_of(&v), Some(json!(true)));
        assert!(v.audit_annotations.is_empty(), "{:?}", v.audit_annotations);
    }

    #[test]
    fn identity_rules_apply_to_updates_and_creates_but_not_audit_replays() {
        let s = r#"{"suspenders":{"groups":["platform"]},"resumers":{"users":["bob"]}}"#;
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            ks(json!({}), json!({})),
        );
        let v = run(&r, s);
        assert_eq!(v.code, Some(403));
        assert_eq!(message(&v), "alice may not suspend Kustomization flux-system/apps: the flux-suspend policy allows only its suspenders (groups platform). Ask one of them, or an administrator to extend the suspenders setting.");
        let old = ks(
            json!({R: "INC-1 database migration"}),
            json!({"suspend": true}),
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({}), json!({"suspend": true})),
            old.clone(),
        );
        assert!(message(&run(&r, s)).starts_with("alice may not resume"));
        let r = request(
            "UPDATE",
            "bob",
            ks(json!({}), json!({"suspend": true})),
            old.clone(),
        );
        assert!(run(&r, s).allowed);
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-9 another reason"}), json!({"suspend": true})),
            old,
        );
        assert!(message(&run(&r, s)).contains("may not change the suspension reason of"));
        let r = request(
            "CREATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            Value::Null,
        );
        assert!(message(&run(&r, s)).starts_with("alice may not suspend"));
        // The audit scanner's replay carries no userInfo.
        let r = request(
            "CREATE",
            "",
            ks(
                json!({R: "INC-1 database migration"}),
                json!({"suspend": true}),
            ),
            Value::Null,
        );
        assert!(run(&r, s).allowed);
    }

    #[test]
    fn expired_suspensions_are_refused_on_create_and_warned_on_update() {
        let reason = "INC-1 database migration until=2026-11-19T18:00:00Z";
        let r = request(
            "CREATE",
            "",
            ks(json!({R: reason}), json!({"suspend": true})),
            Value::Null,
        );
        assert!(message(&run(&r, "{}"))
            .contains("its expiry until=2026-11-19T18:00:00Z has already passed"));
        let old = ks(json!({R: reason}), json!({"suspend": true}));
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: reason, "x": "y"}), json!({"suspend": true})),
            old,
        );
        let v = run(&r, "{}");
        assert!(v.allowed);
        assert!(v.warnings.iter().any(|w| w.starts_with("The suspension of Kustomization flux-system/apps expired at 2026-11-19T18:00:00Z; resume it with `kubectl annotate")), "{:?}", v.warnings);
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
    fn deny_annotation_only_mode_refuses_the_annotation_alone() {
        let s = r#"{"mode":"deny-annotation-only"}"#;
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            ks(json!({}), json!({})),
        );
        let m = run(&r, s).message.unwrap();
        assert!(
            m.contains("which no Flux release honours") && m.contains(r#""spec":{"suspend":true}"#),
            "{m}"
        );
        let old = ks(
            json!({R: "INC-1 database migration"}),
            json!({"suspend": true}),
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            old,
        );
        let m = run(&r, s).message.unwrap();
        assert!(
            m.starts_with("Resuming Kustomization flux-system/apps leaves annotation"),
            "{m}"
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(
                json!({R: "INC-1 database migration"}),
                json!({"suspend": true}),
            ),
            ks(json!({}), json!({})),
        );
        let v = run(&r, s);
        assert!(v.allowed && v.mutated_object.is_none());
    }

    #[test]
    fn removing_the_reason_of_a_spec_suspension_is_refused_outside_mirror_mode() {
        let old = ks(
            json!({R: "INC-1 database migration"}),
            json!({"suspend": true}),
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({}), json!({"suspend": true})),
            old,
        );
        let m = run(&r, r#"{"mode":"annotation-only"}"#).message.unwrap();
        assert!(m.starts_with("Annotation reconcile.fluxcd.io/suspended was removed from Kustomization flux-system/apps, which stays suspended"), "{m}");
        assert!(m.contains(r#""spec":{"suspend":null}"#), "{m}");
    }

    #[test]
    fn staged_spec_changes_on_a_suspended_object_are_flagged() {
        let old = ks(
            json!({R: "INC-1 database migration"}),
            json!({"suspend": true, "path": "./a"}),
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(
                json!({R: "INC-1 database migration"}),
                json!({"suspend": true, "path": "./b"}),
            ),
            old.clone(),
        );
        let v = run(&r, "{}");
        assert!(
            v.warnings
                .iter()
                .any(|w| w.contains("stored but not applied until it is resumed")),
            "{:?}",
            v.warnings
        );
        let r = request("UPDATE", "alice", old.clone(), old);
        assert!(run(&r, "{}").warnings.is_empty());
    }

    #[test]
    fn the_suspender_is_recorded_and_owned_by_the_policy() {
        let s = r#"{"recordSuspender":true}"#;
        let key = "fluxcd.controlplane.io/suspendedBy";
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            ks(json!({}), json!({})),
        );
        assert_eq!(annotation_of(&run(&r, s), key), Some(json!("alice")));
        let old = ks(
            json!({R: "INC-1 database migration", key: "alice"}),
            json!({"suspend": true}),
        );
        let r = request(
            "UPDATE",
            "mallory",
            ks(
                json!({R: "INC-1 database migration", key: "bob"}),
                json!({"suspend": true}),
            ),
            old.clone(),
        );
        assert_eq!(annotation_of(&run(&r, s), key), Some(json!("alice")));
        let r = request(
            "UPDATE",
            "bob",
            ks(json!({key: "alice"}), json!({"suspend": true})),
            old,
        );
        let v = run(&r, s);
        assert_eq!(annotation_of(&v, key), None);
        assert_eq!(suspend_of(&v), Some(json!(false)));
    }

    #[test]
    fn a_username_longer_than_a_message_is_recorded_shortened_and_kept() {
        let s = r#"{"recordSuspender":true}"#;
        let key = "fluxcd.controlplane.io/suspendedBy";
        let long = "alice@example.com".repeat(1_000);
        let r = request(
            "UPDATE",
            &long,
            ks(json!({R: "INC-1 database migration"}), json!({})),
            ks(json!({}), json!({})),
        );
        let recorded = annotation_of(&run(&r, s), key).unwrap();
        let recorded = recorded.as_str().unwrap();
        assert!(recorded.len() <= guard_core::names::MAX_MESSAGE);
        assert!(recorded.starts_with("alice@example.comalice@"));
        assert!(recorded.contains("bytes not shown"));
        // Already recorded: a later edit by the same user leaves it alone.
        let old = ks(
            json!({R: "INC-1 database migration", key: recorded}),
            json!({"suspend": true}),
        );
        let r = request(
            "UPDATE",
            &long,
            ks(
                json!({R: "INC-2 other", key: recorded}),
                json!({"suspend": true}),
            ),
            old,
        );
        assert_eq!(annotation_of(&run(&r, s), key), None);
    }

    #[test]
    fn annotation_kinds_mirror_their_disable_annotation() {
        let ag = |ann: Value| json!({"apiVersion": "source.extensions.fluxcd.io/v1beta1", "kind": "ArtifactGenerator", "metadata": {"name": "apps", "annotations": ann}, "spec": {}});
        let r = request_of(
            "source.extensions.fluxcd.io",
            "ArtifactGenerator",
            "UPDATE",
            "alice",
            ag(json!({R: "INC-1 source cutover"})),
            ag(json!({})),
        );
        let v = run(&r, "{}");
        assert_eq!(
            annotation_of(&v, "source.extensions.fluxcd.io/reconcile"),
            Some(json!("disabled"))
        );
        let r = request_of(
            "source.extensions.fluxcd.io",
            "ArtifactGenerator",
            "UPDATE",
            "alice",
            ag(json!({"source.extensions.fluxcd.io/reconcile": "disabled"})),
            ag(json!({})),
        );
        assert!(message(&run(&r, "{}")).contains(
            "being suspended (annotation source.extensions.fluxcd.io/reconcile: disabled"
        ));
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

//! CREATE and UPDATE of ASO resources: annotation values, the ADR's
//! conflicts, what will happen in Azure, and the explicit-defaults mutation.
//!
//! Rules about values judge only what a request changes, so an object stored
//! before this policy was installed can still be updated (and, above all,
//! have its finalizer removed by ASO) without first being fixed.

use guard_core::edit::RawObject;
use guard_core::names::quote;
use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Context, Metadata, Operation, Verdict, Which};
use serde_json::value::RawValue;

use crate::effective::{resolve, Effective, Source};
use crate::matrix::{behaviour, when_exists, when_missing};
use crate::settings::{Enforcement, Settings};
use crate::values::{
    annotate, legacy_warning, refusal, AdoptionPolicy, Read, ReconcilePolicy, Vocabulary,
    ADOPTION_POLICY, FINALIZER, RECONCILE_POLICY, RECONCILE_POLICY_IF_EXISTS,
};
use crate::{takeover, terminating};

/// The audit annotation carrying the effective behaviour.
pub const AUDIT_KEY: &str = "effective-reconcile-policy";

pub fn admit(request: &AdmissionRequest, settings: &Settings, ctx: &Context<'_>) -> Verdict {
    let new = match request.metadata(Which::Object) {
        Ok(Some(meta)) => meta,
        Ok(None) => {
            let t = ObjectName::of(request, None);
            return Verdict::deny(format!(
                "{}: the {} request carries no object to check",
                t.describe(),
                request.operation.as_str()
            ));
        }
        Err(e) => {
            return Verdict::deny(format!("{}: {e}", ObjectName::of(request, None).describe()))
        }
    };
    let target = ObjectName::of(request, Some(&new));
    let old = match request.operation {
        Operation::Update => match request.metadata(Which::OldObject) {
            Ok(old) => old,
            Err(e) => return Verdict::deny(format!("{}: {e}", target.describe())),
        },
        _ => None,
    };
    judge(request, settings, ctx, &target, &new, old.as_ref())
        .unwrap_or_else(|message| Verdict::deny(format!("{}: {message}", target.describe())))
}

/// An annotation's value, judged strictly when the request sets it.
fn checked<V: Vocabulary>(
    meta: &Metadata,
    key: &str,
    changed: bool,
    settings: &Settings,
    consequence: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<V>, String> {
    let Some(value) = meta.annotation(key) else {
        return Ok(None);
    };
    match Read::<V>::of(value, settings.accept_legacy_values) {
        Read::Valid(v) => Ok(Some(v)),
        // Let through, but read as current ASO reads it: not a value it knows.
        // `reconcile-policy`'s effect is noted by `resolve`.
        Read::Legacy(_) if key == RECONCILE_POLICY => Ok(None),
        Read::Legacy(v) => {
            warnings.push(legacy_warning(
                key,
                value,
                v.as_str(),
                settings.default_reconcile_policy.as_str(),
            ));
            Ok(None)
        }
        Read::Invalid if changed => Err(refusal::<V>(key, value, consequence)),
        // Stored before; `reconcile-policy`'s effect is noted by `resolve`.
        Read::Invalid => {
            if key != RECONCILE_POLICY {
                warnings.push(format!(
                    "annotation {key} keeps the value {}, which is not valid ({}); this request \
                     does not change it",
                    quote(value),
                    V::accepted()
                ));
            }
            Ok(None)
        }
    }
}

fn judge(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
    target: &ObjectName<'_>,
    new: &Metadata,
    old: Option<&Metadata>,
) -> Result<Verdict, String> {
    let changed = |key: &str| match old {
        None => new.annotation(key).is_some(),
        Some(o) => o.annotation(key) != new.annotation(key),
    };
    let mut warnings = Vec::new();
    let default = settings.default_reconcile_policy;
    let rp_consequence = format!(
        "ASO would silently apply its default, {}{}",
        default.as_str(),
        if default == ReconcilePolicy::Manage {
            ", and deleting this object would delete the Azure resource"
        } else {
            ""
        }
    );
    if new.annotation(RECONCILE_POLICY) == Some("") && changed(RECONCILE_POLICY) {
        return Err(empty_refusal(settings, ctx, target)?);
    }
    let rp = checked::<ReconcilePolicy>(
        new,
        RECONCILE_POLICY,
        changed(RECONCILE_POLICY),
        settings,
        &rp_consequence,
        &mut warnings,
    )?;
    let ie = checked::<ReconcilePolicy>(
        new,
        RECONCILE_POLICY_IF_EXISTS,
        changed(RECONCILE_POLICY_IF_EXISTS),
        settings,
        "what happens to an existing Azure resource would be undefined",
        &mut warnings,
    )?;
    let ap = checked::<AdoptionPolicy>(
        new,
        ADOPTION_POLICY,
        changed(ADOPTION_POLICY),
        settings,
        "how an existing Azure resource is adopted would be undefined",
        &mut warnings,
    )?;

    let (rp_raw, ie_raw, ap_raw) = (
        new.annotation(RECONCILE_POLICY),
        new.annotation(RECONCILE_POLICY_IF_EXISTS),
        new.annotation(ADOPTION_POLICY),
    );
    let operator = settings.operator_identities.matches(&request.user_info);
    let finalized = old.is_some() && takeover::happened(request);

    // Nobody, the operator included, needs both: the ADR's operator writes
    // only `reconcile-policy`.
    if let (Some(a), Some(i)) = (ap_raw, ie_raw) {
        if changed(ADOPTION_POLICY) || changed(RECONCILE_POLICY_IF_EXISTS) {
            return Err(format!(
                "annotations {ADOPTION_POLICY} ({}) and {RECONCILE_POLICY_IF_EXISTS} ({}) are two \
                 ways of saying what happens to an existing Azure resource (ASO's ADR 2023-02, \
                 options 4.1 and 4.2) and can disagree. Keep one: {RECONCILE_POLICY_IF_EXISTS} \
                 is the ADR's decision, so remove {ADOPTION_POLICY}.",
                quote(a),
                quote(i)
            ));
        }
    }
    // A pair only stored (such as one written by `explicitDefaults` next to
    // the requester's `if-exists`) is no collision of this request's making.
    let sets_either = changed(RECONCILE_POLICY) || changed(RECONCILE_POLICY_IF_EXISTS);
    if let (Some(r), Some(i)) = (rp_raw, ie_raw) {
        if !operator && !finalized && sets_either {
            // A finalizer without ASO's status came with a manifest.
            let not_yet = if old.is_some_and(|o| o.finalizers.iter().any(|f| f == FINALIZER)) {
                format!("{FINALIZER} is set but ASO has written no status yet")
            } else {
                format!("no {FINALIZER} finalizer yet")
            };
            return Err(format!(
                "annotations {RECONCILE_POLICY} ({}) and {RECONCILE_POLICY_IF_EXISTS} ({}) are \
                 both set before ASO has taken over the resource ({}). \
                 The operator writes {RECONCILE_POLICY} itself from {RECONCILE_POLICY_IF_EXISTS} \
                 when the Azure resource already exists, so the two would collide (ASO's ADR \
                 2023-02). Set only one: {RECONCILE_POLICY_IF_EXISTS} to choose what happens to \
                 an existing Azure resource, or {RECONCILE_POLICY} to choose it in every case.",
                quote(r),
                quote(i),
                not_yet
            ));
        }
    }
    if finalized && changed(RECONCILE_POLICY_IF_EXISTS) {
        let was = old.and_then(|o| o.annotation(RECONCILE_POLICY_IF_EXISTS));
        let change = match (was, ie_raw) {
            (Some(w), Some(n)) => format!("changed from {} to {}", quote(w), quote(n)),
            (None, Some(n)) => format!("was added as {}", quote(n)),
            (Some(w), None) => format!("was removed (it was {})", quote(w)),
            (None, None) => "changed".to_string(),
        };
        let fix = match ie {
            Some(p) => format!(
                " To change how ASO treats the Azure resource now, set {RECONCILE_POLICY}: `{}`.",
                annotate(target, RECONCILE_POLICY, p.as_str())
            ),
            None => String::new(),
        };
        let message = format!(
            "annotation {RECONCILE_POLICY_IF_EXISTS} {change}, but ASO has already taken over \
             this resource ({FINALIZER} is set and ASO wrote its status) and reads it only before \
             then, so the change has no effect.{fix}"
        );
        match settings.if_exists_change_after_finalizer {
            Enforcement::Deny => return Err(message),
            Enforcement::Warn => warnings.push(message),
        }
    }

    // What a deletion under way now does in Azure, when this changes it.
    let mut deleting = Vec::new();
    if let Some(o) = old {
        if let Some(verdict) = terminating::check(request, settings, ctx, target, new, o)? {
            if !verdict.allowed {
                return Ok(verdict);
            }
            deleting = verdict.warnings;
        }
    }

    let create = request.operation == Operation::Create;
    let stored_invalid = rp_raw.is_some() && rp.is_none();
    let announce = create
        || changed(RECONCILE_POLICY)
        || changed(RECONCILE_POLICY_IF_EXISTS)
        || changed(ADOPTION_POLICY)
        || stored_invalid;
    if !announce {
        return Ok(prefixed(Verdict::allow(), target, warnings));
    }

    let mut effective = resolve(rp_raw, target.namespace, settings, ctx.cluster)?;
    let mut mutated = None;
    // ASO reads `reconcile-policy` only (`mergeReconcilePolicy`), never
    // `reconcile-policy-if-exists`, so the explicit default is written
    // whether or not the object carries the latter.
    if create && rp_raw.is_none() {
        if let Some((policy, object)) = explicit_default(request, settings, target, &effective)? {
            mutated = Some(object);
            effective = Effective {
                policy,
                source: Source::ExplicitDefault,
                ..effective
            };
        }
    }
    warnings.append(&mut effective.notes);

    // ADR 4.2: the operator writes `reconcile-policy-if-exists` as
    // `reconcile-policy` when it first finds the resource, never afterwards.
    let if_exists = ie.filter(|_| !finalized);
    let existing = match (if_exists, ap) {
        (Some(p), _) => p,
        (None, a) => behaviour(Some(effective.policy), a, true),
    };
    let missing = behaviour(Some(effective.policy), ap, false);
    let why = match (if_exists, ap) {
        (Some(p), _) => format!(
            "; {RECONCILE_POLICY_IF_EXISTS}: {} for an existing one",
            p.as_str()
        ),
        (None, Some(a)) => format!(
            "; {ADOPTION_POLICY}: {}, the more restrictive applies to an existing one",
            a.as_str()
        ),
        (None, None) => String::new(),
    };
    warnings.push(format!(
        "if the Azure resource already exists, it is {}; otherwise it is {}. Effective \
         {RECONCILE_POLICY}: {}{why}.",
        when_exists(existing),
        when_missing(missing),
        effective.describe()
    ));
    if existing != effective.policy {
        let key = if if_exists.is_some() {
            RECONCILE_POLICY_IF_EXISTS
        } else {
            ADOPTION_POLICY
        };
        warnings.push(format!(
            "ASO releases to date do not implement {key} (proposed in ASO's ADR 2023-02): until \
             they do, an existing Azure resource is {}.",
            when_exists(effective.policy)
        ));
    }
    let audit = if existing == missing {
        missing.as_str().to_string()
    } else {
        format!(
            "{} if the Azure resource exists, {} otherwise",
            existing.as_str(),
            missing.as_str()
        )
    };
    let verdict = prefixed(Verdict::allow(), target, warnings)
        .with_warnings(deleting)
        .audit(AUDIT_KEY, audit);
    Ok(match mutated {
        Some(object) => verdict.mutate_raw(object),
        None => verdict,
    })
}

/// The refusal of a new, empty `reconcile-policy`: ASO reads it as no
/// annotation, which is rarely what its writer meant.
fn empty_refusal(
    settings: &Settings,
    ctx: &Context<'_>,
    target: &ObjectName<'_>,
) -> Result<String, String> {
    let effective = resolve(None, target.namespace, settings, ctx.cluster)?;
    Ok(format!(
        "annotation {RECONCILE_POLICY} is empty; ASO reads an empty value as no annotation, so the \
         effective policy would be {}. Remove the annotation to mean that, or set one of: {}.",
        effective.describe(),
        ReconcilePolicy::accepted()
    ))
}

fn prefixed(verdict: Verdict, target: &ObjectName<'_>, warnings: Vec<String>) -> Verdict {
    let who = target.describe();
    verdict.with_warnings(warnings.into_iter().map(|w| format!("{who}: {w}")))
}

/// The object with `reconcile-policy` written from `explicitDefaults`, when
/// nothing else decides the policy: neither the object nor a readable
/// Namespace carries a valid annotation (a Namespace annotation stays in
/// charge, so changing it later still reaches this object).
///
/// Only the annotation is edited: every other member is copied as the
/// request's text has it. `Err` when the mutation is due but the object
/// cannot carry it back (text the host could not read in the reply, such as
/// a lone `\ud800` escape, `1e400` or nesting past the reply's depth):
/// refusing, rather than admitting the object without the annotation, keeps
/// the explicit default from being dropped silently.
fn explicit_default(
    request: &AdmissionRequest,
    settings: &Settings,
    target: &ObjectName<'_>,
    effective: &Effective,
) -> Result<Option<(ReconcilePolicy, Box<RawValue>)>, String> {
    if effective.source != Source::OperatorDefault || !effective.namespace_read {
        return Ok(None);
    }
    let Some(policy) = settings
        .explicit_defaults
        .get(target.namespace)
        .or_else(|| settings.explicit_defaults.get("*"))
        .copied()
    else {
        return Ok(None);
    };
    // Not reached: `admit` refuses a request without an object.
    let Some(raw) = request.raw(Which::Object) else {
        return Ok(None);
    };
    RawObject::parse(raw.get())
        .and_then(|mut object| {
            object.set_annotation(RECONCILE_POLICY, policy.as_str())?;
            object.to_raw()
        })
        .map(|object| Some((policy, object)))
        .map_err(|e| {
            format!(
                "malformed object: {e}; explicitDefaults cannot write {RECONCILE_POLICY}: {} on it",
                policy.as_str()
            )
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::AUDIT_KEY;
    use crate::test_support::*;
    use crate::values::*;

    const RP: &str = RECONCILE_POLICY;
    const IE: &str = RECONCILE_POLICY_IF_EXISTS;
    const AP: &str = ADOPTION_POLICY;

    fn create(annotations: serde_json::Value) -> guard_core::AdmissionRequest {
        request("CREATE", ALICE, Some(server(annotations, &[])), None)
    }

    #[test]
    fn valid_values_pass_and_say_what_will_happen() {
        let v = eval(
            &create(json!({ RP: "detach-on-delete" })),
            json!({}),
            &Namespaces::none(),
        );
        assert!(v.allowed, "{v:?}");
        assert_eq!(v.warnings.len(), 1, "{:?}", v.warnings);
        assert_eq!(
            v.warnings[0],
            "FlexibleServer shop/orders-db: if the Azure resource already \
             exists, it is adopted and updated, never deleted in Azure; otherwise it is created \
             and updated, never deleted in Azure. Effective serviceoperator.azure.com/reconcile-policy: \
             detach-on-delete (set on the object)."
        );
        assert_eq!(
            v.audit_annotations.get(AUDIT_KEY).map(String::as_str),
            Some("detach-on-delete")
        );
        assert!(v.mutated_object.is_none());
    }

    #[test]
    fn a_typo_is_refused_with_a_suggestion() {
        let v = eval(
            &create(json!({ RP: "detach-on-deletee" })),
            json!({}),
            &Namespaces::none(),
        );
        let m = message(&v);
        assert!(
            m.starts_with("FlexibleServer shop/orders-db: annotation"),
            "{m}"
        );
        assert!(
            m.contains("\"detach-on-deletee\", which is not one of its values"),
            "{m}"
        );
        assert!(
            m.contains("deleting this object would delete the Azure resource"),
            "{m}"
        );
        assert!(m.contains("manage, skip or detach-on-delete"), "{m}");
        assert!(m.contains("Did you mean \"detach-on-delete\"?"), "{m}");
        assert_eq!(v.code, Some(400));
    }

    #[test]
    fn case_whitespace_and_empty_values_are_refused() {
        for (value, hint) in [("Skip", "\"skip\""), (" manage", "\"manage\"")] {
            let v = eval(
                &create(json!({ RP: value })),
                json!({}),
                &Namespaces::none(),
            );
            let m = message(&v);
            assert!(m.contains("Accepted values (case-sensitive)"), "{m}");
            assert!(m.contains(hint), "{m}");
        }
        // ASO reads an empty value as none: the Namespace decides.
        let v = eval(
            &create(json!({ RP: "" })),
            json!({}),
            &Namespaces::with("shop", Some("detach-on-delete")),
        );
        let m = message(&v);
        assert!(
            m.contains(
                "is empty; ASO reads an empty value as no annotation, so the effective \
                        policy would be detach-on-delete (inherited from Namespace \"shop\")"
            ),
            "{m}"
        );
    }

    #[test]
    fn legacy_values_are_refused_or_accepted_with_a_warning() {
        let v = eval(
            &create(json!({ RP: "skip-delete" })),
            json!({}),
            &Namespaces::none(),
        );
        let m = message(&v);
        assert!(
            m.contains("legacy value") && m.contains("Write \"detach-on-delete\""),
            "{m}"
        );
        let v = eval(
            &create(json!({ RP: "skip-delete" })),
            json!({"acceptLegacyValues": true}),
            &Namespaces::none(),
        );
        assert!(v.allowed);
        warning(
            &v,
            "which ASO does not know (a legacy value of early ASO releases; write \
             \"detach-on-delete\" for what it meant): it ignores it and applies the operator \
             default, manage",
        );
        // Every part agrees with ASO: the operator default applies.
        assert_eq!(v.audit_annotations[AUDIT_KEY], "manage");
    }

    #[test]
    fn bad_proposal_values_are_refused() {
        let v = eval(
            &create(json!({ AP: "skip" })),
            json!({}),
            &Namespaces::none(),
        );
        let m = message(&v);
        assert!(
            m.contains(AP) && m.contains("Did you mean \"skip-if-exists\"?"),
            "{m}"
        );
        let v = eval(
            &create(json!({ IE: "skip-if-exists" })),
            json!({}),
            &Namespaces::none(),
        );
        let m = message(&v);
        assert!(
            m.contains(IE) && m.contains("Did you mean \"skip\"?"),
            "{m}"
        );
    }

    #[test]
    fn unchanged_stored_values_do_not_block_updates() {
        // Stored before the policy; ASO removing its finalizer must go through.
        let old = server(
            json!({ RP: "detach-on-deletee", AP: "never" }),
            &[FINALIZER],
        );
        let new = server(json!({ RP: "detach-on-deletee", AP: "never" }), &[]);
        let v = eval(
            &request("UPDATE", ASO, Some(new), Some(old)),
            json!({}),
            &Namespaces::none(),
        );
        assert!(v.allowed, "{v:?}");
        warning(
            &v,
            "which ASO does not know: it ignores it and applies the operator default, manage",
        );
        warning(
            &v,
            "annotation serviceoperator.azure.com/adoption-policy keeps the value \"never\"",
        );
    }

    #[test]
    fn an_update_that_changes_nothing_of_ours_is_silent() {
        let old = server(json!({ RP: "skip" }), &[FINALIZER]);
        let mut new = old.clone();
        new["spec"]["version"] = json!("17");
        let v = eval(
            &request("UPDATE", ALICE, Some(new), Some(old)),
            json!({}),
            &Namespaces::none(),
        );
        assert_eq!(v, guard_core::Verdict::allow());
    }

    #[test]
    fn both_if_exists_and_reconcile_policy_before_the_finalizer() {
        let both = json!({ RP: "skip", IE: "manage" });
        let v = eval(&create(both.clone()), json!({}), &Namespaces::none());
        let m = message(&v);
        assert!(
            m.contains("both set before ASO has taken over the resource"),
            "{m}"
        );
        assert!(
            m.contains("(\"skip\")") && m.contains("(\"manage\")"),
            "{m}"
        );
        // A manifest cannot claim the finalizer: judged on oldObject, absent on CREATE.
        let claimed = request(
            "CREATE",
            ALICE,
            Some(server(both.clone(), &[FINALIZER])),
            None,
        );
        assert!(!eval(&claimed, json!({}), &Namespaces::none()).allowed);
        // An UPDATE while the stored object has no finalizer yet.
        let old = server(json!({ IE: "manage" }), &[]);
        let upd = request(
            "UPDATE",
            ALICE,
            Some(server(both.clone(), &[])),
            Some(old.clone()),
        );
        assert!(!eval(&upd, json!({}), &Namespaces::none()).allowed);
        // The operator itself may set both.
        let by_aso = request(
            "UPDATE",
            ASO,
            Some(server(both.clone(), &[FINALIZER])),
            Some(old),
        );
        let v = eval(&by_aso, json!({}), &Namespaces::none());
        assert!(v.allowed, "{v:?}");
        // A finalizer the manifest carried is no takeover.
        let old = server(json!({ IE: "skip" }), &[FINALIZER]);
        let upd = request(
            "UPDATE",
            ALICE,
            Some(server(json!({ RP: "skip", IE: "skip" }), &[FINALIZER])),
            Some(old),
        );
        assert!(!eval(&upd, json!({}), &Namespaces::none()).allowed);
        // Once ASO took over, both may coexist.
        let old = taken_over(server(json!({ IE: "skip" }), &[FINALIZER]));
        let upd = request(
            "UPDATE",
            ALICE,
            Some(server(json!({ RP: "skip", IE: "skip" }), &[FINALIZER])),
            Some(old),
        );
        assert!(eval(&upd, json!({}), &Namespaces::none()).allowed);
        // Operator identities are a setting.
        let custom = json!({"operatorIdentities": {"users": [ALICE]}});
        assert!(eval(&create(both), custom, &Namespaces::none()).allowed);
    }

    #[test]
    fn adoption_policy_with_if_exists_is_refused() {
        let v = eval(
            &create(json!({ AP: "skip-if-exists", IE: "skip" })),
            json!({}),
            &Namespaces::none(),
        );
        let m = message(&v);
        assert!(
            m.contains("two ways of saying")
                && m.contains("remove serviceoperator.azure.com/adoption-policy"),
            "{m}"
        );
        // The operator is not exempt: it never writes either.
        let by_aso = request(
            "CREATE",
            ASO,
            Some(server(json!({ AP: "skip-if-exists", IE: "skip" }), &[])),
            None,
        );
        assert!(message(&eval(&by_aso, json!({}), &Namespaces::none())).contains("two ways"));
    }

    #[test]
    fn if_exists_changes_after_the_finalizer_warn_or_are_refused() {
        let old = taken_over(server(json!({ IE: "skip" }), &[FINALIZER]));
        let new = server(json!({ IE: "detach-on-delete" }), &[FINALIZER]);
        let req = request("UPDATE", ALICE, Some(new), Some(old.clone()));
        let v = eval(&req, json!({}), &Namespaces::none());
        assert!(v.allowed);
        let w = warning(&v, "has no effect");
        assert!(
            w.contains("changed from \"skip\" to \"detach-on-delete\""),
            "{w}"
        );
        assert!(w.contains("`kubectl annotate flexibleservers.dbforpostgresql.azure.com orders-db -n shop serviceoperator.azure.com/reconcile-policy=detach-on-delete --overwrite --field-manager=aso-reconcile`"), "{w}");
        // With the finalizer set, if-exists no longer decides anything.
        assert_eq!(v.audit_annotations[AUDIT_KEY], "manage");
        let v = eval(
            &req,
            json!({"ifExistsChangeAfterFinalizer": "deny"}),
            &Namespaces::none(),
        );
        assert!(message(&v).contains("has no effect"));
        // Removing it warns, and is refused in deny mode.
        let removed = request(
            "UPDATE",
            ALICE,
            Some(server(json!({}), &[FINALIZER])),
            Some(old),
        );
        let v = eval(&removed, json!({}), &Namespaces::none());
        warning(&v, "was removed (it was \"skip\")");
        let v = eval(
            &removed,
            json!({"ifExistsChangeAfterFinalizer": "deny"}),
            &Namespaces::none(),
        );
        assert!(message(&v).contains("was removed (it was \"skip\")"));
    }

    #[test]
    fn the_matrix_is_announced_with_a_caveat() {
        let v = eval(
            &create(json!({ AP: "skip-if-exists" })),
            json!({}),
            &Namespaces::none(),
        );
        assert!(v.allowed);
        let w = warning(&v, "if the Azure resource already exists");
        assert!(w.contains("it is used as it is: never updated, never deleted in Azure; otherwise it is created and fully managed"), "{w}");
        assert!(
            w.contains("adoption-policy: skip-if-exists, the more restrictive applies"),
            "{w}"
        );
        let w = warning(&v, "do not implement");
        assert!(
            w.contains("an existing Azure resource is adopted, updated to match, and deleted"),
            "{w}"
        );
        assert_eq!(
            v.audit_annotations[AUDIT_KEY],
            "skip if the Azure resource exists, manage otherwise"
        );
        // adopt-if-exists changes nothing, so no caveat.
        let v = eval(
            &create(json!({ AP: "adopt-if-exists" })),
            json!({}),
            &Namespaces::none(),
        );
        assert_eq!(v.warnings.len(), 1, "{:?}", v.warnings);
        let v = eval(
            &create(json!({ IE: "detach-on-delete" })),
            json!({}),
            &Namespaces::none(),
        );
        assert_eq!(
            v.audit_annotations[AUDIT_KEY],
            "detach-on-delete if the Azure resource exists, manage otherwise"
        );
        warning(
            &v,
            "do not implement serviceoperator.azure.com/reconcile-policy-if-exists",
        );
    }

    #[test]
    fn the_namespace_and_the_operator_default_are_inherited() {
        let v = eval(
            &create(json!({})),
            json!({}),
            &Namespaces::with("shop", Some("skip")),
        );
        warning(&v, "Effective serviceoperator.azure.com/reconcile-policy: skip (inherited from Namespace \"shop\")");
        let v = eval(
            &create(json!({})),
            json!({"defaultReconcilePolicy": "detach-on-delete"}),
            &Namespaces::none(),
        );
        warning(&v, "detach-on-delete (the operator default)");
        let v = eval(
            &create(json!({})),
            json!({}),
            &Namespaces::failing("shop", "connection refused"),
        );
        let m = message(&v);
        assert!(
            m.contains("cannot read Namespace \"shop\"") && m.contains("connection refused"),
            "{m}"
        );
        let v = eval(
            &create(json!({})),
            json!({"namespaceLookupFailure": "allow"}),
            &Namespaces::failing("shop", "timeout"),
        );
        assert!(v.allowed);
        warning(&v, "could not be read (\"timeout\")");
    }

    #[test]
    fn explicit_defaults_write_the_annotation_on_create() {
        let settings = json!({"explicitDefaults": {"shop": "detach-on-delete", "*": "manage"}});
        let v = eval(
            &create(json!({})),
            settings.clone(),
            &Namespaces::with("shop", None),
        );
        let object = v.mutated_value().expect("a mutation");
        assert_eq!(object["metadata"]["annotations"][RP], "detach-on-delete");
        assert_eq!(object["spec"]["version"], "16");
        warning(
            &v,
            "detach-on-delete (written on the object from explicitDefaults)",
        );
        // `*` covers other namespaces; null or absent annotations are created.
        let mut obj = server(json!(null), &[]);
        obj["metadata"]["namespace"] = json!("shop");
        let req = request("CREATE", ALICE, Some(obj), None);
        let v = eval(
            &req,
            json!({"explicitDefaults": {"*": "skip"}}),
            &Namespaces::none(),
        );
        assert_eq!(
            v.mutated_value().unwrap()["metadata"]["annotations"][RP],
            "skip"
        );
        // Not when something else decides, nor on UPDATE.
        let v = eval(
            &create(json!({})),
            settings.clone(),
            &Namespaces::with("shop", Some("skip")),
        );
        assert!(v.mutated_object.is_none());
        // ASO does not read `if-exists`: the default is written next to it.
        let v = eval(
            &create(json!({ IE: "skip" })),
            settings.clone(),
            &Namespaces::none(),
        );
        let object = v.mutated_value().expect("a mutation");
        assert_eq!(object["metadata"]["annotations"][RP], "detach-on-delete");
        assert_eq!(object["metadata"]["annotations"][IE], "skip");
        let v = eval(
            &create(json!({})),
            json!({"explicitDefaults": {"other": "skip"}}),
            &Namespaces::none(),
        );
        assert!(v.mutated_object.is_none());
        let old = server(json!({}), &[FINALIZER]);
        let upd = request(
            "UPDATE",
            ALICE,
            Some(server(json!({ AP: "skip-if-exists" }), &[FINALIZER])),
            Some(old),
        );
        assert!(eval(&upd, settings, &Namespaces::none())
            .mutated_object
            .is_none());
    }

    /// A CREATE of `server(json!({}))` whose spec carries `spec_text`.
    fn create_with_spec(spec_text: &str) -> guard_core::AdmissionRequest {
        let mut req = create(json!({}));
        let text = serde_json::to_string(&server(json!({}), &[]))
            .unwrap()
            .replace(
                r#""spec":{"location":"westeurope","version":"16"}"#,
                &format!(r#""spec":{spec_text}"#),
            );
        assert!(text.contains(spec_text), "{text}");
        req.object = Some(serde_json::value::RawValue::from_string(text).unwrap());
        req
    }

    #[test]
    fn the_explicit_default_leaves_the_rest_of_the_object_as_it_came() {
        let settings = json!({"explicitDefaults": {"*": "skip"}});
        let spec = r#"{"n":1.50,"e":"\u00e9","m":[1e2,-0.0]}"#;
        let v = eval(&create_with_spec(spec), settings, &Namespaces::none());
        let raw = v.mutated_object.as_ref().expect("a mutation").get();
        assert!(raw.contains(&format!(r#""spec":{spec}"#)), "{raw}");
        assert!(
            raw.contains(r#""annotations":{"serviceoperator.azure.com/reconcile-policy":"skip"}"#),
            "{raw}"
        );
    }

    #[test]
    fn an_object_that_cannot_carry_the_explicit_default_back_is_refused() {
        let settings = json!({"explicitDefaults": {"*": "skip"}});
        let deep = format!(r#"{{"a":{}1{}}}"#, "[".repeat(200), "]".repeat(200));
        for spec in [r#"{"note":"\ud800"}"#, r#"{"n":1e400}"#, deep.as_str()] {
            let req = create_with_spec(spec);
            let v = eval(&req, settings.clone(), &Namespaces::none());
            let m = message(&v);
            assert!(
                m.starts_with(
                    "FlexibleServer shop/orders-db: malformed object: it \
                     is not valid JSON: "
                ) && m.ends_with(
                    "; explicitDefaults cannot write serviceoperator.azure.com/reconcile-policy: \
                     skip on it"
                ),
                "{m}"
            );
            // Without a mutation due, the rest of the object is not read.
            let v = eval(&req, json!({}), &Namespaces::none());
            assert!(v.allowed, "{v:?}");
            assert!(v.mutated_object.is_none());
        }
    }

    #[test]
    fn malformed_objects_are_refused_naming_the_field() {
        let v = eval(
            &request("CREATE", ALICE, None, None),
            json!({}),
            &Namespaces::none(),
        );
        assert!(message(&v).contains("the CREATE request carries no object"));
        let bad = json!({"metadata": {"annotations": {RP: 1}}});
        let v = eval(
            &request("CREATE", ALICE, Some(bad), None),
            json!({}),
            &Namespaces::none(),
        );
        assert!(message(&v).contains("malformed object"), "{v:?}");
        let v = eval(
            &request(
                "UPDATE",
                ALICE,
                Some(server(json!({}), &[])),
                Some(json!([1])),
            ),
            json!({}),
            &Namespaces::none(),
        );
        assert!(message(&v).contains("malformed oldObject"), "{v:?}");
        // No metadata at all reads as no annotations.
        let v = eval(
            &request(
                "CREATE",
                ALICE,
                Some(json!({"kind": "FlexibleServer"})),
                None,
            ),
            json!({}),
            &Namespaces::none(),
        );
        assert!(v.allowed, "{v:?}");
    }
}

//! The flows for a Namespace: its `reconcile-policy`, inherited by the ASO
//! resources in it, and its DELETE, judged once for everything in it.

use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Context, Which};

use crate::decision::{Audit, Decision, Inherited, Refusal, Subject, Warning};
use crate::namespace::{deleted_by_switch, inherited_policy, target};
use crate::namespace_deletion::at_stake;
use crate::owners;
use crate::settings::Settings;
use crate::values::{Annotation, Read, ReconcilePolicy, Vocabulary, RECONCILE_POLICY};

/// CREATE or UPDATE of a Namespace.
pub(super) fn change(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Decision {
    let (new, old) = match super::objects(request, &|meta| Subject::of(&target(request, meta))) {
        Ok(read) => read,
        Err(refused) => return *refused,
    };
    let target = target(request, Some(&new));
    let subject = Subject::of(&target);
    let changed = |key: &str| match &old {
        None => new.annotation(key).is_some(),
        Some(o) => o.annotation(key) != new.annotation(key),
    };
    // Only `reconcile-policy` means anything on a Namespace.
    if let Some(r) = super::resource::near_miss(&new, old.as_ref()).filter(|r| {
        matches!(r, Refusal::NearMissKey { meant, .. } if *meant == Annotation::ReconcilePolicy)
    }) {
        return Decision::refuse(subject, r);
    }
    let default = settings.default_reconcile_policy;
    let legacy = settings.accept_legacy_values;
    let mut warnings = Vec::new();
    for key in [Annotation::IfExists, Annotation::AdoptionPolicy] {
        if changed(key.key()) && new.annotation(key.key()).is_some() {
            warnings.push(Warning::NoEffectOnNamespace(key));
        }
    }
    let value = new.annotation(RECONCILE_POLICY);
    if !changed(RECONCILE_POLICY) {
        if let Some(v) = value.filter(|v| Read::<ReconcilePolicy>::of(v, legacy) == Read::Invalid) {
            warnings.push(Warning::NamespaceKeepsInvalid {
                value: v.to_string(),
            });
        }
        return Decision::pass(subject).warned(warnings);
    }
    let (policy, why) = match value.map(|v| (v, Read::<ReconcilePolicy>::of(v, legacy))) {
        None => (default, Inherited::Removed),
        Some((_, Read::Valid(p))) => (p, Inherited::SetOnNamespace),
        // ASO reads a legacy value as unknown: its default.
        Some((v, Read::Legacy(p))) => {
            warnings.push(Warning::Legacy {
                key: Annotation::ReconcilePolicy,
                value: v.to_string(),
                modern: p.as_str(),
            });
            (default, Inherited::Unknown)
        }
        Some((v, Read::Invalid)) => {
            let refusal = Refusal::InvalidOnNamespace {
                value: v.to_string(),
            };
            return Decision::refuse(subject, refusal).warned(warnings);
        }
    };
    let before = old.as_ref().map_or(default, |o| {
        inherited_policy(o.annotation(RECONCILE_POLICY), default)
    });
    if policy == ReconcilePolicy::Manage && before != ReconcilePolicy::Manage {
        match deleted_by_switch(&target.name, settings, ctx) {
            Ok(held) if held.is_empty() => {}
            Ok(held) => {
                let refusal = Refusal::NamespaceSwitchDeletes { before, held };
                return Decision::refuse(subject, refusal).warned(warnings);
            }
            Err(f) => return Decision::refuse(subject, Refusal::Failed(f)).warned(warnings),
        }
    }
    Decision::pass(subject)
        .warned(warnings)
        .warned([Warning::NamespaceFollows { policy, why }])
        .audited(Audit::Policy(policy))
}

/// DELETE of a Namespace: refused while ASO would delete in Azure the
/// protected resources the namespace controller then deletes.
pub(super) fn deletion(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Decision {
    let p = &settings.deletion_protection;
    if !p.is_enabled() || !owners::needed(p) {
        return Decision::pass(Subject::default());
    }
    let named = |name: &str| Subject::of(&ObjectName::new("Namespace", "namespaces", "", name));
    let old = match request.metadata(Which::OldObject) {
        Ok(old) => old,
        Err(e) => return Decision::refuse(named(&request.name), Refusal::Malformed(e)),
    };
    let name = match &old {
        Some(o) if !o.name.is_empty() => o.name.as_str(),
        _ => request.name.as_str(),
    };
    let subject = named(name);
    let Some(old) = &old else {
        return Decision::refuse(subject, Refusal::NoObject(Which::OldObject));
    };
    if !p.namespaces.is_empty() && !p.namespaces.iter().any(|n| n == name) {
        return Decision::pass(subject);
    }
    if old.annotation(&p.confirmation_annotation) == Some(name) {
        return Decision::pass(subject).warned([Warning::NamespaceDeletionConfirmed]);
    }
    let inherited = old.annotation(RECONCILE_POLICY).map(str::to_string);
    match at_stake(name, inherited, settings, ctx) {
        Ok(held) if held.is_empty() => Decision::pass(subject),
        Ok(held) => Decision::refuse(subject, Refusal::NamespaceHolds { held }),
        Err(f) => Decision::refuse(subject, Refusal::Failed(f)),
    }
}

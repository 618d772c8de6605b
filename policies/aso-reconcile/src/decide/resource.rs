//! The flows for an ASO resource: a change (annotation values, the ADR's
//! conflicts, a deletion under way, what will happen in Azure, the
//! explicit-defaults mutation) and its DELETE (deletion protection).
//!
//! Rules about values judge only what a request changes, so an object stored
//! before this policy was installed can still be updated (and, above all,
//! have its finalizer removed by ASO) without first being fixed.

use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Context, Metadata, Operation, Which};

use crate::conflicts::{conflict, late_if_exists};
use crate::decision::{Audit, Decision, Mutation, Refusal, Subject, Switch, Warning};
use crate::deletion::{assess, kind_selected, Assessment, Deletion};
use crate::effective::{resolve, Effective, Source};
use crate::matrix::outcome;
use crate::settings::{Enforcement, Settings};
use crate::stored;
use crate::values::{
    near_miss_key, AdoptionPolicy, Annotation, Read, ReconcilePolicy, Vocabulary, DELETE_POLLER_ID,
    POLLER_RESUME_ID, POLLER_RESUME_TOKEN, RECONCILE_POLICY, RECONCILE_POLICY_IF_EXISTS,
    RESOURCE_ID,
};
use crate::{explicit_default, owners, repoint, takeover, terminating};

/// DELETE of an ASO resource: deletion protection.
pub(super) fn deletion(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Decision {
    let p = &settings.deletion_protection;
    let unnamed = || Subject::of(&ObjectName::of(request, None));
    // Any ASO object may hold protected ones, when their kinds can be listed.
    if !p.is_enabled() || (!kind_selected(p, request) && !owners::needed(p)) {
        return Decision::pass(unnamed());
    }
    // Read once for every rule when it reads plainly; else rule by rule,
    // each error in its own words.
    let (old, facts) = match stored::read(request, settings) {
        Some((meta, facts)) => (Some(meta), Some(facts)),
        None => match request.metadata(Which::OldObject) {
            Ok(old) => (old, None),
            Err(e) => return Decision::refuse(unnamed(), Refusal::Malformed(e)),
        },
    };
    let target = ObjectName::of(request, old.as_ref());
    let subject = Subject::of(&target);
    let Some(old) = &old else {
        return Decision::refuse(subject, Refusal::NoObject(Which::OldObject));
    };
    assessed(
        subject,
        assess(request, settings, ctx, &target, old, None, facts.as_ref()),
        None,
    )
}

/// A deletion's assessment as the decision on `subject`; `switch` when the
/// deletion is one an UPDATE of an object already being deleted turns to Azure.
fn assessed(subject: Subject, assessment: Assessment, switch: Option<Switch>) -> Decision {
    let notes = assessment.notes.into_iter().map(Warning::Note);
    let mut decision = Decision::pass(subject).warned(notes);
    let (warning, audit) = match assessment.deletion {
        Deletion::Free => return decision,
        Deletion::NotTakenOver => return decision.warned([Warning::NotTakenOver]),
        Deletion::Failed(f) => {
            decision.refusal = Some(Refusal::Failed(f));
            return decision;
        }
        Deletion::Protected(protected) => {
            decision.refusal = Some(Refusal::Protected {
                protected: Box::new(protected),
                switch: switch.map(Box::new),
            });
            return decision;
        }
        Deletion::Kept(r) => {
            let audit = Audit::Policy(r.policy);
            (Warning::Kept(r), audit)
        }
        Deletion::Confirmed(r) => (Warning::Confirmed(r), Audit::Confirmed),
        Deletion::ConfirmedOnNamespace(r) => (
            Warning::ConfirmedOnNamespace(r),
            Audit::ConfirmedOnNamespace,
        ),
    };
    decision.warned([warning]).audited(audit)
}

/// CREATE or UPDATE of an ASO resource.
pub(super) fn change(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
) -> Decision {
    let named = |meta: Option<&Metadata>| Subject::of(&ObjectName::of(request, meta));
    let (new, old) = match super::objects(request, &named) {
        Ok(read) => read,
        Err(refused) => return *refused,
    };
    let target = ObjectName::of(request, Some(&new));
    let subject = Subject::of(&target);
    let change = Change {
        request,
        settings,
        ctx,
        target: &target,
        new: &new,
        old: old.as_ref(),
    };
    change
        .decided(&subject)
        .unwrap_or_else(|refusal| Decision::refuse(subject, refusal))
}

/// A CREATE or UPDATE of an ASO resource, as read.
struct Change<'a> {
    request: &'a AdmissionRequest,
    settings: &'a Settings,
    ctx: &'a Context<'a>,
    target: &'a ObjectName<'a>,
    new: &'a Metadata,
    old: Option<&'a Metadata>,
}

/// The annotation values a change leaves, as ASO acts on them.
struct Values {
    reconcile: Option<ReconcilePolicy>,
    if_exists: Option<ReconcilePolicy>,
    adoption: Option<AdoptionPolicy>,
}

impl Change<'_> {
    fn changed(&self, key: &str) -> bool {
        match self.old {
            None => self.new.annotation(key).is_some(),
            Some(o) => o.annotation(key) != self.new.annotation(key),
        }
    }

    fn resolve(&self, own: Option<&str>) -> Result<Effective, Refusal> {
        resolve(own, self.target.namespace, self.settings, self.ctx.cluster)
            .map_err(Refusal::Failed)
    }

    /// The decision; `Err` is a refusal that says nothing else.
    fn decided(&self, subject: &Subject) -> Result<Decision, Refusal> {
        let mut warnings = Vec::new();
        let values = self.values(&mut warnings)?;
        let operator = self
            .settings
            .operator_identities
            .matches(&self.request.user_info);
        let finalized = self.old.is_some() && takeover::happened(self.request);
        let changed = |key: &str| self.changed(key);
        if let Some(c) = conflict(self.new, self.old, operator, finalized, changed) {
            return Err(Refusal::Conflict(c));
        }
        if let Some(late) = late_if_exists(self.new, self.old, finalized, values.if_exists) {
            match self.settings.if_exists_change_after_finalizer {
                Enforcement::Deny => return Err(Refusal::IfExistsAfterTakeover(late)),
                Enforcement::Warn => warnings.push(Warning::IfExistsAfterTakeover(late)),
            }
        }
        // What a deletion under way now does in Azure, when this changes it.
        let (mut deleting, mut deleting_audit) = (Vec::new(), None);
        if let Some(old) = self.old {
            let key = &self.settings.deletion_protection.confirmation_annotation;
            let carried = repoint::carried(old, self.new, key, &self.target.name);
            if let Some(r) =
                carried.filter(|_| self.settings.deletion_protection.is_enabled() && !operator)
            {
                return Err(Refusal::ConfirmationCarried(r));
            }
            let turn = terminating::turn(
                self.request,
                self.settings,
                self.ctx,
                self.target,
                self.new,
                old,
            )
            .map_err(Refusal::Failed)?;
            if let Some(t) = turn {
                let switch = Switch {
                    before: t.before,
                    repointed: t.repointed,
                };
                let decision = assessed(subject.clone(), t.assessment, Some(switch));
                if decision.refusal.is_some() {
                    return Ok(decision);
                }
                deleting = decision.warnings;
                deleting_audit = decision.audit;
            }
        }
        let stored_invalid =
            self.new.annotation(RECONCILE_POLICY).is_some() && values.reconcile.is_none();
        let announce = self.request.operation == Operation::Create
            || [
                RECONCILE_POLICY,
                RECONCILE_POLICY_IF_EXISTS,
                crate::values::ADOPTION_POLICY,
            ]
            .into_iter()
            .any(|key| self.changed(key))
            || stored_invalid;
        if !announce {
            let mut decision = Decision::pass(subject.clone()).warned(warnings);
            decision.audit = deleting_audit;
            return Ok(decision.warned(deleting));
        }
        let decision = self.announced(subject, &values, finalized, warnings)?;
        Ok(decision.warned(deleting))
    }

    /// The values of the three annotations; a new value that is not valid
    /// is refused, a stored one or a legacy one is noted.
    fn values(&self, warnings: &mut Vec<Warning>) -> Result<Values, Refusal> {
        if let Some(refusal) = near_miss(self.new, self.old) {
            return Err(refusal);
        }
        let rp = self.new.annotation(RECONCILE_POLICY);
        if rp == Some("") && self.changed(RECONCILE_POLICY) {
            let effective = self.resolve(None)?;
            return Err(Refusal::EmptyReconcilePolicy(effective.resolved()));
        }
        Ok(Values {
            reconcile: self.checked(Annotation::ReconcilePolicy, warnings)?,
            if_exists: self.checked(Annotation::IfExists, warnings)?,
            adoption: self.checked(Annotation::AdoptionPolicy, warnings)?,
        })
    }

    /// An annotation's value, judged strictly when the request sets it.
    fn checked<V: Vocabulary>(
        &self,
        key: Annotation,
        warnings: &mut Vec<Warning>,
    ) -> Result<Option<V>, Refusal> {
        let Some(value) = self.new.annotation(key.key()) else {
            return Ok(None);
        };
        match Read::<V>::of(value, self.settings.accept_legacy_values) {
            Read::Valid(v) => Ok(Some(v)),
            // Let through, but read as current ASO reads it: not a value it
            // knows. `reconcile-policy`'s effect is noted by `resolve`.
            Read::Legacy(_) if key == Annotation::ReconcilePolicy => Ok(None),
            Read::Legacy(v) => {
                warnings.push(Warning::Legacy {
                    key,
                    value: value.to_string(),
                    modern: v.as_str(),
                });
                Ok(None)
            }
            Read::Invalid if self.changed(key.key()) => Err(Refusal::InvalidValue {
                key,
                value: value.to_string(),
            }),
            // Stored before; `reconcile-policy`'s effect is noted by `resolve`.
            Read::Invalid => {
                if key != Annotation::ReconcilePolicy {
                    warnings.push(Warning::StoredInvalid {
                        key,
                        value: value.to_string(),
                    });
                }
                Ok(None)
            }
        }
    }

    /// The stored object's `resource-id` when ASO has already issued its
    /// Azure DELETE: the object is being deleted and carries ASO's record of
    /// the delete poller (`DetermineDeleteAction` then only monitors it, and
    /// a policy that no longer allows delete only removes the finalizer; the
    /// DELETE Azure accepted goes on).
    fn delete_under_way(&self) -> Option<String> {
        let old = self.old?;
        old.deletion_timestamp.as_ref()?;
        if old.annotation(POLLER_RESUME_ID) != Some(DELETE_POLLER_ID)
            || old.annotation(POLLER_RESUME_TOKEN).is_none()
        {
            return None;
        }
        Some(old.annotation(RESOURCE_ID).unwrap_or_default().to_string())
    }

    /// What will happen in Azure, with the explicit default written when due.
    fn announced(
        &self,
        subject: &Subject,
        values: &Values,
        finalized: bool,
        mut warnings: Vec<Warning>,
    ) -> Result<Decision, Refusal> {
        let own = self.new.annotation(RECONCILE_POLICY);
        let mut effective = self.resolve(own)?;
        let mut mutation = None;
        // ASO reads `reconcile-policy` only (`mergeReconcilePolicy`), never
        // `reconcile-policy-if-exists`, so the explicit default is written
        // whether or not the object carries the latter.
        if self.request.operation == Operation::Create && own.is_none() {
            let written = explicit_default::written(
                self.request,
                self.settings,
                self.target.namespace,
                &effective,
            )
            .map_err(Refusal::ExplicitDefaultUnwritable)?;
            if let Some((policy, object)) = written {
                mutation = Some(Mutation(object));
                effective = Effective {
                    policy,
                    source: Source::ExplicitDefault,
                    ..effective
                };
            }
        }
        warnings.extend(
            std::mem::take(&mut effective.notes)
                .into_iter()
                .map(Warning::Note),
        );
        // ADR 4.2: the operator writes `reconcile-policy-if-exists` as
        // `reconcile-policy` when it first finds the resource, never afterwards.
        let if_exists = values.if_exists.filter(|_| !finalized);
        let outcome = outcome(effective.resolved(), if_exists, values.adoption);
        let (existing, missing) = (outcome.existing, outcome.missing);
        if let Some(id) = self.delete_under_way() {
            // Adoption and creation are moot: Azure is already deleting it.
            warnings.push(Warning::DeleteUnderWay {
                effective: effective.resolved(),
                resource_id: id,
            });
        } else {
            warnings.push(Warning::Outcome(outcome));
        }
        if existing != effective.policy {
            let key = if if_exists.is_some() {
                Annotation::IfExists
            } else {
                Annotation::AdoptionPolicy
            };
            warnings.push(Warning::NotImplemented {
                key,
                policy: effective.policy,
            });
        }
        let audit = if existing == missing {
            Audit::Policy(missing)
        } else {
            Audit::Split { existing, missing }
        };
        let mut decision = Decision::pass(subject.clone())
            .warned(warnings)
            .audited(audit);
        decision.mutation = mutation;
        Ok(decision)
    }
}

/// A key the request sets or changes that is a near miss of one ASO reads
/// (`reconcile_policy`, `Reconcile-Policy`, no prefix): ASO ignores it and
/// applies what it would without it, so it is refused naming the right key.
pub(super) fn near_miss(new: &Metadata, old: Option<&Metadata>) -> Option<Refusal> {
    /// Keys that look like one but are not a folded match are compared by
    /// edit distance, at most this many per request.
    const MOST: usize = 32;
    let mut candidates = 0;
    for (key, value) in &new.annotations {
        if old.is_some_and(|o| o.annotation(key) == Some(value)) {
            continue;
        }
        if candidates >= MOST {
            break;
        }
        if let Some(meant) = near_miss_key(key, &mut candidates) {
            return Some(Refusal::NearMissKey {
                key: key.to_string(),
                meant,
                value: value.to_string(),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use guard_core::Which;

    use crate::conflicts::Conflict;
    use crate::decision::{Audit, Decision, Refusal, Warning};
    use crate::effective::{Note, Resolved, Source};
    use crate::failure::{Failure, NamespaceError};
    use crate::matrix::{By, Outcome};
    use crate::render::AUDIT_KEY;
    use crate::test_support::*;
    use crate::values::*;
    use guard_core::request::Part;

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
            &NoCluster,
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
            &NoCluster,
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
        for value in ["Skip", " manage"] {
            let d = decide(&create(json!({ RP: value })), json!({}), &NoCluster);
            let refusal = Refusal::InvalidValue {
                key: Annotation::ReconcilePolicy,
                value: value.into(),
            };
            assert_eq!(d, Decision::refuse(orders_db(), refusal));
        }
        // ASO reads an empty value as none: the Namespace decides.
        let d = decide(
            &create(json!({ RP: "" })),
            json!({}),
            &RecordedCluster::new(&with_namespace("shop", Some("detach-on-delete"))),
        );
        let inherited = Resolved {
            policy: ReconcilePolicy::DetachOnDelete,
            source: Source::Namespace("shop".into()),
        };
        let refusal = Refusal::EmptyReconcilePolicy(inherited);
        assert_eq!(d, Decision::refuse(orders_db(), refusal));
    }

    #[test]
    fn legacy_values_are_refused_or_accepted_with_a_warning() {
        let req = create(json!({ RP: "skip-delete" }));
        let d = decide(&req, json!({}), &NoCluster);
        let refusal = Refusal::InvalidValue {
            key: Annotation::ReconcilePolicy,
            value: "skip-delete".into(),
        };
        assert_eq!(d.refusal, Some(refusal));
        let d = decide(&req, json!({"acceptLegacyValues": true}), &NoCluster);
        assert_eq!(d.refusal, None);
        let note = Note::UnknownOnObject {
            value: "skip-delete".into(),
        };
        assert_eq!(d.warnings[0], Warning::Note(note));
        // Every part agrees with ASO: the operator default applies.
        assert_eq!(d.audit, Some(Audit::Policy(ReconcilePolicy::Manage)));
    }

    #[test]
    fn bad_proposal_values_are_refused() {
        for (key, name, value) in [
            (Annotation::AdoptionPolicy, AP, "skip"),
            (Annotation::IfExists, IE, "skip-if-exists"),
        ] {
            let d = decide(&create(json!({ name: value })), json!({}), &NoCluster);
            let refusal = Refusal::InvalidValue {
                key,
                value: value.into(),
            };
            assert_eq!(d.refusal, Some(refusal));
        }
    }

    #[test]
    fn unchanged_stored_values_do_not_block_updates() {
        // Stored before the policy; ASO removing its finalizer must go through.
        let old = server(
            json!({ RP: "detach-on-deletee", AP: "never" }),
            &[FINALIZER],
        );
        let new = server(json!({ RP: "detach-on-deletee", AP: "never" }), &[]);
        let d = decide(
            &request("UPDATE", ASO, Some(new), Some(old)),
            json!({}),
            &NoCluster,
        );
        assert_eq!(d.refusal, None);
        let stored = Warning::StoredInvalid {
            key: Annotation::AdoptionPolicy,
            value: "never".into(),
        };
        let note = Warning::Note(Note::UnknownOnObject {
            value: "detach-on-deletee".into(),
        });
        assert_eq!(d.warnings[..2], [stored, note]);
    }

    #[test]
    fn an_update_that_changes_nothing_of_ours_is_silent() {
        let old = server(json!({ RP: "skip" }), &[FINALIZER]);
        let mut new = old.clone();
        new["spec"]["version"] = json!("17");
        let d = decide(
            &request("UPDATE", ALICE, Some(new), Some(old)),
            json!({}),
            &NoCluster,
        );
        assert_eq!(d, Decision::pass(orders_db()));
    }

    #[test]
    fn both_if_exists_and_reconcile_policy_before_the_finalizer() {
        let both = json!({ RP: "skip", IE: "manage" });
        let refused = |if_exists: &str, finalizer_set| {
            Some(Refusal::Conflict(Conflict::BothBeforeTakeover {
                reconcile: "skip".into(),
                if_exists: if_exists.into(),
                finalizer_set,
            }))
        };
        let refusal = |req: &guard_core::AdmissionRequest, settings| {
            decide(req, settings, &NoCluster).refusal
        };
        assert_eq!(
            refusal(&create(both.clone()), json!({})),
            refused("manage", false)
        );
        // A manifest cannot claim the finalizer: judged on oldObject, absent on CREATE.
        let claimed = request(
            "CREATE",
            ALICE,
            Some(server(both.clone(), &[FINALIZER])),
            None,
        );
        assert_eq!(refusal(&claimed, json!({})), refused("manage", false));
        // An UPDATE while the stored object has no finalizer yet.
        let old = server(json!({ IE: "manage" }), &[]);
        let upd = request(
            "UPDATE",
            ALICE,
            Some(server(both.clone(), &[])),
            Some(old.clone()),
        );
        assert_eq!(refusal(&upd, json!({})), refused("manage", false));
        // The operator itself may set both.
        let by_aso = request(
            "UPDATE",
            ASO,
            Some(server(both.clone(), &[FINALIZER])),
            Some(old),
        );
        assert_eq!(refusal(&by_aso, json!({})), None);
        // A finalizer the manifest carried is no takeover.
        let old = server(json!({ IE: "skip" }), &[FINALIZER]);
        let upd = request(
            "UPDATE",
            ALICE,
            Some(server(json!({ RP: "skip", IE: "skip" }), &[FINALIZER])),
            Some(old),
        );
        assert_eq!(refusal(&upd, json!({})), refused("skip", true));
        // Once ASO took over, both may coexist.
        let old = taken_over(server(json!({ IE: "skip" }), &[FINALIZER]));
        let upd = request(
            "UPDATE",
            ALICE,
            Some(server(json!({ RP: "skip", IE: "skip" }), &[FINALIZER])),
            Some(old),
        );
        assert_eq!(refusal(&upd, json!({})), None);
        // Operator identities are a setting.
        let custom = json!({"operatorIdentities": {"users": [ALICE]}});
        assert_eq!(refusal(&create(both), custom), None);
    }

    #[test]
    fn adoption_policy_with_if_exists_is_refused() {
        let conflict = Some(Refusal::Conflict(Conflict::AdoptionWithIfExists {
            adoption: "skip-if-exists".into(),
            if_exists: "skip".into(),
        }));
        let annotations = json!({ AP: "skip-if-exists", IE: "skip" });
        let d = decide(&create(annotations.clone()), json!({}), &NoCluster);
        assert_eq!(d.refusal, conflict);
        // The operator is not exempt: it never writes either.
        let by_aso = request("CREATE", ASO, Some(server(annotations, &[])), None);
        assert_eq!(decide(&by_aso, json!({}), &NoCluster).refusal, conflict);
    }

    #[test]
    fn if_exists_changes_after_the_finalizer_warn_or_are_refused() {
        let old = taken_over(server(json!({ IE: "skip" }), &[FINALIZER]));
        let new = server(json!({ IE: "detach-on-delete" }), &[FINALIZER]);
        let req = request("UPDATE", ALICE, Some(new), Some(old.clone()));
        let v = eval(&req, json!({}), &NoCluster);
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
            &NoCluster,
        );
        assert!(message(&v).contains("has no effect"));
        // Removing it warns, and is refused in deny mode.
        let removed = request(
            "UPDATE",
            ALICE,
            Some(server(json!({}), &[FINALIZER])),
            Some(old),
        );
        let v = eval(&removed, json!({}), &NoCluster);
        warning(&v, "was removed (it was \"skip\")");
        let v = eval(
            &removed,
            json!({"ifExistsChangeAfterFinalizer": "deny"}),
            &NoCluster,
        );
        assert!(message(&v).contains("was removed (it was \"skip\")"));
    }

    #[test]
    fn the_matrix_is_announced_with_a_caveat() {
        let default = Resolved {
            policy: ReconcilePolicy::Manage,
            source: Source::OperatorDefault,
        };
        let d = decide(
            &create(json!({ AP: "skip-if-exists" })),
            json!({}),
            &NoCluster,
        );
        let outcome = Outcome {
            existing: ReconcilePolicy::Skip,
            missing: ReconcilePolicy::Manage,
            effective: default,
            by: Some(By::Adoption(AdoptionPolicy::SkipIfExists)),
        };
        let caveat = Warning::NotImplemented {
            key: Annotation::AdoptionPolicy,
            policy: ReconcilePolicy::Manage,
        };
        assert_eq!(d.warnings, [Warning::Outcome(outcome), caveat]);
        let split = Audit::Split {
            existing: ReconcilePolicy::Skip,
            missing: ReconcilePolicy::Manage,
        };
        assert_eq!(d.audit, Some(split));
        // adopt-if-exists changes nothing, so no caveat.
        let d = decide(
            &create(json!({ AP: "adopt-if-exists" })),
            json!({}),
            &NoCluster,
        );
        assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
        let d = decide(
            &create(json!({ IE: "detach-on-delete" })),
            json!({}),
            &NoCluster,
        );
        let split = Audit::Split {
            existing: ReconcilePolicy::DetachOnDelete,
            missing: ReconcilePolicy::Manage,
        };
        assert_eq!(d.audit, Some(split));
        let caveat = Warning::NotImplemented {
            key: Annotation::IfExists,
            policy: ReconcilePolicy::Manage,
        };
        assert_eq!(d.warnings.last(), Some(&caveat));
    }

    #[test]
    fn the_namespace_and_the_operator_default_are_inherited() {
        let effective = |d: &Decision| match d.warnings.last() {
            Some(Warning::Outcome(o)) => Some(o.effective.clone()),
            _ => None,
        };
        let d = decide(
            &create(json!({})),
            json!({}),
            &RecordedCluster::new(&with_namespace("shop", Some("skip"))),
        );
        let inherited = Resolved {
            policy: ReconcilePolicy::Skip,
            source: Source::Namespace("shop".into()),
        };
        assert_eq!(effective(&d), Some(inherited));
        let d = decide(
            &create(json!({})),
            json!({"defaultReconcilePolicy": "detach-on-delete"}),
            &NoCluster,
        );
        let default = Resolved {
            policy: ReconcilePolicy::DetachOnDelete,
            source: Source::OperatorDefault,
        };
        assert_eq!(effective(&d), Some(default));
        let d = decide(
            &create(json!({})),
            json!({}),
            &RecordedCluster::new(&failing_namespace("shop", "connection refused")),
        );
        let failed = Failure::NamespaceLookup {
            namespace: "shop".into(),
            error: NamespaceError::Lookup(namespace_lookup_error("shop", "connection refused")),
        };
        assert_eq!(d, Decision::refuse(orders_db(), Refusal::Failed(failed)));
        let d = decide(
            &create(json!({})),
            json!({"namespaceLookupFailure": "allow"}),
            &RecordedCluster::new(&failing_namespace("shop", "timeout")),
        );
        let note = Note::NamespaceUnread {
            namespace: "shop".into(),
            error: NamespaceError::Lookup(namespace_lookup_error("shop", "timeout")),
        };
        assert_eq!(d.refusal, None);
        assert_eq!(d.warnings[0], Warning::Note(note));
    }

    #[test]
    fn explicit_defaults_write_the_annotation_on_create() {
        let settings = json!({"explicitDefaults": {"shop": "detach-on-delete", "*": "manage"}});
        let v = eval(
            &create(json!({})),
            settings.clone(),
            &RecordedCluster::new(&with_namespace("shop", None)),
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
        let v = eval(&req, json!({"explicitDefaults": {"*": "skip"}}), &NoCluster);
        assert_eq!(
            v.mutated_value().unwrap()["metadata"]["annotations"][RP],
            "skip"
        );
        // Not when something else decides, nor on UPDATE.
        let v = eval(
            &create(json!({})),
            settings.clone(),
            &RecordedCluster::new(&with_namespace("shop", Some("skip"))),
        );
        assert!(v.mutated_object.is_none());
        // ASO does not read `if-exists`: the default is written next to it.
        let v = eval(&create(json!({ IE: "skip" })), settings.clone(), &NoCluster);
        let object = v.mutated_value().expect("a mutation");
        assert_eq!(object["metadata"]["annotations"][RP], "detach-on-delete");
        assert_eq!(object["metadata"]["annotations"][IE], "skip");
        let v = eval(
            &create(json!({})),
            json!({"explicitDefaults": {"other": "skip"}}),
            &NoCluster,
        );
        assert!(v.mutated_object.is_none());
        let old = server(json!({}), &[FINALIZER]);
        let upd = request(
            "UPDATE",
            ALICE,
            Some(server(json!({ AP: "skip-if-exists" }), &[FINALIZER])),
            Some(old),
        );
        assert!(eval(&upd, settings, &NoCluster).mutated_object.is_none());
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
        let v = eval(&create_with_spec(spec), settings, &NoCluster);
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
            let v = eval(&req, settings.clone(), &NoCluster);
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
            let v = eval(&req, json!({}), &NoCluster);
            assert!(v.allowed, "{v:?}");
            assert!(v.mutated_object.is_none());
        }
    }

    #[test]
    fn malformed_objects_are_refused_naming_the_field() {
        let d = decide(&request("CREATE", ALICE, None, None), json!({}), &NoCluster);
        assert_eq!(d.refusal, Some(Refusal::NoObject(Which::Object)));
        // The one wording of guard-core.
        let v = eval(&request("CREATE", ALICE, None, None), json!({}), &NoCluster);
        assert_eq!(
            message(&v),
            "FlexibleServer shop/orders-db: the CREATE request carries no object"
        );
        let bad = json!({"metadata": {"annotations": {RP: 1}}});
        let d = decide(
            &request("CREATE", ALICE, Some(bad), None),
            json!({}),
            &NoCluster,
        );
        assert!(
            matches!(&d.refusal, Some(Refusal::Malformed(m)) if m.part == Part::Object),
            "{d:?}"
        );
        let d = decide(
            &request(
                "UPDATE",
                ALICE,
                Some(server(json!({}), &[])),
                Some(json!([1])),
            ),
            json!({}),
            &NoCluster,
        );
        assert!(
            matches!(&d.refusal, Some(Refusal::Malformed(m)) if m.part == Part::OldObject),
            "{d:?}"
        );
        // No metadata at all reads as no annotations.
        let d = decide(
            &request(
                "CREATE",
                ALICE,
                Some(json!({"kind": "FlexibleServer"})),
                None,
            ),
            json!({}),
            &NoCluster,
        );
        assert_eq!(d.refusal, None);
    }
}

//! Every word users read: the refusal, the warnings (each naming the object
//! it is about), the suggested `kubectl annotate` commands and the audit
//! annotation, written from a [`Decision`].

mod settings;

use guard_core::names::{quote, shell_word};
use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Verdict};

use crate::conflicts::{Conflict, IfExistsChange};
use crate::decision::{Audit, Decision, Inherited, Refusal, Switch, Warning};
use crate::deletion::Protected;
use crate::effective::{Note, Resolved, Source};
use crate::failure::{Failure, LookupError, NamespaceError, Search};
use crate::matrix::{By, Outcome};
use crate::owners::{Child, More};
use crate::repoint::Repoint;
use crate::settings::Settings;
use crate::values::{
    AdoptionPolicy, Annotation, ReconcilePolicy, Vocabulary, ADOPTION_POLICY, FIELD_MANAGER,
    FINALIZER, POLLER_RESUME_ID, RECONCILE_POLICY, RECONCILE_POLICY_IF_EXISTS, RESOURCE_ID,
};

/// The audit annotation carrying the effective behaviour.
pub(crate) const AUDIT_KEY: &str = "effective-reconcile-policy";

/// The verdict users read for `decision` on `request`.
pub(crate) fn verdict(
    decision: &Decision,
    request: &AdmissionRequest,
    settings: &Settings,
) -> Verdict {
    let object = decision.subject.object();
    let words = Words {
        object: &object,
        who: object.describe(),
        settings,
    };
    let verdict = match &decision.refusal {
        None => Verdict::allow(),
        Some(Refusal::NoObject(which)) => Verdict::deny(request.missing_object(*which, &words.who)),
        Some(refusal) => Verdict::deny(words.refusal(refusal)),
    };
    let warnings = decision
        .warnings
        .iter()
        .map(|w| format!("{}: {}", words.who, words.warning(w)));
    let mut verdict = verdict.with_warnings(warnings);
    if let Some(audit) = decision.audit {
        verdict = verdict.audit(AUDIT_KEY, audited(audit));
    }
    match &decision.mutation {
        Some(m) => verdict.mutate_raw(m.0.clone()),
        None => verdict,
    }
}

/// What the messages about one object are written with.
struct Words<'a> {
    object: &'a ObjectName<'a>,
    who: String,
    settings: &'a Settings,
}

impl Words<'_> {
    fn default(&self) -> &'static str {
        self.settings.default_reconcile_policy.as_str()
    }

    fn key(&self) -> &str {
        &self.settings.deletion_protection.confirmation_annotation
    }

    fn refusal(&self, refusal: &Refusal) -> String {
        let who = &self.who;
        match refusal {
            Refusal::NoObject(_) | Refusal::Malformed(_) | Refusal::Failed(_) => {
                format!("{who}: {}", self.unreadable(refusal))
            }
            Refusal::EmptyReconcilePolicy(effective) => format!(
                "{who}: annotation {RECONCILE_POLICY} is empty; ASO reads an empty value as no \
                 annotation, so the effective policy would be {}. Remove the annotation to mean \
                 that, or set one of: {}.",
                describe(effective),
                accepted::<ReconcilePolicy>()
            ),
            Refusal::InvalidValue { key, value } => format!("{who}: {}", self.invalid(*key, value)),
            Refusal::NearMissKey { key, meant, value } => format!(
                "{who}: annotation {}{} is not one ASO reads: it reads {}, and ignores this key, \
                 so the value {} has no effect and ASO applies what it would without it{}. Did \
                 you mean {}? Write the value under that key and remove this one.",
                quote(key),
                non_ascii(key),
                meant.key(),
                quote(value),
                match meant {
                    Annotation::ReconcilePolicy => format!(
                        " (the Namespace's {RECONCILE_POLICY}, else the operator default, {}, \
                         under which deleting the object deletes the Azure resource)",
                        self.default()
                    ),
                    _ => String::new(),
                },
                meant.key()
            ),
            Refusal::InvalidOnNamespace { value } => {
                let consequence = format!(
                    "ASO would silently apply its default, {}, to every ASO resource in this \
                     namespace without an annotation of its own",
                    self.default()
                );
                let text = invalid::<ReconcilePolicy>(RECONCILE_POLICY, value, &consequence);
                format!("{who}: {text}")
            }
            Refusal::Conflict(conflict) => format!("{who}: {}", self.conflict(conflict)),
            Refusal::IfExistsAfterTakeover(change) => {
                format!("{who}: {}", self.if_exists_change(change))
            }
            Refusal::ExplicitDefaultUnwritable(u) => format!(
                "{who}: malformed object: {}; explicitDefaults cannot write {RECONCILE_POLICY}: {} \
                 on it",
                u.error,
                u.policy.as_str()
            ),
            Refusal::Protected { protected, switch } => {
                self.protected(protected, switch.as_deref())
            }
            Refusal::ConfirmationCarried(r) => self.confirmation_carried(r),
            Refusal::NamespaceHolds { held } => self.namespace_holds(held),
            Refusal::NamespaceSwitchDeletes { before, held } => format!(
                "{who}: changing {RECONCILE_POLICY} from {} to manage makes ASO delete in Azure \
                 the protected resources here that are being deleted and follow the Namespace's \
                 policy: {}. Confirm each with its name first ({} set to the object's name), or \
                 keep the Namespace's policy.",
                before.as_str(),
                children(held, &self.object.name),
                self.key()
            ),
        }
    }

    /// What could not be read, for the refusals that only say that.
    fn unreadable(&self, refusal: &Refusal) -> String {
        match refusal {
            Refusal::Malformed(e) => e.to_string(),
            Refusal::Failed(f) => failure(f),
            _ => String::new(),
        }
    }

    /// The refusal of a new `value` of annotation `key` on an ASO resource.
    fn invalid(&self, key: Annotation, value: &str) -> String {
        match key {
            Annotation::ReconcilePolicy => {
                let consequence = format!(
                    "ASO would silently apply its default, {}{}",
                    self.default(),
                    if self.settings.default_reconcile_policy == ReconcilePolicy::Manage {
                        ", and deleting this object would delete the Azure resource"
                    } else {
                        ""
                    }
                );
                invalid::<ReconcilePolicy>(RECONCILE_POLICY, value, &consequence)
            }
            Annotation::IfExists => invalid::<ReconcilePolicy>(
                RECONCILE_POLICY_IF_EXISTS,
                value,
                "what happens to an existing Azure resource would be undefined",
            ),
            Annotation::AdoptionPolicy => invalid::<AdoptionPolicy>(
                ADOPTION_POLICY,
                value,
                "how an existing Azure resource is adopted would be undefined",
            ),
        }
    }

    fn conflict(&self, conflict: &Conflict) -> String {
        match conflict {
            Conflict::AdoptionWithIfExists {
                adoption,
                if_exists,
            } => format!(
                "annotations {ADOPTION_POLICY} ({}) and {RECONCILE_POLICY_IF_EXISTS} ({}) are two \
                 ways of saying what happens to an existing Azure resource (ASO's ADR 2023-02, \
                 options 4.1 and 4.2) and can disagree. Keep one: {RECONCILE_POLICY_IF_EXISTS} \
                 is the ADR's decision, so remove {ADOPTION_POLICY}.",
                quote(adoption),
                quote(if_exists)
            ),
            Conflict::BothBeforeTakeover {
                reconcile,
                if_exists,
                finalizer_set,
            } => format!(
                "annotations {RECONCILE_POLICY} ({}) and {RECONCILE_POLICY_IF_EXISTS} ({}) are \
                 both set before ASO has taken over the resource ({}). \
                 The operator writes {RECONCILE_POLICY} itself from {RECONCILE_POLICY_IF_EXISTS} \
                 when the Azure resource already exists, so the two would collide (ASO's ADR \
                 2023-02). Set only one: {RECONCILE_POLICY_IF_EXISTS} to choose what happens to \
                 an existing Azure resource, or {RECONCILE_POLICY} to choose it in every case.",
                quote(reconcile),
                quote(if_exists),
                if *finalizer_set {
                    format!("{FINALIZER} is set but ASO has written no status yet")
                } else {
                    format!("no {FINALIZER} finalizer yet")
                }
            ),
        }
    }

    fn if_exists_change(&self, c: &IfExistsChange) -> String {
        let change = match (&c.was, &c.now) {
            (Some(w), Some(n)) => format!("changed from {} to {}", quote(w), quote(n)),
            (None, Some(n)) => format!("was added as {}", quote(n)),
            (Some(w), None) => format!("was removed (it was {})", quote(w)),
            (None, None) => "changed".to_string(),
        };
        let fix = match c.fix {
            Some(p) => format!(
                " To change how ASO treats the Azure resource now, set {RECONCILE_POLICY}: `{}`.",
                annotate(self.object, RECONCILE_POLICY, p.as_str())
            ),
            None => String::new(),
        };
        format!(
            "annotation {RECONCILE_POLICY_IF_EXISTS} {change}, but ASO has already taken over \
             this resource ({FINALIZER} is set and ASO wrote its status) and reads it only before \
             then, so the change has no effect.{fix}"
        )
    }

    /// `"{what}: ASO would delete ..."`, with both ways out.
    fn protected(&self, p: &Protected, switch: Option<&Switch>) -> String {
        let who = &self.who;
        let key = self.key();
        let confirm = annotate(self.object, key, &p.name);
        let (what, confirm) = match switch {
            None => (
                format!("{who} is protected from deletion"),
                format!("confirm with the object's name: `{confirm}`. Then delete again."),
            ),
            Some(s) => {
                let (change, confirm) = match &s.repointed {
                    // The confirmation must be given with the new id in
                    // view: in the change itself.
                    Some(id) => (
                        format!("its {RESOURCE_ID}, the Azure resource ASO deletes, changes,"),
                        format!(
                            "make this change with the confirmation, the object's name, written \
                             in it: `{}`.",
                            self.object.kubectl(
                                "annotate",
                                &[
                                    &resource_id(id),
                                    &shell_word(&format!("{key}={}", p.name)),
                                    "--overwrite",
                                    &format!("--field-manager={FIELD_MANAGER}"),
                                ],
                            )
                        ),
                    ),
                    None => (
                        format!("its effective {RECONCILE_POLICY} becomes manage"),
                        format!(
                            "confirm with the object's name: `{confirm}`. Then make this change \
                             again."
                        ),
                    ),
                };
                let what = format!(
                    "{who} is being deleted and waits for ASO's finalizer, under {}; with this \
                     change {change} and it is protected from deletion",
                    describe(&s.before)
                );
                (what, confirm)
            }
        };
        let inside = if p.children.is_empty() {
            String::new()
        } else {
            format!(
                ", and {}, including the protected {}",
                removes(p.more.as_ref()),
                children(&p.children, self.object.namespace)
            )
        };
        let mismatch = match &p.confirmation {
            Some(v) => format!(
                " Annotation {key} is {}, not the object's name {}.",
                quote(v),
                quote(&p.name)
            ),
            None => String::new(),
        };
        format!(
            "{what}: ASO would delete the Azure resource as well, because its effective \
             {RECONCILE_POLICY} is {}{inside}.{mismatch} To keep the Azure resource, {}. To \
             delete it in Azure too, {confirm}",
            describe(&p.effective),
            self.detach(p.stated_by.as_deref()),
        )
    }

    /// A re-point that would carry a confirmation to another Azure resource.
    fn confirmation_carried(&self, r: &Repoint) -> String {
        let key = self.key();
        let to = if r.to.is_empty() {
            "removes it".to_string()
        } else {
            format!("points it at {}", quote(&r.to))
        };
        let remove = self.object.kubectl(
            "annotate",
            &[
                &shell_word(&format!("{key}-")),
                &format!("--field-manager={FIELD_MANAGER}"),
            ],
        );
        format!(
            "{}: annotation {key} was given while {RESOURCE_ID} named {}, and this change {to}; \
             ASO's delete removes the Azure resource {RESOURCE_ID} names when it runs, so the \
             confirmation would reach a resource nobody confirmed. Remove it first: `{remove}`. \
             Then make this change again, and confirm once more when you mean ASO to delete what \
             the object names then.",
            self.who,
            quote(&r.from)
        )
    }

    /// The way to detach: the command, or, where a server-side apply states
    /// the value, its source, since that apply takes a hand edit back.
    fn detach(&self, stated_by: Option<&str>) -> String {
        let detach = ReconcilePolicy::DetachOnDelete.as_str();
        match stated_by {
            None => format!(
                "detach it first: `{}`",
                annotate(self.object, RECONCILE_POLICY, detach)
            ),
            Some(manager) => format!(
                "detach it first where {RECONCILE_POLICY} is stated: {} applies it and takes a \
                 hand edit back at its next apply, so set it to {detach} in what {} applies (Git, \
                 or the chart) and let it apply",
                quote(manager),
                quote(manager)
            ),
        }
    }

    fn namespace_holds(&self, held: &[Child]) -> String {
        let name = &self.object.name;
        format!(
            "{} holds resources protected from deletion: deleting it makes the namespace \
             controller delete them, and ASO would delete their Azure resources as well, with \
             anything inside them, because their effective {RECONCILE_POLICY} is manage: {}. \
             Their own deletes would be refused and the Namespace left in Terminating. To delete \
             them in Azure too, confirm with the Namespace's name: `{}`. To keep them, set \
             {RECONCILE_POLICY}={} on each first. Then delete again.",
            self.who,
            children(held, name),
            annotate(self.object, self.key(), name),
            ReconcilePolicy::DetachOnDelete.as_str()
        )
    }

    fn warning(&self, warning: &Warning) -> String {
        let default = self.default();
        let key = self.key();
        match warning {
            Warning::Legacy { key, value, modern } => format!(
                "annotation {}: {} is a legacy value of early ASO releases; current ASO does not \
                 know it and applies its default, {default}, as this policy does. Write {} for \
                 what it meant.",
                key.key(),
                quote(value),
                quote(modern)
            ),
            Warning::StoredInvalid { key, value } => format!(
                "annotation {} keeps the value {}, which is not valid ({}); this request does not \
                 change it",
                key.key(),
                quote(value),
                match key {
                    Annotation::AdoptionPolicy => accepted::<AdoptionPolicy>(),
                    _ => accepted::<ReconcilePolicy>(),
                }
            ),
            Warning::IfExistsAfterTakeover(change) => self.if_exists_change(change),
            Warning::Note(note) => self.note(note),
            Warning::Outcome(outcome) => announced(outcome),
            Warning::NotImplemented { key, policy } => format!(
                "ASO releases to date do not implement {} (proposed in ASO's ADR 2023-02): until \
                 they do, an existing Azure resource is {}.",
                key.key(),
                when_exists(*policy)
            ),
            Warning::NoEffectOnNamespace(key) => format!(
                "annotation {} has no effect on a Namespace: it is read only on each ASO resource \
                 (and ASO releases to date do not implement it).",
                key.key()
            ),
            Warning::NamespaceKeepsInvalid { value } => format!(
                "annotation {RECONCILE_POLICY} keeps the value {}, which ASO does not know: ASO \
                 resources here without their own annotation get the operator default, {default}.",
                quote(value)
            ),
            Warning::NamespaceFollows { policy, why } => following(*policy, *why),
            Warning::NotTakenOver => format!(
                "nothing is deleted in Azure: the object has no {FINALIZER} finalizer, so ASO \
                 never took it over and does not see its deletion."
            ),
            Warning::DeleteUnderWay {
                effective,
                resource_id,
            } => delete_under_way(effective, resource_id),
            Warning::Kept(r) => format!(
                "the Azure resource is kept, only the Kubernetes object is deleted: effective \
                 {RECONCILE_POLICY} is {}.",
                describe(r)
            ),
            Warning::Confirmed(r) => format!(
                "deletion confirmed by {key}: ASO deletes the Azure resource as well, with \
                 anything inside it (effective {RECONCILE_POLICY}: {}).",
                describe(r)
            ),
            Warning::ConfirmedOnNamespace(r) => format!(
                "deletion confirmed by {key} on Namespace {}, which is being deleted: ASO deletes \
                 the Azure resource as well, with anything inside it (effective \
                 {RECONCILE_POLICY}: {}).",
                quote(self.object.namespace),
                describe(r)
            ),
            Warning::NamespaceDeletionConfirmed => format!(
                "deletion confirmed by {key}: the namespace controller deletes everything in it, \
                 and ASO deletes in Azure the resources it manages there, with anything inside \
                 them."
            ),
        }
    }

    fn note(&self, note: &Note) -> String {
        let default = self.default();
        match note {
            Note::UnknownOnObject { value } => format!(
                "annotation {RECONCILE_POLICY} has the value {}, which ASO does not know{}: it \
                 ignores it and applies the operator default, {default}",
                quote(value),
                legacy_hint(value)
            ),
            Note::UnknownOnNamespace {
                namespace,
                value,
                fix,
            } => format!(
                "Namespace {} has {RECONCILE_POLICY}={}, a value ASO does not know{}: it ignores \
                 it and applies the operator default, {default}; fix it with: `{}`",
                quote(namespace),
                quote(value),
                legacy_hint(value),
                annotate(
                    &ObjectName::new("Namespace", "namespaces", "", namespace.as_str()),
                    RECONCILE_POLICY,
                    fix.as_str()
                )
            ),
            Note::NamespaceUnread { namespace, error } => format!(
                "Namespace {} could not be read ({}): its {RECONCILE_POLICY} annotation, if any, \
                 was not considered; judged with the operator default, {default}",
                quote(namespace),
                quote(&namespace_error(error))
            ),
        }
    }
}

fn failure(f: &Failure) -> String {
    match f {
        Failure::NamespaceLookup { namespace, error } => format!(
            "cannot read Namespace {} to resolve the effective {RECONCILE_POLICY} ({}); retry, or \
             set the annotation on the object itself so that the Namespace is not needed",
            quote(namespace),
            quote(&namespace_error(error))
        ),
        Failure::UnreadableNamespace(e) => format!("unreadable Namespace: {e}"),
        Failure::List {
            api_version,
            kind,
            namespace,
            search,
            error,
        } => {
            let place = match namespace {
                Some(ns) => format!("in namespace {}", quote(ns)),
                None => "in all namespaces".to_string(),
            };
            let what = match search {
                Search::Inside => "the protected resources inside it",
                Search::InNamespace => "the protected resources in it",
            };
            let error = match error {
                LookupError::Cluster(e) => quote(e.cause()),
                LookupError::Shape(e) => quote(&e.to_string()),
            };
            format!(
                "cannot list {api_version} {kind} {place} to find {what} ({error}); grant the \
                 lookup or retry"
            )
        }
        Failure::Labels { name, error } => {
            format!("cannot read the labels of {}: {error}", quote(name))
        }
        Failure::NoUid => "malformed oldObject: it has no metadata.uid, so the protected \
                           resources ASO claimed for it (owner references carry the uid) cannot \
                           be found; kube-apiserver always sends it"
            .to_string(),
        Failure::UidType(t) => {
            format!("malformed oldObject: metadata.uid must be a string, found {t}")
        }
        Failure::Malformed(e) => e.to_string(),
    }
}

fn namespace_error(e: &NamespaceError) -> String {
    match e {
        NamespaceError::Lookup(e) => e.to_string(),
        NamespaceError::Unreadable(e) => format!("unreadable Namespace: {e}"),
    }
}

fn audited(audit: Audit) -> String {
    match audit {
        Audit::Policy(p) => p.as_str().to_string(),
        Audit::Split { existing, missing } => format!(
            "{} if the Azure resource exists, {} otherwise",
            existing.as_str(),
            missing.as_str()
        ),
        Audit::Confirmed => "manage (deletion confirmed)".to_string(),
        Audit::ConfirmedOnNamespace => "manage (deletion confirmed on the Namespace)".to_string(),
    }
}

/// What will happen in Azure, as announced on a change.
fn announced(o: &Outcome) -> String {
    let why = match o.by {
        Some(By::IfExists(p)) => format!(
            "; {RECONCILE_POLICY_IF_EXISTS}: {} for an existing one",
            p.as_str()
        ),
        Some(By::Adoption(a)) => format!(
            "; {ADOPTION_POLICY}: {}, the more restrictive applies to an existing one",
            a.as_str()
        ),
        None => String::new(),
    };
    format!(
        "if the Azure resource already exists, it is {}; otherwise it is {}. Effective \
         {RECONCILE_POLICY}: {}{why}.",
        when_exists(o.existing),
        when_missing(o.missing),
        describe(&o.effective)
    )
}

fn following(policy: ReconcilePolicy, why: Inherited) -> String {
    let source = match why {
        Inherited::SetOnNamespace => "set on the Namespace",
        Inherited::Removed => "the operator default, as the Namespace no longer sets it",
        Inherited::Unknown => "the operator default, as ASO does not know the Namespace's value",
    };
    format!(
        "ASO resources in this namespace without their own {RECONCILE_POLICY} annotation now \
         follow {} ({source}): if the Azure resource already exists, it is {}; otherwise it is {}.",
        policy.as_str(),
        when_exists(policy),
        when_missing(policy)
    )
}

/// e.g. `manage (the operator default)`.
pub(crate) fn describe(r: &Resolved) -> String {
    let from = match &r.source {
        Source::Object => "set on the object".to_string(),
        Source::Namespace(ns) => format!("inherited from Namespace {}", quote(ns)),
        Source::OperatorDefault => "the operator default".to_string(),
        Source::ExplicitDefault => "written on the object from explicitDefaults".to_string(),
    };
    format!("{} ({from})", r.policy.as_str())
}

/// What happens to an Azure resource that already exists, under `policy`.
fn when_exists(policy: ReconcilePolicy) -> &'static str {
    match policy {
        ReconcilePolicy::Manage => {
            "adopted, updated to match, and deleted in Azure when the object is deleted"
        }
        ReconcilePolicy::DetachOnDelete => "adopted and updated, never deleted in Azure",
        ReconcilePolicy::Skip => "used as it is: never updated, never deleted in Azure",
    }
}

/// What happens when the Azure resource does not exist yet, under `policy`.
fn when_missing(policy: ReconcilePolicy) -> &'static str {
    match policy {
        ReconcilePolicy::Manage => {
            "created and fully managed, deleted in Azure when the object is deleted"
        }
        ReconcilePolicy::DetachOnDelete => "created and updated, never deleted in Azure",
        ReconcilePolicy::Skip => {
            "not created (skip only reads from Azure), so the object waits for it to appear"
        }
    }
}

/// The command that sets annotation `key` to `value` on `object`.
fn annotate(object: &ObjectName<'_>, key: &str, value: &str) -> String {
    object.kubectl(
        "annotate",
        &[
            &shell_word(&format!("{key}={value}")),
            "--overwrite",
            &format!("--field-manager={FIELD_MANAGER}"),
        ],
    )
}

/// The `kubectl annotate` argument that sets `resource-id` to `id`, or
/// removes it when `id` is empty.
fn resource_id(id: &str) -> String {
    if id.is_empty() {
        format!("{RESOURCE_ID}-")
    } else {
        shell_word(&format!("{RESOURCE_ID}={id}")).into_owned()
    }
}

/// `a, b or c`.
fn accepted<V: Vocabulary>() -> String {
    let names: Vec<&str> = V::ALL.iter().map(|v| v.as_str()).collect();
    one_of(&names)
}

fn one_of(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// Why `value` of annotation `key` is refused, with the accepted values and a
/// suggestion. `consequence` says what would follow from a value ASO does not know.
fn invalid<V: Vocabulary>(key: &str, value: &str, consequence: &str) -> String {
    let modern = V::legacy(value).map(V::as_str);
    let guess = crate::values::suggest::<V>(value).map(V::as_str);
    refused_value(key, value, consequence, modern, guess, &accepted::<V>())
}

/// [`invalid`] once the vocabulary has answered: its modern value for a
/// legacy one, its guess, and the values it accepts.
fn refused_value(
    key: &str,
    value: &str,
    consequence: &str,
    modern: Option<&str>,
    guess: Option<&str>,
    accepted: &str,
) -> String {
    if let Some(modern) = modern {
        return format!(
            "annotation {key}: {} is a legacy value of early ASO releases; current ASO does not \
             know it, so {consequence}. Write {} instead.",
            quote(value),
            quote(modern)
        );
    }
    let what = if value.is_empty() {
        "is empty".to_string()
    } else {
        format!(
            "has the value {}{}, which is not one of its values",
            quote(value),
            non_ascii(value)
        )
    };
    let hint = guess
        .map(|v| format!(" Did you mean {}?", quote(v)))
        .unwrap_or_default();
    format!("annotation {key} {what}, so {consequence}. Accepted values (case-sensitive): {accepted}.{hint}")
}

/// ` (it holds U+2013, U+00A0, which are not ASCII)` for text holding
/// characters that look like the ASCII ones ASO compares, pasted from a wiki
/// or a chat; nothing for ASCII text.
fn non_ascii(text: &str) -> String {
    const SHOWN: usize = 5;
    let mut seen: Vec<char> = Vec::new();
    for c in text.chars().filter(|c| !c.is_ascii()) {
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    let mut named: Vec<String> = seen
        .iter()
        .take(SHOWN)
        .map(|c| format!("U+{:04X}", u32::from(*c)))
        .collect();
    if seen.len() > SHOWN {
        named.push("more".to_string());
    }
    let verb = if seen.len() == 1 { "is" } else { "are" };
    format!(" (it holds {}, which {verb} not ASCII)", named.join(", "))
}

/// What a legacy value (`run`, `skip-delete`) meant to early ASO releases.
fn legacy_hint(value: &str) -> String {
    match ReconcilePolicy::legacy(value) {
        Some(modern) => format!(
            " (a legacy value of early ASO releases; write {} for what it meant)",
            quote(modern.as_str())
        ),
        None => String::new(),
    }
}

/// A change of an object whose Azure DELETE ASO has already issued.
fn delete_under_way(effective: &Resolved, resource_id: &str) -> String {
    let without_waiting = if effective.policy == ReconcilePolicy::Manage {
        ""
    } else {
        "; ASO now only removes its finalizer, without waiting for the DELETE to finish"
    };
    format!(
        "ASO has already issued the Azure DELETE of {} (the object is being deleted and \
         {POLLER_RESUME_ID} records ASO's delete poller): Azure carries it out whatever the \
         object now says, so the Azure resource is deleted. Effective {RECONCILE_POLICY}: \
         {}{without_waiting}.",
        quote(resource_id),
        describe(effective),
    )
}

/// What goes with a deleted object in Azure: what is inside it, and what
/// its kind's delete code removes besides.
fn removes(more: Option<&More>) -> String {
    match more {
        None => "Azure deletes what is inside it".to_string(),
        Some(More::Subscription(id)) => format!(
            "ASO's delete of this kind first cancels the Azure subscription {}, and everything \
             in it goes",
            quote(id)
        ),
        Some(More::Scoped { kind, product, .. }) => format!(
            "ASO's delete of this kind deletes the product {} (the object's name, whatever its \
             azureName) with every {kind} scoped to it, and Azure deletes what is inside it",
            quote(product.rsplit('/').next().unwrap_or(product))
        ),
    }
}

/// `FlexibleServer "a", StorageAccount "b" in namespace "c" and 3 more`,
/// bounded for messages; the namespace is named when it is not `here`.
pub(crate) fn children(children: &[Child], here: &str) -> String {
    const SHOWN: usize = 5;
    let mut named: Vec<String> = children
        .iter()
        .take(SHOWN)
        .map(|c| {
            if c.namespace == here || c.namespace.is_empty() {
                format!("{} {}", c.kind, quote(&c.name))
            } else {
                format!(
                    "{} {} in namespace {}",
                    c.kind,
                    quote(&c.name),
                    quote(&c.namespace)
                )
            }
        })
        .collect();
    if children.len() > SHOWN {
        named.push(format!("{} more", children.len().saturating_sub(SHOWN)));
    }
    match named.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => named.join(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ReconcilePolicy::*;

    #[test]
    fn refusals_of_values_name_the_accepted_ones_and_a_guess() {
        let m = invalid::<ReconcilePolicy>(
            RECONCILE_POLICY,
            "detach-on-deletee",
            "ASO would apply its default",
        );
        assert_eq!(
            m,
            "annotation serviceoperator.azure.com/reconcile-policy has the value \
             \"detach-on-deletee\", which is not one of its values, so ASO would apply its \
             default. Accepted values (case-sensitive): manage, skip or detach-on-delete. Did you \
             mean \"detach-on-delete\"?"
        );
        let m = invalid::<ReconcilePolicy>(RECONCILE_POLICY, "skip-delete", "x");
        assert!(
            m.contains("legacy value") && m.contains("\"detach-on-delete\""),
            "{m}"
        );
        let m = invalid::<ReconcilePolicy>(RECONCILE_POLICY, "", "x");
        assert!(m.contains("is empty"), "{m}");
        let m = invalid::<AdoptionPolicy>(ADOPTION_POLICY, "never", "x");
        assert!(m.contains("adopt-if-exists, detach-on-delete-if-exists or skip-if-exists"));
        assert!(!m.contains("Did you mean"), "{m}");
    }

    #[test]
    fn words_for_each_outcome() {
        assert!(when_exists(DetachOnDelete).contains("never deleted"));
        assert!(when_missing(Manage).contains("created and fully managed"));
        assert!(when_missing(Skip).contains("not created"));
        assert!(when_exists(Skip).contains("never updated"));
    }

    #[test]
    fn where_the_effective_policy_comes_from() {
        let r = |source| {
            describe(&Resolved {
                policy: DetachOnDelete,
                source,
            })
        };
        assert_eq!(
            r(Source::Namespace("team-a".into())),
            "detach-on-delete (inherited from Namespace \"team-a\")"
        );
        assert_eq!(
            r(Source::OperatorDefault),
            "detach-on-delete (the operator default)"
        );
    }

    #[test]
    fn lookup_failures_name_the_lookup() {
        let failed = Failure::List {
            api_version: "storage.azure.com/v1api20230101".into(),
            kind: "StorageAccount".into(),
            namespace: None,
            search: Search::Inside,
            error: LookupError::Cluster(guard_core::ClusterError("forbidden".into())),
        };
        assert_eq!(
            failure(&failed),
            "cannot list storage.azure.com/v1api20230101 StorageAccount in all namespaces to find \
             the protected resources inside it (\"forbidden\"); grant the lookup or retry"
        );
        let namespace = serde_json::value::RawValue::from_string(
            r#"{"metadata":{"annotations":[1]}}"#.to_string(),
        )
        .unwrap();
        let unread =
            NamespaceError::Unreadable(guard_core::context::annotations(&namespace).unwrap_err());
        assert_eq!(
            failure(&Failure::NamespaceLookup {
                namespace: "team-a".into(),
                error: unread,
            }),
            "cannot read Namespace \"team-a\" to resolve the effective \
             serviceoperator.azure.com/reconcile-policy (\"unreadable Namespace: invalid type: \
             sequence, expected a map at line 1 column 27\"); retry, or set the annotation on the \
             object itself so that the Namespace is not needed"
        );
    }

    #[test]
    fn a_namespace_note_says_how_to_fix_it() {
        let settings = Settings::default();
        let object = ObjectName::new("Namespace", "namespaces", "", "team-a");
        let words = Words {
            object: &object,
            who: object.describe(),
            settings: &settings,
        };
        let note = Note::UnknownOnNamespace {
            namespace: "team-a".into(),
            value: "Skip".into(),
            fix: Skip,
        };
        assert_eq!(
            words.note(&note),
            "Namespace \"team-a\" has serviceoperator.azure.com/reconcile-policy=\"Skip\", a value \
             ASO does not know: it ignores it and applies the operator default, manage; fix it \
             with: `kubectl annotate namespaces team-a \
             serviceoperator.azure.com/reconcile-policy=skip --overwrite \
             --field-manager=aso-reconcile`"
        );
    }
}

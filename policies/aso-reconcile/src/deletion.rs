//! Deletion protection: `kubectl delete` (or a GitOps prune, the garbage
//! collector, the namespace controller) of a selected ASO resource whose
//! effective policy is `manage` deletes the Azure resource as well, with
//! everything inside it, which cannot be undone. Such a deletion needs one of
//! two explicit steps first: detach the Azure resource, or confirm with the
//! object's name (or, in a Namespace being deleted, with the Namespace's).

use guard_core::object::ObjectName;
use std::cell::OnceCell;

use guard_core::managed_fields;
use guard_core::{context, AdmissionRequest, ClusterObject, Context, Metadata, Operation, Which};
use serde_json::Value;

use crate::effective::{
    namespace_object, namespace_policy, resolve_with, Effective, Note, Resolved,
};
use crate::failure::{Failure, NamespaceError};
use crate::owners::{self, Child, Owner};
use crate::settings::{DeletionProtection, Settings};
use crate::stored::{self, Facts};
use crate::values::{ReconcilePolicy, FIELD_MANAGER, FINALIZER, RECONCILE_POLICY, RESOURCE_ID};
use guard_core::request::{Part, ReadError, Why};
use guard_core::ClusterError;

/// What deleting an object would do in Azure, judged on the object as it
/// will be when ASO sees the deletion.
#[derive(Debug, PartialEq)]
pub(crate) struct Assessment {
    /// What resolving the effective policy found, if it was resolved.
    pub notes: Vec<Note>,
    pub deletion: Deletion,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Deletion {
    /// Nothing protected is at stake.
    Free,
    /// A selected object ASO never took over: it goes at once.
    NotTakenOver,
    /// A selected object whose Azure resource is kept.
    Kept(Resolved),
    /// Confirmed on the object itself.
    Confirmed(Resolved),
    /// Confirmed on its Namespace, which is being deleted.
    ConfirmedOnNamespace(Resolved),
    /// What the answer needs could not be read.
    Failed(Failure),
    /// Needs a detach or a confirmation first.
    Protected(Protected),
}

/// A deletion that needs a detach or a confirmation first.
#[derive(Debug, PartialEq)]
pub(crate) struct Protected {
    pub effective: Resolved,
    /// The protected resources inside it.
    pub children: Vec<Child>,
    /// The name the confirmation must carry.
    pub name: String,
    /// The confirmation the object carries, which is not its name.
    pub confirmation: Option<String>,
    /// The manager whose server-side apply states the object's
    /// reconcile-policy: its next apply writes its value back over a detach
    /// made by hand, so the detach belongs in its source.
    pub stated_by: Option<String>,
    /// What its kind's delete code removes besides its own id.
    pub more: Option<owners::More>,
}

/// Whether the protection selects the request's kind.
pub(crate) fn kind_selected(p: &DeletionProtection, request: &AdmissionRequest) -> bool {
    let (group, kind) = (request.kind.group.as_str(), request.kind.kind.as_str());
    p.kinds.is_empty() || p.kinds.iter().any(|k| k.matches(group, kind))
}

/// Judges the deletion of `meta` (the stored object of a DELETE, or the
/// object an UPDATE leaves while it waits for ASO's finalizer), with its
/// effective policy when already known, and what was read of the stored
/// object with its metadata (`stored`).
pub(crate) fn assess(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
    target: &ObjectName<'_>,
    meta: &Metadata,
    known: Option<Effective>,
    stored: Option<&Facts<'_>>,
) -> Assessment {
    let p = &settings.deletion_protection;
    let directly = kind_selected(p, request)
        && (p.namespaces.is_empty() || p.namespaces.iter().any(|n| n == target.namespace))
        && p.label_selector
            .as_ref()
            .is_none_or(|s| s.matches(&meta.labels));
    let bare = |deletion| Assessment {
        notes: Vec::new(),
        deletion,
    };
    // ASO issues an Azure DELETE only for an object carrying its finalizer:
    // without it the object goes at once and ASO never sees the deletion.
    if !meta.finalizers.iter().any(|f| f == FINALIZER) {
        return bare(if directly {
            Deletion::NotTakenOver
        } else {
            Deletion::Free
        });
    }
    if !directly && !owners::needed(p) {
        return bare(Deletion::Free);
    }
    // The Namespace, looked up (and read) once for the effective policy and
    // for its confirmation, and only when one of them needs it.
    let key = p.confirmation_annotation.as_str();
    let namespace = OnceCell::new();
    let lookup = || {
        namespace.get_or_init(|| {
            namespace_object(target.namespace, ctx.cluster).map(|raw| {
                raw.map(|raw| {
                    let asked = [RECONCILE_POLICY, key];
                    let read = stored::metadata_of(raw.get(), None, &asked);
                    Looked {
                        read: read.map(|head| head.meta),
                        raw,
                    }
                })
            })
        })
    };
    let mut effective = match known.map_or_else(
        || effective_of(meta, target.namespace, settings, lookup),
        Ok,
    ) {
        Ok(e) => e,
        Err(failure) => return bare(Deletion::Failed(failure)),
    };
    let notes = std::mem::take(&mut effective.notes);
    let effective = effective.resolved();
    let deletion = if effective.policy != ReconcilePolicy::Manage {
        if directly {
            Deletion::Kept(effective)
        } else {
            Deletion::Free
        }
    } else {
        let deleted = Deleted {
            request,
            settings,
            ctx,
            target,
            meta,
            stored,
        };
        deleted.under_manage(effective, directly, lookup)
    };
    Assessment { notes, deletion }
}

/// The object's effective policy, resolved from its own annotation, then
/// its Namespace's (through `lookup`, which reads it once for every rule).
fn effective_of<'n>(
    meta: &Metadata,
    namespace: &str,
    settings: &Settings,
    lookup: impl FnOnce() -> &'n Result<Option<Looked>, ClusterError>,
) -> Result<Effective, Failure> {
    resolve_with(
        meta.annotation(RECONCILE_POLICY),
        namespace,
        settings,
        || match lookup() {
            Ok(Some(Looked {
                read: Some(meta), ..
            })) => Ok(meta.annotation(RECONCILE_POLICY).map(str::to_string)),
            Ok(looked) => namespace_policy(looked.as_ref().map(|l| &*l.raw)),
            Err(e) => Err(NamespaceError::Lookup(e.clone())),
        },
    )
}

/// The deleted object's Namespace, as looked up, and as read in one pass
/// for its reconcile policy, confirmation and deletion (`None` when that
/// pass does not answer for it: each reads it then on its own).
pub(crate) struct Looked {
    raw: ClusterObject,
    read: Option<Metadata>,
}

/// An object whose deletion ASO would carry into Azure.
struct Deleted<'a> {
    request: &'a AdmissionRequest,
    settings: &'a Settings,
    ctx: &'a Context<'a>,
    target: &'a ObjectName<'a>,
    meta: &'a Metadata,
    stored: Option<&'a Facts<'a>>,
}

impl Deleted<'_> {
    /// [`assess`] once ASO has taken the object over under `manage`:
    /// confirmed, or protected for itself (`directly`) or for what is inside it.
    fn under_manage<'n>(
        &self,
        effective: Resolved,
        directly: bool,
        lookup: impl FnOnce() -> &'n Result<Option<Looked>, ClusterError>,
    ) -> Deletion {
        let (request, ctx, target, meta) = (self.request, self.ctx, self.target, self.meta);
        let p = &self.settings.deletion_protection;
        let key = p.confirmation_annotation.as_str();
        let name = if meta.name.is_empty() {
            target.name.as_ref()
        } else {
            meta.name.as_str()
        };
        let confirmation = meta.annotation(key);
        if confirmation == Some(name) {
            return Deletion::Confirmed(effective);
        }
        let resource_id = meta.annotation(RESOURCE_ID);
        let more = match owners::more(
            &request.kind.group,
            &request.kind.kind,
            name,
            resource_id,
            || status_subscription(request),
        ) {
            Ok(more) => more,
            Err(failure) => return Deletion::Failed(failure),
        };
        let children = if owners::needed(p) {
            let uid = match self.stored.map(|facts| &facts.uid) {
                Some(Ok(uid)) => Ok(uid.clone()),
                // Not read in the one pass, or its failure: reading the uid
                // alone fails the same way (stored's tests hold them equal).
                _ => stored_uid(request),
            };
            let inside = uid.and_then(|uid| {
                let owner = Owner {
                    name,
                    uid: &uid,
                    namespace: target.namespace,
                    resource_id,
                    more: more.as_ref(),
                };
                owners::protected_inside(&owner, p, ctx.cluster)
            });
            match inside {
                Ok(children) => children,
                Err(failure) => return Deletion::Failed(failure),
            }
        } else {
            Vec::new()
        };
        if !directly && children.is_empty() {
            return Deletion::Free;
        }
        // The Namespace's confirmation was given for what is in it: its DELETE
        // named those alone. Protected resources elsewhere inside this one need
        // this object's own confirmation.
        let elsewhere = children.iter().any(|c| c.namespace != target.namespace);
        match namespace_confirmed(target.namespace, key, lookup) {
            Ok(true) if !elsewhere => return Deletion::ConfirmedOnNamespace(effective),
            Ok(_) => {}
            Err(failure) => return Deletion::Failed(failure),
        }
        Deletion::Protected(Protected {
            effective,
            children,
            name: name.to_string(),
            confirmation: confirmation.map(str::to_string),
            stated_by: stated_by(request, self.stored),
            more,
        })
    }
}

/// The manager, other than the policy's own suggested commands', whose
/// server-side apply owns the judged object's reconcile-policy (the stored
/// object of a DELETE, the new one of an UPDATE). kustomize-controller and
/// helm-controller apply with forced ownership (fluxcd/pkg e2cfd1a2
/// `ssa/manager_apply.go` `ResourceManager.apply`, `client.ForceOwnership`;
/// fluxcd/helm-controller 0f61a860 `internal/action/upgrade.go`), so a value
/// their source states comes back at their next apply.
fn stated_by(request: &AdmissionRequest, stored: Option<&Facts<'_>>) -> Option<String> {
    let which = match request.operation {
        Operation::Delete => Which::OldObject,
        _ => Which::Object,
    };
    let owners = match stored {
        Some(facts) if which == Which::OldObject => managed_fields::annotation_owners_in(
            facts.managed_fields.unwrap_or("null"),
            RECONCILE_POLICY,
        ),
        _ => managed_fields::annotation_owners(request, which, RECONCILE_POLICY),
    };
    owners
        .into_iter()
        .find(|o| o.applies() && o.manager != FIELD_MANAGER)
        .map(|o| o.manager)
}

/// Whether `namespace` is being deleted and its own confirmation annotation
/// holds its name: confirming the Namespace's deletion confirms what is in
/// it, so that the namespace controller's deletes are judged as the
/// Namespace's own DELETE was (see `namespace_deletion`).
fn namespace_confirmed<'a>(
    namespace: &str,
    key: &str,
    lookup: impl FnOnce() -> &'a Result<Option<Looked>, ClusterError>,
) -> Result<bool, Failure> {
    #[derive(serde::Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Meta {
        #[serde(default)]
        deletion_timestamp: Option<Value>,
        #[serde(default, deserialize_with = "guard_core::request::null_default")]
        annotations: guard_core::StringMap,
    }
    #[derive(serde::Deserialize)]
    struct View {
        #[serde(default, deserialize_with = "guard_core::request::null_default")]
        metadata: Meta,
    }
    if namespace.is_empty() {
        return Ok(false);
    }
    // Unreadable, it confirms nothing: the refusal stands (and `resolve`
    // has already said, or refused, why the Namespace could not be read).
    let Ok(Some(looked)) = lookup() else {
        return Ok(false);
    };
    if let Some(meta) = &looked.read {
        return Ok(meta.deletion_timestamp.is_some() && meta.annotation(key) == Some(namespace));
    }
    let view: View = context::read(&looked.raw).map_err(Failure::UnreadableNamespace)?;
    let terminating = view
        .metadata
        .deletion_timestamp
        .is_some_and(|t| !t.is_null());
    Ok(terminating && view.metadata.annotations.get(key) == Some(namespace))
}

/// `status.properties.subscriptionId` of the stored object (an Alias: the
/// subscription its delete cancels). Read only for the kind whose delete
/// code reads it.
fn status_subscription(request: &AdmissionRequest) -> Result<Option<String>, Failure> {
    #[derive(serde::Deserialize)]
    struct View {
        #[serde(default)]
        status: Option<Status>,
    }
    #[derive(serde::Deserialize)]
    struct Status {
        #[serde(default)]
        properties: Option<Properties>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Properties {
        #[serde(default)]
        subscription_id: Option<String>,
    }
    let view = request
        .object_as::<View>(Which::OldObject)
        .map_err(Failure::Malformed)?;
    Ok(view
        .and_then(|v| v.status)
        .and_then(|s| s.properties)
        .and_then(|p| p.subscription_id))
}

/// `metadata.uid` of the stored object, which ASO's owner references carry.
/// kube-apiserver always sends it; without it a child claimed by ASO (owner
/// reference by uid) could not be recognised, and the deletion would pass as
/// if the object owned nothing.
///
/// Only `metadata.uid` is parsed; the rest of the object (which may be
/// megabytes) is checked as strictly as a `Value` would read it, without
/// building one, so that what a `Value` could not hold is still refused.
pub(crate) fn stored_uid(request: &AdmissionRequest) -> Result<String, Failure> {
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default)]
        metadata: Option<Meta>,
    }
    /// `metadata.uid`, the last one when repeated, as a `Value` reads it
    /// (a derived struct would refuse the repeat).
    struct Meta {
        uid: Option<Value>,
    }
    impl<'de> serde::Deserialize<'de> for Meta {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Meta;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a map")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Meta, A::Error> {
                    let mut uid = None;
                    while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                        if key == "uid" {
                            uid = Some(map.next_value::<Value>()?);
                        } else {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                    Ok(Meta { uid })
                }
            }
            d.deserialize_map(Visit)
        }
    }
    if let Some(raw) = request.old_object.as_deref() {
        guard_core::json_text::check_strictly(raw.get()).map_err(|e| {
            Failure::Malformed(ReadError {
                part: Part::OldObject,
                why: Why::Json(e),
            })
        })?;
    }
    let old = request
        .object_as::<Head>(Which::OldObject)
        .map_err(Failure::Malformed)?;
    let uid = old.and_then(|o| o.metadata).and_then(|m| m.uid);
    match uid.as_ref() {
        Some(Value::String(uid)) if !uid.is_empty() => Ok(uid.clone()),
        Some(Value::String(_) | Value::Null) | None => Err(Failure::NoUid),
        Some(other) => Err(Failure::UidType(guard_core::request::json_type(other))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use guard_core::Which;

    use super::Protected;
    use crate::decision::{Audit, Decision, Refusal, Warning};
    use crate::effective::{Note, Resolved, Source};
    use crate::failure::{Failure, NamespaceError};
    use crate::test_support::*;
    use crate::values::*;
    use guard_core::request::Part;

    fn default_manage() -> Resolved {
        Resolved {
            policy: ReconcilePolicy::Manage,
            source: Source::OperatorDefault,
        }
    }

    const KUSTOMIZE: &str = "system:serviceaccount:flux-system:kustomize-controller";

    fn protect() -> Value {
        json!({"deletionProtection": {"kinds": [{"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer"}]}})
    }

    fn delete(annotations: Value) -> guard_core::AdmissionRequest {
        request(
            "DELETE",
            KUSTOMIZE,
            None,
            Some(server(annotations, &[FINALIZER])),
        )
    }

    #[test]
    fn nothing_is_protected_by_default() {
        let d = decide(&delete(json!({})), json!({}), &NoCluster);
        assert_eq!(d, Decision::pass(orders_db()));
    }

    #[test]
    fn a_protected_manage_deletion_is_refused_with_both_ways_out() {
        let v = eval(&delete(json!({})), protect(), &NoCluster);
        assert_eq!(
            message(&v),
            "FlexibleServer shop/orders-db is protected from deletion: ASO \
             would delete the Azure resource as well, because its effective \
             serviceoperator.azure.com/reconcile-policy is manage (the operator default). To keep \
             the Azure resource, detach it first: `kubectl annotate \
             flexibleservers.dbforpostgresql.azure.com orders-db -n shop \
             serviceoperator.azure.com/reconcile-policy=detach-on-delete --overwrite --field-manager=aso-reconcile`. To delete it \
             in Azure too, confirm with the object's name: `kubectl annotate \
             flexibleservers.dbforpostgresql.azure.com orders-db -n shop \
             reconcile-guard.io/confirm-delete=orders-db --overwrite --field-manager=aso-reconcile`. Then delete again."
        );
    }

    #[test]
    fn confirmed_deletions_pass_and_wrong_confirmations_are_named() {
        let key = "reconcile-guard.io/confirm-delete";
        let d = decide(&delete(json!({ key: "orders-db" })), protect(), &NoCluster);
        let confirmed = Decision::pass(orders_db())
            .warned([Warning::Confirmed(default_manage())])
            .audited(Audit::Confirmed);
        assert_eq!(d, confirmed);
        let d = decide(&delete(json!({ key: "yes" })), protect(), &NoCluster);
        let protected = Protected {
            effective: default_manage(),
            children: Vec::new(),
            name: "orders-db".into(),
            confirmation: Some("yes".into()),
            stated_by: None,
            more: None,
        };
        let refusal = Refusal::Protected {
            protected: Box::new(protected),
            switch: None,
        };
        assert_eq!(d, Decision::refuse(orders_db(), refusal));
        let custom = json!({"deletionProtection": {"namespaces": ["shop"], "confirmationAnnotation": "example.com/delete"}});
        let d = decide(
            &delete(json!({"example.com/delete": "orders-db"})),
            custom,
            &NoCluster,
        );
        assert_eq!(d.audit, Some(Audit::Confirmed));
    }

    #[test]
    fn detached_and_skipped_resources_may_go() {
        for policy in [ReconcilePolicy::DetachOnDelete, ReconcilePolicy::Skip] {
            let d = decide(
                &delete(json!({ RECONCILE_POLICY: policy.as_str() })),
                protect(),
                &NoCluster,
            );
            let on_object = Resolved {
                policy,
                source: Source::Object,
            };
            let kept = Decision::pass(orders_db())
                .warned([Warning::Kept(on_object)])
                .audited(Audit::Policy(policy));
            assert_eq!(d, kept);
        }
        // Inherited from the Namespace, or the operator default.
        let d = decide(
            &delete(json!({})),
            protect(),
            &RecordedCluster::new(&with_namespace("shop", Some("detach-on-delete"))),
        );
        let inherited = Resolved {
            policy: ReconcilePolicy::DetachOnDelete,
            source: Source::Namespace("shop".into()),
        };
        assert_eq!(d.warnings, [Warning::Kept(inherited)]);
        let s = json!({"defaultReconcilePolicy": "skip", "deletionProtection": {"namespaces": ["shop"]}});
        assert_eq!(decide(&delete(json!({})), s, &NoCluster).refusal, None);
    }

    #[test]
    fn a_typo_in_the_stored_value_means_manage() {
        let d = decide(
            &delete(json!({ RECONCILE_POLICY: "detach-on-deletee" })),
            protect(),
            &RecordedCluster::new(&with_namespace("shop", Some("skip"))),
        );
        assert!(
            matches!(&d.refusal, Some(Refusal::Protected { protected, .. })
                if protected.effective == default_manage()),
            "{d:?}"
        );
        let note = Note::UnknownOnObject {
            value: "detach-on-deletee".into(),
        };
        assert_eq!(d.warnings, [Warning::Note(note)]);
    }

    #[test]
    fn selection_by_kind_namespace_and_labels() {
        let other_kind =
            json!({"deletionProtection": {"kinds": [{"group": "storage.azure.com", "kind": "*"}]}});
        assert!(eval(&delete(json!({})), other_kind, &NoCluster).allowed);
        let every_kind = json!({"deletionProtection": {"kinds": [{"group": "dbforpostgresql.azure.com", "kind": "*"}]}});
        assert!(!eval(&delete(json!({})), every_kind, &NoCluster).allowed);
        let other_ns = json!({"deletionProtection": {"namespaces": ["prod"]}});
        assert!(eval(&delete(json!({})), other_ns, &NoCluster).allowed);
        let labels =
            json!({"deletionProtection": {"labelSelector": {"matchLabels": {"tier": "data"}}}});
        assert!(!eval(&delete(json!({})), labels, &NoCluster).allowed);
        // All given criteria must hold.
        let both = json!({"deletionProtection": {"namespaces": ["shop"], "labelSelector": {"matchLabels": {"tier": "web"}}}});
        assert!(eval(&delete(json!({})), both, &NoCluster).allowed);
    }

    #[test]
    fn bad_input_on_delete() {
        let no_old = request("DELETE", KUSTOMIZE, None, None);
        let d = decide(&no_old, protect(), &NoCluster);
        assert_eq!(d.refusal, Some(Refusal::NoObject(Which::OldObject)));
        assert_eq!(
            message(&eval(&no_old, protect(), &NoCluster)),
            "FlexibleServer shop/orders-db: the DELETE request carries no oldObject"
        );
        assert_eq!(decide(&no_old, json!({}), &NoCluster).refusal, None);
        let bad = request(
            "DELETE",
            KUSTOMIZE,
            None,
            Some(json!({"metadata": {"labels": "x"}})),
        );
        let d = decide(&bad, protect(), &NoCluster);
        assert!(
            matches!(&d.refusal, Some(Refusal::Malformed(m)) if m.part == Part::OldObject),
            "{d:?}"
        );
        let d = decide(
            &delete(json!({})),
            protect(),
            &RecordedCluster::new(&failing_namespace("shop", "etcdserver: request timed out")),
        );
        let failed = Failure::NamespaceLookup {
            namespace: "shop".into(),
            error: NamespaceError::Lookup(namespace_lookup_error(
                "shop",
                "etcdserver: request timed out",
            )),
        };
        assert_eq!(d.refusal, Some(Refusal::Failed(failed)));
    }

    /// Wherever the one pass reads a Namespace, its reconcile policy and
    /// confirmation are what reading each on its own finds.
    #[test]
    fn a_namespace_read_once_answers_as_read_for_each_rule() {
        use super::{namespace_confirmed, stored, Looked};
        use crate::effective::namespace_policy;
        use crate::test_support::RandomObjects;
        let key = "example.com/confirm";
        let annotations = [
            RECONCILE_POLICY,
            r"serviceoperator.azure.com\/reconcile-policy",
            key,
            "x",
        ];
        let mut objects = RandomObjects::new(31);
        let mut answered = 0;
        for _ in 0..40_000 {
            let text = objects.object(&["l"], &annotations);
            let Ok(raw) = serde_json::value::RawValue::from_string(text.clone()) else {
                continue;
            };
            let asked = [RECONCILE_POLICY, key];
            let Some(head) = stored::metadata_of(&text, None, &asked) else {
                continue;
            };
            answered += 1;
            let fast = Ok(Some(Looked {
                raw: raw.clone(),
                read: Some(head.meta.clone()),
            }));
            let alone = Ok(Some(Looked {
                raw: raw.clone(),
                read: None,
            }));
            assert_eq!(
                namespace_policy(Some(&raw)),
                Ok(head.meta.annotation(RECONCILE_POLICY).map(str::to_string)),
                "{text}"
            );
            for namespace in ["", "a", "uid-1"] {
                assert_eq!(
                    namespace_confirmed(namespace, key, || &fast),
                    namespace_confirmed(namespace, key, || &alone),
                    "{text}"
                );
            }
        }
        // The walk answers many of them.
        assert!(answered > 5_000, "{answered}");
    }

    /// Owner references name the owner by uid: without the stored object's
    /// uid its claimed children cannot be found, so the deletion of a
    /// possible owner is refused rather than judged as owning nothing.
    #[test]
    fn an_owner_without_a_stored_uid_is_refused() {
        let owns = json!({"deletionProtection": {"kinds": [
            {"group": "storage.azure.com", "kind": "StorageAccount", "version": "v1api20230101"}]}});
        let d = decide(&delete(json!({})), owns.clone(), &NoCluster);
        assert_eq!(d.refusal, Some(Refusal::Failed(Failure::NoUid)));
        let mut numeric = server(json!({}), &[FINALIZER]);
        numeric["metadata"]["uid"] = json!(42);
        let d = decide(
            &request("DELETE", KUSTOMIZE, None, Some(numeric)),
            owns.clone(),
            &NoCluster,
        );
        assert_eq!(
            d.refusal,
            Some(Refusal::Failed(Failure::UidType("a number")))
        );
        let mut stored = server(json!({}), &[FINALIZER]);
        stored["metadata"]["uid"] = json!("5d7f9b1c-3e5a-4c7e-9b2d-8a0c2e4f6b17");
        let d = decide(
            &request("DELETE", KUSTOMIZE, None, Some(stored)),
            owns,
            &NoCluster,
        );
        assert_eq!(d.refusal, None);
    }
}

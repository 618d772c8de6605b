//! What an UPDATE changes, as far as gates care.
//!
//! Gates hold changes to the desired state: everything outside `metadata` and
//! `status`, owner references (the garbage collector acts on them), and
//! resuming (`spec.suspend`, or a Deployment's `spec.paused`, from true to
//! false: a resumed Job or CronJob runs its pods at once, a resumed
//! Deployment rolls out its template). Metadata-only writes (labels,
//! annotations, `flux reconcile`'s `reconcile.fluxcd.io/requestedAt`), no-op
//! writes (kustomize-controller re-applying an unchanged object) and
//! stopping (`spec.suspend` or a Deployment's `spec.paused` alone, the
//! model's `stops`, so incident responders can always suspend or pause) are told apart here; [`crate::decide`] decides which of those
//! pass, by who sent them.
//!
//! Only the top level and `spec` are split, borrowing the raw JSON, in the
//! pass that reads the metadata ([`crate::split_object`]); members are
//! compared as text first and parsed only when the text differs (the API
//! server serializes both objects alike, so equal members are equal text).

// Annotations and labels kustomize-controller's apply removes as
// bookkeeping, never from Git.
use guard_core::model::keys::CLEANED_UP;
use guard_core::{Metadata, Which};
use serde_json::value::RawValue;

use crate::split_object::{members, Members, Spec, SplitError, Top};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Changes the desired state: held by closed gates. Says what changed.
    Held(String),
    /// Only a stop field (`spec.suspend`, a Deployment's `spec.paused`:
    /// the model's [`guard_core::model::stops`]) and perhaps metadata
    /// changed, and nothing starts: stopped, or `false` written for an
    /// absent value ([`crate::decide`] files a resumed Flux object here too).
    /// Names the field.
    SuspendOnly(&'static str),
    /// Only a stop field (and perhaps metadata) changed, from `true` to
    /// anything else. Names the field.
    Resume(&'static str),
    /// Only labels, annotations or finalizers changed.
    MetadataOnly,
    /// Nothing a person wrote changed.
    NoOp,
}

const OWNER_REFERENCES: &str = "ownerReferences";

/// Equal JSON, whatever the spacing or member order. A difference found by
/// walking down to it settles most changed members without reading both
/// whole ([`guard_core::json_text::texts_differ`]).
fn same(a: Option<&RawValue>, b: Option<&RawValue>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => !guard_core::json_text::texts_differ(a.get(), b.get()),
        _ => false,
    }
}

/// The first key of either map, outside `skip`, whose value differs.
fn first_difference<'k>(
    old: &'k Members<'_>,
    new: &'k Members<'_>,
    skip: &[&str],
) -> Option<&'k str> {
    old.keys()
        .chain(new.keys().filter(|k| !old.contains_key(*k)))
        .map(String::as_str)
        .filter(|k| !skip.contains(k))
        .find(|k| !same(old.get(*k).copied(), new.get(*k).copied()))
}

/// Classifies an UPDATE from its two objects.
pub fn classify_update(
    old: &Top<'_>,
    new: &Top<'_>,
    old_meta: &Metadata,
    new_meta: &Metadata,
    stops: &[&'static str],
) -> Result<Change, SplitError> {
    let skip = ["metadata", "status", "spec"];
    if let Some(key) = first_difference(&old.members, &new.members, &skip) {
        return Ok(Change::Held(key.to_string()));
    }
    // Owner references are not bookkeeping: one naming an absent owner has
    // the garbage collector delete the object (kubernetes/kubernetes
    // `pkg/controller/garbagecollector/garbagecollector.go`
    // `attemptToDeleteItem`), and the collector's deletes pass.
    if !same(old.owner_references, new.owner_references) {
        return Ok(Change::Held(format!("metadata.{OWNER_REFERENCES}")));
    }
    let mut stop_changed = None;
    match (&old.spec, &new.spec) {
        (Some(Spec::Members(o)), Some(Spec::Members(n))) => {
            // Equal specs have equal members, so a member that differs
            // settles it without comparing the specs whole.
            if let Some(key) = first_difference(o, n, stops) {
                return Ok(Change::Held(format!("spec.{key}")));
            }
            if specs_differ(old, new)? {
                let stopped = |m: &Members<'_>, field: &str| {
                    m.get(field).is_some_and(|v| v.get().trim() == "true")
                };
                // Setting any stop field back from true starts things again.
                if let Some(field) = stops.iter().find(|f| stopped(o, f) && !stopped(n, f)) {
                    return Ok(Change::Resume(field));
                }
                let changed = stops
                    .iter()
                    .find(|f| !same(o.get(**f).copied(), n.get(**f).copied()));
                stop_changed = Some(changed.or(stops.first()).copied().unwrap_or_default());
            }
        }
        (None, None) => {}
        // `spec` appears, disappears or is not an object.
        (Some(Spec::Other(o)), Some(Spec::Other(n))) if same(Some(o), Some(n)) => {}
        _ => return Ok(Change::Held("spec".into())),
    }
    Ok(if let Some(field) = stop_changed {
        Change::SuspendOnly(field)
    } else if old_meta.labels != new_meta.labels
        || old_meta.annotations != new_meta.annotations
        || old_meta.finalizers != new_meta.finalizers
    {
        Change::MetadataOnly
    } else {
        Change::NoOp
    })
}

/// The two specs compared whole, once no member but `suspend` differs:
/// [`same`] reads them as `Value`s, and text that does not parse as one
/// (a lone surrogate escape) equals nothing, so two specs whose members are
/// each the same can still differ. The objects are split again for it; an
/// update that gets here changes no spec member, and is not held.
fn specs_differ(old: &Top<'_>, new: &Top<'_>) -> Result<bool, SplitError> {
    fn spec<'a>(t: &Top<'a>, which: Which) -> Result<Option<&'a RawValue>, SplitError> {
        Ok(members(t.raw, which, None)?.get("spec").copied())
    }
    Ok(!same(
        spec(old, Which::OldObject)?,
        spec(new, Which::Object)?,
    ))
}

/// The field [`metadata_difference`] names for a change of the finalizers.
pub const FINALIZERS: &str = "metadata.finalizers";

/// The first label, annotation or finalizer an UPDATE changes, as
/// `metadata.labels[key]`, leaving out [`CLEANED_UP`].
pub fn metadata_difference(old: &Metadata, new: &Metadata) -> Option<String> {
    let key_differs = |what: &str, old: &guard_core::StringMap, new: &guard_core::StringMap| {
        old.keys()
            .chain(new.keys().filter(|k| !old.contains_key(k)))
            .filter(|k| !CLEANED_UP.contains(k))
            .find(|k| old.get(k) != new.get(k))
            .map(|k| format!("metadata.{what}[{k}]"))
    };
    key_differs("labels", &old.labels, &new.labels)
        .or_else(|| key_differs("annotations", &old.annotations, &new.annotations))
        .or_else(|| (old.finalizers != new.finalizers).then(|| FINALIZERS.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::model::stops;

    fn classify(old: &str, new: &str) -> Result<Change, SplitError> {
        let (o, n) = (
            RawValue::from_string(old.into()).unwrap(),
            RawValue::from_string(new.into()).unwrap(),
        );
        let meta = |raw: &RawValue| {
            #[derive(serde::Deserialize, Default)]
            struct Head {
                #[serde(default)]
                metadata: Metadata,
            }
            serde_json::from_str::<Head>(raw.get())
                .map(|h| h.metadata)
                .unwrap_or_default()
        };
        let (old_top, new_top) = (
            Top::read(&o, Which::OldObject, None)?,
            Top::read(&n, Which::Object, None)?,
        );
        classify_update(&old_top, &new_top, &meta(&o), &meta(&n), stops::ANY_KIND)
    }

    const BASE: &str = r#"{"apiVersion":"v1","kind":"K","metadata":{"name":"a","resourceVersion":"1"},"spec":{"path":"./a","prune":true}}"#;

    #[test]
    fn spec_changes_are_held_and_named() {
        let changed = BASE.replace("./a", "./b");
        assert_eq!(
            classify(BASE, &changed),
            Ok(Change::Held("spec.path".into()))
        );
        let added = BASE.replace(r#""prune":true"#, r#""prune":true,"wait":true"#);
        assert_eq!(classify(BASE, &added), Ok(Change::Held("spec.wait".into())));
        let data = r#"{"metadata":{},"data":{"a":"1"}}"#;
        assert_eq!(
            classify(data, r#"{"metadata":{},"data":{"a":"2"}}"#),
            Ok(Change::Held("data".into()))
        );
        assert_eq!(
            classify(
                BASE,
                r#"{"apiVersion":"v1","kind":"K","metadata":{"name":"a"}}"#
            ),
            Ok(Change::Held("spec".into()))
        );
    }

    #[test]
    fn suspend_metadata_status_and_no_ops_pass() {
        let suspended = BASE.replace(r#""prune":true"#, r#""prune":true,"suspend":true"#);
        assert_eq!(
            classify(BASE, &suspended),
            Ok(Change::SuspendOnly("suspend"))
        );
        assert_eq!(classify(&suspended, BASE), Ok(Change::Resume("suspend")));
        let resumed = suspended.replace(r#""suspend":true"#, r#""suspend":false"#);
        assert_eq!(
            classify(&suspended, &resumed),
            Ok(Change::Resume("suspend"))
        );
        assert_eq!(classify(BASE, &resumed), Ok(Change::SuspendOnly("suspend")));
        // Whatever is left in place of `true` resumes: null, a string.
        for other in [
            r#""suspend":null"#,
            r#""suspend":"false""#,
            r#""suspend":"true""#,
        ] {
            let written = suspended.replace(r#""suspend":true"#, other);
            assert_eq!(
                classify(&suspended, &written),
                Ok(Change::Resume("suspend")),
                "{other}"
            );
        }
        let annotated = BASE.replace(
            r#""name":"a""#,
            r#""name":"a","annotations":{"reconcile.fluxcd.io/requestedAt":"now"}"#,
        );
        assert_eq!(classify(BASE, &annotated), Ok(Change::MetadataOnly));
        let bumped = BASE.replace(r#""resourceVersion":"1""#, r#""resourceVersion":"2""#);
        assert_eq!(classify(BASE, &bumped), Ok(Change::NoOp));
        let with_status = BASE.replace(r#""spec""#, r#""status":{"ready":true},"spec""#);
        assert_eq!(classify(BASE, &with_status), Ok(Change::NoOp));
        // Same JSON, other spacing and member order.
        let reordered = r#"{"kind":"K", "apiVersion":"v1","metadata":{"name":"a","resourceVersion":"1"},"spec":{"prune":true, "path":"./a"}}"#;
        assert_eq!(classify(BASE, reordered), Ok(Change::NoOp));
    }

    #[test]
    fn a_deployment_pause_passes_and_its_resume_is_held() {
        let deployment = |spec: &str| {
            format!(
                r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"a"}},"spec":{{"replicas":3{spec}}}}}"#
            )
        };
        let classify = |old: &str, new: &str| {
            let (o, n) = (
                RawValue::from_string(old.into()).unwrap(),
                RawValue::from_string(new.into()).unwrap(),
            );
            let meta = Metadata::default();
            classify_update(
                &Top::read(&o, Which::OldObject, None).unwrap(),
                &Top::read(&n, Which::Object, None).unwrap(),
                &meta,
                &meta,
                stops::stop_fields("apps", "Deployment"),
            )
        };
        let (running, paused) = (deployment(""), deployment(r#","paused":true"#));
        let resumed = deployment(r#","paused":false"#);
        assert_eq!(
            classify(&running, &paused),
            Ok(Change::SuspendOnly("paused"))
        );
        assert_eq!(classify(&paused, &resumed), Ok(Change::Resume("paused")));
        assert_eq!(classify(&paused, &running), Ok(Change::Resume("paused")));
        // Pausing with another change is that change.
        let scaled = deployment(r#","paused":true,"replicas":1"#).replace(r#""replicas":3,"#, "");
        assert_eq!(
            classify(&running, &scaled),
            Ok(Change::Held("spec.replicas".into()))
        );
        // `paused` is a stop field of Deployments only.
        let (o, n) = (
            RawValue::from_string(running.clone()).unwrap(),
            RawValue::from_string(paused.clone()).unwrap(),
        );
        let meta = Metadata::default();
        assert_eq!(
            classify_update(
                &Top::read(&o, Which::OldObject, None).unwrap(),
                &Top::read(&n, Which::Object, None).unwrap(),
                &meta,
                &meta,
                stops::ANY_KIND,
            ),
            Ok(Change::Held("spec.paused".into()))
        );
    }

    #[test]
    fn owner_references_are_held() {
        let owned = BASE.replace(
            r#""name":"a""#,
            r#""name":"a","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"x","uid":"u"}]"#,
        );
        let held = Ok(Change::Held("metadata.ownerReferences".into()));
        assert_eq!(classify(BASE, &owned), held);
        assert_eq!(classify(&owned, BASE), held);
        let bumped = owned.replace(r#""resourceVersion":"1""#, r#""resourceVersion":"2""#);
        assert_eq!(classify(&owned, &bumped), Ok(Change::NoOp));
    }

    #[test]
    fn metadata_differences_leave_out_the_cleanup() {
        let meta = |labels: &[(&str, &str)], annotations: &[(&str, &str)]| {
            let map = |kv: &[(&str, &str)]| {
                let mut m = guard_core::StringMap::new();
                for (k, v) in kv {
                    m.insert(k.to_string(), v.to_string());
                }
                m
            };
            Metadata {
                labels: map(labels),
                annotations: map(annotations),
                ..Default::default()
            }
        };
        let auth = [("nginx.ingress.kubernetes.io/auth-url", "https://auth")];
        assert_eq!(
            metadata_difference(&meta(&[], &auth), &meta(&[], &[])),
            Some("metadata.annotations[nginx.ingress.kubernetes.io/auth-url]".into())
        );
        let psa = [("pod-security.kubernetes.io/enforce", "restricted")];
        assert_eq!(
            metadata_difference(
                &meta(&psa, &[]),
                &meta(&[("pod-security.kubernetes.io/enforce", "privileged")], &[])
            ),
            Some("metadata.labels[pod-security.kubernetes.io/enforce]".into())
        );
        let applied = [("kubectl.kubernetes.io/last-applied-configuration", "{}")];
        assert_eq!(
            metadata_difference(&meta(&[], &applied), &meta(&[], &[])),
            None
        );
        let mut finalized = meta(&[], &[]);
        finalized.finalizers.push("example.com/keep".into());
        assert_eq!(
            metadata_difference(&meta(&[], &[]), &finalized),
            Some("metadata.finalizers".into())
        );
    }

    /// Objects read in one pass classify as objects split member by member,
    /// for every pair of many shapes.
    #[test]
    fn one_pass_and_split_objects_classify_alike() {
        let specs = [
            r#"{"path":"./a","prune":true}"#,
            r#"{"prune":true, "path":"./a"}"#,
            r#"{"path":"./b","prune":true}"#,
            r#"{"path":"./a","prune":true,"suspend":true}"#,
            r#"{"path":"./a","prune":true,"suspend":false}"#,
            r#"{"path":"./a","prune":true,"suspend":1.0}"#,
            r#"{"path":"./a","prune":true,"suspend":1.00}"#,
            r#"{"path":"\ud800","suspend":true}"#,
            r#"{"suspend":true, "path":"\ud800"}"#,
            r#"{"path":"./a","path":"./b"}"#,
            r#"null"#,
            r#""x""#,
        ];
        let metadatas = [
            r#"{"name":"a"}"#,
            r#"{"name":"a","annotations":{"k":"v"}}"#,
            r#"{"name":"a","ownerReferences":[{"uid":"u"}]}"#,
            r#"{"name":"a","ownerReferences":[ {"uid":"u"} ]}"#,
            r#"null"#,
            r#"[]"#,
        ];
        let mut objects = vec![r#"{"metadata":{},"data":{"a":"1"}}"#.to_string()];
        for m in metadatas {
            for spec in specs {
                objects.push(format!(r#"{{"kind":"K","metadata":{m},"spec":{spec}}}"#));
            }
            objects.push(format!(r#"{{"kind":"K","metadata":{m}}}"#));
        }
        let meta = Metadata::default();
        for old in &objects {
            for new in &objects {
                let (o, n) = (
                    RawValue::from_string(old.clone()).unwrap(),
                    RawValue::from_string(new.clone()).unwrap(),
                );
                let read = classify_update(
                    &Top::read(&o, Which::OldObject, None).unwrap(),
                    &Top::read(&n, Which::Object, None).unwrap(),
                    &meta,
                    &meta,
                    stops::ANY_KIND,
                );
                let split = classify_update(
                    &Top::split(&o, Which::OldObject).unwrap(),
                    &Top::split(&n, Which::Object).unwrap(),
                    &meta,
                    &meta,
                    stops::ANY_KIND,
                );
                assert_eq!(read, split, "{old} -> {new}");
            }
        }
    }

    #[test]
    fn malformed_objects_are_named() {
        let e = classify("[1]", BASE).unwrap_err();
        assert_eq!((e.which, e.member), (Which::OldObject, None));
        assert!(
            e.to_string()
                .starts_with("malformed oldObject: not a JSON object (invalid type: sequence"),
            "{e}"
        );
        let e = classify(BASE, "\"x\"").unwrap_err();
        assert_eq!((e.which, e.member), (Which::Object, None));
        assert!(e.to_string().starts_with("malformed object: "), "{e}");
        assert_eq!(
            classify(BASE, r#"{"spec":5}"#),
            Ok(Change::Held("apiVersion".into()))
        );
    }
}

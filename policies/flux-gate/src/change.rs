//! What an UPDATE changes, as far as gates care.
//!
//! Gates hold changes to the desired state: everything outside `metadata` and
//! `status`, owner references (the garbage collector acts on them), and
//! resuming (`spec.suspend` from true to false: a resumed Job or CronJob
//! runs its pods at once). Metadata-only writes (labels,
//! annotations, `flux reconcile`'s `reconcile.fluxcd.io/requestedAt`), no-op
//! writes (kustomize-controller re-applying an unchanged object) and
//! suspending (`spec.suspend` alone, so incident responders can always
//! suspend) are told apart here; [`crate::decide`] decides which of those
//! pass, by who sent them.
//!
//! Only the top level and `spec` are split, borrowing the raw JSON; members
//! are compared as text first and parsed only when the text differs (the API
//! server serializes both objects alike, so equal members are equal text).

use std::collections::BTreeMap;
use std::fmt;

use guard_core::request::null_default;
use guard_core::Metadata;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Changes the desired state: held by closed gates. Says what changed.
    Held(String),
    /// Only `spec.suspend` (and perhaps metadata) changed, and nothing
    /// starts: suspended, or `false` written for an absent value ([`crate::decide`]
    /// files a resumed Flux object here too).
    SuspendOnly,
    /// Only `spec.suspend` (and perhaps metadata) changed, from `true` to
    /// anything else.
    Resume,
    /// Only labels, annotations or finalizers changed.
    MetadataOnly,
    /// Nothing a person wrote changed.
    NoOp,
}

type Members<'a> = BTreeMap<String, &'a RawValue>;

const OWNER_REFERENCES: &str = "ownerReferences";

fn members<'a>(raw: &'a RawValue, what: &str) -> Result<Members<'a>, String> {
    serde_json::from_str(raw.get())
        .map_err(|e| format!("malformed {what}: not a JSON object ({e})"))
}

/// An UPDATE's object split into its top-level members once, for both its
/// metadata ([`Top::metadata`]) and the comparison ([`classify_update`]):
/// each object may be half of a 3 MiB request.
pub(crate) struct Top<'a> {
    members: Members<'a>,
    /// No name came twice (a later duplicate replaced an earlier one in
    /// `members`, where a struct read refuses it).
    unique: bool,
}

/// `object` or `oldObject` (`what`) split, as [`members`] reads it.
pub(crate) fn top<'a>(raw: &'a RawValue, what: &str) -> Result<Top<'a>, String> {
    serde_json::from_str(raw.get()).or_else(|_: serde_json::Error| {
        // Read again for the error's words.
        members(raw, what).map(|members| Top {
            members,
            unique: false,
        })
    })
}

impl<'de> Deserialize<'de> for Top<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Top<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Top<'de>, A::Error> {
                let mut top = Top {
                    members: Members::new(),
                    unique: true,
                };
                while let Some((key, value)) = access.next_entry::<String, &'de RawValue>()? {
                    top.unique &= top.members.insert(key, value).is_none();
                }
                Ok(top)
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

impl Top<'_> {
    /// The object's metadata as [`guard_core::AdmissionRequest::metadata`] reads it,
    /// from the `metadata` member alone (the rest of the object is not read
    /// again); `None` when only the whole object's reading can say what is
    /// wrong (its errors name a place in the object), or the object has a
    /// name twice, which that reading refuses.
    pub(crate) fn metadata(&self) -> Option<Metadata> {
        if !self.unique {
            return None;
        }
        let Some(raw) = self.members.get("metadata") else {
            return Some(Metadata::default());
        };
        let mut reader = serde_json::Deserializer::from_str(raw.get());
        let metadata = null_default(&mut reader).ok()?;
        reader.end().ok()?;
        Some(metadata)
    }
}

/// Whether a metadata text may hold an `ownerReferences` member: its name is
/// written either as it reads or with `\u` escapes. Most metadata holds
/// neither, and is then not split to compare owner references.
fn may_hold_owner_references(metadata: Option<&RawValue>) -> bool {
    metadata.is_some_and(|m| m.get().contains(OWNER_REFERENCES) || m.get().contains("\\u"))
}

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

/// `spec` as members, when it is an object.
fn split<'a>(raw: Option<&'a RawValue>, what: &str) -> Result<Option<Members<'a>>, String> {
    match raw {
        Some(r) if r.get().trim_start().starts_with('{') => members(r, what).map(Some),
        _ => Ok(None),
    }
}

fn owner_refs<'a>(metadata: Option<&Members<'a>>) -> Option<&'a RawValue> {
    metadata.and_then(|m| m.get(OWNER_REFERENCES).copied())
}

/// Classifies an UPDATE from its two objects.
pub fn classify_update(
    old: &Top<'_>,
    new: &Top<'_>,
    old_meta: &Metadata,
    new_meta: &Metadata,
) -> Result<Change, String> {
    let (old_top, new_top) = (&old.members, &new.members);
    if let Some(key) = first_difference(old_top, new_top, &["metadata", "status", "spec"]) {
        return Ok(Change::Held(key.to_string()));
    }
    // Owner references are not bookkeeping: one naming an absent owner has
    // the garbage collector delete the object (kubernetes/kubernetes
    // `pkg/controller/garbagecollector/garbagecollector.go`
    // `attemptToDeleteItem`), and the collector's deletes pass.
    let (old_md, new_md) = (
        old_top.get("metadata").copied(),
        new_top.get("metadata").copied(),
    );
    if old_md.map(|m| m.get()) != new_md.map(|m| m.get())
        && (may_hold_owner_references(old_md) || may_hold_owner_references(new_md))
    {
        let o = split(old_md, "oldObject.metadata")?;
        let n = split(new_md, "object.metadata")?;
        if !same(owner_refs(o.as_ref()), owner_refs(n.as_ref())) {
            return Ok(Change::Held(format!("metadata.{OWNER_REFERENCES}")));
        }
    }
    let (old_spec, new_spec) = (old_top.get("spec").copied(), new_top.get("spec").copied());
    let mut suspend_changed = false;
    // Split before comparing whole: equal specs have equal members, so a
    // member that differs settles it without reading the specs twice.
    if old_spec.map(|s| s.get()) != new_spec.map(|s| s.get()) {
        match (
            split(old_spec, "oldObject.spec")?,
            split(new_spec, "object.spec")?,
        ) {
            (Some(o), Some(n)) => {
                if let Some(key) = first_difference(&o, &n, &["suspend"]) {
                    return Ok(Change::Held(format!("spec.{key}")));
                }
                if !same(old_spec, new_spec) {
                    let suspended = |m: &Members<'_>| {
                        m.get("suspend").is_some_and(|v| v.get().trim() == "true")
                    };
                    if suspended(&o) && !suspended(&n) {
                        return Ok(Change::Resume);
                    }
                    suspend_changed = true;
                }
            }
            // `spec` appears, disappears or is not an object.
            _ if !same(old_spec, new_spec) => return Ok(Change::Held("spec".into())),
            _ => {}
        }
    }
    Ok(if suspend_changed {
        Change::SuspendOnly
    } else if old_meta.labels != new_meta.labels
        || old_meta.annotations != new_meta.annotations
        || old_meta.finalizers != new_meta.finalizers
    {
        Change::MetadataOnly
    } else {
        Change::NoOp
    })
}

/// Annotations and labels kustomize-controller's apply removes as
/// bookkeeping, never from Git (fluxcd/kustomize-controller 186fb3b,
/// `kustomization_controller.go` `apply`, `applyOpts.Cleanup`; sent by
/// fluxcd/pkg ssa/v0.77.0 `ssa/manager_apply.go` `cleanupMetadata` as a
/// JSON patch under the controller's field manager).
const CLEANED_UP: [&str; 4] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    "kustomize.toolkit.fluxcd.io/checksum",
    "fluxcd.io/sync-checksum",
    "fluxcd.io/sync-gc-mark",
];

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
        .or_else(|| (old.finalizers != new.finalizers).then(|| "metadata.finalizers".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(old: &str, new: &str) -> Result<Change, String> {
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
        let (old_top, new_top) = (top(&o, "oldObject")?, top(&n, "object")?);
        classify_update(&old_top, &new_top, &meta(&o), &meta(&n))
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
        assert_eq!(classify(BASE, &suspended), Ok(Change::SuspendOnly));
        assert_eq!(classify(&suspended, BASE), Ok(Change::Resume));
        let resumed = suspended.replace(r#""suspend":true"#, r#""suspend":false"#);
        assert_eq!(classify(&suspended, &resumed), Ok(Change::Resume));
        assert_eq!(classify(BASE, &resumed), Ok(Change::SuspendOnly));
        // Whatever is left in place of `true` resumes: null, a string.
        for other in [
            r#""suspend":null"#,
            r#""suspend":"false""#,
            r#""suspend":"true""#,
        ] {
            let written = suspended.replace(r#""suspend":true"#, other);
            assert_eq!(
                classify(&suspended, &written),
                Ok(Change::Resume),
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

    /// Metadata read from the split object is what the whole object's
    /// reading gives, whenever it is read that way at all.
    #[test]
    fn metadata_from_the_split_object_is_the_requests() {
        let metadatas = [
            r#"null"#,
            r#"{}"#,
            r#""x""#,
            r#"[]"#,
            r#"[{"name":"a"}]"#,
            r#"{"name":"a","labels":{"k":"v","k":"w"},"annotations":{"a":"1"},"finalizers":["f"]}"#,
            r#"{"name":"a","name":"b"}"#,
            r#"{"labels":{"k":1}}"#,
            r#"{"labels":null,"annotations":null,"finalizers":null,"deletionTimestamp":null}"#,
            r#"{"annotations":{"\u0061":"\ud83d\ude00"},"managedFields":[{"a":[[[{}]]]}]}"#,
            r#"{"generateName":"web-","namespace":"ns","deletionTimestamp":"2026-01-01T00:00:00Z"}"#,
        ];
        let mut objects = vec![
            r#"{}"#.to_string(),
            r#"{"spec":{"a":1}}"#.to_string(),
            r#"{"metadata":{"name":"a"},"metadata":{"name":"b"}}"#.to_string(),
            r#"{"spec":1,"spec":2,"metadata":{"name":"a"}}"#.to_string(),
            r#"[{"name":"a"}]"#.to_string(),
        ];
        for m in metadatas {
            objects.push(format!(
                r#"{{"apiVersion":"v1","metadata":{m},"spec":{{"x":[1]}}}}"#
            ));
            objects.push(format!(r#"{{"spec":{{}},"\u006detadata":{m}}}"#));
            objects.push(format!(r#"{{ "metadata" : {m} }}"#));
        }
        let mut split = 0;
        for object in objects {
            let request: guard_core::AdmissionRequest =
                serde_json::from_str(&format!(r#"{{"operation":"UPDATE","object":{object}}}"#))
                    .unwrap();
            let raw = request.raw(guard_core::Which::Object).unwrap();
            let whole = request.metadata(guard_core::Which::Object);
            if let Some(m) = top(raw, "object").ok().and_then(|t| t.metadata()) {
                split += 1;
                assert_eq!(whole, Ok(Some(m)), "{object}");
            }
        }
        // Most shapes are read from the split object.
        assert!(split >= 20, "{split}");
    }

    /// Metadata that cannot hold an `ownerReferences` member is not split
    /// to look for one.
    #[test]
    fn owner_references_are_looked_for_where_they_can_be() {
        let names = [
            r#""ownerReferences""#,
            r#""\u006fwnerReferences""#,
            r#""ownerRef\u0065rences""#,
            r#""ownerreferences""#,
            r#""owner""#,
            r#""x""#,
        ];
        let values = [r#"[{"uid":"u"}]"#, r#"null"#, r#""ownerReferences""#];
        let mut texts = vec![r#"{}"#.to_string(), r#""x""#.into(), r#"[]"#.into()];
        for n in names {
            for v in values {
                texts.push(format!(r#"{{"name":"a",{n}:{v}}}"#));
                texts.push(format!(r#"{{"annotations":{{"a":"\\u0041"}},{n}:{v}}}"#));
            }
        }
        for text in texts {
            let raw = RawValue::from_string(text.clone()).unwrap();
            let split = split(Some(&raw), "metadata").unwrap();
            if !may_hold_owner_references(Some(&raw)) {
                assert!(owner_refs(split.as_ref()).is_none(), "{text}");
            }
        }
        assert!(!may_hold_owner_references(None));
    }

    #[test]
    fn malformed_objects_are_named() {
        assert_eq!(
            classify("[1]", BASE).unwrap_err().split(':').next(),
            Some("malformed oldObject")
        );
        assert!(classify(BASE, "\"x\"")
            .unwrap_err()
            .starts_with("malformed object"));
        assert_eq!(
            classify(BASE, r#"{"spec":5}"#),
            Ok(Change::Held("apiVersion".into()))
        );
    }
}

//! What an UPDATE changes, as far as gates care.
//!
//! Gates hold changes to the desired state: everything outside `metadata` and
//! `status`. Metadata-only writes (labels, annotations, `flux reconcile`'s
//! `reconcile.fluxcd.io/requestedAt`), no-op writes (kustomize-controller
//! re-applying an unchanged object) and suspending or resuming (`spec.suspend`
//! alone, so incident responders can suspend during a freeze) pass.
//!
//! Only the top level and `spec` are split, borrowing the raw JSON; members
//! are compared as text first and parsed only when the text differs (the API
//! server serializes both objects alike, so equal members are equal text).

use std::collections::BTreeMap;

use guard_core::Metadata;
use serde_json::value::RawValue;

use crate::json_diff;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Changes the desired state: held by closed gates. Says what changed.
    Held(String),
    /// Only `spec.suspend` (and perhaps metadata) changed.
    SuspendOnly,
    /// Only labels, annotations or finalizers changed.
    MetadataOnly,
    /// Nothing a person wrote changed.
    NoOp,
}

type Members<'a> = BTreeMap<String, &'a RawValue>;

fn members<'a>(raw: &'a RawValue, what: &str) -> Result<Members<'a>, String> {
    serde_json::from_str(raw.get())
        .map_err(|e| format!("malformed {what}: not a JSON object ({e})"))
}

/// Equal JSON, whatever the spacing or member order. A difference found by
/// walking down to it settles most changed members without reading both
/// whole ([`json_diff`]).
fn same(a: Option<&RawValue>, b: Option<&RawValue>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            let (a, b) = (a.get(), b.get());
            a == b || (!json_diff::differ(a, b) && guard_core::json_eq::equal(a, b))
        }
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

/// Classifies an UPDATE from its two objects.
pub fn classify_update(
    old: &RawValue,
    new: &RawValue,
    old_meta: &Metadata,
    new_meta: &Metadata,
) -> Result<Change, String> {
    let old_top = members(old, "oldObject")?;
    let new_top = members(new, "object")?;
    if let Some(key) = first_difference(&old_top, &new_top, &["metadata", "status", "spec"]) {
        return Ok(Change::Held(key.to_string()));
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
                suspend_changed = !same(old_spec, new_spec);
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
        classify_update(&o, &n, &meta(&o), &meta(&n))
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
        assert_eq!(classify(&suspended, BASE), Ok(Change::SuspendOnly));
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

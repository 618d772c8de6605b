//! The stored object of a DELETE, read in one pass for everything the
//! deletion rules ask of it. It may be megabytes (policy-server's 2 MiB
//! review holds 115,000 labels), and the rules read a handful of its
//! members; read one rule at a time (its metadata, then as strictly as a
//! `Value` would, then its uid, then its managedFields) it was parsed four
//! times, each label copied once.
//!
//! [`read`] reads the object once, strictly, copying only the labels the
//! label selector asks and the annotations the rules read, and keeping the
//! managedFields' text. It answers only for an object every one of those
//! readings accepts; anything else (a member repeated, a wrong type, what a
//! `Value` could not hold) goes to those readings, so that each error is
//! worded as it always was. The tests hold the two to the same answers.
//! [`metadata_of`], lenient, also reads a looked-up Namespace once for its
//! reconcile policy, confirmation and deletion (`deletion.rs`).
//!
//! The pass is a walk of the text by its structure
//! ([`json_text::read_head_strictly`], or `read_head_keeping` leniently),
//! which passes over the labels not asked for several times faster than
//! serde reads them; it answers for the shapes kube-apiserver stores. The
//! odd shapes it leaves (a repeated `uid`, a number no float holds, nesting
//! near the limit) take the readings one rule at a time: a second one-pass
//! reader for them would cost module size for objects no API server
//! writes.

use guard_core::json_text::{self, Asked};
use guard_core::{AdmissionRequest, Metadata, Which};

use crate::failure::Failure;
use crate::settings::Settings;
use crate::values::{RECONCILE_POLICY, RESOURCE_ID};

/// What the deletion rules read of the stored object, beyond its metadata.
#[derive(Debug, PartialEq)]
pub(crate) struct Facts<'a> {
    /// `metadata.uid`, as the owner walk needs it.
    pub uid: Result<String, Failure>,
    /// The text of `metadata.managedFields`, when present.
    pub managed_fields: Option<&'a str>,
}

/// The stored object's metadata, whose labels and annotations hold only the
/// keys the deletion rules read (the label selector's, the reconcile policy,
/// the confirmation, the resource id), and its [`Facts`]; `None` for an
/// object the one pass does not answer for.
pub(crate) fn read<'a>(
    request: &'a AdmissionRequest,
    settings: &Settings,
) -> Option<(Metadata, Facts<'a>)> {
    let text = request.raw(Which::OldObject)?.get();
    let p = &settings.deletion_protection;
    let labels = p.label_keys();
    let annotations = [
        RECONCILE_POLICY,
        RESOURCE_ID,
        p.confirmation_annotation.as_str(),
    ];
    let head = metadata_of(text, Some(&labels), &annotations)?;
    let uid = match head.uid {
        Some(uid) if !uid.is_empty() => Ok(uid),
        _ => Err(Failure::NoUid),
    };
    let managed_fields = head.managed_fields;
    Some((
        head.meta,
        Facts {
            uid,
            managed_fields,
        },
    ))
}

/// An object's text read in one walk of its structure: its metadata with
/// the `labels` and `annotations` keys asked for, its uid and managedFields'
/// text. With `labels`, strictly (a request's object, which rules check as a
/// `Value` would read it: [`json_text::read_head_strictly`]); without, every
/// other member is skipped unchecked, as the views of a looked-up object
/// skip them. `None` when the object is not a JSON object, or repeats a
/// member read (a `uid` too), gives one a type its typed reading refuses,
/// holds an escape the walk leaves to serde, or (strictly) holds what a
/// `Value` could not: whoever asks then reads it their own way.
pub(crate) fn metadata_of<'a>(
    text: &'a str,
    labels: Option<&[&str]>,
    annotations: &[&str],
) -> Option<Head<'a>> {
    let asked = Asked {
        annotations: json_text::Keys::Only(annotations),
        labels: json_text::Keys::Only(labels.unwrap_or_default()),
        members: &[],
    };
    let head = match labels {
        Some(_) => json_text::read_head_strictly(text, &asked, &KEPT)?,
        None => json_text::read_head_keeping(text, &asked, &KEPT)?,
    };
    let [uid, managed_fields] = head.metadata_members[..] else {
        return None;
    };
    let uid = match uid {
        Some(uid) => serde_json::from_str::<Option<String>>(uid).ok()?,
        None => None,
    };
    Some(Head {
        meta: head.metadata.unwrap_or_default(),
        uid,
        // Leniently the managedFields are not read.
        managed_fields: managed_fields.filter(|_| labels.is_some()),
    })
}

/// The members of `metadata` the walk hands back as text.
const KEPT: [&str; 2] = ["uid", "managedFields"];

/// What [`metadata_of`] read.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Head<'a> {
    /// Its labels and annotations hold only the keys asked for.
    pub meta: Metadata,
    /// `metadata.uid`.
    pub uid: Option<String>,
    /// The text of `metadata.managedFields` (strictly only).
    pub managed_fields: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use guard_core::json_text::check_strictly;
    use guard_core::managed_fields::{annotation_owners, annotation_owners_in};
    use serde_json::json;

    use super::*;
    use crate::deletion::stored_uid;
    use crate::test_support::RandomObjects;

    /// Label keys the selector asks (one as JSON escapes it), and others.
    pub(crate) const LABELS: [&str; 4] = ["tier", r"ti\u0065r", "app", "zone"];
    /// Annotation keys the rules read (one as JSON escapes it), and another.
    pub(crate) const ANNOTATIONS: [&str; 5] = [
        RECONCILE_POLICY,
        r"serviceoperator.azure.com\/reconcile-policy",
        RESOURCE_ID,
        "example.com/confirm",
        "other",
    ];

    fn settings() -> Settings {
        serde_json::from_value(json!({"deletionProtection": {
            "labelSelector": {"matchLabels": {"tier": "a"},
                "matchExpressions": [{"key": "app", "operator": "Exists"}]},
            "confirmationAnnotation": "example.com/confirm"}}))
        .unwrap()
    }

    fn delete_of(text: &str) -> Option<AdmissionRequest> {
        serde_json::from_str(&format!(r#"{{"operation":"DELETE","oldObject":{text}}}"#)).ok()
    }

    /// Wherever the one pass answers, each reading it replaces answers the
    /// same: the metadata (the keys asked), the strict check, the uid, the
    /// owners of the reconcile policy.
    #[test]
    fn the_one_pass_agrees_with_each_reading() {
        let settings = settings();
        let mut objects = RandomObjects::new(29);
        let (mut answered, mut declined) = (0, 0);
        for _ in 0..40_000 {
            let text = objects.object(&LABELS, &ANNOTATIONS);
            let Some(request) = delete_of(&text) else {
                continue;
            };
            let Some((meta, facts)) = read(&request, &settings) else {
                declined += 1;
                continue;
            };
            answered += 1;
            let old = request.metadata(Which::OldObject);
            let Ok(Some(old)) = old else {
                panic!("{text}: {old:?}");
            };
            assert_eq!(
                (&meta.name, &meta.generate_name, &meta.namespace),
                (&old.name, &old.generate_name, &old.namespace),
                "{text}"
            );
            assert_eq!(meta.finalizers, old.finalizers, "{text}");
            assert_eq!(meta.deletion_timestamp, old.deletion_timestamp, "{text}");
            for key in ["tier", "app", "zone"] {
                let asked = key != "zone";
                let expected = old.labels.get(key).filter(|_| asked);
                assert_eq!(meta.labels.get(key), expected, "{text}");
            }
            for key in [
                RECONCILE_POLICY,
                RESOURCE_ID,
                "example.com/confirm",
                "other",
            ] {
                let expected = old.annotations.get(key).filter(|_| key != "other");
                assert_eq!(meta.annotation(key), expected, "{text}");
            }
            assert!(check_strictly(&text).is_ok(), "{text}");
            assert_eq!(facts.uid, stored_uid(&request), "{text}");
            assert_eq!(
                annotation_owners_in(facts.managed_fields.unwrap_or("null"), RECONCILE_POLICY),
                annotation_owners(&request, Which::OldObject, RECONCILE_POLICY),
                "{text}"
            );
        }
        // Both ways are taken often.
        assert!(
            answered > 5_000 && declined > 5_000,
            "{answered} {declined}"
        );
    }

    #[test]
    fn what_the_one_pass_leaves_to_each_reading() {
        let settings = settings();
        for text in [
            r#"{"metadata":{"name":"a","name":"b"}}"#,
            r#"{"metadata":{"name":"a"},"metadata":{"name":"b"}}"#,
            r#"{"metadata":{"uid":5}}"#,
            r#"{"metadata":["a"]}"#,
            r#"{"metadata":{},"spec":1e400}"#,
            r#"{"metadata":{"managedFields":[{"fieldsV1":1e400}]}}"#,
            r#"[]"#,
            "null",
            r#"{"metadata":{"uid":"u","uid":"v"}}"#,
        ] {
            let request = delete_of(text).unwrap();
            assert!(read(&request, &settings).is_none(), "{text}");
        }
        let request = delete_of(
            r#"{"metadata":{"uid":"v","labels":{"tier":"a","x":"y"},"annotations":null}}"#,
        )
        .unwrap();
        let (meta, facts) = read(&request, &settings).unwrap();
        assert_eq!(facts.uid, Ok("v".to_string()));
        assert_eq!(meta.labels.iter().collect::<Vec<_>>(), [("tier", "a")]);
        assert!(meta.annotations.is_empty());
    }
}

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
//! The pass is first tried as a walk of the text by its structure
//! ([`json_text::read_head_strictly`], or `read_head_keeping` leniently),
//! which passes over the labels not asked for several times faster than
//! serde reads them; it answers for the shapes kube-apiserver stores, and
//! serde's pass for the rest.

use std::fmt;

use guard_core::json_text::{self, check_nested, Asked, Strict};
use guard_core::picked::Picked;
use guard_core::{AdmissionRequest, Metadata, Which};
use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::failure::Failure;
use crate::settings::Settings;
use crate::values::{RECONCILE_POLICY, RESOURCE_ID};

/// What the deletion rules read of the stored object, beyond its metadata.
#[derive(Debug, Clone, PartialEq)]
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

/// An object's text read in one pass: its metadata with the `labels` and
/// `annotations` keys asked for, its uid and managedFields' text. With
/// `labels`, strictly (a request's object, which rules check as a `Value`
/// would read it); without, every other member is skipped unchecked, as the
/// views of a looked-up object skip them. `None` when the object is not a
/// JSON object, or repeats a member read, gives one a type its typed
/// reading refuses, or (strictly) holds what a `Value` could not: whoever
/// asks then reads it their own way.
pub(crate) fn metadata_of<'a>(
    text: &'a str,
    labels: Option<&[&str]>,
    annotations: &[&str],
) -> Option<Head<'a>> {
    walked(text, labels, annotations).or_else(|| read_by_serde(text, labels, annotations))
}

/// The members of `metadata` the walk hands back as text.
const KEPT: [&str; 2] = ["uid", "managedFields"];

/// [`metadata_of`] by one walk of the text's structure, for the shapes it
/// answers for. Strictly, only a text that plainly holds what a `Value`
/// holds ([`json_text::read_head_strictly`]), as the serde pass reads every
/// member. A `uid` met twice (kept by serde, the last one) is left to
/// serde's pass.
pub(crate) fn walked<'a>(
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
        // Leniently, as serde's pass, the managedFields are not read.
        managed_fields: managed_fields.filter(|_| labels.is_some()),
    })
}

/// [`metadata_of`] by serde: every shape, errors as `None`.
fn read_by_serde<'a>(
    text: &'a str,
    labels: Option<&[&str]>,
    annotations: &[&str],
) -> Option<Head<'a>> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let keys = Keys {
        labels: labels.map(Picked::new),
        annotations: Picked::new(annotations),
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let head = deserializer.deserialize_map(Top(keys)).ok()?;
    deserializer.end().ok()?;
    Some(head)
}

#[derive(Clone, Copy)]
struct Keys<'k> {
    /// `None`: read leniently.
    labels: Option<Picked<'k>>,
    annotations: Picked<'k>,
}

/// What [`metadata_of`] read.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Head<'a> {
    /// Its labels and annotations hold only the keys asked for.
    pub meta: Metadata,
    /// `metadata.uid`, the last one when repeated (as a `Value` keeps it).
    pub uid: Option<String>,
    /// The text of `metadata.managedFields` (strictly only).
    pub managed_fields: Option<&'a str>,
}

/// A member name, compared where it lies.
struct Name;

impl<'de> DeserializeSeed<'de> for Name {
    type Value = Member;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Member, D::Error> {
        d.deserialize_str(self)
    }
}

/// The members read; the rest are read strictly and dropped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Member {
    Metadata,
    Name,
    GenerateName,
    Namespace,
    Uid,
    Labels,
    Annotations,
    Finalizers,
    DeletionTimestamp,
    ManagedFields,
    Other,
}

impl Visitor<'_> for Name {
    type Value = Member;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, s: &str) -> Result<Member, E> {
        Ok(match s {
            "metadata" => Member::Metadata,
            "name" => Member::Name,
            "generateName" => Member::GenerateName,
            "namespace" => Member::Namespace,
            "uid" => Member::Uid,
            "labels" => Member::Labels,
            "annotations" => Member::Annotations,
            "finalizers" => Member::Finalizers,
            "deletionTimestamp" => Member::DeletionTimestamp,
            "managedFields" => Member::ManagedFields,
            _ => Member::Other,
        })
    }
}

/// The object: `metadata` read, every other member read strictly.
struct Top<'k>(Keys<'k>);

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Head<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Head<'de>, A::Error> {
        members(map, self.0, Strict::TOP, true)
    }
}

/// The members of the object (`top`) or of its metadata, `depth` the seed
/// that reads the map they are in as [`Strict`] would.
fn members<'de, A: MapAccess<'de>>(
    mut map: A,
    keys: Keys<'_>,
    depth: Strict,
    top: bool,
) -> Result<Head<'de>, A::Error> {
    let inner = depth.inner()?;
    let mut head = Head::default();
    let mut seen: Vec<Member> = Vec::new();
    while let Some(mut member) = map.next_key_seed(Name)? {
        // At the top only `metadata` is read; in it, all but `metadata`.
        if top != (member == Member::Metadata) {
            member = Member::Other;
        }
        if !matches!(member, Member::Other | Member::Uid) {
            if seen.contains(&member) {
                return Err(A::Error::custom("member repeated"));
            }
            seen.push(member);
        }
        let seed = Read {
            member,
            keys,
            depth: Strict(inner.0),
        };
        let m = &mut head.meta;
        match map.next_value_seed(seed)? {
            Value::Head(read) => head = *read,
            Value::Text(text) => match member {
                Member::Name => m.name = text.unwrap_or_default(),
                Member::GenerateName => m.generate_name = text.unwrap_or_default(),
                Member::Namespace => m.namespace = text.unwrap_or_default(),
                Member::DeletionTimestamp => m.deletion_timestamp = text,
                // The last one, as a `Value` keeps it.
                _ => head.uid = text,
            },
            Value::Map(read) if member == Member::Labels => m.labels = read,
            Value::Map(read) => m.annotations = read,
            Value::List(list) => m.finalizers = list.unwrap_or_default(),
            Value::Raw(raw) => {
                check_nested(raw.get(), Strict(inner.0)).map_err(A::Error::custom)?;
                head.managed_fields = Some(raw.get());
            }
            Value::Skipped => {}
        }
    }
    Ok(head)
}

/// One member's value, read as its member is.
struct Read<'k> {
    member: Member,
    keys: Keys<'k>,
    depth: Strict,
}

enum Value<'de> {
    Head(Box<Head<'de>>),
    Text(Option<String>),
    Map(guard_core::StringMap),
    List(Option<Vec<String>>),
    Raw(&'de RawValue),
    Skipped,
}

impl<'de> DeserializeSeed<'de> for Read<'_> {
    type Value = Value<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value<'de>, D::Error> {
        let keys = self.keys;
        Ok(match self.member {
            Member::Metadata => Value::Head(Box::new(d.deserialize_option(Meta {
                keys,
                depth: self.depth,
            })?)),
            Member::Name
            | Member::GenerateName
            | Member::Namespace
            | Member::Uid
            | Member::DeletionTimestamp => Value::Text(Deserialize::deserialize(d)?),
            Member::Annotations => Value::Map(keys.annotations.deserialize(d)?),
            Member::Finalizers => Value::List(Deserialize::deserialize(d)?),
            Member::Labels | Member::ManagedFields | Member::Other if keys.labels.is_none() => {
                IgnoredAny::deserialize(d)?;
                Value::Skipped
            }
            Member::Labels => match keys.labels {
                Some(labels) => Value::Map(labels.deserialize(d)?),
                None => Value::Skipped,
            },
            Member::ManagedFields => Value::Raw(Deserialize::deserialize(d)?),
            Member::Other => {
                self.depth.deserialize(d)?;
                Value::Skipped
            }
        })
    }
}

/// `metadata`, or `null` for none.
struct Meta<'k> {
    keys: Keys<'k>,
    depth: Strict,
}

impl<'de> Visitor<'de> for Meta<'_> {
    type Value = Head<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }
    fn visit_none<E>(self) -> Result<Head<'de>, E> {
        Ok(Head::default())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Head<'de>, D::Error> {
        d.deserialize_map(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Head<'de>, A::Error> {
        members(map, self.keys, self.depth, false)
    }
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
    /// owners of the reconcile policy. Wherever its walk answers, serde's
    /// pass answers the same.
    #[test]
    fn the_one_pass_agrees_with_each_reading() {
        let settings = settings();
        let mut objects = RandomObjects::new(29);
        let (mut answered, mut declined, mut walks) = (0, 0, 0);
        for _ in 0..40_000 {
            let text = objects.object(&LABELS, &ANNOTATIONS);
            let Some(request) = delete_of(&text) else {
                continue;
            };
            let labels = ["tier", "app"];
            let annotations = [RECONCILE_POLICY, RESOURCE_ID, "example.com/confirm"];
            if let Some(walk) = walked(&text, Some(&labels), &annotations) {
                walks += 1;
                let serde = read_by_serde(&text, Some(&labels), &annotations);
                assert_eq!(Some(walk), serde, "{text}");
            }
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
        // Both ways are taken often, and the walk answers most of the first.
        assert!(
            answered > 5_000 && declined > 5_000 && walks > answered / 2,
            "{answered} {declined} {walks}"
        );
    }

    /// Leniently too (a looked-up Namespace), wherever the walk answers,
    /// serde's pass answers the same, and the walk answers most objects.
    #[test]
    fn the_lenient_walk_agrees_with_serde_pass() {
        let mut objects = RandomObjects::new(37);
        let (mut walks, mut total) = (0, 0);
        let annotations = [RECONCILE_POLICY, "example.com/confirm"];
        for _ in 0..40_000 {
            let text = objects.object(&LABELS, &ANNOTATIONS);
            if serde_json::from_str::<&RawValue>(&text).is_err() {
                continue;
            }
            total += 1;
            if let Some(walk) = walked(&text, None, &annotations) {
                walks += 1;
                let serde = read_by_serde(&text, None, &annotations);
                assert_eq!(Some(walk), serde, "{text}");
            }
        }
        assert!(walks > total / 2, "{walks} of {total}");
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
        ] {
            let request = delete_of(text).unwrap();
            assert!(read(&request, &settings).is_none(), "{text}");
        }
        let request = delete_of(
            r#"{"metadata":{"uid":"u","uid":"v","labels":{"tier":"a","x":"y"},"annotations":null}}"#,
        )
        .unwrap();
        let (meta, facts) = read(&request, &settings).unwrap();
        assert_eq!(facts.uid, Ok("v".to_string()));
        assert_eq!(meta.labels.iter().collect::<Vec<_>>(), [("tier", "a")]);
        assert!(meta.annotations.is_empty());
    }
}

//! An UPDATE's object read in one pass: its metadata as guard-core reads it,
//! its owner references and `spec` members kept as text, its other members
//! as text. Each of an update's objects may be half of a 3 MiB request;
//! reading it whole for its metadata, then again to split it, then its
//! metadata and its spec once more, read each byte four times.
//!
//! Objects of odd shape (a name twice, `metadata` or `spec` not an object)
//! are split as before, member by member ([`Top::split`]), and their
//! metadata read from the whole object, for the words of its errors.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use guard_core::json_text::Key;
use guard_core::request::{null_default, same_json_error};
use guard_core::{Metadata, StringMap, Which};
use serde::de::value::{BorrowedStrDeserializer, MapAccessDeserializer, StringDeserializer};
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// An object's members by name, as text (a later duplicate wins, as in a
/// `serde_json::Value`'s map).
pub(crate) type Members<'a> = BTreeMap<String, &'a RawValue>;

const OWNER_REFERENCES: &str = "ownerReferences";

/// An UPDATE's object (`which`), or its `member` (`metadata`, `spec`), that
/// is not a JSON object: serde's error says where. Its words are in `render`.
#[derive(Debug)]
pub(crate) struct SplitError {
    pub(crate) which: Which,
    pub(crate) member: Option<&'static str>,
    pub(crate) error: serde_json::Error,
}

/// The same failure at the same place (serde's category and position).
impl PartialEq for SplitError {
    fn eq(&self, other: &Self) -> bool {
        (self.which, self.member) == (other.which, other.member)
            && same_json_error(&self.error, &other.error)
    }
}

/// The members of `which` object, or of its `member` when given.
pub(crate) fn members<'a>(
    raw: &'a RawValue,
    which: Which,
    member: Option<&'static str>,
) -> Result<Members<'a>, SplitError> {
    serde_json::from_str(raw.get()).map_err(|error| SplitError {
        which,
        member,
        error,
    })
}

/// `spec`, split when it is an object.
pub(crate) enum Spec<'a> {
    Members(Members<'a>),
    Other(&'a RawValue),
}

/// An UPDATE's object, read for both its metadata and the comparison.
pub(crate) struct Top<'a> {
    /// The whole object.
    pub(crate) raw: &'a RawValue,
    /// Its members; `metadata` and `spec` are read below, and may be left out.
    pub(crate) members: Members<'a>,
    /// `None`: read from the whole object instead.
    metadata: Option<Metadata>,
    /// `metadata.annotations` as text, when read in the one pass.
    annotations: Option<&'a RawValue>,
    pub(crate) owner_references: Option<&'a RawValue>,
    pub(crate) spec: Option<Spec<'a>>,
}

impl<'a> Top<'a> {
    /// `object` or `oldObject` (`which`); its annotations are copied from
    /// `like`, the update's other object, when their text is the same (an
    /// update seldom changes them, and they may be 256 KiB of short entries).
    pub(crate) fn read(
        raw: &'a RawValue,
        which: Which,
        like: Option<&Top<'_>>,
    ) -> Result<Self, SplitError> {
        let Ok(p) = serde_json::from_str::<OnePass<'a>>(raw.get()) else {
            return Self::split(raw, which);
        };
        let mut metadata = p.metadata.metadata;
        let theirs = like.and_then(|l| Some((l.annotations?, l.metadata.as_ref()?)));
        metadata.annotations = match (p.metadata.annotations, theirs) {
            (Some(mine), Some((text, theirs))) if mine.get() == text.get() => {
                theirs.annotations.clone()
            }
            (Some(mine), _) => {
                let mut reader = serde_json::Deserializer::from_str(mine.get());
                match null_default(&mut reader).and_then(|m| reader.end().map(|()| m)) {
                    Ok(m) => m,
                    Err(_) => return Self::split(raw, which),
                }
            }
            (None, _) => StringMap::default(),
        };
        Ok(Top {
            raw,
            members: p.members,
            metadata: Some(metadata),
            annotations: p.metadata.annotations,
            owner_references: p.metadata.owner_references,
            spec: p.spec.map(Spec::Members),
        })
    }

    /// Member by member, for any object.
    pub(crate) fn split(raw: &'a RawValue, which: Which) -> Result<Self, SplitError> {
        let top = members(raw, which, None)?;
        let owner_references = match top.get("metadata") {
            Some(m) if m.get().starts_with('{') => members(m, which, Some("metadata"))?
                .get(OWNER_REFERENCES)
                .copied(),
            _ => None,
        };
        let spec = match top.get("spec") {
            Some(s) if s.get().starts_with('{') => {
                Some(Spec::Members(members(s, which, Some("spec"))?))
            }
            Some(s) => Some(Spec::Other(s)),
            None => None,
        };
        Ok(Top {
            raw,
            members: top,
            metadata: None,
            annotations: None,
            owner_references,
            spec,
        })
    }

    /// The metadata as [`guard_core::AdmissionRequest::metadata`] reads it,
    /// when it was read in the one pass.
    pub(crate) fn take_metadata(&mut self) -> Option<Metadata> {
        self.metadata.take()
    }
}

/// What one pass reads; anything it cannot read is an error, and the object
/// is split as before.
struct OnePass<'a> {
    members: Members<'a>,
    metadata: MetadataAndOwners<'a>,
    spec: Option<Members<'a>>,
}

impl<'de> Deserialize<'de> for OnePass<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = OnePass<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<OnePass<'de>, A::Error> {
                let mut members = Members::new();
                let mut metadata = None;
                let mut spec = None;
                while let Some(key) = access.next_key::<String>()? {
                    match key.as_str() {
                        // Twice: the whole object's reading refuses it.
                        "metadata" if metadata.is_some() => {
                            return Err(A::Error::custom("metadata twice"))
                        }
                        "metadata" => metadata = Some(access.next_value()?),
                        "spec" => spec = Some(access.next_value::<Members<'de>>()?),
                        _ => {
                            members.insert(key, access.next_value()?);
                        }
                    }
                }
                Ok(OnePass {
                    members,
                    metadata: metadata.unwrap_or_default(),
                    spec,
                })
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// `metadata` read as guard-core's [`Metadata`] (`null` as the default),
/// with its `ownerReferences` and `annotations` members kept as text on the
/// way (the annotations are read into the metadata after).
#[derive(Default)]
struct MetadataAndOwners<'a> {
    metadata: Metadata,
    owner_references: Option<&'a RawValue>,
    annotations: Option<&'a RawValue>,
}

impl<'de> Deserialize<'de> for MetadataAndOwners<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Read;
        impl<'de> Visitor<'de> for Read {
            type Value = MetadataAndOwners<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object or null")
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(MetadataAndOwners::default())
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(MetadataAndOwners::default())
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_map(self)
            }
            fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Self::Value, A::Error> {
                let (mut owner_references, mut annotations) = (None, None);
                let metadata = Metadata::deserialize(MapAccessDeserializer::new(OwnersAside {
                    access,
                    owner_references: &mut owner_references,
                    annotations: &mut annotations,
                }))?;
                Ok(MetadataAndOwners {
                    metadata,
                    owner_references,
                    annotations,
                })
            }
        }
        deserializer.deserialize_option(Read)
    }
}

/// A map's entries as [`Metadata`]'s reading sees them, `ownerReferences`
/// kept aside (the last one, as a map keeps it) and `annotations` too
/// (twice is an error, as that reading has it).
struct OwnersAside<'o, 'de, A> {
    access: A,
    owner_references: &'o mut Option<&'de RawValue>,
    annotations: &'o mut Option<&'de RawValue>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for OwnersAside<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.access.next_key_seed(Key)? else {
                return Ok(None);
            };
            if key == OWNER_REFERENCES {
                *self.owner_references = Some(self.access.next_value()?);
                continue;
            }
            if key == "annotations" {
                if self.annotations.is_some() {
                    return Err(A::Error::custom("annotations twice"));
                }
                *self.annotations = Some(self.access.next_value()?);
                continue;
            }
            return match key {
                Cow::Borrowed(k) => seed.deserialize(BorrowedStrDeserializer::new(k)),
                Cow::Owned(k) => seed.deserialize(StringDeserializer::new(k)),
            }
            .map(Some);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.access.next_value_seed(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::{AdmissionRequest, Which};

    /// Objects of many shapes: what each member may hold, in either order.
    fn objects() -> Vec<String> {
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
            r#"{"name":"a","ownerReferences":[{"uid":"u"}]}"#,
            r#"{"ownerReferences":[{"uid":"u"}],"ownerReferences":null,"name":"a"}"#,
            r#"{"\u006fwnerReferences":[{"uid":"v"}],"annotations":{"ownerReferences":"x"}}"#,
            r#"{"ownerReferences":5,"labels":{"a":"b"}}"#,
        ];
        let specs = [
            r#"{}"#,
            r#"{"path":"./a","suspend":true,"path":"./b"}"#,
            r#"{"suspend":1.0}"#,
            r#"null"#,
            r#"5"#,
            r#"["x"]"#,
        ];
        let mut objects = vec![
            r#"{}"#.to_string(),
            r#"{"metadata":{"name":"a"},"metadata":{"name":"b"}}"#.to_string(),
            r#"{"spec":1,"spec":{"a":1},"metadata":{"name":"a"}}"#.to_string(),
            r#"{"spec":{"a":1},"spec":2}"#.to_string(),
            r#"{"kind":"A","kind":"B","data":{"x":"1"}}"#.to_string(),
            r#"[{"name":"a"}]"#.to_string(),
        ];
        for m in metadatas {
            for s in specs {
                objects.push(format!(
                    r#"{{"apiVersion":"v1","metadata":{m},"spec":{s},"status":{{}}}}"#
                ));
                objects.push(format!(r#"{{"sp\u0065c":{s}, "\u006detadata" : {m} }}"#));
            }
            objects.push(format!(r#"{{"metadata":{m},"data":{{"a":"1"}}}}"#));
        }
        objects
    }

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    fn text(raw: Option<&RawValue>) -> Option<&str> {
        raw.map(RawValue::get)
    }

    fn spec_text<'s>(spec: &'s Option<Spec<'_>>) -> Option<Vec<(&'s str, &'s str)>> {
        spec.as_ref().map(|s| match s {
            Spec::Members(m) => m.iter().map(|(k, v)| (k.as_str(), v.get())).collect(),
            Spec::Other(o) => vec![("<other>", o.get())],
        })
    }

    /// The one pass splits an object as splitting it member by member
    /// does, and its metadata is what the whole object's reading gives.
    #[test]
    fn one_pass_reads_as_the_member_by_member_split() {
        let mut one_pass = 0;
        for object in objects() {
            let raw = raw(&object);
            let (Ok(mut fast), Ok(slow)) = (
                Top::read(&raw, Which::Object, None),
                Top::split(&raw, Which::Object),
            ) else {
                assert_eq!(
                    Top::read(&raw, Which::Object, None).err(),
                    Top::split(&raw, Which::Object).err(),
                    "{object}"
                );
                continue;
            };
            let members = |t: &Top<'_>| {
                t.members
                    .iter()
                    .filter(|(k, _)| !["metadata", "spec"].contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.get().to_string()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(members(&fast), members(&slow), "{object}");
            assert_eq!(
                text(fast.owner_references),
                text(slow.owner_references),
                "{object}"
            );
            assert_eq!(spec_text(&fast.spec), spec_text(&slow.spec), "{object}");
            assert!(slow.metadata.is_none());
            if let Some(m) = fast.take_metadata() {
                one_pass += 1;
                let request: AdmissionRequest =
                    serde_json::from_str(&format!(r#"{{"operation":"UPDATE","object":{object}}}"#))
                        .unwrap();
                assert_eq!(request.metadata(Which::Object), Ok(Some(m)), "{object}");
            }
        }
        // Most shapes are read in one pass.
        assert!(one_pass >= 30, "{one_pass}");
    }

    /// Annotations copied from the other object are the ones the whole
    /// object's reading gives, for every pair of shapes.
    #[test]
    fn annotations_copied_from_the_other_object_are_the_requests() {
        let annotations = [
            r#"{"a":"1","b":"2"}"#,
            r#"{"b":"2", "a":"1"}"#,
            r#"{"a":"1","a":"2"}"#,
            r#"{"a":"\u0041"}"#,
            r#"{"a":1}"#,
            r#"null"#,
            r#"{}"#,
        ];
        let mut objects = vec![r#"{"metadata":{"name":"a"}}"#.to_string()];
        for a in annotations {
            objects.push(format!(
                r#"{{"metadata":{{"annotations":{a},"name":"a"}}}}"#
            ));
            objects.push(format!(
                r#"{{"metadata":{{"annotations":{a},"labels":{{"x":"y"}},"annotations":{a}}}}}"#
            ));
        }
        let mut copied = 0;
        for like in &objects {
            let like_raw = raw(like);
            let Ok(like) = Top::read(&like_raw, Which::Object, None) else {
                continue;
            };
            for object in &objects {
                let raw = raw(object);
                let Ok(mut top) = Top::read(&raw, Which::OldObject, Some(&like)) else {
                    continue;
                };
                copied += usize::from(
                    top.annotations.map(|a| a.get()) == like.annotations.map(|a| a.get()),
                );
                let request: AdmissionRequest = serde_json::from_str(&format!(
                    r#"{{"operation":"UPDATE","oldObject":{object}}}"#
                ))
                .unwrap();
                if let Some(m) = top.take_metadata() {
                    assert_eq!(request.metadata(Which::OldObject), Ok(Some(m)), "{object}");
                }
            }
        }
        assert!(copied >= 5, "{copied}");
    }
}

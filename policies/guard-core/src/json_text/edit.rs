//! Editing an object without parsing all of it.
//!
//! A mutating policy must hand back the whole object, yet it changes a field
//! or two (`spec.suspend`, one annotation). Parsing a 5 KB object with its
//! managed fields into a `serde_json::Value` and printing it again costs more
//! than every rule together; [`RawObject`] borrows each member's JSON text
//! from the request and expands only the objects on the path to an edit.

use std::borrow::Cow;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::split::Key;
use super::strict::{check_within, MUTATED_OBJECT_DEPTH};

/// A JSON object whose members stay unparsed text, borrowed from the
/// request, until an edit reaches them.
///
/// Members keep every occurrence of a duplicated key, and each operation
/// acts on the last one: policy-server reads the reply's `mutated_object` as
/// a `serde_json::Value`, where later duplicates win (as in every JSON
/// decoder Kubernetes uses), and diffs that against the request's object
/// (kubewarden/kubewarden-controller 3460bb71,
/// `crates/policy-evaluator/src/admission_response.rs`,
/// `from_policy_validation_response`). Keeping them costs nothing; removing
/// them costs a set of every key.
#[derive(Debug, Default)]
pub struct RawObject<'a> {
    members: Vec<(Cow<'a, str>, Member<'a>)>,
}

/// Boxed but for the raw text, so that the member list of a map of 100,000
/// annotations stays small (48 bytes a member instead of 64).
#[derive(Debug)]
enum Member<'a> {
    Raw(&'a RawValue),
    Object(Box<RawObject<'a>>),
    Value(Box<Value>),
}

impl<'a> RawObject<'a> {
    /// Parses an object's top level; `Err` names what it is when not an object.
    ///
    /// Members are copied into the reply as they came, so the whole text is
    /// first checked as strictly as the host will read the reply: serde_json's
    /// raw values let through a lone surrogate escape (`\ud800`), a number no
    /// float holds (`1e400`) and nesting deeper than 128, and policy-server
    /// would then fail on the reply with a 500. The objects an edit expands
    /// later lie inside this text and are not checked again.
    pub fn parse(json: &'a str) -> Result<Self, String> {
        check_within(json, MUTATED_OBJECT_DEPTH)
            .map_err(|e| format!("it is not valid JSON: {e}"))?;
        Self::split(json).map_err(|_| "it is not a JSON object".to_string())
    }

    /// The members of `json`, already checked, as raw text.
    fn split(json: &'a str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// Where the member under `key` takes effect: its last occurrence.
    fn last(&self, key: &str) -> Option<usize> {
        self.members.iter().rposition(|(k, _)| k == key)
    }

    /// The object under `key`, expanded for editing; created when absent or
    /// null. `Err` when the member is something other than an object.
    pub fn child(&mut self, key: &str) -> Result<&mut RawObject<'a>, String> {
        let not_object = || format!("{key} must be an object");
        let index = match self.last(key) {
            Some(i) => i,
            None => {
                self.members
                    .push((Cow::Owned(key.to_string()), Member::Object(Box::default())));
                self.members.len().saturating_sub(1)
            }
        };
        let Some((_, member)) = self.members.get_mut(index) else {
            return Err(format!("{key} is missing"));
        };
        let expanded = match member {
            Member::Object(_) => None,
            Member::Raw(raw) if raw.get() == "null" => Some(RawObject::default()),
            Member::Raw(raw) => Some(RawObject::split(raw.get()).map_err(|_| not_object())?),
            Member::Value(value) if value.is_null() => Some(RawObject::default()),
            Member::Value(value) => match value.as_object_mut() {
                Some(map) => Some(RawObject {
                    members: std::mem::take(map)
                        .into_iter()
                        .map(|(k, v)| (Cow::Owned(k), Member::Value(Box::new(v))))
                        .collect(),
                }),
                None => return Err(not_object()),
            },
        };
        if let Some(object) = expanded {
            *member = Member::Object(Box::new(object));
        }
        match member {
            Member::Object(object) => Ok(object),
            _ => Err(not_object()),
        }
    }

    /// Sets `key` to `value`, replacing what was there.
    pub fn insert(&mut self, key: &str, value: Value) {
        match self.last(key).and_then(|i| self.members.get_mut(i)) {
            Some((_, member)) => *member = Member::Value(Box::new(value)),
            None => self
                .members
                .push((Cow::Owned(key.to_string()), Member::Value(Box::new(value)))),
        }
    }

    /// Sets the annotation `key` to `value` in `metadata.annotations`,
    /// creating `metadata` and `annotations` when absent or null. Every other
    /// member keeps its text; only the objects on the path are expanded (see
    /// [`RawObject::child`]). `Err` names the field that is something other
    /// than an object, leaving the annotation unset.
    pub fn set_annotation(&mut self, key: &str, value: &str) -> Result<(), String> {
        self.child("metadata")?
            .child("annotations")
            .map_err(|_| "metadata.annotations must be an object".to_string())?
            .insert(key, Value::String(value.to_string()));
        Ok(())
    }

    /// Removes every occurrence of `key`; false when it was not there.
    pub fn remove(&mut self, key: &str) -> bool {
        let before = self.members.len();
        self.members.retain(|(k, _)| k != key);
        self.members.len() != before
    }

    /// The member under `key` is an object (as opposed to absent, null or other).
    pub fn has_object(&self, key: &str) -> bool {
        self.last(key)
            .and_then(|i| self.members.get(i))
            .is_some_and(|(_, m)| match m {
                Member::Object(_) => true,
                Member::Raw(raw) => raw.get().trim_start().starts_with('{'),
                Member::Value(v) => v.is_object(),
            })
    }

    /// The edited object as JSON text.
    pub fn to_raw(&self) -> Result<Box<RawValue>, String> {
        serde_json::value::to_raw_value(self).map_err(|e| e.to_string())
    }
}

impl Serialize for RawObject<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.members.len()))?;
        for (key, member) in &self.members {
            match member {
                Member::Raw(raw) => map.serialize_entry(key, raw)?,
                Member::Object(object) => map.serialize_entry(key, object)?,
                Member::Value(value) => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for RawObject<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = RawObject<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<RawObject<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = access.next_key_seed(Key)? {
                    members.push((key, Member::Raw(access.next_value()?)));
                }
                Ok(RawObject { members })
            }
        }
        deserializer.deserialize_map(Members)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn edited(json: &str, f: impl FnOnce(&mut RawObject)) -> Value {
        let mut o = RawObject::parse(json).unwrap();
        f(&mut o);
        serde_json::from_str(o.to_raw().unwrap().get()).unwrap()
    }

    #[test]
    fn edits_reach_only_their_path() {
        let v = edited(
            r#"{"metadata":{"name":"a","annotations":{"x":"1","gone":"2"},"managedFields":[{"f":{"g":1}}]},"spec":{"path":"./"},"status":{"n":1.50}}"#,
            |o| {
                o.child("spec").unwrap().insert("suspend", json!(true));
                let annotations = o.child("metadata").unwrap().child("annotations").unwrap();
                annotations.insert("k", json!("v"));
                assert!(annotations.remove("gone"));
                assert!(!annotations.remove("never"));
            },
        );
        assert_eq!(
            v,
            json!({"metadata":{"name":"a","annotations":{"x":"1","k":"v"},"managedFields":[{"f":{"g":1}}]},
                   "spec":{"path":"./","suspend":true},"status":{"n":1.50}})
        );
    }

    #[test]
    fn absent_and_null_children_are_created_other_shapes_refused() {
        let v = edited(r#"{"metadata":{"annotations":null}}"#, |o| {
            o.child("spec").unwrap().insert("suspend", json!(true));
            o.child("metadata")
                .unwrap()
                .child("annotations")
                .unwrap()
                .insert("k", json!("v"));
        });
        assert_eq!(
            v,
            json!({"metadata":{"annotations":{"k":"v"}},"spec":{"suspend":true}})
        );
        let mut bad = RawObject::parse(r#"{"spec":"x"}"#).unwrap();
        assert_eq!(bad.child("spec").unwrap_err(), "spec must be an object");
        assert!(RawObject::parse("[1]").is_err());
        assert!(!bad.has_object("spec"));
        assert!(RawObject::parse(r#"{"a":{}}"#).unwrap().has_object("a"));
    }

    fn annotated(json: &str) -> Result<String, String> {
        let mut o = RawObject::parse(json)?;
        o.set_annotation("example.com/k", "v")?;
        Ok(o.to_raw()?.get().to_string())
    }

    #[test]
    fn set_annotation_creates_what_is_missing_or_null() {
        assert_eq!(
            annotated(r#"{"kind":"K"}"#).unwrap(),
            r#"{"kind":"K","metadata":{"annotations":{"example.com/k":"v"}}}"#
        );
        assert_eq!(
            annotated(r#"{"metadata":null,"spec":{"n":1.50}}"#).unwrap(),
            r#"{"metadata":{"annotations":{"example.com/k":"v"}},"spec":{"n":1.50}}"#
        );
        assert_eq!(
            annotated(r#"{"metadata":{"name":"a","annotations":null}}"#).unwrap(),
            r#"{"metadata":{"name":"a","annotations":{"example.com/k":"v"}}}"#
        );
    }

    #[test]
    fn set_annotation_keeps_everything_else_as_it_came() {
        // Values, numbers and escapes elsewhere are copied, not re-printed.
        let text = r#"{"apiVersion":"v1","metadata":{"name":"a","labels":{"l":"\u00e9"},"annotations":{"x":"a\/b","y":"{\"n\":1.0}"},"managedFields":[{"f":{"g":1e2}}]},"spec":{"n":-0.0,"m":[1.50,{"q":null}]}}"#;
        assert_eq!(
            annotated(text).unwrap(),
            r#"{"apiVersion":"v1","metadata":{"name":"a","labels":{"l":"\u00e9"},"annotations":{"x":"a\/b","y":"{\"n\":1.0}","example.com/k":"v"},"managedFields":[{"f":{"g":1e2}}]},"spec":{"n":-0.0,"m":[1.50,{"q":null}]}}"#
        );
        // An existing value is replaced in place.
        assert_eq!(
            annotated(r#"{"metadata":{"annotations":{"example.com/k":"old","z":"1"}}}"#).unwrap(),
            r#"{"metadata":{"annotations":{"example.com/k":"v","z":"1"}}}"#
        );
    }

    #[test]
    fn set_annotation_refuses_other_shapes_naming_the_field() {
        for metadata in [r#""x""#, "[]", "1", "true"] {
            let json = format!(r#"{{"metadata":{metadata}}}"#);
            assert_eq!(
                annotated(&json).unwrap_err(),
                "metadata must be an object",
                "{json}"
            );
        }
        for annotations in [r#""x""#, r#"["a"]"#, "0"] {
            let json = format!(r#"{{"metadata":{{"annotations":{annotations}}}}}"#);
            assert_eq!(
                annotated(&json).unwrap_err(),
                "metadata.annotations must be an object",
                "{json}"
            );
        }
    }

    #[test]
    fn later_duplicates_win() {
        // Untouched duplicates stay in the text, and read back as the last.
        let v = edited(r#"{"a":1,"b":2,"a":3}"#, |_| {});
        assert_eq!(v, json!({"b":2,"a":3}));
        // An edit acts on the occurrence that takes effect.
        let text = r#"{"metadata":{"annotations":{"k":"1"}},"metadata":{"annotations":{"k":"2","j":"x"},"name":"n"}}"#;
        let v = edited(text, |o| {
            let annotations = o.child("metadata").unwrap().child("annotations").unwrap();
            annotations.insert("k", json!("3"));
        });
        assert_eq!(
            v,
            json!({"metadata":{"annotations":{"k":"3","j":"x"},"name":"n"}})
        );
        let v = edited(r#"{"k":1,"j":2,"k":3}"#, |o| assert!(o.remove("k")));
        assert_eq!(v, json!({"j":2}));
        let v = edited(r#"{"s":{"a":1},"s":null}"#, |o| {
            assert!(!o.has_object("s"));
            o.child("s").unwrap().insert("b", json!(2));
        });
        assert_eq!(v, json!({"s":{"b":2}}));
    }

    #[test]
    fn an_inserted_object_can_be_edited_again() {
        let v = edited(r#"{"spec":"x"}"#, |o| {
            o.insert("spec", json!({"a": 1}));
            o.child("spec").unwrap().insert("b", json!(2));
        });
        assert_eq!(v, json!({"spec":{"a":1,"b":2}}));
    }

    #[test]
    fn member_names_with_escapes_are_copied_decoded() {
        let v = edited(r#"{"a\u0062":{"c\"d":1}}"#, |o| {
            o.child("ab").unwrap().insert("e", json!(2));
        });
        assert_eq!(v, json!({"ab":{"c\"d":1,"e":2}}));
    }

    #[test]
    fn text_the_host_could_not_read_back_is_refused() {
        for bad in [
            r#"{"a":"\ud800"}"#,
            r#"{"a":1e400}"#,
            &format!(r#"{{"a":{}1{}}}"#, "[".repeat(200), "]".repeat(200)),
            // 127 containers: a Value holds them, a reply holding them in
            // `mutated_object` does not.
            &format!(r#"{{"a":{}1{}}}"#, "[".repeat(126), "]".repeat(126)),
        ] {
            let err = RawObject::parse(bad).unwrap_err();
            assert!(err.starts_with("it is not valid JSON: "), "{err}");
        }
        assert!(RawObject::parse(r#"{"a":"\ud83d\ude00","b":-0.0,"c":1e300}"#).is_ok());
        let deepest = format!(r#"{{"a":{}1{}}}"#, "[".repeat(125), "]".repeat(125));
        assert!(RawObject::parse(&deepest).is_ok());
        let reply = format!(r#"{{"mutated_object":{deepest}}}"#);
        assert!(serde_json::from_str::<Value>(&reply).is_ok());
    }

    #[test]
    fn untouched_objects_print_as_they_came() {
        let text = r#"{"b":1,"a":{"z":[1,2,{"q":null}]},"c":"\u00e9"}"#;
        let o = RawObject::parse(text).unwrap();
        assert_eq!(o.to_raw().unwrap().get(), text);
    }
}

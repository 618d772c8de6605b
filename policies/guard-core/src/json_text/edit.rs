//! Editing an object's text where an edit reaches, copying the rest.
//!
//! A mutating policy must hand back the whole object, yet it changes a field
//! or two (`spec.suspend`, one annotation). [`RawObject`] keeps each object
//! on an edit's path as the request's text plus the edits made to it, and
//! writes the result by copying the text between the members it changes:
//! a map of 100,000 annotations that gains one is copied, not re-printed.

use std::borrow::Cow;
use std::ops::Range;
use std::rc::Rc;

use serde_json::value::RawValue;
use serde_json::Value;

use super::object_text::ObjectText;

use super::scan::{body, each_member, BrokenText, Outline};
use super::strict::{check_within, plainly_readable, MUTATED_OBJECT_DEPTH};

/// A JSON object: its text, and the edits made to its members.
///
/// The text keeps every occurrence of a duplicated key, and each edit acts
/// on the last one: policy-server reads the reply's `mutated_object` as a
/// `serde_json::Value`, where later duplicates win (as in every JSON decoder
/// Kubernetes uses), and diffs that against the request's object
/// (kubewarden/kubewarden-controller 3460bb71,
/// `crates/policy-evaluator/src/admission_response.rs`,
/// `from_policy_validation_response`).
#[derive(Debug)]
pub struct RawObject<'a> {
    /// Checked JSON object text: borrowed from the request, owned when it
    /// was a value an edit set, `{}` for an object an edit creates.
    text: Cow<'a, str>,
    /// One entry per key edited, in the order first edited.
    edits: Vec<(String, Change<'a>)>,
    /// Where each key looked up so far occurs in `text`, so that each
    /// object on an edit's path is read once however many times it is asked.
    found: Vec<Found>,
    /// Every member of the text, once read, when it has few.
    every: Option<Vec<Listed>>,
    /// The text could not be read as an object's members (never expected:
    /// it was checked); the edited object then cannot be written.
    unreadable: Option<BrokenText>,
    /// The outline of the request's object, and where `text` lies in it,
    /// when `text` is a part of that object as it came.
    outline: Option<(Rc<Outline>, usize)>,
}

/// The most members an object keeps a list of (see [`RawObject::read`]).
const FEW_MEMBERS: usize = 64;

/// One member of a short object's text: its name, region and value (see
/// [`super::scan::Member`]).
type Listed = (String, Range<usize>, Range<usize>);

/// Where one member lies in an object's text: its region and its value
/// (see [`super::scan::Member`]).
type Place = (Range<usize>, Range<usize>);

/// Every occurrence of one key in an object's text.
#[derive(Debug)]
struct Found {
    key: String,
    at: Vec<Place>,
}

#[derive(Debug)]
enum Change<'a> {
    Set(Value),
    Object(RawObject<'a>),
    Remove,
}

impl<'a> RawObject<'a> {
    /// Takes an object's text; `Err` names what it is when not an object.
    ///
    /// Untouched text is copied into the reply as it came, so the whole text
    /// is first checked as strictly as the host will read the reply:
    /// serde_json's raw values let through a lone surrogate escape
    /// (`\ud800`), a number no float holds (`1e400`) and nesting deeper than
    /// 128, and policy-server would then fail on the reply with a 500. The
    /// objects an edit reaches lie inside this text and are not checked again.
    pub fn parse(json: &'a str) -> Result<Self, EditError> {
        check_within(json, MUTATED_OBJECT_DEPTH).map_err(EditError::NotJson)?;
        if json.trim_ascii_start().starts_with('{') {
            Ok(Self::of_text(Cow::Borrowed(json)))
        } else {
            Err(EditError::NotObject)
        }
    }

    /// [`RawObject::parse`] of a request's raw object, whose syntax serde
    /// checked as it read the request: most objects are then plainly as
    /// strict as the reply is read (see [`plainly_readable`]), and only
    /// the others are read through serde again.
    pub fn of_raw(raw: &'a RawValue) -> Result<Self, EditError> {
        let json = raw.get();
        if json.trim_ascii_start().starts_with('{') {
            if let Some(outline) = plainly_readable(json, MUTATED_OBJECT_DEPTH) {
                let mut object = Self::of_text(Cow::Borrowed(json));
                object.outline = Some((Rc::new(outline), 0));
                return Ok(object);
            }
        }
        Self::parse(json)
    }

    fn of_text(text: Cow<'a, str>) -> Self {
        Self {
            text,
            edits: Vec::new(),
            found: Vec::new(),
            every: None,
            unreadable: None,
            outline: None,
        }
    }

    fn empty() -> Self {
        Self::of_text(Cow::Borrowed("{}"))
    }

    fn edit(&self, key: &str) -> Option<usize> {
        self.edits.iter().position(|(k, _)| k == key)
    }

    /// Records `change` for `key`, replacing an earlier edit of it.
    fn record(&mut self, key: &str, change: Change<'a>) {
        self.find(key);
        match self.edit(key).and_then(|i| self.edits.get_mut(i)) {
            Some((_, slot)) => *slot = change,
            None => self.edits.push((key.to_string(), change)),
        }
    }

    /// Reads where `key` occurs in the object's own text, once.
    fn find(&mut self, key: &str) -> &[Place] {
        let index = match self.found.iter().position(|f| f.key == key) {
            Some(i) => i,
            None => {
                let at = match &self.every {
                    Some(every) => every
                        .iter()
                        .filter(|(k, _, _)| k == key)
                        .map(|(_, region, value)| (region.clone(), value.clone()))
                        .collect(),
                    None => self.read(key),
                };
                self.found.push(Found {
                    key: key.to_string(),
                    at,
                });
                self.found.len().saturating_sub(1)
            }
        };
        self.found.get(index).map_or(&[], |f| f.at.as_slice())
    }

    /// Reads the text for `key`'s occurrences; an object of few members
    /// (those above a large map on an edit's path: the object, its
    /// `metadata`) keeps every member, so that no other key reads it again.
    fn read(&mut self, key: &str) -> Vec<Place> {
        let mut at = Vec::new();
        let mut every = Some(Vec::new());
        let outline = self.outline.as_ref().map(|(o, base)| (&**o, *base));
        let read = each_member(&self.text, outline, |member| {
            if member.key == key {
                at.push((member.region.clone(), member.value.clone()));
            }
            if let Some(list) = &mut every {
                if list.len() < FEW_MEMBERS {
                    list.push((member.key.into_owned(), member.region, member.value));
                } else {
                    every = None;
                }
            }
        });
        if let Err(e) = read {
            self.unreadable = Some(e);
        }
        self.every = every;
        at
    }

    /// The text of the value under `key` in the object's own text, its last
    /// occurrence; `None` when absent (edits aside).
    fn in_text(&mut self, key: &str) -> Option<Range<usize>> {
        self.find(key).last().map(|(_, value)| value.clone())
    }

    /// The object under `key`, for editing; created when absent or null.
    /// `Err` when the member is something other than an object.
    pub fn child(&mut self, key: &str) -> Result<&mut RawObject<'a>, EditError> {
        let not_object = || EditError::NotObjectAt(key.to_string());
        let expanded = match self.edit(key).and_then(|i| self.edits.get_mut(i)) {
            Some((_, Change::Object(_))) => None,
            Some((_, Change::Remove)) => Some(Self::empty()),
            Some((_, Change::Set(Value::Null))) => Some(Self::empty()),
            Some((_, Change::Set(object @ Value::Object(_)))) => {
                Some(Self::of_text(Cow::Owned(json(object)?)))
            }
            Some((_, Change::Set(_))) => return Err(not_object()),
            None => Some(match self.in_text(key) {
                None => Self::empty(),
                Some(range) => {
                    let start = range.start;
                    let (value, outline) = match &self.text {
                        Cow::Borrowed(text) => (
                            Cow::Borrowed(text.get(range).unwrap_or("null")),
                            self.outline
                                .as_ref()
                                .map(|(o, base)| (Rc::clone(o), base.saturating_add(start))),
                        ),
                        Cow::Owned(text) => {
                            (Cow::Owned(text.get(range).unwrap_or("null").into()), None)
                        }
                    };
                    match value.as_bytes().first() {
                        Some(b'{') => Self {
                            outline,
                            ..Self::of_text(value)
                        },
                        _ if value == "null" => Self::empty(),
                        _ => return Err(not_object()),
                    }
                }
            }),
        };
        if let Some(object) = expanded {
            self.record(key, Change::Object(object));
        }
        match self.edit(key).and_then(|i| self.edits.get_mut(i)) {
            Some((_, Change::Object(object))) => Ok(object),
            _ => Err(not_object()),
        }
    }

    /// Sets `key` to `value`, replacing what was there.
    pub fn insert(&mut self, key: &str, value: Value) {
        self.record(key, Change::Set(value));
    }

    /// Sets the annotation `key` to `value` in `metadata.annotations`,
    /// creating `metadata` and `annotations` when absent or null. Every other
    /// member keeps its text; only the objects on the path are expanded (see
    /// [`RawObject::child`]). `Err` names the field that is something other
    /// than an object, leaving the annotation unset.
    pub fn set_annotation(&mut self, key: &str, value: &str) -> Result<(), EditError> {
        self.child("metadata")?
            .child("annotations")
            .map_err(|_| EditError::NotObjectAt("metadata.annotations".to_string()))?
            .insert(key, Value::String(value.to_string()));
        Ok(())
    }

    /// Removes every occurrence of `key`; false when it was not there.
    pub fn remove(&mut self, key: &str) -> bool {
        let present = self.has_member(key);
        self.record(key, Change::Remove);
        present
    }

    /// The member under `key` is there, whatever it holds.
    fn has_member(&mut self, key: &str) -> bool {
        match self.edit(key).and_then(|i| self.edits.get(i)) {
            Some((_, Change::Remove)) => false,
            Some(_) => true,
            None => self.in_text(key).is_some(),
        }
    }

    /// The member under `key` is an object (as opposed to absent, null or other).
    pub fn has_object(&mut self, key: &str) -> bool {
        match self.edit(key).and_then(|i| self.edits.get(i)) {
            Some((_, Change::Object(_))) => true,
            Some((_, Change::Set(value))) => value.is_object(),
            Some((_, Change::Remove)) => false,
            None => {
                self.in_text(key)
                    .and_then(|range| self.text.as_bytes().get(range.start))
                    == Some(&b'{')
            }
        }
    }

    /// The edited object as JSON text: the checked text, and values
    /// serde_json printed.
    pub fn to_raw(&self) -> Result<ObjectText, EditError> {
        let mut out = String::with_capacity(self.text.len().saturating_add(256));
        self.write(&mut out)?;
        Ok(ObjectText::written(out))
    }

    /// Writes the text with the edits made: members no edit names, and the
    /// separators and whitespace around them, are copied as they came.
    fn write(&self, out: &mut String) -> Result<(), EditError> {
        let text: &str = &self.text;
        if self.edits.is_empty() {
            out.push_str(text);
            return Ok(());
        }
        if let Some(e) = self.unreadable {
            return Err(EditError::Broken(e));
        }
        let body = body(text);
        // Every edited key was looked up when edited: its occurrences in
        // the text, each list in text order, are merged as they are written.
        let occurrences: Vec<&[Place]> = self
            .edits
            .iter()
            .map(|(key, _)| {
                self.found
                    .iter()
                    .find(|f| &f.key == key)
                    .map_or(&[][..], |f| f.at.as_slice())
            })
            .collect();
        let mut next = vec![0usize; occurrences.len()];
        out.push_str(text.get(..body.start).unwrap_or("{"));
        let mut members = Members { out, any: false };
        let mut cursor = body.start;
        // The edit whose next occurrence comes first, until none is left.
        while let Some((edit, at)) = occurrences
            .iter()
            .zip(&next)
            .enumerate()
            .filter_map(|(edit, (list, n))| list.get(*n).map(|at| (edit, at)))
            .min_by_key(|(_, (region, _))| region.start)
        {
            let (region, value) = at;
            if let Some(n) = next.get_mut(edit) {
                *n = n.saturating_add(1);
            }
            members.copy(text.get(cursor..region.start).unwrap_or_default());
            cursor = value.end;
            let last = occurrences.get(edit).and_then(|list| list.last()) == Some(at);
            match self.edits.get(edit).map(|(_, change)| change) {
                None | Some(Change::Remove) => {}
                Some(change) if last => {
                    members.copy(text.get(region.start..value.start).unwrap_or_default());
                    write_change(members.out, change)?;
                }
                Some(_) => members.copy(text.get(region.start..value.end).unwrap_or_default()),
            }
        }
        members.copy(text.get(cursor..body.end).unwrap_or_default());
        for (index, (key, change)) in self.edits.iter().enumerate() {
            let in_text = occurrences.get(index).is_some_and(|list| !list.is_empty());
            if in_text || matches!(change, Change::Remove) {
                continue;
            }
            members.separate();
            members.out.push_str(&json(&Value::String(key.clone()))?);
            members.out.push(':');
            write_change(members.out, change)?;
        }
        out.push_str(text.get(body.end..).unwrap_or("}"));
        Ok(())
    }
}

/// A value as JSON text: the one way this module prints.
fn json(value: &Value) -> Result<String, EditError> {
    serde_json::to_string(value).map_err(EditError::Print)
}

fn write_change(out: &mut String, change: &Change<'_>) -> Result<(), EditError> {
    match change {
        Change::Set(value) => out.push_str(&json(value)?),
        Change::Object(object) => object.write(out)?,
        Change::Remove => {}
    }
    Ok(())
}

/// Why an object's text cannot be edited or written; its words are in
/// `Display`.
#[derive(Debug)]
pub enum EditError {
    /// The text is not JSON the reply could carry back.
    NotJson(serde_json::Error),
    /// The text is JSON, but not an object.
    NotObject,
    /// The member at this path (`spec`, `metadata.annotations`) holds
    /// something other than an object.
    NotObjectAt(String),
    /// The checked text is not an object's members after all (never
    /// expected).
    Broken(BrokenText),
    /// serde_json could not print a value an edit set (never expected).
    Print(serde_json::Error),
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotJson(e) => write!(f, "it is not valid JSON: {e}"),
            Self::NotObject => f.write_str("it is not a JSON object"),
            Self::NotObjectAt(path) => write!(f, "{path} must be an object"),
            Self::Broken(e) => e.fmt(f),
            Self::Print(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for EditError {}

/// The same failure at the same place: serde_json's errors compare by their
/// category and position, the facts they expose besides their words.
impl PartialEq for EditError {
    fn eq(&self, other: &Self) -> bool {
        let same = |a: &serde_json::Error, b: &serde_json::Error| {
            (a.classify(), a.line(), a.column()) == (b.classify(), b.line(), b.column())
        };
        match (self, other) {
            (Self::NotJson(a), Self::NotJson(b)) | (Self::Print(a), Self::Print(b)) => same(a, b),
            (Self::NotObject, Self::NotObject) => true,
            (Self::NotObjectAt(a), Self::NotObjectAt(b)) => a == b,
            (Self::Broken(a), Self::Broken(b)) => a == b,
            _ => false,
        }
    }
}

/// The output's member list as it is written: whether a member is already
/// in it decides whether the next needs a comma.
struct Members<'o> {
    out: &'o mut String,
    any: bool,
}

impl Members<'_> {
    /// Copies whole members of the text (each after its separator, the first
    /// of the object without one), dropping a leading comma the output does
    /// not need.
    fn copy(&mut self, segment: &str) {
        if segment.trim_ascii().is_empty() {
            self.out.push_str(segment);
            return;
        }
        let trimmed = segment.trim_ascii_start();
        match trimmed.strip_prefix(',') {
            Some(rest) if !self.any => self.out.push_str(rest),
            _ => self.out.push_str(segment),
        }
        self.any = true;
    }

    /// Before a member written anew.
    fn separate(&mut self) {
        if self.any {
            self.out.push(',');
        }
        self.any = true;
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
        assert_eq!(
            bad.child("spec").unwrap_err().to_string(),
            "spec must be an object"
        );
        assert!(RawObject::parse("[1]").is_err());
        assert!(!bad.has_object("spec"));
        assert!(RawObject::parse(r#"{"a":{}}"#).unwrap().has_object("a"));
    }

    fn annotated(json: &str) -> Result<String, EditError> {
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
                annotated(&json).unwrap_err().to_string(),
                "metadata must be an object",
                "{json}"
            );
        }
        for annotations in [r#""x""#, r#"["a"]"#, "0"] {
            let json = format!(r#"{{"metadata":{{"annotations":{annotations}}}}}"#);
            assert_eq!(
                annotated(&json).unwrap_err().to_string(),
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
            let err = RawObject::parse(bad).unwrap_err().to_string();
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

    /// One step of an edit script, on the object at `path`.
    #[derive(Debug, Clone)]
    enum Step {
        Insert(Vec<&'static str>, &'static str, Value),
        Remove(Vec<&'static str>, &'static str),
        HasObject(Vec<&'static str>, &'static str),
    }

    /// The same script on a `Value`, as the host reads the result: `child`
    /// creates what is absent or null and refuses other shapes.
    fn on_value(value: &mut Value, steps: &[Step]) -> Vec<String> {
        fn walk<'v>(mut v: &'v mut Value, path: &[&str]) -> Result<&'v mut Value, String> {
            for key in path {
                let map = v.as_object_mut().unwrap();
                let child = map.entry(key.to_string()).or_insert(Value::Null);
                if child.is_null() {
                    *child = json!({});
                }
                if !child.is_object() {
                    return Err(format!("{key} must be an object"));
                }
                v = child;
            }
            Ok(v)
        }
        let mut said = Vec::new();
        for step in steps {
            let (Step::Insert(path, ..) | Step::Remove(path, _) | Step::HasObject(path, _)) = step;
            let target = match walk(value, path) {
                Ok(t) => t.as_object_mut().unwrap(),
                Err(e) => {
                    said.push(e);
                    continue;
                }
            };
            said.push(match step {
                Step::Insert(_, key, v) => format!(
                    "{:?}",
                    target.insert(key.to_string(), v.clone()).map(|_| ())
                ),
                Step::Remove(_, key) => target.remove(*key).is_some().to_string(),
                Step::HasObject(_, key) => {
                    target.get(*key).is_some_and(Value::is_object).to_string()
                }
            });
        }
        said
    }

    fn on_raw(object: &mut RawObject, steps: &[Step]) -> Vec<String> {
        fn walk<'o, 'a>(
            mut o: &'o mut RawObject<'a>,
            path: &[&str],
        ) -> Result<&'o mut RawObject<'a>, EditError> {
            for key in path {
                o = o.child(key)?;
            }
            Ok(o)
        }
        let mut said = Vec::new();
        for step in steps {
            let (Step::Insert(path, ..) | Step::Remove(path, _) | Step::HasObject(path, _)) = step;
            let target = match walk(object, path) {
                Ok(t) => t,
                Err(e) => {
                    said.push(e.to_string());
                    continue;
                }
            };
            said.push(match step {
                Step::Insert(_, key, v) => {
                    let existed = target.has_member(key);
                    target.insert(key, v.clone());
                    format!("{:?}", existed.then_some(()))
                }
                Step::Remove(_, key) => target.remove(key).to_string(),
                Step::HasObject(_, key) => target.has_object(key).to_string(),
            });
        }
        said
    }

    #[test]
    fn random_edit_scripts_agree_with_editing_a_value() {
        let texts: Vec<String> = super::super::samples::TEXTS
            .iter()
            .map(|t| t.to_string())
            .chain([
                r#"{"x":{"y":{"a":1},"a":2,"y":null},"b":"s","x":{"y":{"b":1}}, "a" : [1] }"#
                    .into(),
                r#" {  "a":1 ,"x" : { } , "c":{"a":{}} } "#.into(),
                // More members than an object keeps a list of.
                format!(
                    r#"{{"a":0,{},"x":{{"y":1,{}}},"a":{{}}}}"#,
                    (0..FEW_MEMBERS)
                        .map(|i| format!(r#""m{i}":{i}"#))
                        .collect::<Vec<_>>()
                        .join(","),
                    (0..FEW_MEMBERS)
                        .map(|i| format!(r#""y{i}":"{i}""#))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                r#"{"x":null,"b":{"a":{"x":1}},"\u0078":{"q":"\""}}"#.into(),
                // Containers at every outlined level and below, with
                // brackets inside strings.
                r#"{"c":{"a":{"x":[{"y":"]}"}],"b":{}},"b":[]},"x":{"y":{"a":{"b":{}}},"a":[[]]},"b":"{"}"#
                    .into(),
            ])
            .collect();
        let paths: [&[&str]; 5] = [&[], &["x"], &["b"], &["x", "y"], &["c", "a"]];
        let keys = ["a", "b", "x", "y", "c"];
        let values = [
            json!(1),
            json!("s"),
            json!({}),
            Value::Null,
            json!({"q": [1]}),
        ];
        let mut rng = crate::testing::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = |n: usize| rng.below(n);
        let mut scripts = 0;
        for text in &texts {
            let Ok(_) = RawObject::parse(text) else {
                continue;
            };
            for _ in 0..400 {
                let steps: Vec<Step> = (0..1 + next(5))
                    .map(|_| {
                        let path = paths[next(paths.len())].to_vec();
                        let key = keys[next(keys.len())];
                        match next(3) {
                            0 => Step::Insert(path, key, values[next(values.len())].clone()),
                            1 => Step::Remove(path, key),
                            _ => Step::HasObject(path, key),
                        }
                    })
                    .collect();
                let mut value: Value = serde_json::from_str(text).unwrap();
                let value_said = on_value(&mut value, &steps);
                // Read from the text alone, and from a request's raw value
                // with the outline of its first levels.
                let raw_value: &RawValue = serde_json::from_str(text).unwrap();
                for mut raw in [
                    RawObject::parse(text).unwrap(),
                    RawObject::of_raw(raw_value).unwrap(),
                ] {
                    let raw_said = on_raw(&mut raw, &steps);
                    assert_eq!(raw_said, value_said, "{text} {steps:?}");
                    let written: Value = serde_json::from_str(raw.to_raw().unwrap().get())
                        .unwrap_or_else(|e| panic!("{text} {steps:?}: {e}"));
                    assert_eq!(written, value, "{text} {steps:?}");
                }
                scripts += 1;
            }
        }
        assert!(scripts > 4000, "{scripts}");
    }
}

//! The admission request as kube-apiserver sends it, read tolerantly.
//!
//! Every field may be absent or an explicit JSON `null`; both mean "not set".
//! `object` and `oldObject` stay raw JSON until a rule asks for them, and then
//! only the parts a rule names are parsed ([`AdmissionRequest::object_as`]):
//! parsing the whole request into typed Kubernetes structs is where generic
//! policies spend most of their time.

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::string_map::StringMap;

/// Deserializes `null` as the type's default, so absent and null read alike.
pub fn null_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    #[default]
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
pub struct GroupVersionKind {
    #[serde(default, deserialize_with = "null_default")]
    pub group: String,
    #[serde(default, deserialize_with = "null_default")]
    pub version: String,
    #[serde(default, deserialize_with = "null_default")]
    pub kind: String,
}

/// A kind matched by group and kind, never by version: Flux and ASO serve
/// several versions of each kind and the fields our rules read are the same in all.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupKind {
    pub group: String,
    pub kind: String,
}

impl GroupKind {
    pub fn new(group: &str, kind: &str) -> Self {
        Self {
            group: group.to_string(),
            kind: kind.to_string(),
        }
    }

    pub fn is(&self, group: &str, kind: &str) -> bool {
        self.group == group && self.kind == kind
    }
}

impl std::fmt::Display for GroupKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
pub struct GroupVersionResource {
    #[serde(default, deserialize_with = "null_default")]
    pub group: String,
    #[serde(default, deserialize_with = "null_default")]
    pub version: String,
    #[serde(default, deserialize_with = "null_default")]
    pub resource: String,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct UserInfo {
    #[serde(default, deserialize_with = "null_default")]
    pub username: String,
    #[serde(default, deserialize_with = "null_default")]
    pub uid: String,
    #[serde(default, deserialize_with = "null_default")]
    pub groups: Vec<String>,
}

/// `admission.k8s.io/v1` AdmissionRequest, the parts the policies read.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    #[serde(default, deserialize_with = "null_default")]
    pub uid: String,
    #[serde(default, deserialize_with = "null_default")]
    pub kind: GroupVersionKind,
    #[serde(default, deserialize_with = "null_default")]
    pub resource: GroupVersionResource,
    #[serde(default, deserialize_with = "null_default")]
    pub sub_resource: String,
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    #[serde(default, deserialize_with = "null_default")]
    pub namespace: String,
    #[serde(default, deserialize_with = "null_default")]
    pub operation: Operation,
    #[serde(default, deserialize_with = "null_default")]
    pub user_info: UserInfo,
    #[serde(default)]
    pub object: Option<Box<RawValue>>,
    #[serde(default)]
    pub old_object: Option<Box<RawValue>>,
    #[serde(default, deserialize_with = "null_default")]
    pub dry_run: bool,
    /// `CreateOptions`, `UpdateOptions` or `DeleteOptions`, read on demand.
    #[serde(default)]
    pub options: Option<Box<RawValue>>,
}

/// How a JSON value's type is named in messages ("found a list").
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

/// [`json_type`] of valid JSON text, read from its first byte.
pub fn json_type_of_text(text: &str) -> &'static str {
    match text.trim_start().bytes().next() {
        Some(b'{') => "a map",
        Some(b'[') => "a list",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// Which of the two objects of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Object,
    OldObject,
}

impl Which {
    /// The request's field that holds it: `object` or `oldObject`.
    pub fn field(self) -> &'static str {
        Part::from(self).field()
    }
}

/// The part of a request a reader read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Object,
    OldObject,
    /// `options`: the `CreateOptions`, `UpdateOptions` or `DeleteOptions`.
    Options,
}

impl Part {
    /// The request's field that holds it.
    pub fn field(self) -> &'static str {
        match self {
            Part::Object => "object",
            Part::OldObject => "oldObject",
            Part::Options => "options",
        }
    }
}

impl From<Which> for Part {
    fn from(which: Which) -> Self {
        match which {
            Which::Object => Part::Object,
            Which::OldObject => Part::OldObject,
        }
    }
}

/// A part of the request that cannot be read as a reader needs it: which
/// part, and why. Its words are in `Display` (`malformed object: …`).
#[derive(Debug)]
pub struct ReadError {
    pub part: Part,
    pub why: Why,
}

/// Why a part of the request cannot be read.
#[derive(Debug)]
pub enum Why {
    /// It is not a JSON object; `found` is what it is instead, as
    /// [`json_type`] names it.
    NotAnObject { found: &'static str },
    /// serde's reading of it failed, in serde's words.
    Json(serde_json::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed {}: ", self.part.field())?;
        match &self.why {
            Why::NotAnObject { found } if self.part == Part::Options => {
                write!(f, "they must be a map, found {found}")
            }
            Why::NotAnObject { found } => write!(f, "it is not an object, found {found}"),
            Why::Json(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ReadError {}

/// The same failure of the same part: serde_json's errors compare by their
/// category and position, the facts they expose besides their words.
impl PartialEq for ReadError {
    fn eq(&self, other: &Self) -> bool {
        self.part == other.part
            && match (&self.why, &other.why) {
                (Why::NotAnObject { found: a }, Why::NotAnObject { found: b }) => a == b,
                (Why::Json(a), Why::Json(b)) => same_json_error(a, b),
                _ => false,
            }
    }
}

impl Eq for ReadError {}

/// Two serde_json errors of the same category at the same place.
pub fn same_json_error(a: &serde_json::Error, b: &serde_json::Error) -> bool {
    (a.classify(), a.line(), a.column()) == (b.classify(), b.line(), b.column())
}

impl AdmissionRequest {
    pub fn group_kind(&self) -> GroupKind {
        GroupKind::new(&self.kind.group, &self.kind.kind)
    }

    /// `object` or `oldObject` as the request's JSON text; `None` when
    /// absent or null.
    pub fn raw(&self, which: Which) -> Option<&RawValue> {
        match which {
            Which::Object => self.object.as_deref(),
            Which::OldObject => self.old_object.as_deref(),
        }
        .filter(|raw| raw.get() != "null")
    }

    /// Parses `object` or `oldObject` into `T`, a view holding only what a rule
    /// reads. `Ok(None)` when the request has no such object. Anything but a
    /// JSON object is refused first, by its first byte: serde reads a struct
    /// from a JSON list too (`[]` would pass as an object with no metadata),
    /// and its error for a string quotes all of it through `Debug`, about
    /// 200 ns a character for most scripts (a 1 MB string took 200 ms).
    pub fn object_as<T: DeserializeOwned>(&self, which: Which) -> Result<Option<T>, ReadError> {
        let error = |why| ReadError {
            part: which.into(),
            why,
        };
        match self.raw(which) {
            None => Ok(None),
            Some(raw) if raw.get() == "null" => Ok(None),
            Some(raw) if !raw.get().trim_start().starts_with('{') => Err(error(Why::NotAnObject {
                found: json_type_of_text(raw.get()),
            })),
            Some(raw) => serde_json::from_str(raw.get())
                .map(Some)
                .map_err(|e| error(Why::Json(e))),
        }
    }

    /// The one refusal for a request that lacks the object its operation
    /// carries (`object` on CREATE and UPDATE, `oldObject` on DELETE).
    /// kube-apiserver always sends it, so only a hand-made or cut request gets
    /// here; `subject` names what was asked about (kind and name).
    pub fn missing_object(&self, which: Which, subject: &str) -> String {
        format!(
            "{subject}: the {} request carries no {}",
            self.operation.as_str(),
            which.field()
        )
    }

    /// `options.fieldManager`: the manager the client named, empty when it
    /// named none. `Err` when the options cannot be read: kube-apiserver
    /// writes them from its typed `CreateOptions`/`UpdateOptions`, so
    /// unreadable ones are not "no field manager".
    pub fn field_manager(&self) -> Result<String, ReadError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Options {
            #[serde(default, deserialize_with = "null_default")]
            field_manager: String,
        }
        let Some(raw) = self.options.as_deref() else {
            return Ok(String::new());
        };
        let error = |why| ReadError {
            part: Part::Options,
            why,
        };
        match serde_json::from_str::<Value>(raw.get()) {
            Ok(Value::Null) => Ok(String::new()),
            Ok(options @ Value::Object(_)) => serde_json::from_value::<Options>(options)
                .map(|o| o.field_manager)
                .map_err(|e| error(Why::Json(e))),
            Ok(other) => Err(error(Why::NotAnObject {
                found: json_type(&other),
            })),
            Err(e) => Err(error(Why::Json(e))),
        }
    }

    /// The full object as a JSON value, for policies that return a mutated copy.
    pub fn object_value(&self, which: Which) -> Result<Option<Value>, ReadError> {
        self.object_as::<Value>(which)
    }

    /// The metadata of `object` or `oldObject` (default metadata when absent).
    pub fn metadata(&self, which: Which) -> Result<Option<Metadata>, ReadError> {
        Ok(self.object_as::<ObjectHead>(which)?.map(|h| h.metadata))
    }

    /// The name of the object, from the request or, failing that, its metadata
    /// (a CREATE with `generateName` has no name yet).
    pub fn display_name(&self, meta: Option<&Metadata>) -> String {
        if !self.name.is_empty() {
            return self.name.clone();
        }
        match meta {
            Some(m) if !m.name.is_empty() => m.name.clone(),
            Some(m) if !m.generate_name.is_empty() => format!("{}<generated>", m.generate_name),
            _ => "<unnamed>".to_string(),
        }
    }
}

/// An object reduced to its metadata; every other field is skipped unparsed.
#[derive(Debug, Default, Deserialize)]
struct ObjectHead {
    #[serde(default, deserialize_with = "null_default")]
    metadata: Metadata,
}

/// `metadata` of a Kubernetes object, the parts the policies read.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    #[serde(default, deserialize_with = "null_default")]
    pub generate_name: String,
    #[serde(default, deserialize_with = "null_default")]
    pub namespace: String,
    /// Read into a [`StringMap`]: a request may carry 200,000 entries.
    #[serde(default, deserialize_with = "null_default")]
    pub labels: StringMap,
    #[serde(default, deserialize_with = "null_default")]
    pub annotations: StringMap,
    #[serde(default, deserialize_with = "null_default")]
    pub finalizers: Vec<String>,
    #[serde(default)]
    pub deletion_timestamp: Option<String>,
}

impl Metadata {
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_missing_object_one_way() {
        let request: AdmissionRequest =
            serde_json::from_str(r#"{"operation":"DELETE","name":"apps"}"#).unwrap();
        assert_eq!(
            request.missing_object(Which::OldObject, "Kustomization flux-system/apps"),
            "Kustomization flux-system/apps: the DELETE request carries no oldObject"
        );
    }

    #[test]
    fn nulls_and_absent_fields_read_as_not_set() {
        let req: AdmissionRequest = serde_json::from_str(
            r#"{"uid":"u","kind":{"group":"g","version":"v1","kind":"K"},"namespace":null,
                "subResource":null,"userInfo":null,"options":null,"object":null,"oldObject":null,
                "operation":"DELETE","dryRun":null}"#,
        )
        .unwrap();
        assert_eq!(req.namespace, "");
        assert_eq!(req.operation, Operation::Delete);
        assert_eq!(req.user_info, UserInfo::default());
        assert!(req.metadata(Which::Object).unwrap().is_none());
        assert!(req.metadata(Which::OldObject).unwrap().is_none());
    }

    #[test]
    fn metadata_is_read_without_the_rest_of_the_object() {
        let req: AdmissionRequest = serde_json::from_str(
            r#"{"object":{"metadata":{"name":"a","annotations":{"k":"v"},"labels":null,
                "managedFields":[{"x":1}]},"spec":{"suspend":true}}}"#,
        )
        .unwrap();
        let meta = req.metadata(Which::Object).unwrap().unwrap();
        assert_eq!(meta.name, "a");
        assert_eq!(meta.annotation("k"), Some("v"));
        assert!(meta.labels.is_empty());
    }

    #[test]
    fn a_non_string_annotation_is_a_clear_error() {
        let req: AdmissionRequest =
            serde_json::from_str(r#"{"object":{"metadata":{"annotations":{"k":1}}}}"#).unwrap();
        let err = req.metadata(Which::Object).unwrap_err();
        assert_eq!(err.part, Part::Object);
        assert!(matches!(err.why, Why::Json(_)), "{err}");
        assert!(err.to_string().starts_with("malformed object:"), "{err}");
    }

    /// serde reads a struct from a JSON list as well; an object sent as a
    /// list must not pass as one without metadata.
    #[test]
    fn an_object_that_is_a_list_is_a_clear_error() {
        let req: AdmissionRequest = serde_json::from_str(
            r#"{"object":[{"name":"a","annotations":{"k":"v"}}],"oldObject":[]}"#,
        )
        .unwrap();
        assert_eq!(
            req.metadata(Which::Object).unwrap_err(),
            ReadError {
                part: Part::Object,
                why: Why::NotAnObject { found: "a list" }
            }
        );
        assert_eq!(
            req.object_value(Which::OldObject).unwrap_err().to_string(),
            "malformed oldObject: it is not an object, found a list"
        );
        for (text, found) in [
            (r#""s""#, "a string"),
            ("-1.5", "a number"),
            (" true", "a boolean"),
        ] {
            let req: AdmissionRequest =
                serde_json::from_str(&format!(r#"{{"object":{text}}}"#)).unwrap();
            assert_eq!(
                req.metadata(Which::Object).unwrap_err().to_string(),
                format!("malformed object: it is not an object, found {found}")
            );
        }
    }

    #[test]
    fn the_field_manager_is_read_strictly() {
        let manager = |options: &str| {
            let req: AdmissionRequest =
                serde_json::from_str(&format!(r#"{{"options":{options}}}"#)).unwrap();
            req.field_manager()
        };
        assert_eq!(
            manager(r#"{"fieldManager":"kubectl-annotate"}"#).unwrap(),
            "kubectl-annotate"
        );
        for none in ["null", "{}", r#"{"fieldManager":null}"#] {
            assert_eq!(manager(none).unwrap(), "", "{none}");
        }
        let err = manager(r#"{"fieldManager":7}"#).unwrap_err().to_string();
        assert!(
            err.starts_with("malformed options: invalid type: integer `7`"),
            "{err}"
        );
        assert_eq!(
            manager(r#"["kubectl"]"#).unwrap_err().to_string(),
            "malformed options: they must be a map, found a list"
        );
        let absent: AdmissionRequest = serde_json::from_str("{}").unwrap();
        assert_eq!(absent.field_manager().unwrap(), "");
    }
}

//! What the rules read of an object, parsed once, and its suspend state.

use guard_core::request::{json_type, ReadError};
use guard_core::{json_text, AdmissionRequest, Metadata, Which};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::kinds::Collects;
use crate::kinds::{self, Honours, Kind, SUSPEND_ANNOTATION};
use guard_core::model::kinds::kustomization_deletion as collects;
use guard_core::object::ObjectName;

/// The object a finding is about, owned, so that a decision outlives the
/// objects read to make it (see [`ObjectName::of`] for which object that is).
pub(crate) type Target = guard_core::object::OwnedObjectName;

/// The request's object, owned.
pub(crate) fn target(request: &AdmissionRequest, meta: Option<&Metadata>) -> Target {
    Target::of(&ObjectName::of(request, meta))
}

/// An object that cannot be read as the rules need it: which, and why, as
/// values (the words are in `render`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// The request lacks the object its operation carries.
    Missing { which: Which, target: Target },
    /// The object does not have the shape the rules read.
    Object(Box<Malformed>),
    /// A field of the request's object, named for the object.
    Field { target: Target, error: WrongType },
    /// The request's options (its field manager), named for the object.
    Options { target: Target, error: ReadError },
    /// A field of the object a DELETE judges.
    OldField(WrongType),
}

/// `object` or `oldObject` not of the shape the rules read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// guard-core's reading failed; it names the object itself.
    Read(ReadError),
    /// A member of the object (`which`) is not what the controllers write.
    Shape { which: Which, shape: Shape },
}

/// Which member of an object is not of the shape the rules read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The object has no `metadata`.
    NoMetadata,
    /// `metadata` is not an object.
    Metadata,
    /// `spec` is not an object.
    Spec,
    /// `metadata.<map>` (`annotations`, `labels`) is not a map; `found`
    /// names what it is ([`json_type`]).
    Map {
        map: &'static str,
        found: &'static str,
    },
    /// The entry `key` of `metadata.<map>` is not a string.
    MapEntry {
        map: &'static str,
        key: String,
        found: &'static str,
    },
    /// A member on the way to what a deletion would delete (`status`,
    /// `status.inventory.entries`) is not `shape` (`a map`, `a list`).
    Status {
        path: &'static str,
        shape: &'static str,
        found: &'static str,
    },
}

/// A field of `spec` that is not of its type, and the value found instead.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct WrongType {
    pub(crate) field: SpecField,
    pub(crate) found: Box<Found>,
}

/// A value of the wrong type: a string or a number as it was, the others
/// by their type.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    String(String),
    Number(serde_json::Number),
    Bool(bool),
    Null,
    List,
    Object,
}

impl WrongType {
    fn of(field: SpecField, value: &Value) -> Self {
        let found = match value {
            Value::String(s) => Found::String(s.clone()),
            Value::Number(n) => Found::Number(n.clone()),
            Value::Bool(b) => Found::Bool(*b),
            Value::Null => Found::Null,
            Value::Array(_) => Found::List,
            Value::Object(_) => Found::Object,
        };
        WrongType {
            field,
            found: Box::new(found),
        }
    }
}

/// The fields of `spec` the rules read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpecField {
    Suspend,
    Prune,
    DeletionPolicy,
}

/// An object reduced to metadata and the raw `spec`; status and managed
/// fields are skipped unparsed.
#[derive(Debug, Deserialize)]
pub(crate) struct ObjectView {
    #[serde(default)]
    metadata: Option<Metadata>,
    #[serde(default)]
    spec: Option<Box<RawValue>>,
}

/// The parts of `spec` the rules read.
#[derive(Debug, Default, Deserialize)]
struct SpecView {
    #[serde(default)]
    suspend: Option<Value>,
    #[serde(default)]
    prune: Option<Value>,
    #[serde(default, rename = "deletionPolicy")]
    deletion_policy: Option<Value>,
}

/// An object's metadata and spec, checked for the shape the rules rely on.
#[derive(Debug)]
pub(crate) struct Object {
    /// Its annotations are those [`load`] was asked for only.
    pub(crate) metadata: Metadata,
    /// The raw `spec` text (`None` when absent or null), to see staged changes.
    pub(crate) spec_raw: Option<Box<RawValue>>,
    /// `spec.suspend` when it is a boolean; `Err` holds what was found instead.
    suspend: Result<bool, Value>,
    /// What would make kustomize-controller delete the inventory; `Err`
    /// holds a `spec.prune` or `spec.deletionPolicy` of the wrong type.
    collects: Result<Option<guard_core::model::kinds::Collects>, (SpecField, Value)>,
}

/// The annotations the rules read of a `kind` object: the reason, the
/// disable annotation the kind's controller honours, and `also` (the
/// suspender annotation a write records).
pub(crate) fn annotations_read<'k>(kind: &Kind, also: Option<&'k str>) -> Vec<&'k str> {
    let mut keys = vec![SUSPEND_ANNOTATION];
    if let Honours::DisableAnnotation(key) = kind.honours {
        keys.push(key);
    }
    keys.extend(also);
    keys
}

/// Reads `object` or `oldObject`, keeping of its annotations those under
/// `annotations` (see [`annotations_read`]): `Ok(None)` when the request has
/// none, `Err` naming the field when it is malformed.
pub(crate) fn load(
    request: &AdmissionRequest,
    which: Which,
    annotations: &[&str],
) -> Result<Option<Object>, Box<Malformed>> {
    let asked = json_text::Asked {
        annotations: json_text::Keys::Only(annotations),
        labels: json_text::Keys::Only(&[]),
        members: &["spec"],
    };
    // One walk of the text for the shapes kube-apiserver stores; serde's
    // reading, and its words, for the rest.
    let fast = request
        .raw(which)
        .and_then(|raw| json_text::read_head(raw.get(), &asked))
        .and_then(|head| {
            let spec = match head.members.first().copied().flatten() {
                None | Some("null") => None,
                Some(text) => Some(serde_json::from_str::<Box<RawValue>>(text).ok()?),
            };
            Some(ObjectView {
                metadata: head.metadata,
                spec,
            })
        });
    let view = match fast {
        Some(view) => view,
        None => match request.object_as::<ObjectView>(which) {
            Ok(None) => return Ok(None),
            Ok(Some(view)) => view,
            Err(e) => {
                return Err(Box::new(diagnose(request, which).map_or(
                    Malformed::Read(e),
                    |shape| Malformed::Shape { which, shape },
                )))
            }
        },
    };
    let malformed = |shape| Box::new(Malformed::Shape { which, shape });
    let Some(metadata) = view.metadata else {
        return Err(malformed(Shape::NoMetadata));
    };
    let (suspend, collects) = match view.spec.as_deref() {
        None => (Ok(false), Ok(None)),
        Some(raw) if raw.get() == "null" => (Ok(false), Ok(None)),
        // serde would read the view from a list as well.
        Some(raw) if !raw.get().trim_start().starts_with('{') => {
            return Err(malformed(Shape::Spec))
        }
        Some(raw) => {
            let spec: SpecView =
                serde_json::from_str(raw.get()).map_err(|_| malformed(Shape::Spec))?;
            let deletion_policy = match spec.deletion_policy {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(found) => Err((SpecField::DeletionPolicy, found)),
            };
            let prune = boolean(spec.prune).map_err(|found| (SpecField::Prune, found));
            (
                boolean(spec.suspend),
                deletion_policy.and_then(|policy| Ok(collects(policy.as_deref(), prune?))),
            )
        }
    };
    let spec_raw = view.spec.filter(|raw| raw.get() != "null");
    Ok(Some(Object {
        metadata,
        spec_raw,
        suspend,
        collects,
    }))
}

/// Reads the object the operation carries: kube-apiserver always sends it,
/// so a request without it is refused, naming it.
pub(crate) fn load_required(
    request: &AdmissionRequest,
    which: Which,
    annotations: &[&str],
) -> Result<Object, Unreadable> {
    load(request, which, annotations)
        .map_err(Unreadable::Object)?
        .ok_or_else(|| Unreadable::Missing {
            which,
            target: target(request, None),
        })
}

/// A boolean of `spec` (`suspend`, `prune`) as the controllers read it:
/// absent and null are `false`; `Err` holds what was found instead.
fn boolean(value: Option<Value>) -> Result<bool, Value> {
    match value {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(found) => Err(found),
    }
}

/// Finds the field that made the view fail, for a message better than serde's.
/// Runs only on the error path, so parsing the whole object is affordable.
fn diagnose(request: &AdmissionRequest, which: Which) -> Option<Shape> {
    /// Only what a diagnosis reads: the whole object as a `Value` could
    /// take tens of MiB for a 2 MiB request of small nested members.
    #[derive(Deserialize)]
    struct Head {
        metadata: Option<Box<RawValue>>,
    }
    #[derive(Deserialize)]
    struct Maps {
        annotations: Option<Value>,
        labels: Option<Value>,
    }
    let head = request.object_as::<Head>(which).ok()??;
    let metadata = head.metadata?;
    if !metadata.get().trim_start().starts_with('{') {
        return Some(Shape::Metadata);
    }
    let maps: Maps = serde_json::from_str(metadata.get()).ok()?;
    for (map, value) in [("annotations", maps.annotations), ("labels", maps.labels)] {
        match value {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                if let Some((key, value)) = entries.iter().find(|(_, v)| !v.is_string()) {
                    return Some(Shape::MapEntry {
                        map,
                        key: key.clone(),
                        found: json_type(value),
                    });
                }
            }
            Some(other) => {
                return Some(Shape::Map {
                    map,
                    found: json_type(&other),
                })
            }
        }
    }
    None
}

/// The suspend state of one object, as the RFC's `get` story defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct State {
    /// `spec.suspend: true` (toolkit kinds).
    pub(crate) spec_suspend: bool,
    /// `<group>/reconcile: disabled` (ArtifactGenerator, Flux Operator kinds).
    pub(crate) disabled: bool,
    /// The RFC-0006 annotation's value: the reason (owned, so a decision
    /// can carry it past the object it was read from).
    pub(crate) reason: Option<String>,
    /// Deleting the object would delete more than it unless its controller
    /// reads it as suspended, and what ([`Kind::collects`]; suspension and
    /// inventory size aside).
    pub(crate) collects: Option<Collects>,
}

impl State {
    /// The state of `object`; with `strict`, a non-boolean `spec.suspend` is
    /// an error naming the field (the new object of a request, or the one a
    /// DELETE judges), as is, on a kind that prunes, a `spec.prune` or
    /// `spec.deletionPolicy` of the wrong type. Otherwise (an object already
    /// stored, which its CRD schema validated) they read as not suspended and
    /// not deleting anything.
    pub(crate) fn of(object: &Object, kind: &Kind, strict: bool) -> Result<Self, WrongType> {
        let (spec_suspend, disabled) = match kind.honours {
            Honours::SpecSuspend => match &object.suspend {
                Ok(b) => (*b, false),
                Err(found) if strict => return Err(WrongType::of(SpecField::Suspend, found)),
                Err(_) => (false, false),
            },
            Honours::DisableAnnotation(key) => (
                false,
                object
                    .metadata
                    .annotation(key)
                    .is_some_and(kinds::is_disabled),
            ),
        };
        let policy = match &object.collects {
            _ if !kind.prunes() => None,
            Ok(policy) => *policy,
            Err((field, found)) if strict => return Err(WrongType::of(*field, found)),
            Err(_) => None,
        };
        let collects = kind.collects(policy);
        Ok(Self {
            spec_suspend,
            disabled,
            reason: object
                .metadata
                .annotation(SUSPEND_ANNOTATION)
                .map(str::to_string),
            collects,
        })
    }

    /// Does the kind's controller stop reconciling?
    pub(crate) fn honoured(&self) -> bool {
        self.spec_suspend || self.disabled
    }

    /// Suspended by any mechanism, the RFC's union.
    pub(crate) fn suspended(&self) -> bool {
        self.honoured() || self.reason.is_some()
    }

    /// The annotation without what the controller honours.
    pub(crate) fn annotation_only(&self) -> bool {
        self.reason.is_some() && !self.honoured()
    }

    /// Sets the honoured mechanism, as a mirror edit does.
    pub(crate) fn set_honoured(&mut self, kind: &Kind, on: bool) {
        match kind.honours {
            Honours::SpecSuspend => self.spec_suspend = on,
            Honours::DisableAnnotation(_) => self.disabled = on,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds;

    fn request(object: &str) -> AdmissionRequest {
        serde_json::from_str(&format!(r#"{{"object":{object},"oldObject":null}}"#)).unwrap()
    }

    fn ks() -> Kind {
        kinds::find("kustomize.toolkit.fluxcd.io", "Kustomization").unwrap()
    }

    fn ag() -> Kind {
        kinds::find("source.extensions.fluxcd.io", "ArtifactGenerator").unwrap()
    }

    fn loaded(object: &str) -> Object {
        load(
            &request(object),
            Which::Object,
            &annotations_read(&ag(), None),
        )
        .unwrap()
        .unwrap()
    }

    #[test]
    fn reads_the_state_of_a_suspended_kustomization() {
        let o = loaded(
            r#"{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"INC-1 x"}},
                "spec":{"suspend":true,"prune":true},"status":{"inventory":{"entries":[]}}}"#,
        );
        let s = State::of(&o, &ks(), true).unwrap();
        assert_eq!(
            s,
            State {
                spec_suspend: true,
                disabled: false,
                reason: Some("INC-1 x".into()),
                collects: Some(Collects::Policy(guard_core::model::kinds::Collects::Prune))
            }
        );
        assert!(s.honoured() && s.suspended() && !s.annotation_only());
    }

    #[test]
    fn absent_null_and_false_suspend_read_alike() {
        for spec in [
            r#"{}"#,
            r#"{"suspend":null}"#,
            r#"{"suspend":false}"#,
            "null",
        ] {
            let o = loaded(&format!(r#"{{"metadata":{{}},"spec":{spec}}}"#));
            assert!(!State::of(&o, &ks(), true).unwrap().suspended(), "{spec}");
        }
        let o = loaded(r#"{"metadata":{"name":"a"}}"#);
        assert!(!State::of(&o, &ks(), true).unwrap().suspended());
    }

    #[test]
    fn a_string_suspend_is_refused_on_the_new_object_only() {
        let o = loaded(r#"{"metadata":{},"spec":{"suspend":"true"}}"#);
        let e = State::of(&o, &ks(), true).unwrap_err();
        assert_eq!(
            e,
            WrongType {
                field: SpecField::Suspend,
                found: Box::new(Found::String("true".into()))
            }
        );
        assert_eq!(
            e.to_string(),
            "spec.suspend must be a boolean (true or false), found the string \"true\""
        );
        assert!(!State::of(&o, &ks(), false).unwrap().spec_suspend);
        let o = loaded(r#"{"metadata":{},"spec":{"suspend":1}}"#);
        assert!(State::of(&o, &ks(), true)
            .unwrap_err()
            .to_string()
            .contains("the number 1"));
    }

    /// `spec.prune` and `spec.deletionPolicy` decide whether deleting a
    /// Kustomization deletes its inventory: of the wrong type they are
    /// refused like `spec.suspend`, not read as "deletes nothing".
    #[test]
    fn malformed_prune_fields_are_refused_on_kinds_that_prune() {
        for (spec, error) in [
            (
                r#"{"prune":"true"}"#,
                "spec.prune must be a boolean (true or false), found the string \"true\"",
            ),
            (
                r#"{"prune":true,"deletionPolicy":5}"#,
                "spec.deletionPolicy must be a string (MirrorPrune, Delete, WaitForTermination \
                 or Orphan), found the number 5",
            ),
            (
                r#"{"deletionPolicy":["Delete"]}"#,
                "spec.deletionPolicy must be a string (MirrorPrune, Delete, WaitForTermination \
                 or Orphan), found a list",
            ),
        ] {
            let o = loaded(&format!(r#"{{"metadata":{{}},"spec":{spec}}}"#));
            assert_eq!(
                State::of(&o, &ks(), true).unwrap_err().to_string(),
                error,
                "{spec}"
            );
            assert_eq!(
                State::of(&o, &ks(), false).unwrap().collects,
                None,
                "{spec}"
            );
            // Only Kustomizations prune: elsewhere the fields mean nothing.
            assert_eq!(State::of(&o, &ag(), true).unwrap().collects, None, "{spec}");
        }
        let o = loaded(r#"{"metadata":{},"spec":{"prune":null,"deletionPolicy":null}}"#);
        assert_eq!(State::of(&o, &ks(), true).unwrap().collects, None);
    }

    /// serde reads a struct from a list too: `[true]` must not pass as
    /// `{"suspend": true}`.
    #[test]
    fn a_spec_that_is_a_list_is_refused() {
        for spec in ["[true]", "[]", r#"[null, true, "Delete"]"#] {
            let e = load(
                &request(&format!(r#"{{"metadata":{{}},"spec":{spec}}}"#)),
                Which::Object,
                &[],
            )
            .unwrap_err();
            assert_eq!(
                *e,
                Malformed::Shape {
                    which: Which::Object,
                    shape: Shape::Spec
                },
                "{spec}"
            );
            assert_eq!(e.to_string(), "malformed object: spec must be an object");
        }
    }

    #[test]
    fn disable_annotations_are_compared_case_insensitively() {
        let o = loaded(
            r#"{"metadata":{"annotations":{"source.extensions.fluxcd.io/reconcile":"Disabled"}},"spec":{"suspend":true}}"#,
        );
        let s = State::of(&o, &ag(), true).unwrap();
        assert!(s.disabled && !s.spec_suspend && s.honoured());
        let o = loaded(
            r#"{"metadata":{"annotations":{"source.extensions.fluxcd.io/reconcile":"enabled"}}}"#,
        );
        assert!(!State::of(&o, &ag(), true).unwrap().honoured());
    }

    #[test]
    fn malformed_objects_name_the_field() {
        let r = request(r#"{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":1}}}"#);
        let e = load(&r, Which::Object, &[]).unwrap_err().to_string();
        assert_eq!(
            e,
            "malformed object: metadata.annotations[\"reconcile.fluxcd.io/suspended\"] must be a string, found a number"
        );
        let e = load(
            &request(r#"{"metadata":{"labels":[]}}"#),
            Which::Object,
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("metadata.labels must be a map of strings, found a list"),
            "{e}"
        );
        let e = load(&request(r#"{"kind":"Kustomization"}"#), Which::Object, &[]).unwrap_err();
        assert_eq!(e.to_string(), "malformed object: it has no metadata");
        let e = load(
            &request(r#"{"metadata":{},"spec":"x"}"#),
            Which::Object,
            &[],
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "malformed object: spec must be an object");
        let e = load(&request("[1]"), Which::Object, &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed object: it is not an object, found a list"
        );
        assert!(load(&request("null"), Which::Object, &[])
            .unwrap()
            .is_none());
    }
}

//! Finding the `event.toolkit.fluxcd.io/` annotations of an object, and
//! explaining an object whose metadata cannot be read.

use guard_core::request::ReadError;
use guard_core::{AdmissionRequest, Metadata, Which};
use serde_json::Value;

use crate::kinds::PREFIX;
use guard_core::request::json_type;

/// One event annotation: the part after the prefix, its value, and whether
/// the object carried exactly this before the change.
pub struct Entry<'a> {
    pub key: &'a str,
    pub value: &'a str,
    pub unchanged: bool,
}

/// The event annotations of `meta`, in key order. Annotations are sorted, so
/// this is a range scan rather than a pass over every annotation, and each
/// is found among the stored ones from where the last one was.
pub fn entries<'a>(
    meta: &'a Metadata,
    old: Option<&'a Metadata>,
) -> impl Iterator<Item = Entry<'a>> {
    let mut stored = old.map(|o| o.annotations.ascending());
    meta.annotations
        .iter_from(PREFIX)
        .take_while(|(k, _)| k.starts_with(PREFIX))
        .map(move |(full, value)| Entry {
            key: full.get(PREFIX.len()..).unwrap_or(""),
            value,
            unchanged: stored.as_mut().and_then(|s| s.get(full)) == Some(value),
        })
}

/// Why an object's metadata cannot be read: the first field that is not
/// what Kubernetes stores there (the common case is an unquoted YAML value,
/// `true` or `42`, in annotations or labels), else the reader's own error.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// The metadata is not a map; `found` is the JSON type.
    NotAMap { found: &'static str },
    /// `annotations` or `labels` holds a value that is not a string.
    NotAString {
        field: &'static str,
        key: String,
        found: &'static str,
    },
    /// `annotations` or `labels` is not a map.
    NotAMapOfStrings {
        field: &'static str,
        found: &'static str,
    },
    /// Anything else: the reader's error.
    Other(ReadError),
}

/// Why `object` or `oldObject` of `request` cannot be read, from the
/// reader's `error`. The object is read a second time, as a value, only on
/// this path.
pub(crate) fn malformed(request: &AdmissionRequest, which: Which, error: ReadError) -> Malformed {
    match request.object_value(which) {
        Ok(Some(object)) => malformed_metadata(object.get("metadata"), error),
        _ => Malformed::Other(error),
    }
}

/// Why `meta`, metadata found in an object, cannot be read.
pub(crate) fn malformed_metadata(meta: Option<&Value>, error: ReadError) -> Malformed {
    let meta = meta.unwrap_or(&Value::Null);
    if !meta.is_object() && !meta.is_null() {
        return Malformed::NotAMap {
            found: json_type(meta),
        };
    }
    for field in ["annotations", "labels"] {
        match meta.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                if let Some((key, bad)) = map.iter().find(|(_, v)| !v.is_string()) {
                    return Malformed::NotAString {
                        field,
                        key: key.clone(),
                        found: json_type(bad),
                    };
                }
            }
            Some(other) => {
                return Malformed::NotAMapOfStrings {
                    field,
                    found: json_type(other),
                }
            }
        }
    }
    Malformed::Other(error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::testing::RequestBuilder;

    fn meta(pairs: &[(&str, &str)]) -> Metadata {
        Metadata {
            annotations: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Metadata::default()
        }
    }

    #[test]
    fn only_prefixed_annotations_are_entries() {
        let new = meta(&[
            ("a.example.com/x", "1"),
            ("event.toolkit.fluxcd.io/deploymentID", "d"),
            ("event.toolkit.fluxcd.io/image", "new"),
            ("event.toolkit.fluxcd.io/team", "payments"),
            ("event.toolkit.fluxcd.iox/y", "no"),
            ("z/z", "no"),
        ]);
        let old = meta(&[
            ("event.toolkit.fluxcd.io/image", "old"),
            ("event.toolkit.fluxcd.io/team", "payments"),
        ]);
        let got: Vec<_> = entries(&new, Some(&old))
            .map(|e| (e.key, e.value, e.unchanged))
            .collect();
        assert_eq!(
            got,
            vec![
                ("deploymentID", "d", false),
                ("image", "new", false),
                ("team", "payments", true)
            ]
        );
        assert_eq!(
            entries(&meta(&[("event.toolkit.fluxcd.io/", "")]), None)
                .next()
                .map(|e| e.key),
            Some("")
        );
    }

    fn request(object: &str) -> AdmissionRequest {
        RequestBuilder::new("CREATE")
            .kind("", "", "HelmRelease")
            .name("podinfo")
            .object(serde_json::from_str(object).unwrap())
            .build()
    }

    fn malformed_object(object: &str) -> Malformed {
        let r = request(object);
        let e = r.metadata(Which::Object).unwrap_err();
        malformed(&r, Which::Object, e)
    }

    #[test]
    fn malformed_metadata_is_explained_by_field() {
        assert_eq!(
            malformed_object(
                r#"{"metadata":{"annotations":{"event.toolkit.fluxcd.io/replicas":3}}}"#
            ),
            Malformed::NotAString {
                field: "annotations",
                key: "event.toolkit.fluxcd.io/replicas".into(),
                found: "a number"
            }
        );
        assert_eq!(
            malformed_object(r#"{"metadata":{"labels":["a"]}}"#),
            Malformed::NotAMapOfStrings {
                field: "labels",
                found: "a list"
            }
        );
        assert_eq!(
            malformed_object(r#"{"metadata":"x"}"#),
            Malformed::NotAMap { found: "a string" }
        );
        assert!(matches!(
            malformed_object(r#"{"metadata":{"name":7}}"#),
            Malformed::Other(e) if e.part == guard_core::request::Part::Object
                && e.to_string().starts_with("malformed object: invalid type: integer `7`")
        ));
    }
}

//! Finding the `event.toolkit.fluxcd.io/` annotations of an object, and
//! explaining an object whose metadata cannot be read.

use guard_core::names::quote;
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
/// this is a range scan rather than a pass over every annotation.
pub fn entries<'a>(
    meta: &'a Metadata,
    old: Option<&'a Metadata>,
) -> impl Iterator<Item = Entry<'a>> {
    meta.annotations
        .iter_from(PREFIX)
        .take_while(|(k, _)| k.starts_with(PREFIX))
        .map(move |(full, value)| Entry {
            key: full.get(PREFIX.len()..).unwrap_or(""),
            value,
            unchanged: old.and_then(|o| o.annotation(full)) == Some(value),
        })
}

/// A refusal naming the field that made `object` unreadable: the common case
/// is an unquoted YAML value (`true`, `42`) in annotations or labels.
pub fn explain_malformed(request: &AdmissionRequest, error: String) -> String {
    explain_malformed_in(request, Which::Object, error)
}

/// [`explain_malformed`] for `object` or `oldObject` (the stored object).
pub fn explain_malformed_in(request: &AdmissionRequest, which: Which, error: String) -> String {
    let subject = match which {
        Which::Object => format!("{} {}", request.kind.kind, quote(&request.name)),
        Which::OldObject => format!(
            "stored {} {} (oldObject)",
            request.kind.kind,
            quote(&request.name)
        ),
    };
    let Ok(Some(object)) = request.object_value(which) else {
        return format!("cannot read the {subject}: {error}");
    };
    let meta = object.get("metadata").unwrap_or(&Value::Null);
    explain_metadata(&subject, "metadata", meta, error)
}

/// Why `meta`, the metadata found at `path` of `subject`, cannot be read:
/// the first field that is not what Kubernetes stores there, else `error`.
pub fn explain_metadata(subject: &str, path: &str, meta: &Value, error: String) -> String {
    if !meta.is_object() && !meta.is_null() {
        return format!(
            "cannot read the {subject}: {path} must be a map, not {}",
            json_type(meta)
        );
    }
    for field in ["annotations", "labels"] {
        match meta.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                if let Some((key, bad)) = map.iter().find(|(_, v)| !v.is_string()) {
                    return format!(
                        "cannot read the {subject}: {path}.{field}[{}] must be a string, not {}; \
                         quote the value in YAML (e.g. \"true\", \"42\")",
                        quote(key),
                        json_type(bad)
                    );
                }
            }
            Some(other) => {
                return format!(
                    "cannot read the {subject}: {path}.{field} must be a map of strings, not {}",
                    json_type(other)
                )
            }
        }
    }
    format!("cannot read the {subject}: {error}")
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

    #[test]
    fn malformed_metadata_is_explained_by_field() {
        let r = request(r#"{"metadata":{"annotations":{"event.toolkit.fluxcd.io/replicas":3}}}"#);
        let e = r.metadata(Which::Object).unwrap_err();
        assert_eq!(
            explain_malformed(&r, e),
            "cannot read the HelmRelease \"podinfo\": metadata.annotations[\"event.toolkit.fluxcd.io/replicas\"] \
             must be a string, not a number; quote the value in YAML (e.g. \"true\", \"42\")"
        );
        let r = request(r#"{"metadata":{"labels":["a"]}}"#);
        let e = r.metadata(Which::Object).unwrap_err();
        assert!(explain_malformed(&r, e)
            .ends_with("metadata.labels must be a map of strings, not a list"));
        let r = request(r#"{"metadata":"x"}"#);
        let e = r.metadata(Which::Object).unwrap_err();
        assert!(explain_malformed(&r, e).ends_with("metadata must be a map, not a string"));
        let r = request(r#"{"metadata":{"name":7}}"#);
        let e = r.metadata(Which::Object).unwrap_err();
        assert!(explain_malformed(&r, e)
            .starts_with("cannot read the HelmRelease \"podinfo\": malformed object"));
    }
}

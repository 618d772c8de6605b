//! Who owns a field of an object, as its `metadata.managedFields` record it
//! (kube-apiserver's field manager: one entry per manager and operation, each
//! with the fields it set as a `FieldsV1` trie of `f:<name>` keys;
//! kubernetes/apimachinery `pkg/apis/meta/v1/types.go`,
//! `ManagedFieldsEntry`). Read only on the rare paths that need it, so the
//! parse is not on every request; unreadable managedFields own nothing.

use serde::Deserialize;
use serde_json::Value;

use crate::request::{AdmissionRequest, Which};

/// A manager owning a field: its name and operation (`Apply` for a
/// server-side apply, which states the field in its source; `Update` for
/// every other write).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldOwner {
    pub manager: String,
    pub operation: String,
}

impl FieldOwner {
    /// A server-side apply states the field: the applier's next apply writes
    /// its own value back over anyone else's, when it forces conflicts, as
    /// kustomize-controller and helm-controller do.
    pub fn applies(&self) -> bool {
        self.operation == "Apply"
    }
}

/// One entry of `metadata.managedFields`, the parts read.
#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    manager: Option<String>,
    #[serde(default)]
    operation: Option<String>,
    #[serde(default)]
    subresource: Option<String>,
    #[serde(default, rename = "fieldsV1")]
    fields: Option<Value>,
}

/// The managers that own annotation `key` of the request's `which` object,
/// in managedFields order. Entries of a subresource (`status`) are left out.
pub fn annotation_owners(request: &AdmissionRequest, which: Which, key: &str) -> Vec<FieldOwner> {
    #[derive(Deserialize)]
    struct Meta {
        #[serde(default, rename = "managedFields")]
        managed_fields: Option<Vec<Entry>>,
    }
    #[derive(Deserialize)]
    struct Head {
        #[serde(default)]
        metadata: Option<Meta>,
    }
    let Ok(Some(head)) = request.object_as::<Head>(which) else {
        return Vec::new();
    };
    owners_of(
        head.metadata
            .and_then(|m| m.managed_fields)
            .unwrap_or_default(),
        key,
    )
}

/// [`annotation_owners`] from the text of `metadata.managedFields` alone,
/// for a view that kept it raw while reading the rest of its object.
pub fn annotation_owners_in(managed_fields: &str, key: &str) -> Vec<FieldOwner> {
    match serde_json::from_str::<Option<Vec<Entry>>>(managed_fields) {
        Ok(entries) => owners_of(entries.unwrap_or_default(), key),
        Err(_) => Vec::new(),
    }
}

fn owners_of(entries: Vec<Entry>, key: &str) -> Vec<FieldOwner> {
    // A JSON pointer escapes `~` and `/` in a member name (RFC 6901).
    let pointer = format!(
        "/f:metadata/f:annotations/f:{}",
        key.replace('~', "~0").replace('/', "~1")
    );
    entries
        .into_iter()
        .filter(|e| e.subresource.as_deref().unwrap_or("").is_empty())
        .filter(|e| {
            e.fields
                .as_ref()
                .is_some_and(|f| f.pointer(&pointer).is_some())
        })
        .map(|e| FieldOwner {
            manager: e.manager.unwrap_or_default(),
            operation: e.operation.unwrap_or_default(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_owners_of_an_annotation_outside_subresources() {
        let request: AdmissionRequest = serde_json::from_value(serde_json::json!({
            "operation": "DELETE",
            "oldObject": {"metadata": {"managedFields": [
                {"manager": "kustomize-controller", "operation": "Apply",
                 "fieldsV1": {"f:metadata": {"f:annotations": {"f:a.io/x": {}}}}},
                {"manager": "kubectl-annotate", "operation": "Update",
                 "fieldsV1": {"f:metadata": {"f:annotations": {"f:a.io/y": {}}}}},
                {"manager": "aso-controller", "operation": "Update", "subresource": "status",
                 "fieldsV1": {"f:metadata": {"f:annotations": {"f:a.io/x": {}}}}}
            ]}}
        }))
        .unwrap();
        let owners = annotation_owners(&request, Which::OldObject, "a.io/x");
        assert_eq!(
            owners,
            [FieldOwner {
                manager: "kustomize-controller".into(),
                operation: "Apply".into()
            }]
        );
        assert!(owners[0].applies());
        assert!(annotation_owners(&request, Which::Object, "a.io/x").is_empty());
    }
}

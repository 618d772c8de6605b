//! The labels a webhook's selectors read, with guard-core's label selector
//! (the same `matchLabels`/`matchExpressions` semantics the policies' settings use).

pub use guard_core::selector::{LabelSelector, Requirement, SelectorOperator};
use guard_core::StringMap;
use serde_json::Value;

/// `kubernetes.io/metadata.name`, which kube-apiserver sets on every Namespace.
pub const NAMESPACE_NAME: &str = "kubernetes.io/metadata.name";

/// The `metadata.labels` of a manifest or recorded object: string values
/// only, as the API server stores them.
pub fn labels_of(object: &Value) -> StringMap {
    object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the selector selects everything.
pub fn is_empty(selector: &LabelSelector) -> bool {
    selector.match_labels.is_empty() && selector.match_expressions.is_empty()
}

/// Whether the selector reads nothing but the namespace's name, which is
/// known without the Namespace object.
pub fn reads_only_the_name(selector: &LabelSelector) -> bool {
    selector.match_labels.keys().all(|k| k == NAMESPACE_NAME)
        && selector
            .match_expressions
            .iter()
            .all(|r| r.key == NAMESPACE_NAME)
}

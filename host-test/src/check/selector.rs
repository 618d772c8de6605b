//! The labels a webhook's selectors read, with guard-core's label selector
//! (the same `matchLabels`/`matchExpressions` semantics the policies' settings use).

pub use guard_core::selector::{labels_of, LabelSelector, Requirement, SelectorOperator};

/// `kubernetes.io/metadata.name`, which kube-apiserver sets on every Namespace.
pub const NAMESPACE_NAME: &str = "kubernetes.io/metadata.name";

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

//! Whether ASO has taken over a resource, judged only by what the operator
//! itself writes, never by what a manifest can carry.
//!
//! A manifest copied from `kubectl get -o yaml` carries ASO's finalizer and
//! its annotations (`resource-id`, `operator-namespace`), so neither proves
//! anything. Status does: ASO's CRDs serve the `status` subresource, and
//! kube-apiserver drops `status` from a CREATE and keeps the stored one on an
//! UPDATE of the main resource, so conditions in the stored object were
//! written through `/status`, which is what the operator does once it has
//! claimed the resource (it adds the finalizer before anything else).

use guard_core::{AdmissionRequest, Which};
use serde_json::Value;

use crate::values::FINALIZER;

/// The stored object (`oldObject`) carries ASO's finalizer and status
/// conditions. Unreadable objects count as not taken over: the rules that
/// depend on it then stay strict.
pub fn happened(request: &AdmissionRequest) -> bool {
    request
        .object_value(Which::OldObject)
        .ok()
        .flatten()
        .is_some_and(|old| stored_by_operator(&old))
}

fn stored_by_operator(old: &Value) -> bool {
    let finalized = old
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|f| f.as_str() == Some(FINALIZER)));
    let conditions = old
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty());
    finalized && conditions
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_finalizer_alone_is_not_enough() {
        let claimed = json!({"metadata": {"finalizers": [FINALIZER]}});
        assert!(!stored_by_operator(&claimed));
        let mut taken = claimed.clone();
        taken["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
        assert!(stored_by_operator(&taken));
        let mut no_finalizer = taken.clone();
        no_finalizer["metadata"]["finalizers"] = json!([]);
        assert!(!stored_by_operator(&no_finalizer));
        let mut empty = taken;
        empty["status"]["conditions"] = json!([]);
        assert!(!stored_by_operator(&empty));
    }
}

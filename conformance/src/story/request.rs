//! The AdmissionRequest kube-apiserver sends a webhook for one write.
//!
//! - A PATCH (merge, JSON or server-side apply) reaches admission as an
//!   UPDATE (or a CREATE, for an apply of an absent object) whose options are
//!   `UpdateOptions` (`CreateOptions`) carrying the client's `fieldManager`
//!   (k8s.io/apiserver `pkg/endpoints/handlers/patch.go`
//!   `patchToUpdateOptions`, `patchToCreateOptions`, commit 24a394e5).
//! - A DELETE carries `DeleteOptions`, the stored object in `oldObject` and
//!   no `object`; a delete of a collection (the namespace controller's) is
//!   admitted object by object under the collection's empty name
//!   (`pkg/endpoints/handlers/delete.go` `DeleteCollection`,
//!   `pkg/registry/rest/delete.go` `AdmissionToValidateObjectDeleteFunc`).

use serde_json::{json, Value};

use crate::response::decoded_patch;

/// One request to admission.
#[derive(Debug, Clone)]
pub struct Sent {
    pub uid: String,
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'static str,
    /// The request's `resource` (group, version, plural).
    pub resource: Value,
    pub name: String,
    pub namespace: String,
    pub sub_resource: Option<String>,
    pub user: Value,
    /// Null for a DELETE.
    pub object: Value,
    /// Null for a CREATE.
    pub old: Value,
    pub options: Value,
    pub dry_run: bool,
}

/// `{group, version}` of an object's `apiVersion`.
fn group_version(object: &Value) -> (&str, &str) {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// The request's `resource` for an object: its group, version and plural.
pub fn resource_of(object: &Value) -> Value {
    let (group, version) = group_version(object);
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    json!({"group": group, "version": version, "resource": crate::cluster::plural(kind)})
}

/// The operation's options: `CreateOptions`, `UpdateOptions` (with the
/// client's field manager when it names one) or `DeleteOptions`.
pub fn options(kind: &str, field_manager: Option<&str>) -> Value {
    let mut opts = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
    if let (Some(manager), Some(map)) = (field_manager, opts.as_object_mut()) {
        map.insert("fieldManager".into(), json!(manager));
    }
    opts
}

impl Sent {
    /// The request's namespace. kube-apiserver takes it from the URL, so a
    /// request to `/api/v1/namespaces/{name}` (an update or delete of a
    /// Namespace) carries that Namespace's own name, and a create, posted to
    /// the collection, none (k8s.io/apiserver
    /// `pkg/endpoints/request/requestinfo.go` `NewRequestInfo`, commit
    /// 24a394e5).
    fn request_namespace(&self) -> &str {
        let namespaces = self.resource.get("group").and_then(Value::as_str) == Some("")
            && self.resource.get("resource").and_then(Value::as_str) == Some("namespaces");
        if namespaces && self.operation != "CREATE" {
            &self.name
        } else {
            &self.namespace
        }
    }

    /// The AdmissionRequest, as the corpus records it.
    pub fn admission_request(&self) -> Value {
        let subject = if self.object.is_null() {
            &self.old
        } else {
            &self.object
        };
        let (group, version) = group_version(subject);
        let gvk = json!({"group": group, "version": version,
                         "kind": subject.get("kind").cloned().unwrap_or(Value::Null)});
        let mut request = json!({
            "uid": self.uid,
            "kind": gvk, "resource": self.resource, "requestKind": gvk,
            "requestResource": self.resource,
            "name": self.name,
            "namespace": self.request_namespace(),
            "operation": self.operation,
            "userInfo": self.user,
            "object": self.object,
            "oldObject": self.old,
            "dryRun": self.dry_run,
            "options": self.options,
        });
        // The audit scanner sends no options.
        if let (true, Some(map)) = (self.options.is_null(), request.as_object_mut()) {
            map.remove("options");
        }
        if let (Some(sub), Some(map)) = (&self.sub_resource, request.as_object_mut()) {
            map.insert("subResource".into(), json!(sub));
            map.insert("requestSubResource".into(), json!(sub));
        }
        request
    }
}

/// `object` with the policy's patch from `answer` applied: what is stored.
pub fn with_patch(mut object: Value, answer: &Value) -> Result<Value, String> {
    let ops: json_patch::Patch = serde_json::from_value(Value::Array(decoded_patch(answer)?))
        .map_err(|e| format!("unreadable patch: {e}"))?;
    json_patch::patch(&mut object, &ops).map_err(|e| format!("patch does not apply: {e}"))?;
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namespace_request(operation: &'static str) -> Value {
        let namespace =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "payments"}});
        let (object, old) = match operation {
            "CREATE" => (namespace, Value::Null),
            "DELETE" => (Value::Null, namespace),
            _ => (namespace.clone(), namespace),
        };
        Sent {
            uid: "u".into(),
            operation,
            resource: resource_of(&json!({"apiVersion": "v1", "kind": "Namespace"})),
            name: "payments".into(),
            namespace: String::new(),
            sub_resource: None,
            user: json!({"username": "alice@example.com"}),
            object,
            old,
            options: options("DeleteOptions", None),
            dry_run: false,
        }
        .admission_request()
    }

    #[test]
    fn a_namespace_s_own_requests_carry_its_name_as_namespace() {
        assert_eq!(namespace_request("DELETE")["namespace"], "payments");
        assert_eq!(namespace_request("UPDATE")["namespace"], "payments");
        assert_eq!(namespace_request("CREATE")["namespace"], "");
    }
}

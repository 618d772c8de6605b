//! The AdmissionRequest a policy receives, in the form policy-server gives it.
//!
//! policy-server deserializes the review's request into policy-evaluator's
//! typed `AdmissionRequest` and serializes it again for the policy
//! (kubewarden/kubewarden-controller 3460bb71,
//! `crates/policy-evaluator/src/admission_request.rs`, and
//! `crates/policy-evaluator/src/runtimes/wapc/runtime.rs`, `Runtime::validate`).
//! So the top-level optional members that are `null` disappear, members the
//! struct does not know are dropped, `userInfo` keeps only the fields of
//! k8s-openapi's `UserInfo`, and `object`, `oldObject` and `options` (raw
//! extensions) pass through untouched, nulls inside them included. A request
//! the struct cannot hold (a missing `uid`, a `kind` without `group`) never
//! reaches the policy: policy-server refuses the HTTP request.

use serde_json::{Map, Value};

/// The request as the policy sees it, or why policy-server would refuse it.
pub fn as_policy_server_sends(request: &Value) -> Result<Value, String> {
    let Value::Object(input) = request else {
        return Err("the AdmissionRequest is not a JSON object".into());
    };
    let mut out = Map::new();
    out.insert("uid".into(), required_string(input, "uid")?);
    out.insert("kind".into(), group_version(input, "kind", "kind")?);
    out.insert(
        "resource".into(),
        group_version(input, "resource", "resource")?,
    );
    for key in ["subResource", "requestSubResource", "name", "namespace"] {
        if let Some(v) = optional(input, key, Value::is_string, "a string")? {
            out.insert(key.into(), v);
        }
    }
    if present(input, "requestKind").is_some() {
        out.insert(
            "requestKind".into(),
            group_version(input, "requestKind", "kind")?,
        );
    }
    if present(input, "requestResource").is_some() {
        out.insert(
            "requestResource".into(),
            group_version(input, "requestResource", "resource")?,
        );
    }
    out.insert("operation".into(), required_string(input, "operation")?);
    out.insert("userInfo".into(), user_info(input.get("userInfo"))?);
    for key in ["object", "oldObject", "options"] {
        if let Some(v) = present(input, key) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(v) = optional(input, "dryRun", Value::is_boolean, "a boolean")? {
        out.insert("dryRun".into(), v);
    }
    Ok(Value::Object(out))
}

/// Why a recorded request's `options` could not have come from
/// kube-apiserver, if it could not. Each handler hands admission the options
/// of the operation it runs, whatever the client sent: a PATCH or an apply
/// becomes `UpdateOptions`, or `CreateOptions` when it creates the object,
/// with the client's `fieldManager` and without PatchOptions' `force`
/// (kubernetes/apiserver 24a394e5, `pkg/endpoints/handlers/patch.go`
/// `patchToUpdateOptions` and `patchToCreateOptions`; `create.go`,
/// `update.go`, `delete.go`, each `admission.NewAttributesRecord` call). A
/// request without `options` is allowed: Kubewarden's audit scanner sends
/// none.
pub fn options_shape_problem(request: &Value) -> Option<String> {
    let operation = request.get("operation").and_then(Value::as_str)?;
    let options = request.get("options").filter(|o| !o.is_null())?;
    let expected = match operation {
        "CREATE" => "CreateOptions",
        "UPDATE" => "UpdateOptions",
        "DELETE" => "DeleteOptions",
        _ => return None,
    };
    let kind = options.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind != expected {
        return Some(format!(
            "a {operation} reaches admission with options of kind {expected}, not {kind:?}"
        ));
    }
    if expected != "DeleteOptions" && options.get("force").is_some() {
        return Some(format!(
            "{expected} has no `force`: it stays in PatchOptions"
        ));
    }
    None
}

/// Why a recorded CREATE's object could not have reached this policy, if it
/// could not. kube-apiserver runs mutating admission in the create handler,
/// before the store fills in `uid` and `creationTimestamp` and the strategy
/// sets `generation`; validating admission runs inside the store's `Create`,
/// after them; `resourceVersion` comes from storage, after both
/// (kubernetes/apiserver 24a394e5, `pkg/endpoints/handlers/create.go`;
/// `pkg/registry/generic/registry/store.go` `Store.create`, which calls
/// `rest.FillObjectMetaSystemFields`, then `rest.BeforeCreate` and so the
/// strategy's `PrepareForCreate`, then the validators). Kubewarden's audit scanner, which sends
/// stored objects as CREATEs without `options`, is not judged by this.
pub fn create_metadata_problem(request: &Value, mutating: bool) -> Option<String> {
    if request.get("operation").and_then(Value::as_str) != Some("CREATE")
        || request.get("options").is_none_or(Value::is_null)
    {
        return None;
    }
    let metadata = request.get("object")?.get("metadata")?;
    let filled_later: &[&str] = if mutating {
        &["resourceVersion", "uid", "creationTimestamp", "generation"]
    } else {
        &["resourceVersion"]
    };
    let present: Vec<&str> = filled_later
        .iter()
        .copied()
        .filter(|k| metadata.get(*k).is_some())
        .collect();
    if present.is_empty() {
        return None;
    }
    let webhook = if mutating { "mutating" } else { "validating" };
    Some(format!(
        "a CREATE reaches a {webhook} webhook before kube-apiserver sets metadata.{}",
        present.join(", metadata.")
    ))
}

/// A member that is there and not `null` (serde reads `null` as `None`).
fn present<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
}

fn optional(
    map: &Map<String, Value>,
    key: &str,
    is: fn(&Value) -> bool,
    what: &str,
) -> Result<Option<Value>, String> {
    match present(map, key) {
        None => Ok(None),
        Some(v) if is(v) => Ok(Some(v.clone())),
        Some(_) => Err(format!("request.{key} is not {what}")),
    }
}

fn required_string(map: &Map<String, Value>, key: &str) -> Result<Value, String> {
    optional(map, key, Value::is_string, "a string")?
        .ok_or_else(|| format!("request.{key} is missing"))
}

/// `GroupVersionKind` or `GroupVersionResource`: three required strings.
fn group_version(map: &Map<String, Value>, key: &str, last: &str) -> Result<Value, String> {
    let Some(Value::Object(inner)) = present(map, key) else {
        return Err(format!("request.{key} is missing or not an object"));
    };
    let mut out = Map::new();
    for field in ["group", "version", last] {
        let value = required_string(inner, field).map_err(|e| format!("{key}: {e}"))?;
        out.insert(field.into(), value);
    }
    Ok(Value::Object(out))
}

/// k8s-openapi's `UserInfo`: `username`, `uid`, `groups`, `extra`, each optional.
fn user_info(value: Option<&Value>) -> Result<Value, String> {
    let Some(Value::Object(input)) = value else {
        return Err("request.userInfo is missing or not an object".into());
    };
    let mut out = Map::new();
    for key in ["username", "uid"] {
        if let Some(v) = optional(input, key, Value::is_string, "a string")? {
            out.insert(key.into(), v);
        }
    }
    if let Some(v) = optional(input, "groups", strings, "a list of strings")? {
        out.insert("groups".into(), v);
    }
    if let Some(v) = optional(input, "extra", string_lists, "a map of string lists")? {
        out.insert("extra".into(), v);
    }
    Ok(Value::Object(out))
}

fn strings(v: &Value) -> bool {
    v.as_array()
        .is_some_and(|items| items.iter().all(Value::is_string))
}

fn string_lists(v: &Value) -> bool {
    v.as_object().is_some_and(|m| m.values().all(strings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request() -> Value {
        json!({
            "uid": "1",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "name": "c",
            "namespace": null,
            "operation": "UPDATE",
            "userInfo": {"username": "alice", "uid": null, "groups": ["g"], "unknown": 1},
            "object": {"data": {"a": null}},
            "oldObject": null,
            "options": {"kind": "UpdateOptions", "fieldManager": null},
            "dryRun": false,
            "somethingElse": true
        })
    }

    #[test]
    fn top_level_nulls_and_unknown_members_go_nested_nulls_stay() {
        assert_eq!(
            as_policy_server_sends(&request()).unwrap(),
            json!({
                "uid": "1",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "name": "c",
                "operation": "UPDATE",
                "userInfo": {"username": "alice", "groups": ["g"]},
                "object": {"data": {"a": null}},
                "options": {"kind": "UpdateOptions", "fieldManager": null},
                "dryRun": false
            })
        );
    }

    #[test]
    fn requests_the_typed_struct_cannot_hold_are_refused() {
        let mut r = request();
        r["kind"] = json!({"version": "v1", "kind": "ConfigMap"});
        assert!(as_policy_server_sends(&r).unwrap_err().contains("group"));
        let mut r = request();
        r.as_object_mut().unwrap().remove("uid");
        assert!(as_policy_server_sends(&r).is_err());
        let mut r = request();
        r["name"] = json!(3);
        assert!(as_policy_server_sends(&r).is_err());
    }

    #[test]
    fn options_must_be_those_of_the_operation() {
        let mut r = request();
        assert_eq!(options_shape_problem(&r), None);
        r["options"] = json!({"kind": "PatchOptions", "fieldManager": "kubectl-patch"});
        assert!(options_shape_problem(&r).is_some_and(|p| p.contains("UpdateOptions")));
        r["options"] = json!({"kind": "UpdateOptions", "fieldManager": "flux", "force": true});
        assert!(options_shape_problem(&r).is_some_and(|p| p.contains("force")));
        r["operation"] = json!("DELETE");
        r["options"] = json!({"kind": "DeleteOptions", "propagationPolicy": "Background"});
        assert_eq!(options_shape_problem(&r), None);
        r["options"] = Value::Null;
        assert_eq!(options_shape_problem(&r), None);
    }

    #[test]
    fn a_create_carries_only_what_the_store_has_set_by_then() {
        let mut r = request();
        r["operation"] = json!("CREATE");
        r["options"] = json!({"kind": "CreateOptions"});
        r["object"] = json!({"metadata": {"name": "c", "uid": "u", "creationTimestamp": "t", "generation": 1}});
        assert_eq!(create_metadata_problem(&r, false), None);
        assert!(create_metadata_problem(&r, true).is_some_and(|p| p.contains("metadata.uid")));
        r["object"]["metadata"]["resourceVersion"] = json!("7");
        assert!(create_metadata_problem(&r, false).is_some_and(|p| p.contains("resourceVersion")));
        r["options"] = Value::Null;
        assert_eq!(create_metadata_problem(&r, true), None);
    }
}

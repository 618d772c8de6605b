//! How policy-server turns a policy's waPC reply into an AdmissionResponse.

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyMode {
    #[default]
    Protect,
    Monitor,
}

/// The per-policy settings of policy-server's `policies.yml` that shape a reply.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub policy_id: String,
    pub mode: PolicyMode,
    pub allowed_to_mutate: bool,
}

/// The policy's reply, as the SDK's `ValidationResponse`.
#[derive(Deserialize)]
struct Reply {
    accepted: bool,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    code: Option<u16>,
    #[serde(default)]
    mutated_object: Option<Value>,
    #[serde(default)]
    audit_annotations: Option<Map<String, Value>>,
    #[serde(default)]
    warnings: Option<Vec<String>>,
}

/// Removes every `null` member, recursively, as policy-evaluator does before
/// handing a request to a policy (the SDK refuses nulls in string and map fields).
pub fn strip_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

/// A rejection policy-server makes itself (code 500), e.g. for a guest error.
pub fn server_error(request: &Value, message: String) -> Value {
    json!({
        "uid": request.get("uid").cloned().unwrap_or(Value::Null),
        "allowed": false,
        "status": {"message": message, "code": 500},
    })
}

/// Builds the AdmissionResponse policy-server would send for `reply`, the
/// bytes a policy's `validate` returned for `request` (an AdmissionRequest).
pub fn admission_response(request: &Value, reply: &[u8], options: &ServerOptions) -> Value {
    let reply: Reply = match serde_json::from_slice(reply) {
        Ok(r) => r,
        Err(e) => return server_error(request, format!("internal server error: {e}")),
    };
    let uid = request.get("uid").cloned().unwrap_or(Value::Null);
    let mut response = Map::new();
    response.insert("uid".into(), uid);
    response.insert("allowed".into(), Value::Bool(reply.accepted));

    if let Some(mutated) = &reply.mutated_object {
        let original = request.get("object").filter(|o| !o.is_null());
        let Some(original) = original else {
            return server_error(
                request,
                format!(
                    "Request rejected by policy {}: a mutation of a DELETE request cannot be applied",
                    options.policy_id
                ),
            );
        };
        let patch = json_patch::diff(original, mutated);
        if !patch.0.is_empty() {
            if !options.allowed_to_mutate {
                return server_error(
                    request,
                    format!(
                        "Request rejected by policy {}. The policy attempted to mutate the request, \
                         but it is currently configured to not allow mutations.",
                        options.policy_id
                    ),
                );
            }
            let bytes = serde_json::to_vec(&patch).unwrap_or_default();
            response.insert("patchType".into(), json!("JSONPatch"));
            response.insert(
                "patch".into(),
                json!(base64::engine::general_purpose::STANDARD.encode(bytes)),
            );
        }
    }
    if reply.message.is_some() || reply.code.is_some() {
        let mut status = Map::new();
        if let Some(m) = reply.message {
            status.insert("message".into(), json!(m));
        }
        if let Some(c) = reply.code {
            status.insert("code".into(), json!(c));
        }
        response.insert("status".into(), Value::Object(status));
    }
    if let Some(a) = reply.audit_annotations.filter(|a| !a.is_empty()) {
        response.insert("auditAnnotations".into(), Value::Object(a));
    }
    if let Some(w) = reply.warnings.filter(|w| !w.is_empty()) {
        response.insert("warnings".into(), json!(w));
    }
    if options.mode == PolicyMode::Monitor {
        // Monitor mode: always allow; patch and status are dropped, warnings
        // and audit annotations kept (policy-server logs the would-be verdict).
        response.insert("allowed".into(), Value::Bool(true));
        response.remove("patch");
        response.remove("patchType");
        response.remove("status");
    }
    Value::Object(response)
}

/// The JSONPatch of a response, decoded (empty when there is none).
pub fn decoded_patch(response: &Value) -> Result<Vec<Value>, String> {
    let Some(encoded) = response.get("patch").and_then(Value::as_str) else {
        return Ok(Vec::new());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| format!("patch is not base64: {e}"))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("patch is not a JSON list: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(mode: PolicyMode, allowed_to_mutate: bool) -> ServerOptions {
        ServerOptions {
            policy_id: "p".into(),
            mode,
            allowed_to_mutate,
        }
    }

    #[test]
    fn mutation_becomes_a_base64_json_patch() {
        let req = json!({"uid": "1", "object": {"spec": {"a": 1}}});
        let reply = br#"{"accepted":true,"mutated_object":{"spec":{"a":1,"b":2}}}"#;
        let r = admission_response(&req, reply, &opts(PolicyMode::Protect, true));
        assert_eq!(r["patchType"], "JSONPatch");
        assert_eq!(
            decoded_patch(&r).unwrap(),
            vec![json!({"op": "add", "path": "/spec/b", "value": 2})]
        );
    }

    #[test]
    fn unchanged_mutation_sends_no_patch() {
        let req = json!({"uid": "1", "object": {"spec": {"a": 1}}});
        let reply = br#"{"accepted":true,"mutated_object":{"spec":{"a":1}}}"#;
        let r = admission_response(&req, reply, &opts(PolicyMode::Protect, false));
        assert_eq!(r, json!({"uid": "1", "allowed": true}));
    }

    #[test]
    fn refused_mutations() {
        let req = json!({"uid": "1", "object": {"spec": {}}});
        let reply = br#"{"accepted":true,"mutated_object":{"spec":{"b":2}}}"#;
        let r = admission_response(&req, reply, &opts(PolicyMode::Protect, false));
        assert_eq!(r["allowed"], false);
        assert_eq!(r["status"]["code"], 500);
        let delete = json!({"uid": "1", "operation": "DELETE", "object": null});
        let r = admission_response(&delete, reply, &opts(PolicyMode::Protect, true));
        assert_eq!(r["allowed"], false);
    }

    #[test]
    fn monitor_mode_allows_and_keeps_warnings() {
        let req = json!({"uid": "1", "object": {}});
        let reply = br#"{"accepted":false,"message":"no","code":400,"warnings":["w"]}"#;
        let r = admission_response(&req, reply, &opts(PolicyMode::Monitor, true));
        assert_eq!(r, json!({"uid": "1", "allowed": true, "warnings": ["w"]}));
    }

    #[test]
    fn unparsable_reply_is_an_internal_error() {
        let r = admission_response(
            &json!({"uid": "1"}),
            b"nope",
            &opts(PolicyMode::Protect, true),
        );
        assert_eq!(r["status"]["code"], 500);
        assert!(r["status"]["message"]
            .as_str()
            .unwrap()
            .starts_with("internal server error: "));
    }

    #[test]
    fn nulls_are_stripped_recursively() {
        assert_eq!(
            strip_nulls(json!({"a": null, "b": {"c": null, "d": [1, {"e": null}]}})),
            json!({"b": {"d": [1, {}]}})
        );
    }
}

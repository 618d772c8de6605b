//! How policy-server turns a policy's waPC reply into an AdmissionResponse.
//!
//! Each step is policy-server's, at kubewarden/kubewarden-controller 3460bb71
//! (v1.36.0-beta.1); the table in `conformance/README.md` lists them with
//! their sources. In short:
//!
//! 1. The reply is read as the SDK's `ValidationResponse`; a reply that does
//!    not parse is `internal server error: invalid response from policy: …`
//!    (`runtimes/wapc/runtime.rs`, `Runtime::validate`; `runtimes/wapc/errors.rs`).
//! 2. `AdmissionResponse::from_policy_validation_response`
//!    (`admission_response.rs`): a mutated object for a request without an
//!    object (a DELETE) is refused with its own message and no code; otherwise
//!    the mutation becomes a base64 JSONPatch against the object policy-server
//!    sent, and `status` is set when the policy gave a message or a code.
//! 3. A guest error or a trap is `internal server error: Guest call failure: …`,
//!    a timeout `Policy execution interrupted because it exceeded the allowed
//!    execution time`, both code 500 (`Runtime::validate`; wapc 2.1.0
//!    `WapcHost::call`).
//! 4. `AdmissionResponseHandler::process_response`
//!    (`admission_response_handler.rs`) then applies monitor mode first
//!    (allowed, no patch, no status, whatever happened above), and in protect
//!    mode refuses a patch from a policy not allowed to mutate, without a code
//!    and keeping warnings and audit annotations; last, a `policies.yml`
//!    entry's custom rejection `message` replaces a refusal's message, the
//!    policy's own kept in `status.details.causes`
//!    (`apply_custom_rejection_message`; the entry's `message` is read in
//!    `crates/policy-server/src/config.rs`, `PolicyOrPolicyGroup::Policy`,
//!    and handed over in `api/service.rs`, `evaluate`).

use std::collections::BTreeMap;

use base64::Engine as _;
use guard_core::ValidationResponse;
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
    /// The id in `policies.yml`; a ClusterAdmissionPolicy `p` is `clusterwide-p`.
    pub policy_id: String,
    pub mode: PolicyMode,
    pub allowed_to_mutate: bool,
    /// The entry's custom rejection `message`, which replaces the policy's
    /// own in every refusal.
    pub rejection_message: Option<String>,
}

/// Why a `validate` call produced no reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFailure {
    /// The guest reported an error through `__guest_error`.
    GuestError(String),
    /// The module trapped; the text is wasmtime's error.
    Trap(String),
    /// The epoch deadline interrupted the call.
    Timeout,
}

/// policy-server's answer when the epoch deadline cuts a call short
/// (`runtimes/wapc/runtime.rs`, `Runtime::validate`).
pub const TIMEOUT_MESSAGE: &str =
    "Policy execution interrupted because it exceeded the allowed execution time";

/// policy-evaluator's `AdmissionResponse`, before the handler's constraints.
struct Response {
    uid: Value,
    allowed: bool,
    patch: Option<String>,
    message: Option<String>,
    code: Option<u16>,
    audit_annotations: Option<BTreeMap<String, String>>,
    warnings: Option<Vec<String>>,
    /// `status.details.causes[].message`: what the policy said, under a
    /// custom rejection message.
    causes: Vec<String>,
}

impl Response {
    /// `AdmissionResponse::reject` (and `reject_internal_server_error`).
    fn reject(request: &Value, message: String, code: u16) -> Self {
        Self {
            uid: uid(request),
            allowed: false,
            patch: None,
            message: Some(message),
            code: Some(code),
            audit_annotations: None,
            warnings: None,
            causes: Vec::new(),
        }
    }

    /// `AdmissionResponseHandler::process_response`: monitor mode, then the
    /// mutation constraint, then the custom rejection message.
    fn process(mut self, options: &ServerOptions) -> Value {
        match options.mode {
            PolicyMode::Monitor => {
                self.allowed = true;
                self.patch = None;
                self.message = None;
                self.code = None;
            }
            PolicyMode::Protect if !options.allowed_to_mutate && self.patch.is_some() => {
                self.allowed = false;
                self.patch = None;
                self.message = Some(format!(
                    "Request rejected by policy {}. The policy attempted to mutate the request, \
                     but it is currently configured to not allow mutations.",
                    options.policy_id
                ));
                self.code = None;
            }
            PolicyMode::Protect => {}
        }
        // `apply_custom_rejection_message`: a refusal's message becomes the
        // entry's, the policy's own moves to the causes (as an empty text
        // when it had none); the code stays.
        if let (false, Some(custom)) = (self.allowed, &options.rejection_message) {
            let original = self.message.replace(custom.clone()).unwrap_or_default();
            self.causes.push(original);
        }
        self.into_json()
    }

    /// Serialized as policy-evaluator's struct is: `patchType`, `patch` and
    /// `status` only when set, `auditAnnotations` and `warnings` always
    /// (`null` when the policy sent none).
    fn into_json(self) -> Value {
        let mut out = Map::new();
        out.insert("uid".into(), self.uid);
        out.insert("allowed".into(), Value::Bool(self.allowed));
        if let Some(patch) = self.patch {
            out.insert("patchType".into(), json!("JSONPatch"));
            out.insert("patch".into(), Value::String(patch));
        }
        if self.message.is_some() || self.code.is_some() {
            let mut status = Map::new();
            if let Some(m) = self.message {
                status.insert("message".into(), Value::String(m));
            }
            if let Some(c) = self.code {
                status.insert("code".into(), json!(c));
            }
            // `StatusCause` serializes its empty members as `null`.
            if !self.causes.is_empty() {
                let causes: Vec<Value> = self
                    .causes
                    .into_iter()
                    .map(|m| json!({"reason": null, "message": m, "field": null}))
                    .collect();
                status.insert("details".into(), json!({ "causes": causes }));
            }
            out.insert("status".into(), Value::Object(status));
        }
        out.insert("auditAnnotations".into(), json!(self.audit_annotations));
        out.insert("warnings".into(), json!(self.warnings));
        Value::Object(out)
    }
}

fn uid(request: &Value) -> Value {
    request.get("uid").cloned().unwrap_or(Value::Null)
}

/// Builds the AdmissionResponse policy-server would send for `reply`, the
/// bytes a policy's `validate` returned for `request`, the AdmissionRequest
/// as policy-server sent it (see [`crate::request::as_policy_server_sends`]).
pub fn admission_response(request: &Value, reply: &[u8], options: &ServerOptions) -> Value {
    // The SDK's `ValidationResponse` (0.17), as policy-server reads it.
    let reply: ValidationResponse = match serde_json::from_slice(reply) {
        Ok(r) => r,
        Err(e) => {
            return Response::reject(
                request,
                format!("internal server error: invalid response from policy: {e}"),
                500,
            )
            .process(options)
        }
    };
    let object = request.get("object").filter(|o| !o.is_null());
    let patch = match (&reply.mutated_object, object) {
        (Some(_), None) => {
            return Response {
                uid: uid(request),
                allowed: false,
                patch: None,
                message: Some(
                    "Incoming object is null, which happens only with DELETE operations, \
                     but the policy is attempting a mutation. This is not allowed"
                        .into(),
                ),
                code: None,
                audit_annotations: None,
                warnings: None,
                causes: Vec::new(),
            }
            .process(options)
        }
        (Some(mutated), Some(original)) => {
            let diff = json_patch::diff(original, mutated);
            match serde_json::to_vec(&diff) {
                Ok(_) if diff.0.is_empty() => None,
                Ok(bytes) => Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
                Err(e) => {
                    return Response::reject(request, format!("internal server error: {e}"), 500)
                        .process(options)
                }
            }
        }
        (None, _) => None,
    };
    Response {
        uid: uid(request),
        allowed: reply.accepted,
        patch,
        message: reply.message,
        code: reply.code,
        audit_annotations: reply.audit_annotations,
        warnings: reply.warnings,
        causes: Vec::new(),
    }
    .process(options)
}

/// The AdmissionResponse policy-server sends when a `validate` call failed.
pub fn failure_response(request: &Value, failure: &CallFailure, options: &ServerOptions) -> Value {
    let response = match failure {
        CallFailure::GuestError(m) | CallFailure::Trap(m) => Response::reject(
            request,
            format!("internal server error: Guest call failure: {m}"),
            500,
        ),
        CallFailure::Timeout => Response::reject(request, TIMEOUT_MESSAGE.into(), 500),
    };
    response.process(options)
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
            policy_id: "clusterwide-p".into(),
            mode,
            allowed_to_mutate,
            rejection_message: None,
        }
    }

    /// kubewarden-controller 3460bb71, `admission_response_handler.rs`,
    /// `apply_custom_rejection_message`, applied after the other two steps.
    #[test]
    fn a_custom_rejection_message_replaces_a_refusals_and_keeps_it_as_a_cause() {
        let custom = ServerOptions {
            rejection_message: Some("ask the platform team".into()),
            ..opts(PROTECT, false)
        };
        let req = json!({"uid": "1", "object": {"spec": {}}});
        let reply = br#"{"accepted":false,"message":"no","code":403,"warnings":["w"]}"#;
        assert_eq!(
            admission_response(&req, reply, &custom),
            json!({
                "uid": "1", "allowed": false,
                "status": {"message": "ask the platform team", "code": 403,
                    "details": {"causes": [{"reason": null, "message": "no", "field": null}]}},
                "auditAnnotations": null, "warnings": ["w"]
            })
        );
        // A refusal without a message, the mutation refusal, a failure: all replaced.
        let r = admission_response(&req, br#"{"accepted":false}"#, &custom);
        assert_eq!(r["status"]["message"], "ask the platform team");
        assert_eq!(r["status"]["details"]["causes"][0]["message"], "");
        let mutating = br#"{"accepted":true,"mutated_object":{"spec":{"b":2}}}"#;
        let r = admission_response(&req, mutating, &custom);
        assert_eq!(r["status"]["message"], "ask the platform team");
        assert!(r["status"]["details"]["causes"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("Request rejected by policy clusterwide-p."));
        let r = failure_response(&req, &CallFailure::Timeout, &custom);
        assert_eq!(
            (
                r["status"]["message"].as_str(),
                r["status"]["code"].as_u64()
            ),
            (Some("ask the platform team"), Some(500))
        );
        // Allowed replies and monitor mode are left alone.
        let r = admission_response(&req, br#"{"accepted":true,"message":"fine"}"#, &custom);
        assert_eq!(r["status"], json!({"message": "fine"}));
        let monitor = ServerOptions {
            mode: MONITOR,
            ..custom
        };
        let r = admission_response(&req, reply, &monitor);
        assert!(r.get("status").is_none(), "{r}");
    }

    const PROTECT: PolicyMode = PolicyMode::Protect;
    const MONITOR: PolicyMode = PolicyMode::Monitor;

    #[test]
    fn mutation_becomes_a_base64_json_patch() {
        let req = json!({"uid": "1", "object": {"spec": {"a": 1}}});
        let reply = br#"{"accepted":true,"mutated_object":{"spec":{"a":1,"b":2}}}"#;
        let r = admission_response(&req, reply, &opts(PROTECT, true));
        assert_eq!(r["patchType"], "JSONPatch");
        assert_eq!(
            decoded_patch(&r).unwrap(),
            vec![json!({"op": "add", "path": "/spec/b", "value": 2})]
        );
    }

    #[test]
    fn reply_shape_keeps_null_warnings_and_audit_annotations() {
        let req = json!({"uid": "1", "object": {"spec": {"a": 1}}});
        let reply = br#"{"accepted":true,"mutated_object":{"spec":{"a":1}}}"#;
        let r = admission_response(&req, reply, &opts(PROTECT, false));
        assert_eq!(
            r,
            json!({"uid": "1", "allowed": true, "auditAnnotations": null, "warnings": null})
        );
        let reply = br#"{"accepted":true,"warnings":[],"audit_annotations":{}}"#;
        let r = admission_response(&req, reply, &opts(PROTECT, false));
        assert_eq!(
            r,
            json!({"uid": "1", "allowed": true, "auditAnnotations": {}, "warnings": []})
        );
    }

    #[test]
    fn a_mutation_without_the_right_is_refused_without_code_keeping_warnings() {
        let req = json!({"uid": "1", "object": {"spec": {}}});
        let reply = br#"{"accepted":true,"mutated_object":{"spec":{"b":2}},"warnings":["w"],"audit_annotations":{"k":"v"}}"#;
        let r = admission_response(&req, reply, &opts(PROTECT, false));
        assert_eq!(
            r,
            json!({
                "uid": "1", "allowed": false,
                "status": {"message": "Request rejected by policy clusterwide-p. The policy attempted to mutate the request, but it is currently configured to not allow mutations."},
                "auditAnnotations": {"k": "v"}, "warnings": ["w"]
            })
        );
    }

    #[test]
    fn a_mutated_delete_is_refused_even_when_allowed_to_mutate() {
        let reply = br#"{"accepted":true,"mutated_object":{},"warnings":["w"]}"#;
        for delete in [
            json!({"uid": "1", "operation": "DELETE"}),
            json!({"uid": "1", "operation": "DELETE", "object": null}),
        ] {
            let r = admission_response(&delete, reply, &opts(PROTECT, true));
            assert_eq!(
                r,
                json!({
                    "uid": "1", "allowed": false,
                    "status": {"message": "Incoming object is null, which happens only with DELETE operations, but the policy is attempting a mutation. This is not allowed"},
                    "auditAnnotations": null, "warnings": null
                })
            );
        }
    }

    #[test]
    fn monitor_mode_comes_first_and_covers_every_failure() {
        let req = json!({"uid": "1", "object": {}});
        let reply = br#"{"accepted":false,"message":"no","code":400,"warnings":["w"]}"#;
        let r = admission_response(&req, reply, &opts(MONITOR, true));
        assert_eq!(
            r,
            json!({"uid": "1", "allowed": true, "auditAnnotations": null, "warnings": ["w"]})
        );
        let mutating = br#"{"accepted":true,"mutated_object":{"a":1}}"#;
        let r = admission_response(&req, mutating, &opts(MONITOR, false));
        assert_eq!(r["allowed"], true);
        assert!(r.get("patch").is_none() && r.get("status").is_none());
        for failure in [
            CallFailure::Timeout,
            CallFailure::GuestError("boom".into()),
            CallFailure::Trap("wasm trap".into()),
        ] {
            let r = failure_response(&req, &failure, &opts(MONITOR, true));
            assert_eq!(
                r,
                json!({"uid": "1", "allowed": true, "auditAnnotations": null, "warnings": null})
            );
        }
        let r = admission_response(&req, b"nope", &opts(MONITOR, true));
        assert_eq!(r["allowed"], true);
    }

    #[test]
    fn failures_carry_policy_servers_prefixes() {
        let req = json!({"uid": "1", "object": {}});
        let r = failure_response(
            &req,
            &CallFailure::GuestError("boom".into()),
            &opts(PROTECT, true),
        );
        assert_eq!(
            r["status"]["message"],
            "internal server error: Guest call failure: boom"
        );
        assert_eq!(r["status"]["code"], 500);
        let r = failure_response(&req, &CallFailure::Timeout, &opts(PROTECT, true));
        assert_eq!(r["status"]["message"], TIMEOUT_MESSAGE);
        assert_eq!(r["status"]["code"], 500);
        let r = admission_response(&req, b"nope", &opts(PROTECT, true));
        assert_eq!(
            r["status"]["message"],
            "internal server error: invalid response from policy: expected ident at line 1 column 2"
        );
        let r = admission_response(
            &req,
            br#"{"accepted":true,"audit_annotations":{"k":1}}"#,
            &opts(PROTECT, true),
        );
        assert!(r["status"]["message"].as_str().unwrap().starts_with(
            "internal server error: invalid response from policy: invalid type: integer"
        ));
    }
}

//! One policy module under test: load, check, evaluate, with policy-server's
//! semantics from module to AdmissionResponse.

use std::path::Path;

use anyhow::{bail, Context as _, Result};
use conformance::response::{admission_response, failure_response, CallFailure, ServerOptions};
use conformance::Reply;
use guard_core::Timestamp;
use serde_json::Value;

use crate::capabilities::{Exchange, Grants, Host, Source};
use crate::host::{CallError, Limits, PolicyModule};
use crate::metadata::{self, Metadata};

pub struct Policy {
    pub name: String,
    module: PolicyModule,
    pub metadata: Option<Metadata>,
}

/// Everything one evaluation depends on besides the request and settings.
pub struct Evaluation {
    pub now: Timestamp,
    pub limits: Limits,
    pub source: Source,
    pub grants: Grants,
    pub server: ServerOptions,
}

/// What one evaluation left besides its answer.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Lines the guest logged.
    pub logs: Vec<String>,
    /// The Kubernetes calls it made, answered, as a kwctl session.
    pub session: Vec<Exchange>,
}

/// policy-server answered the webhook call itself, with an HTTP error
/// instead of an AdmissionResponse: the API server then applies the webhook's
/// `failurePolicy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpFailure {
    pub status: u16,
    pub reason: String,
}

impl std::fmt::Display for HttpFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "policy-server answers HTTP {} instead of an AdmissionResponse ({}); \
             the webhook's failurePolicy decides",
            self.status, self.reason
        )
    }
}

/// What policy-server says of a module whose instantiation or `_start` /
/// `wapc_init` failed (`init`: wasmtime-provider's error), each layer's
/// prefix in turn: policy-server's `EvaluationError::WebAssemblyError` and
/// `EvaluationEnvironment::rehydrate` (3460bb71,
/// `crates/policy-evaluator/src/admission_response_handler/errors.rs`,
/// `crates/policy-server/src/evaluation/evaluation_environment.rs`),
/// policy-evaluator's `PolicyEvaluatorPreError::RehydrateWapc` and
/// `WapcRuntimeError::WapcHostBuilder` (`src/errors.rs`,
/// `src/runtimes/wapc/errors.rs`), wapc 2.1.0's `Error::InitFailed`
/// (`WapcHost::initialize`).
pub fn rehydrate_failure(init: &str) -> String {
    format!(
        "WebAssembly failure: cannot rehydrate PolicyEvaluatorPre: unable to rehydrate wapc \
         module: cannot build Wapc host: Initialization failed: {init}"
    )
}

impl Policy {
    /// Loads a module file; the policy is named after the file stem.
    pub fn load(path: &Path) -> Result<Self> {
        let wasm = std::fs::read(path)
            .with_context(|| format!("cannot read policy module {}", path.display()))?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("policy")
            .to_string();
        Self::from_bytes(name, &wasm).with_context(|| format!("policy module {}", path.display()))
    }

    /// What `kwctl annotate` asks an unannotated module: its waPC
    /// `protocol_version` answer.
    pub fn protocol_version_of(wasm: &[u8]) -> Result<String> {
        let policy = Self {
            name: "policy".into(),
            module: PolicyModule::new(wasm)?,
            metadata: None,
        };
        policy.protocol_version()
    }

    pub fn from_bytes(name: String, wasm: &[u8]) -> Result<Self> {
        let module = PolicyModule::new(wasm)?;
        let metadata = metadata::read(wasm)?;
        // policy-server reads the protocol version from the annotation, not
        // from the module, and refuses to start without it
        // (`crates/policy-server/src/evaluation/precompiled_policy.rs`,
        // `has_valid_protocol_version`).
        match metadata
            .as_ref()
            .and_then(|m| m.protocol_version.as_deref())
        {
            Some("v1") => {}
            Some(other) => {
                bail!("Policy uses protocol version {other:?} but only V1 is supported")
            }
            None => bail!(
                "Policy is missing protocol version, which is required for KubewardenWapc \
                 execution mode (annotate the module first)"
            ),
        }
        Ok(Self {
            name,
            module,
            metadata,
        })
    }

    pub fn module(&self) -> &PolicyModule {
        &self.module
    }

    fn call_once(
        &self,
        now: Timestamp,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, CallError> {
        let host = Host::new(
            Grants::all_capabilities(Vec::new()),
            Source::Recorded(Vec::new().into()),
        );
        let mut instance = self
            .module
            .instantiate(now, &Limits::default(), Box::new(host))?;
        instance.call(operation, payload)
    }

    /// The waPC `protocol_version` answer (`"v1"` for current policies).
    pub fn protocol_version(&self) -> Result<String> {
        let reply = self
            .call_once(Timestamp::UNIX_EPOCH, "protocol_version", b"")
            .map_err(|e| anyhow::anyhow!("protocol_version failed: {e}"))?;
        serde_json::from_slice(&reply)
            .context("protocol_version answered something other than a JSON string")
    }

    /// `validate_settings` as policy-server calls it at boot, at `now` (its
    /// wall clock then): `Ok` when valid, `Err` with the policy's message
    /// otherwise. A module that cannot be initialised fails here with
    /// policy-server's text, and policy-server does not start (3460bb71,
    /// `crates/policy-server/src/evaluation/evaluation_environment.rs`,
    /// `bootstrap_policy` then `validate_settings`, which rehydrates the
    /// module; without `--continue-on-errors`, the PolicyServer default, the
    /// error ends `PolicyServer::new_from_config`).
    pub fn validate_settings(&self, settings: &Value, now: Timestamp) -> Result<()> {
        let payload = serde_json::to_vec(settings)?;
        let reply = self
            .call_once(now, "validate_settings", &payload)
            .map_err(|e| match e {
                CallError::InitFailed(m) => {
                    anyhow::anyhow!("policy-server does not start: {}", rehydrate_failure(&m))
                }
                e => anyhow::anyhow!("validate_settings failed: {e}"),
            })?;
        let answer: Value = serde_json::from_slice(&reply)
            .context("validate_settings answered something other than JSON")?;
        match answer.get("valid").and_then(Value::as_bool) {
            Some(true) => Ok(()),
            Some(false) => bail!(
                "{}",
                answer
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("invalid settings")
            ),
            None => bail!("validate_settings answered without `valid`: {answer}"),
        }
    }

    /// The `contextAwareResources` the module's metadata grants.
    pub fn context_aware_resources(&self) -> Vec<crate::capabilities::ContextAwareResource> {
        self.metadata
            .as_ref()
            .map(Metadata::context_aware_resources)
            .unwrap_or_default()
    }

    /// One `validate` call on a fresh instance, answered as policy-server
    /// would: the reply in [`Reply::to_json`]'s form (an AdmissionResponse,
    /// or `{"noAnswer": why}`), or an HTTP error. `request` is the
    /// AdmissionRequest as the review carries it.
    pub fn evaluate(
        &self,
        request: &Value,
        settings: &Value,
        eval: &Evaluation,
    ) -> (Result<Value, HttpFailure>, Vec<String>) {
        let (reply, trace) = self.evaluate_traced(request, settings, eval);
        (reply.map(|r| r.to_json()), trace.logs)
    }

    /// [`Policy::evaluate`] as a typed [`Reply`], with what the guest logged
    /// and asked the host.
    pub fn evaluate_traced(
        &self,
        request: &Value,
        settings: &Value,
        eval: &Evaluation,
    ) -> (Result<Reply, HttpFailure>, Trace) {
        let request = match conformance::as_policy_server_sends(request) {
            Ok(r) => r,
            Err(reason) => {
                let failure = HttpFailure {
                    status: 422,
                    reason: format!("the AdmissionReview does not deserialize: {reason}"),
                };
                return (Err(failure), Trace::default());
            }
        };
        let payload = conformance::validate_payload(&request, settings);
        let host = Host::new(eval.grants.clone(), eval.source.clone());
        let mut trace = Trace::default();
        let reply = self
            .module
            .instantiate(eval.now, &eval.limits, Box::new(host))
            .and_then(|mut instance| {
                let reply = instance.call("validate", &payload);
                trace = Trace {
                    logs: instance.logs(),
                    session: instance.session(),
                };
                reply
            });
        let failure = match reply {
            Ok(bytes) => {
                let response = admission_response(&request, &bytes, &eval.server);
                return (Ok(Reply::Response(response)), trace);
            }
            Err(CallError::NoAnswer(none)) => return (Ok(Reply::NoAnswer(none)), trace),
            Err(CallError::Guest(m)) => CallFailure::GuestError(m),
            Err(CallError::Timeout) => CallFailure::Timeout,
            Err(e @ (CallError::Trap(_) | CallError::MemoryExhausted(_))) => {
                CallFailure::Trap(e.to_string())
            }
            // An init timeout is answered before the policy's mode is looked
            // at (`crates/policy-server/src/api/service.rs`, `evaluate`)...
            Err(CallError::InitTimeout) => {
                let protect = ServerOptions {
                    mode: conformance::response::PolicyMode::Protect,
                    ..eval.server.clone()
                };
                let response = failure_response(&request, &CallFailure::Timeout, &protect);
                return (Ok(Reply::Response(response)), trace);
            }
            // ...and any other failure to instantiate is an HTTP 500 with
            // the body `{"message":"Something went wrong","status":500}`,
            // the error only logged (`crates/policy-server/src/api/handlers.rs`,
            // `handle_evaluation_error`; `api/api_error.rs`). Monitor mode
            // is never reached.
            Err(CallError::InitFailed(m)) => {
                let failure = HttpFailure {
                    status: 500,
                    reason: format!(
                        "Something went wrong; its log: Evaluation error: {}",
                        rehydrate_failure(&m)
                    ),
                };
                return (Err(failure), trace);
            }
        };
        let response = failure_response(&request, &failure, &eval.server);
        (Ok(Reply::Response(response)), trace)
    }
}

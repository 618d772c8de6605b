//! One policy module under test: load, check, evaluate, with policy-server's
//! semantics from module to AdmissionResponse.

use std::path::Path;

use anyhow::{bail, Context as _, Result};
use conformance::response::{admission_response, server_error, ServerOptions};
use guard_core::Timestamp;
use serde_json::Value;

use crate::capabilities::{Host, Source};
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
    pub server: ServerOptions,
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

    pub fn from_bytes(name: String, wasm: &[u8]) -> Result<Self> {
        let module = PolicyModule::new(wasm)?;
        let metadata = metadata::read(wasm)?;
        let policy = Self {
            name,
            module,
            metadata,
        };
        let version = policy.protocol_version()?;
        if version != "v1" {
            bail!("the module answers protocol_version {version:?}; only \"v1\" is supported");
        }
        Ok(policy)
    }

    pub fn module(&self) -> &PolicyModule {
        &self.module
    }

    fn call_once(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, CallError> {
        let host = Host::new(Vec::new(), Source::Recorded(Vec::new()));
        let mut instance =
            self.module
                .instantiate(Timestamp::UNIX_EPOCH, &Limits::default(), Box::new(host))?;
        instance.call(operation, payload)
    }

    /// The waPC `protocol_version` answer (`"v1"` for current policies).
    pub fn protocol_version(&self) -> Result<String> {
        let reply = self
            .call_once("protocol_version", b"")
            .map_err(|e| anyhow::anyhow!("protocol_version failed: {e}"))?;
        serde_json::from_slice(&reply)
            .context("protocol_version answered something other than a JSON string")
    }

    /// `validate_settings`: `Ok` when valid, `Err` with the policy's message otherwise.
    pub fn validate_settings(&self, settings: &Value) -> Result<()> {
        let payload = serde_json::to_vec(settings)?;
        let reply = self
            .call_once("validate_settings", &payload)
            .map_err(|e| anyhow::anyhow!("validate_settings failed: {e}"))?;
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

    /// One `validate` call on a fresh instance, answered as policy-server would.
    /// `request` is the AdmissionRequest (not the review).
    pub fn evaluate(
        &self,
        request: &Value,
        settings: &Value,
        eval: &Evaluation,
    ) -> (Value, Vec<String>) {
        let payload = conformance::validate_payload(request, settings);
        let host = Host::new(self.context_aware_resources(), eval.source.clone());
        let mut logs = Vec::new();
        let reply = self
            .module
            .instantiate(eval.now, &eval.limits, Box::new(host))
            .and_then(|mut instance| {
                let reply = instance.call("validate", &payload);
                logs = instance.logs();
                reply
            });
        let response = match reply {
            Ok(bytes) => admission_response(request, &bytes, &eval.server),
            Err(CallError::Guest(m)) => {
                server_error(request, format!("internal server error: {m}"))
            }
            Err(e) => server_error(request, e.to_string()),
        };
        (response, logs)
    }
}

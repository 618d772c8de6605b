//! The host side of waPC host calls: what a policy may ask policy-server for.
//!
//! Logging is always accepted. Kubernetes lookups are answered from recorded
//! cluster objects, or from a kwctl session recording, and only for the
//! `(apiVersion, kind)` pairs the module's metadata lists in
//! `contextAwareResources`, as policy-server enforces. Everything else is
//! refused with a clear error.

use conformance::cluster::Recorded;
use conformance::RecordedCluster;
use guard_core::context::{Cluster as _, ObjectRef};
use serde::Deserialize;
use serde_json::{json, Value};

pub trait Capabilities: Send {
    /// `__host_call(binding, namespace, operation, payload)`.
    fn call(
        &mut self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String>;
    fn log(&mut self, line: String);
    fn logs(&self) -> Vec<String>;
}

/// A `contextAwareResources` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextAwareResource {
    pub api_version: String,
    pub kind: String,
}

/// Where Kubernetes answers come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Recorded objects; anything not recorded does not exist.
    Recorded(Vec<Recorded>),
    /// A kwctl session recording, replayed strictly in order.
    Session(Vec<Exchange>),
}

/// Host capabilities of one evaluation.
pub struct Host {
    allowed: Vec<ContextAwareResource>,
    source: Source,
    next_exchange: usize,
    logs: Vec<String>,
}

impl Host {
    pub fn new(allowed: Vec<ContextAwareResource>, source: Source) -> Self {
        Self {
            allowed,
            source,
            next_exchange: 0,
            logs: Vec::new(),
        }
    }

    fn kubernetes(&mut self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, String> {
        let request: Value = serde_json::from_slice(payload)
            .map_err(|e| format!("malformed kubernetes/{operation} request: {e}"))?;
        let field = |k: &str| {
            request
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let (api_version, kind) = (field("api_version"), field("kind"));
        if !self
            .allowed
            .iter()
            .any(|r| r.api_version == api_version && r.kind == kind)
        {
            return Err(format!(
                "Policy has not been granted access to Kubernetes {kind} resources \
                 (apiVersion {api_version}): add it to the policy's contextAwareResources. \
                 The violation has been reported."
            ));
        }
        match &self.source {
            Source::Session(exchanges) => {
                let exchange = exchanges.get(self.next_exchange).cloned().ok_or_else(|| {
                    format!("replay: no recorded exchange left for kubernetes/{operation}")
                })?;
                self.next_exchange += 1;
                exchange.answer(operation, &request)
            }
            Source::Recorded(objects) => {
                answer_recorded(objects, operation, &request, &api_version, &kind)
            }
        }
    }
}

/// Answers from recorded objects through conformance's [`RecordedCluster`],
/// the same lookups the native evaluation uses, in policy-server's reply shapes.
fn answer_recorded(
    objects: &[Recorded],
    operation: &str,
    request: &Value,
    api_version: &str,
    kind: &str,
) -> Result<Vec<u8>, String> {
    let field = |k: &str| request.get(k).and_then(Value::as_str).unwrap_or("");
    let cluster = RecordedCluster::new(objects);
    let list = |namespace: Option<&str>| -> Result<Vec<u8>, String> {
        let mut items = cluster
            .list(api_version, kind, namespace)
            .map_err(|e| e.0)?;
        let selector = field("label_selector");
        items.retain(|o| selector_matches(selector, o));
        Ok(serde_json::to_vec(&json!({
            "apiVersion": api_version,
            "kind": format!("{kind}List"),
            "metadata": {"resourceVersion": ""},
            "items": items,
        }))
        .unwrap_or_default())
    };
    match operation {
        "get_resource" => {
            let (name, namespace) = (field("name"), field("namespace"));
            let object = ObjectRef {
                api_version,
                kind,
                namespace,
                name,
            };
            match cluster.get(&object).map_err(|e| e.0)? {
                Some(o) => Ok(serde_json::to_vec(&o).unwrap_or_default()),
                None => Err(format!(
                    "Cannot find {kind} {}{name}: {} \"{name}\" not found (404)",
                    if namespace.is_empty() {
                        String::new()
                    } else {
                        format!("{namespace}/")
                    },
                    kind.to_lowercase()
                )),
            }
        }
        "list_resources_all" => list(None),
        "list_resources_by_namespace" => list(Some(field("namespace"))),
        other => Err(format!(
            "kubernetes/{other} is not supported by this harness"
        )),
    }
}

/// Kubernetes' equality-based label selector syntax: `a=b,c!=d,e,!f`.
fn selector_matches(selector: &str, object: &Value) -> bool {
    let labels = object.pointer("/metadata/labels");
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    selector
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .all(|term| {
            if let Some((k, v)) = term.split_once("!=") {
                label(k.trim()) != Some(v.trim())
            } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                label(k.trim()) == Some(v.trim())
            } else if let Some(k) = term.strip_prefix('!') {
                label(k.trim()).is_none()
            } else {
                label(term).is_some()
            }
        })
}

impl Capabilities for Host {
    fn call(
        &mut self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String> {
        match (binding, namespace, operation) {
            ("kubewarden", "tracing", "log") => {
                self.logs
                    .push(String::from_utf8_lossy(payload).into_owned());
                Ok(Vec::new())
            }
            ("kubewarden", "kubernetes", op) => self.kubernetes(op, payload),
            _ => Err(format!(
                "host capability {binding}/{namespace}/{operation} is not granted to this policy"
            )),
        }
    }

    fn log(&mut self, line: String) {
        self.logs.push(line);
    }

    fn logs(&self) -> Vec<String> {
        self.logs.clone()
    }
}

/// One entry of a kwctl session recording
/// (`--replay-host-capabilities-interactions`).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type")]
pub enum Exchange {
    Exchange {
        request: String,
        response: ExchangeResponse,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type")]
pub enum ExchangeResponse {
    Success { payload: String },
    Error { message: String },
}

/// The YAML tag kwctl writes for each Kubernetes operation.
fn session_tag(operation: &str) -> &'static str {
    match operation {
        "get_resource" => "!KubernetesGetResource",
        "list_resources_all" => "!KubernetesListResourceAll",
        "list_resources_by_namespace" => "!KubernetesListResourceNamespace",
        "can_i" => "!KubernetesCanI",
        _ => "!Unknown",
    }
}

impl Exchange {
    /// Checks that the policy asks what was recorded, then answers as recorded.
    fn answer(&self, operation: &str, request: &Value) -> Result<Vec<u8>, String> {
        let Exchange::Exchange {
            request: recorded,
            response,
        } = self;
        let tag = session_tag(operation);
        let body = recorded.trim_start().strip_prefix(tag).ok_or_else(|| {
            format!(
                "replay: the policy asked kubernetes/{operation}, the recording has {recorded:?}"
            )
        })?;
        let recorded: Value = serde_norway::from_str(body)
            .map_err(|e| format!("replay: unreadable recorded request: {e}"))?;
        for key in [
            "api_version",
            "kind",
            "name",
            "namespace",
            "label_selector",
            "field_selector",
        ] {
            let want = recorded.get(key).filter(|v| !v.is_null());
            let got = request.get(key).filter(|v| !v.is_null());
            if want != got {
                return Err(format!(
                    "replay: the policy asked {key}={got:?}, the recording has {key}={want:?}"
                ));
            }
        }
        match response {
            ExchangeResponse::Success { payload } => Ok(payload.clone().into_bytes()),
            ExchangeResponse::Error { message } => Err(message.clone()),
        }
    }
}

/// Reads a kwctl session file (a YAML list of exchanges).
pub fn load_session(text: &str) -> Result<Vec<Exchange>, String> {
    serde_norway::from_str(text).map_err(|e| format!("not a kwctl session recording: {e}"))
}

//! The host side of waPC host calls, in the order and with the texts of
//! policy-server's `host_callback` (kubewarden/kubewarden-controller 3460bb71,
//! `crates/policy-evaluator/src/runtimes/callback.rs`):
//!
//! 1. a binding other than `kubewarden` is `unknown binding: …`;
//! 2. every namespace but `tracing` must be allowed by the policy's
//!    `hostCapabilities` (`{namespace}/{operation}`, `*` and `prefix/*`
//!    patterns, `host_capabilities.rs`, `HostCapabilities::is_allowed`);
//!    a ClusterAdmissionPolicy gets `*`, and so does `kwctl run` by default;
//! 3. a Kubernetes call must name an `(apiVersion, kind)` of the policy's
//!    `contextAwareResources` as policy-server was configured (policies.yml or
//!    the ClusterAdmissionPolicy), never the module's metadata; `kwctl run`
//!    grants the metadata's list only with `--allow-context-aware`;
//! 4. the answer comes back; an error from the Kubernetes side reaches the
//!    policy as `Callback evaluation failure: …` (`send_request_and_wait_for_response`),
//!    a missing object as [`guard_core::context::not_found_message`];
//! 5. or it never does: a LIST kube-apiserver refused is retried for ever
//!    ([`conformance::NoAnswer`]), and the host stops the guest there
//!    ([`HostRefusal::NoAnswer`]).
//!
//! Answers come from recorded cluster objects, through conformance's
//! [`RecordedCluster`] (which also knows which kinds are cluster-scoped, and
//! refuses a namespaced list of one as policy-server does), or from a kwctl
//! session recording.

use conformance::cluster::Recorded;
pub use conformance::deployment::ContextAwareResource;
use conformance::{NoAnswer, RecordedCluster};
use guard_core::context::{not_found_message, Cluster as _, ObjectRef};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Why a host call has no payload for the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostRefusal {
    /// An error the guest reads (`__host_error`).
    Error(String),
    /// policy-server never answers the call; the guest waits until
    /// kube-apiserver gives up on the review.
    NoAnswer(NoAnswer),
}

impl From<String> for HostRefusal {
    fn from(message: String) -> Self {
        HostRefusal::Error(message)
    }
}

pub trait Capabilities: Send {
    /// `__host_call(binding, namespace, operation, payload)`.
    fn call(
        &mut self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, HostRefusal>;
    fn log(&mut self, line: String);
    fn logs(&self) -> Vec<String>;
    /// The Kubernetes calls answered so far, as a kwctl session.
    fn session(&self) -> Vec<Exchange>;
}

/// Where Kubernetes answers come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Recorded objects; anything not recorded does not exist. Shared, so
    /// that every evaluation's host can hold them without a copy.
    Recorded(std::sync::Arc<[Recorded]>),
    /// A kwctl session recording, replayed strictly in order.
    Session(Vec<Exchange>),
}

/// What policy-server lets one policy use.
#[derive(Debug, Clone)]
pub struct Grants {
    /// `hostCapabilities` patterns; policy-server's default for a missing
    /// list is none at all (`HostCapabilities::DenyAll`).
    pub host_capabilities: Vec<String>,
    pub context_aware_resources: Vec<ContextAwareResource>,
}

impl Grants {
    /// What a ClusterAdmissionPolicy, or `kwctl run --allow-context-aware`, grants.
    pub fn all_capabilities(context_aware_resources: Vec<ContextAwareResource>) -> Self {
        Self {
            host_capabilities: vec!["*".into()],
            context_aware_resources,
        }
    }

    fn allows_capability(&self, path: &str) -> bool {
        self.host_capabilities.iter().any(|pattern| {
            let pattern = pattern.trim();
            pattern == "*"
                || pattern == path
                || pattern
                    .strip_suffix('*')
                    .is_some_and(|prefix| prefix.ends_with('/') && path.starts_with(prefix))
        })
    }
}

/// Host capabilities of one evaluation.
pub struct Host {
    grants: Grants,
    source: Source,
    next_exchange: usize,
    logs: Vec<String>,
    /// The Kubernetes calls answered, as kwctl records them.
    recorded: Vec<Exchange>,
}

fn callback_failure(message: &str) -> String {
    conformance::cluster::callback_failure(message).0
}

impl Host {
    pub fn new(grants: Grants, source: Source) -> Self {
        Self {
            grants,
            source,
            next_exchange: 0,
            logs: Vec::new(),
            recorded: Vec::new(),
        }
    }

    fn kubernetes(&mut self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, HostRefusal> {
        if !matches!(
            operation,
            "get_resource" | "list_resources_all" | "list_resources_by_namespace"
        ) {
            return Err(HostRefusal::Error(format!(
                "kubernetes/{operation} is not supported by this harness"
            )));
        }
        let request: Value = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
        let field = |k: &str| {
            request
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let (api_version, kind) = (field("api_version"), field("kind"));
        if !self
            .grants
            .context_aware_resources
            .iter()
            .any(|r| r.api_version == api_version && r.kind == kind)
        {
            return Err(HostRefusal::Error(format!(
                "Policy has not been granted access to Kubernetes {api_version}/{kind} resources. \
                 The violation has been reported."
            )));
        }
        let answer = match &self.source {
            Source::Session(exchanges) => {
                let exchange = exchanges.get(self.next_exchange).cloned();
                self.next_exchange += 1;
                match exchange {
                    Some(e) => e
                        .answer(operation, &request)
                        .map_err(|m| callback_failure(&m)),
                    None => Err(callback_failure("the list of recorded responses is empty")),
                }
            }
            Source::Recorded(objects) => {
                match answer_recorded(objects, operation, &request, &api_version, &kind) {
                    Ok(answer) => answer,
                    Err(none) => {
                        // A kwctl session can only hold calls that ended: the
                        // refusal is kept as the error a LIST that ends with it
                        // would give (see `engines::run_kwctl`).
                        let as_error = Err(callback_failure(&none.refusal.as_policy_server_says()));
                        self.recorded
                            .push(Exchange::record(operation, &request, &as_error));
                        return Err(HostRefusal::NoAnswer(none));
                    }
                }
            }
        };
        self.recorded
            .push(Exchange::record(operation, &request, &answer));
        answer.map_err(HostRefusal::Error)
    }
}

/// Answers from recorded objects through conformance's [`RecordedCluster`],
/// the same lookups the native evaluation uses, in policy-server's reply
/// shapes; `Err` when policy-server would never answer.
fn answer_recorded(
    objects: &[Recorded],
    operation: &str,
    request: &Value,
    api_version: &str,
    kind: &str,
) -> Result<Result<Vec<u8>, String>, NoAnswer> {
    let field = |k: &str| request.get(k).and_then(Value::as_str).unwrap_or("");
    let cluster = RecordedCluster::new(objects);
    let list = |namespace: Option<&str>| -> Result<Result<Vec<u8>, String>, NoAnswer> {
        let mut items = match cluster.list(api_version, kind, namespace)? {
            Ok(items) => items,
            Err(e) => return Ok(Err(e.0)),
        };
        let selector = field("label_selector");
        items.retain(|o| selector_matches(selector, o));
        Ok(Ok(serde_json::to_vec(&json!({
            "apiVersion": api_version,
            "kind": format!("{kind}List"),
            "metadata": {"resourceVersion": ""},
            "items": items,
        }))
        .unwrap_or_default()))
    };
    match operation {
        "get_resource" => {
            let name = field("name");
            let namespace = request.get("namespace").and_then(Value::as_str);
            let object = ObjectRef {
                api_version,
                kind,
                namespace: namespace.unwrap_or(""),
                name,
            };
            Ok(match cluster.get(&object) {
                Ok(Some(o)) => Ok(serde_json::to_vec(&o).unwrap_or_default()),
                Ok(None) => Err(not_found_message(&object, namespace)),
                Err(e) => Err(e.0),
            })
        }
        "list_resources_all" => list(None),
        "list_resources_by_namespace" => list(Some(field("namespace"))),
        other => Ok(Err(format!(
            "kubernetes/{other} is not supported by this harness"
        ))),
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
    ) -> Result<Vec<u8>, HostRefusal> {
        if binding != "kubewarden" {
            return Err(format!("unknown binding: {binding}").into());
        }
        let path = format!("{namespace}/{operation}");
        if namespace != "tracing" && !self.grants.allows_capability(&path) {
            return Err(format!(
                "Policy has not been granted access to the '{path}' host capability. \
                 The violation has been reported."
            )
            .into());
        }
        match (namespace, operation) {
            ("tracing", "log") => {
                self.logs
                    .push(String::from_utf8_lossy(payload).into_owned());
                Ok(Vec::new())
            }
            ("tracing", _) => Err(format!("unknown operation: {operation}").into()),
            ("kubernetes", op) => self.kubernetes(op, payload),
            (_, _) => Err(format!(
                "{path}: this harness answers only tracing and kubernetes host calls"
            )
            .into()),
        }
    }

    fn log(&mut self, line: String) {
        self.logs.push(line);
    }

    fn logs(&self) -> Vec<String> {
        self.logs.clone()
    }

    fn session(&self) -> Vec<Exchange> {
        self.recorded.clone()
    }
}

/// One entry of a kwctl session recording
/// (`--replay-host-capabilities-interactions`; kubewarden/kubewarden-controller
/// 3460bb71, `crates/kwctl/src/callback_handler/proxy.rs`, `Exchange`: the
/// request is the YAML of policy-evaluator's `CallbackRequestType`, the
/// response the payload or the error before policy-server's prefix).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "type")]
pub enum Exchange {
    Exchange {
        request: String,
        response: ExchangeResponse,
    },
}

#[derive(Debug, Clone, Deserialize, Serialize)]
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
    /// What kwctl's recorder writes for one answered call.
    fn record(operation: &str, request: &Value, answer: &Result<Vec<u8>, String>) -> Self {
        let body = serde_norway::to_string(request).unwrap_or_default();
        let response = match answer {
            Ok(payload) => ExchangeResponse::Success {
                payload: String::from_utf8_lossy(payload).into_owned(),
            },
            Err(message) => ExchangeResponse::Error {
                message: message
                    .strip_prefix(conformance::cluster::CALLBACK_FAILURE)
                    .unwrap_or(message)
                    .to_string(),
            },
        };
        Exchange::Exchange {
            request: format!("{}\n{body}", session_tag(operation)),
            response,
        }
    }

    /// The call recorded: its `kubernetes` operation and payload, as the
    /// guest sent them.
    pub fn call(&self) -> Option<(&'static str, Value)> {
        let Exchange::Exchange { request, .. } = self;
        let (tag, body) = request.trim_start().split_once('\n')?;
        let operation = [
            "get_resource",
            "list_resources_all",
            "list_resources_by_namespace",
            "can_i",
        ]
        .into_iter()
        .find(|op| session_tag(op) == tag)?;
        Some((operation, serde_norway::from_str(body).ok()?))
    }

    /// The bytes this call handed the guest: the reply, or the error text.
    pub fn handed_bytes(&self) -> usize {
        let Exchange::Exchange { response, .. } = self;
        match response {
            ExchangeResponse::Success { payload } => payload.len(),
            ExchangeResponse::Error { message } => message.len(),
        }
    }

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

/// Writes a kwctl session file.
pub fn write_session(exchanges: &[Exchange]) -> String {
    serde_norway::to_string(exchanges).unwrap_or_default()
}

/// Reads a kwctl session file (a YAML list of exchanges).
pub fn load_session(text: &str) -> Result<Vec<Exchange>, String> {
    serde_norway::from_str(text).map_err(|e| format!("not a kwctl session recording: {e}"))
}

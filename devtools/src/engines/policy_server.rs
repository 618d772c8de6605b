//! The real policy-server on loopback: booted on a generated `policies.yml`,
//! connected through a kubeconfig to the test API server, its wall clock
//! pinned through a file the run rewrites before each case.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::process::Child;

use super::compare::Answer;
use super::{engine_command, last_lines, write_file};
use crate::distribution::ServerPolicy;
use conformance::response::PolicyMode;
use host_test::capabilities::ContextAwareResource;
use host_test::metadata::ContextAwareResourceSpec;

/// policy-server precompiles every module before it is ready.
const BOOT_DEADLINE: Duration = Duration::from_secs(120);
/// kube-apiserver's own default for a webhook call (`timeoutSeconds: 10`).
const REVIEW_DEADLINE: Duration = Duration::from_secs(10);

/// One `policies.yml` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub id: String,
    pub module: PathBuf,
    pub settings: Value,
    pub mode: PolicyMode,
    pub allowed_to_mutate: bool,
    pub context_aware_resources: Vec<ContextAwareResource>,
}

/// `policies.yml` entries, with `hostCapabilities: ["*"]` as
/// kubewarden-controller writes for a ClusterAdmissionPolicy.
pub fn policies_yml(entries: &[Entry]) -> BTreeMap<String, ServerPolicy> {
    entries
        .iter()
        .map(|e| {
            let policy = ServerPolicy {
                module: format!("file://{}", e.module.display()),
                policy_mode: match e.mode {
                    PolicyMode::Protect => "protect",
                    PolicyMode::Monitor => "monitor",
                },
                allowed_to_mutate: e.allowed_to_mutate,
                settings: e.settings.clone(),
                context_aware_resources: e
                    .context_aware_resources
                    .iter()
                    .map(|r| ContextAwareResourceSpec {
                        api_version: r.api_version.clone(),
                        kind: r.kind.clone(),
                    })
                    .collect(),
                host_capabilities: vec!["*"],
            };
            (e.id.clone(), policy)
        })
        .collect()
}

pub struct PolicyServer {
    child: Child,
    port: u16,
    client: reqwest::Client,
    log: PathBuf,
}

impl PolicyServer {
    /// Boots policy-server in `dir` and waits until it is ready.
    pub async fn start(
        binary: &Path,
        clock: &Path,
        now_file: &Path,
        dir: &Path,
        entries: &[Entry],
        kubeconfig: &str,
    ) -> Result<Self, String> {
        let policies = write_file(
            dir,
            "policies.yml",
            &serde_norway::to_string(&policies_yml(entries)).map_err(|e| e.to_string())?,
        )?;
        let kubeconfig = write_file(dir, "kubeconfig", kubeconfig)?;
        let log = dir.join("policy-server.log");
        let log_file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let (port, readiness) = (free_port()?, free_port()?);
        let child = engine_command(binary, clock, now_file)
            .arg("--policies")
            .arg(&policies)
            .arg("--policies-download-dir")
            .arg(dir)
            .args(["--addr", "127.0.0.1", "--port", &port.to_string()])
            .args(["--readiness-probe-port", &readiness.to_string()])
            .args(["--log-level", "warn", "--log-no-color"])
            .current_dir(dir)
            .env("KUBECONFIG", &kubeconfig)
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let client = reqwest::Client::builder()
            .timeout(REVIEW_DEADLINE)
            .build()
            .map_err(|e| e.to_string())?;
        let mut server = Self {
            child,
            port,
            client,
            log,
        };
        server.wait_ready(readiness).await?;
        Ok(server)
    }

    async fn wait_ready(&mut self, readiness: u16) -> Result<(), String> {
        let url = format!("http://127.0.0.1:{readiness}/readiness");
        let started = tokio::time::Instant::now();
        while started.elapsed() < BOOT_DEADLINE {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "policy-server exited ({status}): {}",
                    self.log_tail()
                ));
            }
            if let Ok(r) = self.client.get(&url).send().await {
                if r.status().is_success() {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!(
            "policy-server was not ready within {BOOT_DEADLINE:?}: {}",
            self.log_tail()
        ))
    }

    /// `POST /validate/<id>` with an AdmissionReview, as kube-apiserver sends it.
    pub async fn review(&self, policy_id: &str, request: &Value) -> Answer {
        let review = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": request,
        });
        let url = format!("http://127.0.0.1:{}/validate/{policy_id}", self.port);
        let reply = match self.client.post(&url).json(&review).send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Answer::NoAnswer(format!(
                    "no answer within {REVIEW_DEADLINE:?}, kube-apiserver's webhook timeout"
                ))
            }
            Err(e) => {
                return Answer::Refused {
                    status: None,
                    detail: format!("{e}: {}", self.log_tail()),
                }
            }
        };
        let status = reply.status().as_u16();
        let body = reply.text().await.unwrap_or_default();
        match serde_json::from_str::<Value>(&body) {
            Ok(review) if status == 200 => match review.get("response") {
                Some(response) => Answer::Response(response.clone()),
                None => Answer::Refused {
                    status: Some(status),
                    detail: format!("an AdmissionReview without response: {body}"),
                },
            },
            _ => Answer::Refused {
                status: Some(status),
                detail: body,
            },
        }
    }

    fn log_tail(&self) -> String {
        last_lines(&std::fs::read_to_string(&self.log).unwrap_or_default(), 5)
    }

    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// A loopback port nobody listens on now.
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

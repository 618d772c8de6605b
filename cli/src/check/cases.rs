//! A check's evaluations as corpus cases (`--save-cases`): each one the
//! request, settings, instant, known objects and deployment it was judged
//! with, and what it answered, so that `devtools replay` re-runs it natively
//! and in the harness and `devtools conformance` through the real kwctl
//! and policy-server.

use std::path::Path;

use anyhow::{Context as _, Result};
use conformance::cluster::Recorded;
use conformance::response::{decoded_patch, PolicyMode};
use guard_core::Timestamp;
use serde_json::{json, Map, Value};

use super::identity::Identity;
use super::manifests::Origin;
use super::policies::Configured;

/// What one evaluation was, for its case file.
pub struct Evaluated<'a> {
    pub origin: &'a Origin,
    pub id: &'a Identity,
    pub config: &'a Configured,
    pub request: &'a Value,
    pub known: &'a [Recorded],
    pub now: Timestamp,
    pub response: &'a Value,
}

/// Writes `dir/<module>/<operation>-<kind>-<namespace>-<name>.yaml`; the
/// folder is the module's name, as the corpus names a case's policy.
pub fn save(dir: &Path, e: &Evaluated<'_>) -> Result<()> {
    let module = e
        .config
        .module
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let operation = e.request["operation"].as_str().unwrap_or_default();
    let stem: String = [
        operation,
        &e.id.kind,
        e.id.namespace.as_deref().unwrap_or(""),
        &e.id.name,
    ]
    .iter()
    .filter(|s| !s.is_empty())
    .map(|s| s.to_ascii_lowercase())
    .collect::<Vec<_>>()
    .join("-")
    .chars()
    .map(|c| {
        if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
            c
        } else {
            '_'
        }
    })
    .collect();
    let folder = dir.join(&module);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let file = folder.join(format!("{stem}.yaml"));
    let text = serde_norway::to_string(&case(e))?;
    std::fs::write(&file, text).with_context(|| format!("cannot write {}", file.display()))
}

fn case(e: &Evaluated<'_>) -> Value {
    let context: Vec<Value> = e
        .known
        .iter()
        .map(|r| {
            let mut entry = json!({
                "apiVersion": r.api_version, "kind": r.kind,
                "namespace": r.namespace, "name": r.name,
            });
            if let Some(map) = entry.as_object_mut() {
                if let Some(object) = &r.object {
                    map.insert("object".into(), object.clone());
                }
                if let Some(error) = &r.error {
                    map.insert("error".into(), json!(error));
                }
            }
            entry
        })
        .collect();
    let mut expect = Map::new();
    let allowed = e.response["allowed"].as_bool().unwrap_or(false);
    expect.insert("allowed".into(), json!(allowed));
    if let Some(code) = e.response.pointer("/status/code") {
        expect.insert("code".into(), code.clone());
    }
    if let Some(message) = e
        .response
        .pointer("/status/message")
        .and_then(Value::as_str)
    {
        expect.insert("message".into(), json!(exactly(message)));
    }
    let warnings: Vec<Value> = e.response["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|w| json!(exactly(w)))
        .collect();
    expect.insert("warnings".into(), Value::Array(warnings));
    expect.insert(
        "patch".into(),
        Value::Array(decoded_patch(e.response).unwrap_or_default()),
    );
    let resources: Vec<Value> = e
        .config
        .context_aware_resources
        .iter()
        .map(|r| json!({"apiVersion": r.api_version, "kind": r.kind}))
        .collect();
    json!({
        "description": format!(
            "reconcile-guard check: {} {} at {}",
            e.request["operation"].as_str().unwrap_or_default(),
            e.id,
            e.origin
        ),
        "now": e.now.to_string(),
        "settings": e.config.settings,
        "request": {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": e.request,
        },
        "context": context,
        "policyMode": match e.config.mode {
            PolicyMode::Protect => "protect",
            PolicyMode::Monitor => "monitor",
        },
        "allowedToMutate": e.config.allowed_to_mutate,
        "contextAwareResources": resources,
        "expect": expect,
    })
}

/// A regular expression matching exactly `text`.
fn exactly(text: &str) -> String {
    format!("^{}$", regex_lite::escape(text))
}

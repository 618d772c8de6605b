//! The policies a check applies, as the cluster would run them: from
//! ClusterAdmissionPolicy and AdmissionPolicy manifests (the repository's
//! `deploy/`, or the user's), or from a policy-server `policies.yml`.
//!
//! kubewarden-controller turns a ClusterAdmissionPolicy `p` into the
//! policy-server entry `clusterwide-p` and an AdmissionPolicy `p` in
//! namespace `n` into `namespaced-n-p`, with `allowedToMutate:
//! spec.mutating`, `policyMode: spec.mode` and its `contextAwareResources`
//! (an AdmissionPolicy has none), and registers a webhook with the manifest's
//! `rules` and selectors, and its `spec.message` as the entry's custom
//! rejection `message` (`omitempty`: an empty one is none), which
//! policy-server puts in place of a refusal's message (conformance's
//! `response.rs`) (kubewarden/kubewarden-controller 3460bb71,
//! `api/policies/v1/clusteradmissionpolicy_types.go` and
//! `admissionpolicy_types.go`, `GetUniqueName`, `GetNamespaceSelector`,
//! `GetContextAwareResources`; `internal/controller/
//! policyserver_controller_configmap.go`, `buildPoliciesMap`). The webhook's
//! namespace selector is `internal/controller/policy_subreconciler_webhook.go`,
//! `namespaceSelector`: an AdmissionPolicy sees its own namespace only; a
//! ClusterAdmissionPolicy never sees Kubewarden's own namespace unless
//! `allowInsideAdmissionControllerNamespace`, and then keeps only the
//! `matchExpressions` of its own selector (its `matchLabels` are dropped).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use conformance::deployment::ContextAwareResource;
use conformance::response::PolicyMode;
use serde::Deserialize;
use serde_json::Value;

use super::manifests;
use super::selector::{LabelSelector, Requirement, SelectorOperator, NAMESPACE_NAME};
use host_test::metadata::Rule;

/// One policy as policy-server and the webhook would run it.
#[derive(Debug, Clone)]
pub struct Configured {
    /// The policy-server id (`clusterwide-p`, `namespaced-n-p`, or the `policies.yml` key).
    pub id: String,
    /// The name findings carry (the manifest's name, or the `policies.yml` key).
    pub name: String,
    pub module: PathBuf,
    pub settings: Value,
    pub mode: PolicyMode,
    pub allowed_to_mutate: bool,
    pub context_aware_resources: Vec<ContextAwareResource>,
    /// The custom rejection `message` that replaces the policy's in a refusal.
    pub message: Option<String>,
    /// policy-server `hostCapabilities`: every one for a (Cluster)AdmissionPolicy,
    /// what a `policies.yml` entry lists (none when it lists none).
    pub host_capabilities: Vec<String>,
    /// The webhook's rules; `None` for a `policies.yml` entry, which has
    /// none: the module's metadata rules are used instead.
    pub rules: Option<Vec<Rule>>,
    /// The webhook's namespace selector, as kubewarden-controller writes it.
    pub namespace_selector: Option<LabelSelector>,
    pub object_selector: Option<LabelSelector>,
    /// Where it was configured, for messages.
    pub source: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    module: String,
    #[serde(default)]
    settings: Option<Value>,
    #[serde(default)]
    rules: Vec<Rule>,
    #[serde(default)]
    mutating: bool,
    #[serde(default)]
    mode: PolicyMode,
    #[serde(default)]
    context_aware_resources: Vec<ContextAwareResource>,
    #[serde(default)]
    namespace_selector: Option<LabelSelector>,
    #[serde(default)]
    object_selector: Option<LabelSelector>,
    #[serde(default)]
    match_conditions: Vec<Value>,
    #[serde(default)]
    allow_inside_admission_controller_namespace: bool,
    /// Written to `policies.yml` only when not empty (`omitempty`).
    #[serde(default)]
    message: String,
}

/// A `policies.yml` entry (policy-server's `PolicyOrPolicyGroup::Policy`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    module: String,
    #[serde(default)]
    settings: Option<Value>,
    #[serde(default)]
    policy_mode: PolicyMode,
    #[serde(default)]
    allowed_to_mutate: bool,
    #[serde(default)]
    context_aware_resources: Vec<ContextAwareResource>,
    #[serde(default)]
    host_capabilities: Vec<String>,
    #[serde(default)]
    message: Option<String>,
}

/// Reads policies from `path`: a folder or file of (Cluster)AdmissionPolicy
/// manifests, or a `policies.yml`. Modules named by a registry reference are
/// looked up in `dist` by their repository's last segment
/// (`…/flux-suspend:v0.1.0` is `dist/flux-suspend.wasm`).
/// `kubewarden_namespace` is where Kubewarden runs (its Helm chart's default
/// is `kubewarden`).
pub fn load(path: &Path, dist: &Path, kubewarden_namespace: &str) -> Result<Vec<Configured>> {
    let found = manifests::read(&[path.to_path_buf()])?;
    let mut out = Vec::new();
    for m in &found.objects {
        let field = |k: &str| m.object.get(k).and_then(Value::as_str).unwrap_or_default();
        let (kind, group) = (field("kind"), field("apiVersion"));
        if !group.starts_with("policies.kubewarden.io/") {
            continue;
        }
        match kind {
            "ClusterAdmissionPolicy" | "AdmissionPolicy" => out.push(from_manifest(
                &m.object,
                &m.origin.to_string(),
                dist,
                kubewarden_namespace,
            )?),
            "ClusterAdmissionPolicyGroup" | "AdmissionPolicyGroup" => bail!(
                "{}: {kind} is not supported by check; list its policies one by one",
                m.origin
            ),
            _ => {}
        }
    }
    if !out.is_empty() {
        return Ok(out);
    }
    if path.is_file() {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let entries: BTreeMap<String, Value> =
            serde_norway::from_str(&text).with_context(|| {
                format!(
                    "{}: neither (Cluster)AdmissionPolicy manifests nor a policies.yml",
                    path.display()
                )
            })?;
        for (id, value) in entries {
            if value.get("policies").is_some() {
                bail!(
                    "{}: {id} is a policy group, which check does not support",
                    path.display()
                );
            }
            let entry: Entry = serde_json::from_value(value)
                .with_context(|| format!("{}: policy {id}", path.display()))?;
            out.push(Configured {
                name: id.clone(),
                module: module_path(&entry.module, dist),
                settings: entry.settings.unwrap_or_else(empty),
                mode: entry.policy_mode,
                allowed_to_mutate: entry.allowed_to_mutate,
                context_aware_resources: entry.context_aware_resources,
                message: entry.message,
                host_capabilities: entry.host_capabilities,
                rules: None,
                namespace_selector: None,
                object_selector: None,
                source: format!("{} ({id})", path.display()),
                id,
            });
        }
    }
    if out.is_empty() {
        bail!("{}: no policies found", path.display());
    }
    Ok(out)
}

fn empty() -> Value {
    Value::Object(Default::default())
}

fn from_manifest(
    object: &Value,
    origin: &str,
    dist: &Path,
    kubewarden_namespace: &str,
) -> Result<Configured> {
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .with_context(|| format!("{origin}: {kind} without metadata.name"))?;
    let spec: Spec = serde_json::from_value(object.get("spec").cloned().unwrap_or_default())
        .with_context(|| format!("{origin}: {kind} {name}: spec"))?;
    if !spec.match_conditions.is_empty() {
        bail!(
            "{origin}: {kind} {name} has matchConditions (CEL), which check cannot evaluate; \
             remove them from the copy given to --policies"
        );
    }
    for selector in [&spec.namespace_selector, &spec.object_selector]
        .into_iter()
        .flatten()
    {
        selector
            .validate("selector")
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("{origin}: {kind} {name}"))?;
    }
    let (id, namespace_selector, context_aware_resources) = if kind == "AdmissionPolicy" {
        let namespace = object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default");
        let selector = LabelSelector {
            match_labels: [(NAMESPACE_NAME.to_string(), namespace.to_string())].into(),
            match_expressions: Vec::new(),
        };
        (
            format!("namespaced-{namespace}-{name}"),
            Some(selector),
            Vec::new(),
        )
    } else if spec.allow_inside_admission_controller_namespace {
        (
            format!("clusterwide-{name}"),
            spec.namespace_selector,
            spec.context_aware_resources,
        )
    } else {
        let mut match_expressions = vec![Requirement {
            key: NAMESPACE_NAME.to_string(),
            operator: SelectorOperator::NotIn,
            values: vec![kubewarden_namespace.to_string()],
        }];
        match_expressions.extend(
            spec.namespace_selector
                .into_iter()
                .flat_map(|s| s.match_expressions),
        );
        (
            format!("clusterwide-{name}"),
            Some(LabelSelector {
                match_labels: Default::default(),
                match_expressions,
            }),
            spec.context_aware_resources,
        )
    };
    Ok(Configured {
        id,
        name: name.to_string(),
        module: module_path(&spec.module, dist),
        settings: spec.settings.unwrap_or_else(empty),
        mode: spec.mode,
        allowed_to_mutate: spec.mutating,
        context_aware_resources,
        message: Some(spec.message).filter(|m| !m.is_empty()),
        host_capabilities: vec!["*".into()],
        rules: Some(spec.rules),
        namespace_selector,
        object_selector: spec.object_selector,
        source: origin.to_string(),
    })
}

/// A module reference as a local file: `file://` paths as written, anything
/// else (`registry://`, a bare registry reference) by its repository's last
/// segment in `dist`.
fn module_path(module: &str, dist: &Path) -> PathBuf {
    if let Some(path) = module.strip_prefix("file://") {
        return PathBuf::from(path);
    }
    let reference = module.split_once('@').map_or(module, |(r, _)| r);
    let last = reference.rsplit('/').next().unwrap_or(reference);
    let repository = last.split_once(':').map_or(last, |(r, _)| r);
    dist.join(format!("{repository}.wasm"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `spec.message` reaches policy-server's entry only when not empty
    /// (`policyserver_controller_configmap.go`, `message,omitempty`).
    #[test]
    fn a_manifests_message_is_the_custom_rejection_message() {
        let manifest = |message: &str| {
            serde_json::json!({
                "apiVersion": "policies.kubewarden.io/v1", "kind": "ClusterAdmissionPolicy",
                "metadata": {"name": "p"},
                "spec": {"module": "registry://r/p:v1", "message": message},
            })
        };
        let dist = Path::new("dist");
        let custom = from_manifest(&manifest("ask the platform team"), "m", dist, "kubewarden");
        assert_eq!(
            custom.unwrap().message.as_deref(),
            Some("ask the platform team")
        );
        let empty = from_manifest(&manifest(""), "m", dist, "kubewarden");
        assert_eq!(empty.unwrap().message, None);
    }

    #[test]
    fn registry_references_resolve_in_dist() {
        let dist = Path::new("dist");
        for m in [
            "registry://registry.example.com/reconcile-guard/policies/flux-suspend:v0.1.0",
            "registry.example.com/policies/flux-suspend@sha256:00",
            "flux-suspend",
        ] {
            assert_eq!(module_path(m, dist), dist.join("flux-suspend.wasm"), "{m}");
        }
        assert_eq!(
            module_path("file:///tmp/p.wasm", dist),
            PathBuf::from("/tmp/p.wasm")
        );
    }
}

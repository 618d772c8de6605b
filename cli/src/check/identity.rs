//! Which object a manifest writes: group, version, kind, namespace and name.

use anyhow::{bail, Result};
use serde_json::Value;

/// The cluster-scoped kinds of Kubernetes' built-in API groups, by group
/// (kubernetes/kubernetes v1.32, each kind's REST storage: `NamespaceScoped`
/// returns false, e.g. `pkg/registry/core/namespace/strategy.go`,
/// `pkg/registry/rbac/clusterrole/strategy.go`), and of the few custom
/// resources a repository applies without holding their CRD (cert-manager's
/// `ClusterIssuer`, Kubewarden's cluster policies and `PolicyServer`).
/// Every other kind of these groups is namespaced; a kind of another group
/// is what its CustomResourceDefinition says (in the manifests or
/// `--context`), else namespaced.
const CLUSTER_SCOPED: [(&str, &str); 27] = [
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("", "ComponentStatus"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ),
    ("cert-manager.io", "ClusterIssuer"),
    ("policies.kubewarden.io", "ClusterAdmissionPolicy"),
];

/// Kubewarden's other cluster-scoped kinds (policies.kubewarden.io CRDs).
const KUBEWARDEN_CLUSTER_SCOPED: [&str; 2] = ["ClusterAdmissionPolicyGroup", "PolicyServer"];

/// The scope of each kind the CustomResourceDefinitions of a set of objects
/// define: (group, kind) to whether it is cluster-scoped.
#[derive(Debug, Default, Clone)]
pub struct Scopes(std::collections::HashMap<(String, String), bool>);

impl Scopes {
    /// The scopes the CRDs among `objects` define.
    pub fn of<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Self {
        let mut map = std::collections::HashMap::new();
        for o in objects {
            let is_crd = o.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
                && o.get("apiVersion")
                    .and_then(Value::as_str)
                    .is_some_and(|v| v.starts_with("apiextensions.k8s.io/"));
            if !is_crd {
                continue;
            }
            let field = |p: &str| o.pointer(p).and_then(Value::as_str);
            if let (Some(group), Some(kind), Some(scope)) = (
                field("/spec/group"),
                field("/spec/names/kind"),
                field("/spec/scope"),
            ) {
                map.insert((group.to_string(), kind.to_string()), scope == "Cluster");
            }
        }
        Self(map)
    }

    fn cluster_scoped(&self, group: &str, kind: &str) -> bool {
        if let Some(&cluster) = self.0.get(&(group.to_string(), kind.to_string())) {
            return cluster;
        }
        CLUSTER_SCOPED.contains(&(group, kind))
            || (group == "policies.kubewarden.io" && KUBEWARDEN_CLUSTER_SCOPED.contains(&kind))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Identity {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    pub name: String,
}

impl Identity {
    /// The identity of a manifest; a namespaced object without
    /// `metadata.namespace` is placed in `default_namespace`, as kubectl
    /// places it in the context's namespace.
    pub fn of(object: &Value, default_namespace: &str, scopes: &Scopes) -> Result<Self> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default().to_string();
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let Some(name) = object.pointer("/metadata/name").and_then(Value::as_str) else {
            bail!("{api_version} {kind} without metadata.name (check cannot follow generateName)");
        };
        let cluster_scoped = scopes.cluster_scoped(group, &kind);
        let namespace = (!cluster_scoped).then(|| {
            object
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .unwrap_or(default_namespace)
                .to_string()
        });
        Ok(Self {
            group: group.to_string(),
            version: version.to_string(),
            kind,
            namespace,
            name: name.to_string(),
        })
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The plural resource, by the rule Flux's, ASO's and the core CRDs follow.
    pub fn resource(&self) -> String {
        conformance::cluster::plural(&self.kind)
    }

    pub fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.kind == "Namespace"
    }

    /// What names the object in every revision, whatever its API version:
    /// group, kind, namespace and name.
    pub fn key(&self) -> Key {
        (
            self.group.clone(),
            self.kind.clone(),
            self.namespace.clone(),
            self.name.clone(),
        )
    }
}

pub type Key = (String, String, Option<String>, String);

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

//! Which object a manifest writes: group, version, kind, namespace and name.

use anyhow::{bail, Result};
use serde_json::Value;

/// Core kinds that are cluster-scoped, among those a manifest set usually
/// holds; any other kind is namespaced.
const CLUSTER_SCOPED: [&str; 8] = [
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
    "IngressClass",
];

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
    pub fn of(object: &Value, default_namespace: &str) -> Result<Self> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default().to_string();
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let Some(name) = object.pointer("/metadata/name").and_then(Value::as_str) else {
            bail!("{api_version} {kind} without metadata.name (check cannot follow generateName)");
        };
        let cluster_scoped = CLUSTER_SCOPED.contains(&kind.as_str());
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

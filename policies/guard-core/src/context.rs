//! What an evaluation may know beyond the request: the instant and the cluster.
//!
//! Hosts supply both: the WASI clock and Kubernetes host calls under
//! policy-server, a pinned instant and recorded objects in tests, the harness
//! and the playground. Nothing in a policy reads the clock itself.

use jiff::Timestamp;
use serde_json::Value;

/// A Kubernetes object by `apiVersion`, `kind`, namespace (empty for
/// cluster-scoped kinds) and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

/// Why a cluster lookup gave no answer (not-found is `Ok(None)`, not an error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterError(pub String);

impl std::fmt::Display for ClusterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Read access to the cluster, as Kubewarden's context-aware host calls give it.
pub trait Cluster {
    /// `kubernetes/get_resource`: the object, or `None` when it does not exist.
    fn get(&self, object: &ObjectRef<'_>) -> Result<Option<Value>, ClusterError>;
    /// `kubernetes/list_resources_all`: every object of a kind, in every namespace.
    fn list_all(&self, api_version: &str, kind: &str) -> Result<Vec<Value>, ClusterError>;
}

/// A cluster with nothing in it, for policies and tests that need none.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCluster;

impl Cluster for NoCluster {
    fn get(&self, _: &ObjectRef<'_>) -> Result<Option<Value>, ClusterError> {
        Ok(None)
    }
    fn list_all(&self, _: &str, _: &str) -> Result<Vec<Value>, ClusterError> {
        Ok(Vec::new())
    }
}

pub struct Context<'a> {
    /// The instant the request is judged at.
    pub now: Timestamp,
    pub cluster: &'a dyn Cluster,
}

impl<'a> Context<'a> {
    pub fn new(now: Timestamp, cluster: &'a dyn Cluster) -> Self {
        Self { now, cluster }
    }
}

//! Recorded cluster objects: an object not recorded does not exist.

use guard_core::context::{Cluster, ClusterError, ObjectRef};
use serde::Deserialize;
use serde_json::Value;

/// One recorded object, as a case's `context` lists it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Recorded {
    pub api_version: String,
    pub kind: String,
    #[serde(default)]
    pub namespace: String,
    pub name: String,
    /// The object; `error` instead makes every lookup of it fail with that
    /// message (what the Kubernetes side said; the policy sees it as
    /// policy-server passes it on, see [`callback_failure`]).
    #[serde(default)]
    pub object: Option<Value>,
    #[serde(default)]
    pub error: Option<String>,
}

/// How policy-server passes an error of its Kubernetes side on to the policy
/// (kubewarden/kubewarden-controller 3460bb71,
/// `crates/policy-evaluator/src/runtimes/callback.rs`,
/// `send_request_and_wait_for_response`).
pub fn callback_failure(message: &str) -> ClusterError {
    ClusterError(format!("Callback evaluation failure: {message}"))
}

pub struct RecordedCluster<'a> {
    objects: &'a [Recorded],
}

impl<'a> RecordedCluster<'a> {
    pub fn new(objects: &'a [Recorded]) -> Self {
        Self { objects }
    }

    fn of_kind<'b>(
        &'b self,
        api_version: &'b str,
        kind: &'b str,
    ) -> impl Iterator<Item = &'a Recorded> + 'b {
        self.objects
            .iter()
            .filter(move |r| r.api_version == api_version && r.kind == kind)
    }
}

impl RecordedCluster<'_> {
    /// The recorded objects of a kind, in one namespace or (`None`) in all;
    /// the first recorded error fails the whole list, as a failed API list does.
    pub fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<Value>, ClusterError> {
        let mut items = Vec::new();
        for r in self
            .of_kind(api_version, kind)
            .filter(|r| namespace.is_none_or(|ns| r.namespace == ns))
        {
            if let Some(e) = &r.error {
                return Err(callback_failure(e));
            }
            items.extend(r.object.clone());
        }
        Ok(items)
    }
}

impl Cluster for RecordedCluster<'_> {
    fn get(&self, o: &ObjectRef<'_>) -> Result<Option<Value>, ClusterError> {
        match self
            .of_kind(o.api_version, o.kind)
            .find(|r| r.namespace == o.namespace && r.name == o.name)
        {
            None => Ok(None),
            Some(Recorded { error: Some(e), .. }) => Err(callback_failure(e)),
            Some(r) => Ok(r.object.clone()),
        }
    }

    fn list_all(&self, api_version: &str, kind: &str) -> Result<Vec<Value>, ClusterError> {
        RecordedCluster::list(self, api_version, kind, None)
    }

    fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<Value>, ClusterError> {
        RecordedCluster::list(self, api_version, kind, namespace)
    }
}

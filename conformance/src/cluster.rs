//! Recorded cluster objects: an object not recorded does not exist.

use guard_core::context::{Cluster, ClusterError, ClusterObject, ObjectRef};
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
    /// message, the one kube-apiserver answered (see [`ApiStatus`] for the
    /// whole answer and for what the policy then reads).
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
    ClusterError(format!("{CALLBACK_FAILURE}{message}"))
}

pub use guard_core::context::CALLBACK_FAILURE;

/// The Status kube-apiserver answers for a recorded failure: an RBAC refusal
/// is `403 Forbidden` with the resource in `details`
/// (kubernetes/apimachinery `pkg/api/errors/errors.go`, `NewForbidden`), any
/// other error `500` with an empty reason (kubernetes/apiserver 24a394e5,
/// `pkg/endpoints/handlers/responsewriters/status.go`, `ErrorToAPIStatus`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiStatus {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    /// `(name, group, resource)` of a refusal.
    pub details: Option<(String, String, String)>,
}

impl ApiStatus {
    /// The answer to a lookup of `object` (a list when its name is empty).
    pub fn of(message: &str, api_version: &str, kind: &str, name: &str) -> Self {
        if message.contains(" is forbidden: ") {
            let group = group_of(api_version);
            Self {
                code: 403,
                reason: "Forbidden",
                message: message.to_string(),
                details: Some((name.to_string(), group.to_string(), plural(kind))),
            }
        } else {
            Self {
                code: 500,
                reason: "",
                message: message.to_string(),
                details: None,
            }
        }
    }

    /// kube-apiserver's `404 NotFound` for an object that does not exist
    /// (apimachinery `errors.NewNotFound`: `{resource}.{group} "{name}" not found`).
    pub fn not_found(api_version: &str, kind: &str, name: &str) -> Self {
        let group = group_of(api_version);
        let resource = plural(kind);
        let qualified = if group.is_empty() {
            resource.clone()
        } else {
            format!("{resource}.{group}")
        };
        Self {
            code: 404,
            reason: "NotFound",
            message: format!("{qualified} \"{name}\" not found"),
            details: Some((name.to_string(), group.to_string(), resource)),
        }
    }

    /// A Status without details of its own (`"details": {}`).
    pub fn plain(code: u16, reason: &'static str, message: &str) -> Self {
        Self {
            code,
            reason,
            message: message.to_string(),
            details: Some(Default::default()),
        }
    }

    /// The Status object as JSON.
    pub fn body(&self) -> Value {
        let mut body = serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.message, "reason": self.reason, "code": self.code,
        });
        if let (Some((name, group, kind)), Some(map)) = (&self.details, body.as_object_mut()) {
            let mut details = serde_json::Map::new();
            for (k, v) in [("name", name), ("group", group), ("kind", kind)] {
                if !v.is_empty() {
                    details.insert(k.into(), Value::String(v.clone()));
                }
            }
            map.insert("details".into(), Value::Object(details));
        }
        body
    }

    /// What policy-server hands the policy after the prefix: kube-rs 3.1.0's
    /// `Error::Api` (`kube-client/src/error.rs`: `"ApiError: {0} ({0:?})"`,
    /// with `Status` displayed as `"{message}: {reason}"` and debugged as
    /// derived, `kube-core/src/response.rs`), printed with anyhow's `Debug`,
    /// which appends the source (`get_resource`'s `anyhow::Error::new`).
    pub fn as_policy_server_says(&self) -> String {
        let shown = format!("{}: {}", self.message, self.reason);
        let details = match &self.details {
            Some((name, group, kind)) => format!(
                "Some(StatusDetails {{ name: {name:?}, group: {group:?}, kind: {kind:?}, uid: \"\", causes: [], retry_after_seconds: 0 }})"
            ),
            None => "None".into(),
        };
        format!(
            "ApiError: {shown} (Status {{ status: Some(Failure), code: {}, message: {:?}, \
             metadata: Some(ListMeta {{ continue_: None, remaining_item_count: None, resource_version: None, self_link: None }}), \
             reason: {:?}, details: {details} }})\n\nCaused by:\n    {shown}",
            self.code, self.message, self.reason
        )
    }
}

/// The API group of an `apiVersion` (empty for the core `v1`).
fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(g, _)| g)
}

/// The plural resource name of a kind, by the English rule the CRDs of Flux
/// and ASO and the core kinds the policies read follow.
pub fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if let Some(stem) = lower.strip_suffix('y') {
        format!("{stem}ies")
    } else if lower.ends_with('s') {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
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
                let status = ApiStatus::of(e, api_version, kind, "");
                return Err(callback_failure(&status.as_policy_server_says()));
            }
            items.extend(r.object.clone().map(as_reflector_keeps));
        }
        Ok(items)
    }
}

/// A listed object as policy-server's reflector stores it: without
/// `managedFields` and without kubectl's last-applied-configuration
/// annotation (3460bb71, `crates/policy-evaluator/src/callback_handler/kubernetes/reflector.rs`,
/// `modify_object`). A `get_resource` answer keeps both.
fn as_reflector_keeps(mut object: Value) -> Value {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
        if let Some(annotations) = metadata
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
    object
}

/// A recorded object as the host's JSON reply.
fn raw(object: &Value) -> Result<ClusterObject, ClusterError> {
    serde_json::value::to_raw_value(object).map_err(|e| ClusterError(e.to_string()))
}

impl Cluster for RecordedCluster<'_> {
    fn get(&self, o: &ObjectRef<'_>) -> Result<Option<ClusterObject>, ClusterError> {
        match self
            .of_kind(o.api_version, o.kind)
            .find(|r| r.namespace == o.namespace && r.name == o.name)
        {
            None => Ok(None),
            Some(Recorded { error: Some(e), .. }) => {
                let status = ApiStatus::of(e, o.api_version, o.kind, o.name);
                Err(callback_failure(&status.as_policy_server_says()))
            }
            Some(r) => r.object.as_ref().map(raw).transpose(),
        }
    }

    fn list_all(&self, api_version: &str, kind: &str) -> Result<Vec<ClusterObject>, ClusterError> {
        Cluster::list(self, api_version, kind, None)
    }

    fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<ClusterObject>, ClusterError> {
        RecordedCluster::list(self, api_version, kind, namespace)?
            .iter()
            .map(raw)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_object_loses_what_the_reflector_drops() {
        let object = serde_json::json!({"metadata": {"name": "a", "managedFields": [{}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "k": "v"}}});
        let recorded = [Recorded {
            api_version: "v1".into(),
            kind: "Namespace".into(),
            namespace: String::new(),
            name: "a".into(),
            object: Some(object.clone()),
            error: None,
        }];
        let cluster = RecordedCluster::new(&recorded);
        let listed = cluster.list("v1", "Namespace", None).unwrap_or_default();
        assert_eq!(
            listed,
            vec![serde_json::json!({"metadata": {"name": "a", "annotations": {"k": "v"}}})]
        );
        let got = ObjectRef {
            api_version: "v1",
            kind: "Namespace",
            namespace: "",
            name: "a",
        };
        let answer = Cluster::get(&cluster, &got).unwrap().unwrap();
        assert_eq!(serde_json::from_str::<Value>(answer.get()).unwrap(), object);
    }

    #[test]
    fn plurals_of_the_corpus_kinds() {
        assert_eq!(plural("Namespace"), "namespaces");
        assert_eq!(plural("GitRepository"), "gitrepositories");
        assert_eq!(plural("Alert"), "alerts");
    }

    /// The text the real policy-server gave for a recorded refusal
    /// (`host-test conformance`, flux-gate/gate-object-lookup-error-refused).
    #[test]
    fn a_refusal_reads_as_kube_rs_prints_it() {
        let message = r#"gates.gating.toolkit.fluxcd.io "a" is forbidden: User "u" cannot get resource "gates""#;
        let status = ApiStatus::of(message, "gating.toolkit.fluxcd.io/v1alpha1", "Gate", "a");
        assert_eq!(
            status.as_policy_server_says(),
            r#"ApiError: gates.gating.toolkit.fluxcd.io "a" is forbidden: User "u" cannot get resource "gates": Forbidden (Status { status: Some(Failure), code: 403, message: "gates.gating.toolkit.fluxcd.io \"a\" is forbidden: User \"u\" cannot get resource \"gates\"", metadata: Some(ListMeta { continue_: None, remaining_item_count: None, resource_version: None, self_link: None }), reason: "Forbidden", details: Some(StatusDetails { name: "a", group: "gating.toolkit.fluxcd.io", kind: "gates", uid: "", causes: [], retry_after_seconds: 0 }) })

Caused by:
    gates.gating.toolkit.fluxcd.io "a" is forbidden: User "u" cannot get resource "gates": Forbidden"#
        );
    }
}

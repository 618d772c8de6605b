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
    /// whole answer and for what the policy then reads). An `error` of
    /// [`UNSERVED`] says the cluster does not serve the kind at all (its CRD
    /// is not installed): policy-server's discovery answers every lookup of
    /// it with its own error, and `name` and `object` are not read.
    #[serde(default)]
    pub object: Option<Value>,
    #[serde(default)]
    pub error: Option<String>,
}

impl Recorded {
    /// `object` as the cluster holds it, under its own `apiVersion`, `kind`,
    /// `metadata.namespace` and `metadata.name`.
    pub fn of(object: Value) -> Self {
        let text = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Self {
            api_version: text("/apiVersion"),
            kind: text("/kind"),
            namespace: text("/metadata/namespace"),
            name: text("/metadata/name"),
            error: None,
            object: Some(object),
        }
    }

    /// An object every lookup of which kube-apiserver answers with `error`
    /// (see [`Recorded::error`]).
    pub fn failing(
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
        error: &str,
    ) -> Self {
        Self {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
            object: None,
            error: Some(error.into()),
        }
    }
}

/// The recorded `error` of a kind the cluster does not serve.
pub const UNSERVED: &str = "not served";

/// What policy-server answers for a kind API discovery does not know: the
/// group version served without the kind, or (this text) not served at all,
/// kube-apiserver's 404 on the group version's discovery
/// (kubewarden/policy-evaluator f599912f,
/// `src/callback_handler/kubernetes/client.rs` `build_kube_resource`;
/// kube-client `Error::Api` display).
fn unserved(api_version: &str, kind: &str) -> ClusterError {
    callback_failure(&format!(
        "error finding resource {api_version} / {kind}: ApiError: the server could not find the \
         requested resource: NotFound (ErrorResponse {{ status: \"Failure\", message: \"the server \
         could not find the requested resource\", reason: \"NotFound\", code: 404 }})"
    ))
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

/// A host call policy-server never answers: kube-apiserver refused the LIST
/// behind a `list_resources_*` call. The reflector policy-server starts for
/// it retries the refused LIST with a backoff for ever, and
/// `Reflector::create_and_run` waits until its store is ready, so the call,
/// the policy's evaluation and the review all wait (kubewarden/kubewarden-controller
/// 3460bb71, `crates/policy-evaluator/src/callback_handler/kubernetes/reflector.rs`,
/// `Reflector::create_and_run`: `reader.wait_until_ready().await`; the guest
/// blocks in `crates/policy-evaluator/src/runtimes/callback.rs`,
/// `send_request_and_wait_for_response`, `rx.blocking_recv()`). The epoch
/// deadline does not cut it either: the guest is not running, the host is.
/// kube-apiserver gives up after the webhook's `timeoutSeconds` (10 by
/// default) and its `failurePolicy` decides (`Fail` by default;
/// kubewarden-controller 3460bb71, `api/policies/v1/policy_types.go`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoAnswer {
    /// The list asked for: `{apiVersion}/{kind}`, and the namespace if any.
    pub lookup: String,
    /// What kube-apiserver answered the LIST (boxed: it is large).
    pub refusal: Box<ApiStatus>,
}

impl std::fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "policy-server never answers: kube-apiserver refused the LIST of {} ({} {}) and \
             policy-server's reflector retries it for ever, so the webhook's timeoutSeconds \
             and failurePolicy decide",
            self.lookup, self.refusal.code, self.refusal.message
        )
    }
}

/// Whether a kind is namespaced, as the recorded cluster serves it: `v1`
/// `Namespace` and a kind recorded only without a namespace are
/// cluster-scoped, every other kind (recorded in a namespace, or not
/// recorded at all) is namespaced, as the Flux and ASO kinds are.
pub fn namespaced(objects: &[Recorded], api_version: &str, kind: &str) -> bool {
    let mut recorded = objects
        .iter()
        .filter(|o| o.api_version == api_version && o.kind == kind)
        .peekable();
    let cluster_scoped = (api_version == "v1" && kind == "Namespace")
        || (recorded.peek().is_some() && recorded.all(|o| o.namespace.is_empty()));
    !cluster_scoped
}

/// The recorded objects as policy-server's Kubernetes client answers for
/// them (kubewarden/kubewarden-controller 3460bb71,
/// `crates/policy-evaluator/src/callback_handler/kubernetes/client.rs`).
pub struct RecordedCluster<'a> {
    objects: &'a [Recorded],
    /// The first lookup that got no answer, for the native evaluation (the
    /// policy code carries on with an error it would never have seen).
    unanswered: std::cell::OnceCell<NoAnswer>,
    /// The lists asked for, in order, for tests of which lists a policy makes.
    listed: std::cell::RefCell<Vec<Listed>>,
}

/// One list asked for: `(apiVersion, kind, namespace)`, `None` for all
/// namespaces.
pub type Listed = (String, String, Option<String>);

impl<'a> RecordedCluster<'a> {
    pub fn new(objects: &'a [Recorded]) -> Self {
        Self {
            objects,
            unanswered: std::cell::OnceCell::new(),
            listed: std::cell::RefCell::default(),
        }
    }

    /// The lists asked for so far through [`Cluster`], in order.
    pub fn listed(&self) -> Vec<Listed> {
        self.listed.borrow().clone()
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

    /// Is the kind recorded as one the cluster does not serve?
    fn is_unserved(&self, api_version: &str, kind: &str) -> bool {
        self.of_kind(api_version, kind)
            .any(|r| r.error.as_deref() == Some(UNSERVED))
    }

    /// The lookup that got no answer, if one did.
    pub fn unanswered(&self) -> Option<&NoAnswer> {
        self.unanswered.get()
    }
}

impl RecordedCluster<'_> {
    /// `list_resources_all` (`namespace: None`) or
    /// `list_resources_by_namespace`: the recorded objects of a kind, as
    /// policy-server's reflector stores them, or the error the policy reads,
    /// or no answer at all (`Err`) when kube-apiserver refused the LIST.
    ///
    /// `list_resources_by_namespace` of a cluster-scoped kind is refused
    /// before anything is listed (`Client::list_resources_by_namespace`).
    pub fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Result<Vec<Value>, ClusterError>, NoAnswer> {
        if self.is_unserved(api_version, kind) {
            return Ok(Err(unserved(api_version, kind)));
        }
        if namespace.is_some() && !namespaced(self.objects, api_version, kind) {
            return Ok(Err(callback_failure(&format!(
                "resource {api_version}/{kind} is cluster wide. Cannot search for it inside of a namespace"
            ))));
        }
        let mut items = Vec::new();
        for r in self
            .of_kind(api_version, kind)
            .filter(|r| namespace.is_none_or(|ns| r.namespace == ns))
        {
            if let Some(e) = &r.error {
                let status = ApiStatus::of(e, api_version, kind, "");
                let lookup = match namespace {
                    Some(ns) => format!("{api_version}/{kind} in namespace {ns}"),
                    None => format!("{api_version}/{kind}"),
                };
                return Err(NoAnswer {
                    lookup,
                    refusal: Box::new(status),
                });
            }
            items.extend(r.object.clone().map(as_reflector_keeps));
        }
        Ok(Ok(items))
    }

    /// `get_resource`: `Client::get_resource` asks for a namespaced kind in
    /// the namespace given, and refuses the call without one; a
    /// cluster-scoped kind is asked for by name alone, whatever namespace
    /// was given (`Api::all_with`), while the not-found text still shows it.
    fn get_object(&self, o: &ObjectRef<'_>) -> Result<Option<ClusterObject>, ClusterError> {
        if self.is_unserved(o.api_version, o.kind) {
            return Err(unserved(o.api_version, o.kind));
        }
        let is_namespaced = namespaced(self.objects, o.api_version, o.kind);
        if is_namespaced && o.namespace.is_empty() {
            return Err(callback_failure(&format!(
                "Resource {}/{} is namespaced, but no namespace was provided",
                o.api_version, o.kind
            )));
        }
        let found = self
            .of_kind(o.api_version, o.kind)
            .find(|r| r.name == o.name && (!is_namespaced || r.namespace == o.namespace));
        match found {
            None => Ok(None),
            Some(Recorded { error: Some(e), .. }) => {
                let status = ApiStatus::of(e, o.api_version, o.kind, o.name);
                Err(callback_failure(&status.as_policy_server_says()))
            }
            Some(r) => r.object.as_ref().map(raw).transpose(),
        }
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
        self.get_object(o)
    }

    fn list_all(&self, api_version: &str, kind: &str) -> Result<Vec<ClusterObject>, ClusterError> {
        Cluster::list(self, api_version, kind, None)
    }

    /// A list that gets no answer is remembered (see
    /// [`RecordedCluster::unanswered`]); the policy is handed an error so
    /// that its native code can finish, and what it answers is discarded.
    fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<ClusterObject>, ClusterError> {
        self.listed.borrow_mut().push((
            api_version.to_string(),
            kind.to_string(),
            namespace.map(str::to_string),
        ));
        match RecordedCluster::list(self, api_version, kind, namespace) {
            Ok(answer) => answer?.iter().map(raw).collect(),
            Err(none) => {
                let text = none.to_string();
                let _ = self.unanswered.set(none);
                Err(ClusterError(text))
            }
        }
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
        let listed = cluster.list("v1", "Namespace", None).unwrap().unwrap();
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

    fn recorded(kind: &str, namespace: &str, name: &str, error: Option<&str>) -> Recorded {
        Recorded {
            api_version: "v1".into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
            object: error
                .is_none()
                .then(|| serde_json::json!({"metadata": {"name": name}})),
            error: error.map(str::to_string),
        }
    }

    #[test]
    fn a_refused_list_gets_no_answer_and_the_native_run_remembers_it() {
        let refusal = r#"configmaps is forbidden: User "u" cannot list resource "configmaps""#;
        let objects = [recorded("ConfigMap", "a", "c", Some(refusal))];
        let cluster = RecordedCluster::new(&objects);
        let none = cluster.list("v1", "ConfigMap", None).unwrap_err();
        assert_eq!(none.lookup, "v1/ConfigMap");
        assert_eq!(
            (none.refusal.code, none.refusal.message.as_str()),
            (403, refusal)
        );
        assert!(cluster.unanswered().is_none(), "only the trait records it");
        let in_a = cluster.list("v1", "ConfigMap", Some("a")).unwrap_err();
        assert_eq!(in_a.lookup, "v1/ConfigMap in namespace a");
        // Another namespace lists nothing refused: kube-apiserver answers it.
        assert!(cluster
            .list("v1", "ConfigMap", Some("b"))
            .unwrap()
            .unwrap()
            .is_empty());
        let error = Cluster::list_all(&cluster, "v1", "ConfigMap").unwrap_err();
        assert!(
            error.0.starts_with("policy-server never answers: "),
            "{error:?}"
        );
        assert_eq!(cluster.unanswered(), Some(&none));
        // A refused GET is answered: the policy reads the error.
        let get = ObjectRef {
            api_version: "v1",
            kind: "ConfigMap",
            namespace: "a",
            name: "c",
        };
        let error = Cluster::get(&cluster, &get).unwrap_err();
        assert!(
            error
                .0
                .starts_with("Callback evaluation failure: ApiError: "),
            "{error:?}"
        );
    }

    /// kubewarden-controller 3460bb71, `client.rs`: `list_resources_by_namespace`
    /// and `get_resource` check the kind's scope from discovery first.
    #[test]
    fn scope_mismatches_are_refused_with_policy_servers_texts() {
        let objects = [
            recorded("Namespace", "", "a", None),
            recorded("ConfigMap", "a", "c", None),
        ];
        let cluster = RecordedCluster::new(&objects);
        assert_eq!(
            cluster
                .list("v1", "Namespace", Some("a"))
                .unwrap()
                .unwrap_err()
                .0,
            "Callback evaluation failure: resource v1/Namespace is cluster wide. \
             Cannot search for it inside of a namespace"
        );
        assert_eq!(
            cluster
                .list("v1", "Namespace", None)
                .unwrap()
                .unwrap()
                .len(),
            1
        );
        let without_namespace = ObjectRef {
            api_version: "v1",
            kind: "ConfigMap",
            namespace: "",
            name: "c",
        };
        assert_eq!(
            Cluster::get(&cluster, &without_namespace).unwrap_err().0,
            "Callback evaluation failure: Resource v1/ConfigMap is namespaced, \
             but no namespace was provided"
        );
        // A cluster-scoped kind is looked up by name, whatever the namespace.
        let in_a_namespace = ObjectRef {
            api_version: "v1",
            kind: "Namespace",
            namespace: "x",
            name: "a",
        };
        assert!(Cluster::get(&cluster, &in_a_namespace).unwrap().is_some());
        // A kind never recorded is namespaced, as the Flux and ASO kinds are.
        assert!(namespaced(&objects, "v1", "Secret"));
        assert!(!namespaced(&objects, "v1", "Namespace"));
    }

    #[test]
    fn plurals_of_the_corpus_kinds() {
        assert_eq!(plural("Namespace"), "namespaces");
        assert_eq!(plural("GitRepository"), "gitrepositories");
        assert_eq!(plural("Alert"), "alerts");
    }

    /// The text the real policy-server gave for a recorded refusal
    /// (`devtools conformance`, flux-gate/gate-object-lookup-error-refused).
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

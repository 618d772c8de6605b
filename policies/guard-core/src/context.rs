//! What an evaluation may know beyond the request: the instant and the cluster.
//!
//! Hosts supply both: the WASI clock and Kubernetes host calls under
//! policy-server, a pinned instant and recorded objects in tests, the harness
//! and the playground. Nothing in a policy reads the clock itself.

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::request::null_default;
use crate::string_map::StringMap;

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

impl ClusterError {
    /// What went wrong, without policy-server's wrapping, for messages. The
    /// raw text is `Callback evaluation failure: {anyhow Debug}`
    /// ([`not_found_message`]): a Kubernetes API error prints as kube-rs's
    /// `ApiError: {message}: {reason} (Status {...})` followed by
    /// `Caused by:` and the plain `{message}: {reason}`, and with
    /// `RUST_BACKTRACE` set a backtrace follows. The innermost cause is the
    /// sentence kube-apiserver wrote.
    pub fn cause(&self) -> &str {
        let text = self.0.as_str();
        let text = text.split("\n\nStack backtrace:").next().unwrap_or(text);
        let text = match text.split_once("\n\nCaused by:\n") {
            Some((_, causes)) => {
                let last = causes.lines().last().unwrap_or(causes).trim();
                // anyhow numbers a chain of several causes: `    1: text`.
                match last.split_once(": ") {
                    Some((n, rest)) if n.bytes().all(|b| b.is_ascii_digit()) => rest,
                    _ => last,
                }
            }
            None => text,
        };
        let text = text.strip_prefix(CALLBACK_FAILURE).unwrap_or(text);
        // `{message}: {reason}` with an empty reason (an error kube-apiserver
        // did not classify) leaves a dangling colon.
        text.trim_end().trim_end_matches(':')
    }
}

/// The prefix policy-server puts before every failed host call's error.
pub const CALLBACK_FAILURE: &str = "Callback evaluation failure: ";

impl std::fmt::Display for ClusterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.cause())
    }
}

/// policy-server's reply when the object asked for does not exist: the
/// Kubernetes client's `get_opt` answers `None` on a 404 and policy-server
/// turns that into this error (kubewarden/kubewarden-controller 3460bb71,
/// `crates/policy-evaluator/src/callback_handler/kubernetes/client.rs`,
/// `KubernetesClient::get_resource`), which the callback layer prefixes
/// (`crates/policy-evaluator/src/runtimes/callback.rs`,
/// `send_request_and_wait_for_response`, `{e:?}` of an `anyhow!` message is
/// the message itself). The namespace is printed with `Debug` of an
/// `Option<&str>`, as the same formatting does here.
///
/// Only this exact text means "does not exist". Everything else stays an
/// error: a 403 from RBAC (`ApiError: ... Forbidden`), a kind the API server
/// does not serve (a missing CRD: `Cannot find resource {api_version}/{kind}`
/// or `error finding resource ...: ApiError: 404 ...`), a refused grant.
/// Asking with a `metadata.name` field selector through a list would avoid
/// reading an error text, but policy-server starts one watch (a reflector)
/// per distinct selector and keeps it forever, so a name per lookup would
/// grow its memory without bound; `get_resource` is the call it caches.
pub fn not_found_message(object: &ObjectRef<'_>, namespace: Option<&str>) -> String {
    format!(
        "{CALLBACK_FAILURE}Cannot find {}/{} named '{}' inside of namespace '{:?}'",
        object.api_version, object.kind, object.name, namespace
    )
}

/// Whether a `get_resource` error is policy-server's "does not exist":
/// [`not_found_message`] exactly, or followed by the backtrace anyhow's
/// `Debug` appends when policy-server runs with `RUST_BACKTRACE` set
/// (Kubewarden's own test PolicyServers do: kubewarden-controller 3460bb71,
/// `api/policies/v1/factories.go`, `PolicyServerBuilder::Build`).
pub fn is_not_found(error: &str, object: &ObjectRef<'_>, namespace: Option<&str>) -> bool {
    let expected = not_found_message(object, namespace);
    match error.strip_prefix(expected.as_str()) {
        Some(rest) => rest.is_empty() || rest.starts_with("\n\nStack backtrace:\n"),
        None => false,
    }
}

/// An object as the cluster gave it: its JSON text, which each policy reads
/// into a view of the few fields it needs. Building a `Value` tree of a
/// listed object (megabytes of labels and annotations, in the worst case)
/// costs many times what reading past the unneeded fields does.
pub type ClusterObject = Box<RawValue>;

/// Reads a looked-up object into `T`, a view of what a rule needs. The text
/// is JSON (the host checked it), so an error means the object does not
/// have the shape `T` expects.
pub fn read<'a, T: Deserialize<'a>>(object: &'a RawValue) -> Result<T, String> {
    serde_json::from_str(object.get()).map_err(|e| e.to_string())
}

/// A looked-up object's `metadata.annotations`, the rest of it skipped
/// unparsed (its labels and spec may be megabytes).
pub fn annotations(object: &RawValue) -> Result<StringMap, String> {
    annotations_as::<StringMap>(object)
}

/// [`annotations`] read into `M`, a map type that may keep less of them
/// (one key, say) while accepting the same objects.
pub fn annotations_as<M: DeserializeOwned + Default>(object: &RawValue) -> Result<M, String> {
    #[derive(Deserialize)]
    #[serde(bound = "M: DeserializeOwned + Default")]
    struct View<M> {
        #[serde(default, deserialize_with = "null_default")]
        metadata: Metadata<M>,
    }
    // Named for serde's messages: "expected struct Metadata".
    #[derive(Default, Deserialize)]
    #[serde(bound = "M: DeserializeOwned + Default")]
    struct Metadata<M> {
        #[serde(default, deserialize_with = "null_default")]
        annotations: M,
    }
    read::<View<M>>(object).map(|v| v.metadata.annotations)
}

/// Read access to the cluster, as Kubewarden's context-aware host calls give it.
pub trait Cluster {
    /// `kubernetes/get_resource`: the object, or `None` when it does not exist.
    fn get(&self, object: &ObjectRef<'_>) -> Result<Option<ClusterObject>, ClusterError>;
    /// `kubernetes/list_resources_all`: every object of a kind, in every namespace.
    fn list_all(&self, api_version: &str, kind: &str) -> Result<Vec<ClusterObject>, ClusterError>;
    /// The objects of a kind in one namespace (`kubernetes/list_resources_by_namespace`,
    /// which policy-server refuses for cluster-scoped kinds) or, for `None`, in all.
    /// Hosts that can ask for one namespace override this; the default filters
    /// [`Cluster::list_all`] by `metadata.namespace`.
    fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<ClusterObject>, ClusterError> {
        #[derive(Deserialize, Default)]
        struct Meta<'a> {
            #[serde(borrow, default)]
            namespace: Option<std::borrow::Cow<'a, str>>,
        }
        #[derive(Deserialize)]
        struct Head<'a> {
            #[serde(borrow, default)]
            metadata: Option<Meta<'a>>,
        }
        let mut items = self.list_all(api_version, kind)?;
        if let Some(ns) = namespace {
            items.retain(|o| {
                read::<Head<'_>>(o)
                    .ok()
                    .and_then(|h| h.metadata?.namespace)
                    .is_some_and(|n| n == ns)
            });
        }
        Ok(items)
    }
}

/// A cluster with nothing in it, for policies and tests that need none.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCluster;

impl Cluster for NoCluster {
    fn get(&self, _: &ObjectRef<'_>) -> Result<Option<ClusterObject>, ClusterError> {
        Ok(None)
    }
    fn list_all(&self, _: &str, _: &str) -> Result<Vec<ClusterObject>, ClusterError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn object<'a>(api_version: &'a str, kind: &'a str, namespace: &'a str) -> ObjectRef<'a> {
        ObjectRef {
            api_version,
            kind,
            namespace,
            name: "x",
        }
    }

    #[test]
    fn not_found_is_policy_servers_exact_text() {
        assert_eq!(
            not_found_message(&object("v1", "Namespace", ""), None),
            "Callback evaluation failure: Cannot find v1/Namespace named 'x' inside of namespace 'None'"
        );
        assert_eq!(
            not_found_message(
                &object("gating.toolkit.fluxcd.io/v1alpha1", "Gate", "apps"),
                Some("apps")
            ),
            "Callback evaluation failure: Cannot find gating.toolkit.fluxcd.io/v1alpha1/Gate \
             named 'x' inside of namespace 'Some(\"apps\")'"
        );
    }

    #[test]
    fn the_cause_is_what_kube_apiserver_said() {
        let api = ClusterError(
            "Callback evaluation failure: ApiError: ns \"a\" is forbidden: no: Forbidden \
             (Status { code: 403 })\n\nCaused by:\n    ns \"a\" is forbidden: no: Forbidden"
                .into(),
        );
        assert_eq!(api.to_string(), "ns \"a\" is forbidden: no: Forbidden");
        let unclassified = ClusterError(
            "Callback evaluation failure: ApiError: etcd timed out:  (Status { code: 500 })\
             \n\nCaused by:\n    etcd timed out: \n\nStack backtrace:\n   0: x"
                .into(),
        );
        assert_eq!(unclassified.to_string(), "etcd timed out");
        let chain =
            ClusterError("Callback evaluation failure: a\n\nCaused by:\n    0: b\n    1: c".into());
        assert_eq!(chain.to_string(), "c");
        assert_eq!(
            ClusterError("connection refused".into()).to_string(),
            "connection refused"
        );
    }

    #[test]
    fn not_found_with_a_backtrace_is_still_not_found() {
        let ns = object("v1", "Namespace", "");
        let text = not_found_message(&ns, None);
        assert!(is_not_found(&text, &ns, None));
        let traced = format!("{text}\n\nStack backtrace:\n   0: <unknown>\n");
        assert!(is_not_found(&traced, &ns, None));
        assert!(!is_not_found(&format!("{text} (retrying)"), &ns, None));
        assert!(!is_not_found(
            "Callback evaluation failure: ApiError: forbidden",
            &ns,
            None
        ));
    }
}

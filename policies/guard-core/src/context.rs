//! What an evaluation may know beyond the request: the instant and the cluster.
//!
//! Hosts supply both: the WASI clock and Kubernetes host calls under
//! policy-server, a pinned instant and recorded objects in tests, the harness
//! and the playground. Nothing in a policy reads the clock itself.

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::json_text::TextReader;
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

impl ClusterError {
    /// Does the cluster not serve this kind at all (its CRD is not
    /// installed)? policy-server finds a kind through API discovery before
    /// it lists or gets one, and says so when discovery does not know it:
    /// `Cannot find resource {api_version}/{kind}` when the group version is
    /// served without the kind, `error finding resource {api_version} /
    /// {kind}: {e}` with kube-apiserver's 404 when the group version is not
    /// served (kubewarden/policy-evaluator `src/callback_handler/kubernetes/client.rs`
    /// `build_kube_resource`, commit f599912f). No object of such a kind
    /// exists. Any other failure (a timeout, a refused permission) is not
    /// this, and stays an error.
    pub fn is_unserved(&self, api_version: &str, kind: &str) -> bool {
        let text = self.0.as_str();
        if text.contains(&format!("Cannot find resource {api_version}/{kind}")) {
            return true;
        }
        let discovery = format!("error finding resource {api_version} / {kind}: ");
        text.split_once(&discovery).is_some_and(|(_, e)| {
            e.contains("NotFound")
                || e.contains("404")
                || e.contains("could not find the requested resource")
        })
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

/// A looked-up object that does not have the shape a view of it expects:
/// serde's error, whose words (what, at which line and column) are its
/// `Display`; compared by category and position.
#[derive(Debug)]
pub struct ShapeError(pub serde_json::Error);

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ShapeError {}

impl PartialEq for ShapeError {
    fn eq(&self, other: &Self) -> bool {
        crate::request::same_json_error(&self.0, &other.0)
    }
}

impl Eq for ShapeError {}

/// Reads a looked-up object into `T`, a view of what a rule needs. The text
/// is JSON (the host checked it), so an error means the object does not
/// have the shape `T` expects.
pub fn read<'a, T: Deserialize<'a>>(object: &'a RawValue) -> Result<T, ShapeError> {
    serde_json::from_str(object.get()).map_err(ShapeError)
}

/// A looked-up object's `metadata.annotations`, the rest of it skipped
/// unparsed (its labels and spec may be megabytes).
pub fn annotations(object: &RawValue) -> Result<StringMap, ShapeError> {
    annotations_as::<StringMap>(object)
}

/// [`annotations`] read into `M`, a map type that may keep less of them
/// (one key, say) while accepting the same objects.
pub fn annotations_as<M: DeserializeOwned + Default>(object: &RawValue) -> Result<M, ShapeError> {
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

    /// [`Cluster::list`]'s answer as the JSON text of a List, its `items`
    /// the objects, for [`each_listed`]. policy-server's reply is that text
    /// already; the default writes it from [`Cluster::list`].
    fn list_text(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<u8>, ClusterError> {
        self.list(api_version, kind, namespace)
            .map(|items| list_of(&items))
    }
}

/// The JSON text of a List of `items`.
fn list_of(items: &[ClusterObject]) -> Vec<u8> {
    let mut text = b"{\"items\":[".to_vec();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            text.push(b',');
        }
        text.extend_from_slice(item.get().as_bytes());
    }
    text.extend_from_slice(b"]}");
    text
}

/// A List reply's `items` (the List policy-server serializes; any other
/// member is skipped), each read as `T`: its JSON text, owned
/// ([`ClusterObject`]) or borrowed from `text` (`&RawValue`).
pub fn list_items<'a, T: Deserialize<'a>>(text: &'a [u8]) -> Result<Vec<T>, ClusterError> {
    #[derive(Deserialize)]
    struct ListReply<T> {
        #[serde(default = "Option::default")]
        items: Option<Vec<T>>,
    }
    let list: ListReply<T> = serde_json::from_slice(text).map_err(unreadable_reply)?;
    Ok(list.items.unwrap_or_default())
}

/// A host's reply that is not what its call answers.
pub(crate) fn unreadable_reply(e: impl std::fmt::Display) -> ClusterError {
    ClusterError(format!("unreadable reply: {e}"))
}

/// Reads a List reply in one pass through serde: each of its first `limit`
/// items is read into `T` and handed to `each`, the rest only counted;
/// returns how many items the List has. The reference that
/// [`each_listed_in_place`]'s agreement tests hold it to (the policies read
/// Lists in place), so compiled for tests only.
///
/// Only the plain shape is read: an object with at most one `items`, a list
/// or `null`. Any other reply, or an item `T` cannot read, is an error, so
/// that the caller reads the List the long way ([`list_items`]) and gives
/// the answer it would have given; `each` has then seen some items already.
#[cfg(any(test, feature = "testing"))]
pub fn each_listed<'de, T: Deserialize<'de>>(
    text: &'de [u8],
    limit: usize,
    each: impl FnMut(T),
) -> Result<usize, ListError> {
    // Checked as UTF-8 once, in words: read from bytes, serde_json checks
    // every string it borrows, a third of the reading of a List of Alerts.
    let text = std::str::from_utf8(text).map_err(ListError::NotUtf8)?;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let count = serde::de::Deserializer::deserialize_map(
        &mut deserializer,
        listed::Reply {
            limit,
            each,
            item: std::marker::PhantomData,
        },
    )
    .map_err(ListError::Json)?;
    deserializer.end().map_err(ListError::Json)?;
    Ok(count)
}

/// Why [`each_listed`] could not read a List reply.
#[cfg(any(test, feature = "testing"))]
#[derive(Debug)]
pub enum ListError {
    NotUtf8(std::str::Utf8Error),
    Json(serde_json::Error),
}

#[cfg(any(test, feature = "testing"))]
impl std::fmt::Display for ListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotUtf8(e) => e.fmt(f),
            Self::Json(e) => e.fmt(f),
        }
    }
}

/// Reads a List reply in one pass, in place: each of its first `limit`
/// items is read by `read` from a [`TextReader`] (which must read the
/// item's whole value) and handed to `each`, the rest only counted; returns
/// how many items the List has, as `each_listed` (serde's reading, in the
/// tests) would. `None` where serde would fail, or where `read` or the
/// reader do not answer for the text (see [`TextReader`]); the caller then
/// reads the List the long way ([`list_items`]), `each` having seen some
/// items already.
pub fn each_listed_in_place<'t, T>(
    text: &'t [u8],
    limit: usize,
    mut read: impl FnMut(&mut TextReader<'t>) -> Option<T>,
    mut each: impl FnMut(T),
) -> Option<usize> {
    let text = std::str::from_utf8(text).ok()?;
    let mut reader = TextReader::new(text);
    let mut count = None;
    reader.object(|reader, name| {
        if name != "items" {
            return reader.skip();
        }
        if count.is_some() {
            return None;
        }
        let mut items: usize = 0;
        if !reader.null() {
            reader.list(|reader| {
                if items < limit {
                    each(read(reader)?);
                } else {
                    reader.skip()?;
                }
                items = items.saturating_add(1);
                Some(())
            })?;
        }
        count = Some(items);
        Some(())
    })?;
    reader.end()?;
    Some(count.unwrap_or(0))
}

/// [`each_listed`]'s readers: the List, then its `items`.
#[cfg(any(test, feature = "testing"))]
mod listed {
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::{
        DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor,
    };
    use serde::Deserialize;

    pub(super) struct Reply<T, F> {
        pub(super) limit: usize,
        pub(super) each: F,
        pub(super) item: PhantomData<fn() -> T>,
    }

    impl<'de, T: Deserialize<'de>, F: FnMut(T)> Visitor<'de> for Reply<T, F> {
        type Value = usize;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a List")
        }
        fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<usize, A::Error> {
            let mut count = None;
            while let Some(key) = map.next_key::<&'de str>()? {
                if key != "items" {
                    map.next_value::<IgnoredAny>()?;
                } else if count.is_some() {
                    return Err(A::Error::custom("duplicate field `items`"));
                } else {
                    count = Some(map.next_value_seed(Items(&mut self))?);
                }
            }
            Ok(count.unwrap_or(0))
        }
    }

    struct Items<'r, T, F>(&'r mut Reply<T, F>);

    impl<'de, T: Deserialize<'de>, F: FnMut(T)> DeserializeSeed<'de> for Items<'_, T, F> {
        type Value = usize;
        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
            deserializer.deserialize_option(self)
        }
    }

    impl<'de, T: Deserialize<'de>, F: FnMut(T)> Visitor<'de> for Items<'_, T, F> {
        type Value = usize;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of items")
        }
        fn visit_none<E: Error>(self) -> Result<usize, E> {
            Ok(0)
        }
        fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
            deserializer.deserialize_seq(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut count: usize = 0;
            while count < self.0.limit {
                match seq.next_element::<T>()? {
                    Some(item) => (self.0.each)(item),
                    None => return Ok(count),
                }
                count = count.saturating_add(1);
            }
            while seq.next_element::<IgnoredAny>()?.is_some() {
                count = count.saturating_add(1);
            }
            Ok(count)
        }
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

    #[test]
    fn a_kind_the_cluster_does_not_serve_is_told_from_other_failures() {
        let missing_kind = ClusterError(format!(
            "{CALLBACK_FAILURE}Cannot find resource fluxcd.controlplane.io/v1/ResourceSet"
        ));
        assert!(missing_kind.is_unserved("fluxcd.controlplane.io/v1", "ResourceSet"));
        assert!(!missing_kind.is_unserved("fluxcd.controlplane.io/v1", "FluxInstance"));
        let missing_group = ClusterError(format!(
            "{CALLBACK_FAILURE}error finding resource fluxcd.controlplane.io/v1 / FluxInstance: \
             ApiError: the server could not find the requested resource: NotFound \
             (ErrorResponse {{ status: \"Failure\", code: 404 }})"
        ));
        assert!(missing_group.is_unserved("fluxcd.controlplane.io/v1", "FluxInstance"));
        let timeout = ClusterError(format!(
            "{CALLBACK_FAILURE}error finding resource fluxcd.controlplane.io/v1 / FluxInstance: \
             HyperError: operation timed out"
        ));
        assert!(!timeout.is_unserved("fluxcd.controlplane.io/v1", "FluxInstance"));
        let forbidden = ClusterError(format!("{CALLBACK_FAILURE}ApiError: forbidden: Forbidden"));
        assert!(!forbidden.is_unserved("fluxcd.controlplane.io/v1", "FluxInstance"));
    }

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

    /// A List read in one pass holds the items the long way finds, the
    /// ones past the limit only counted; a List of another shape is left
    /// to the long way.
    #[test]
    fn a_list_read_in_one_pass_as_its_items_are() {
        let items: Vec<ClusterObject> = ["{\"a\":1}", "[2]", "\"x\"", "null"]
            .iter()
            .map(|t| RawValue::from_string(t.to_string()).unwrap())
            .collect();
        let text = NoCluster.list_text("v1", "Pod", None).unwrap();
        assert!(list_items::<&RawValue>(&text).unwrap().is_empty());
        let text = list_of(&items);
        let texts: Vec<&str> = list_items::<&RawValue>(&text)
            .unwrap()
            .iter()
            .map(|r| r.get())
            .collect();
        for limit in 0..6 {
            let mut seen = Vec::new();
            let count = each_listed::<&RawValue>(&text, limit, |r| seen.push(r.get())).unwrap();
            assert_eq!(count, 4);
            assert_eq!(seen, texts.get(..limit.min(4)).unwrap());
        }
        for other in [
            &b"{\"items\":[],\"items\":[]}"[..],
            b"[[]]",
            b"{\"items\":{}}",
            b"{} {}",
        ] {
            assert!(each_listed::<&RawValue>(other, 9, |_| ()).is_err());
        }
        assert_eq!(
            each_listed::<&RawValue>(b"{\"items\":null}", 9, |_| ()).ok(),
            Some(0)
        );
    }

    /// Read in place, a List gives what [`each_listed`] gives, or gives way:
    /// items read as borrowed strings, Lists of every shape the fragments
    /// below make, at every limit.
    #[test]
    fn a_list_read_in_place_as_serde_reads_it() {
        let items = [
            r#""a""#,
            r#""b c""#,
            r#""""#,
            r#""e\"""#,
            "null",
            "1",
            "{}",
            r#"["x"]"#,
            "\"\u{1}\"",
        ];
        let others = [
            r#""kind":"List""#,
            r#""metadata":{"resourceVersion":"7"}"#,
            r#""x":[1,{"y":null}]"#,
            r#""x":tru"#,
        ];
        let mut rng = crate::testing::Rng::new(5);
        let mut next = |n: usize| rng.below(n);
        let mut answered = 0;
        for round in 0..3000 {
            // Half the rounds only strings serde borrows: then read in place.
            let kinds = if round % 2 == 0 { 3 } else { items.len() };
            let list: Vec<&str> = (0..next(6)).map(|_| items[next(kinds)]).collect();
            let shape = next(8);
            let mut members = vec![match shape {
                0 => "\"items\":null".to_string(),
                1 => format!("\"items\":[{}],\"items\":[]", list.join(",")),
                2 => format!("\"items\":[{},]", list.join(",")),
                _ => format!("\"items\": [ {} ]", list.join(" , ")),
            }];
            let other = next(others.len());
            if round % 3 == 0 {
                members.insert(next(2), others[other].to_string());
            }
            let plain = kinds == 3 && shape != 1 && shape != 2 && (round % 3 != 0 || other != 3);
            let text = format!(" {{{}}} ", members.join(","));
            let limit = next(5);
            let mut fast = Vec::new();
            let in_place =
                each_listed_in_place(text.as_bytes(), limit, TextReader::plain_string, |s| {
                    fast.push(s)
                });
            let mut slow = Vec::new();
            let serde = each_listed::<&str>(text.as_bytes(), limit, |s| slow.push(s));
            match in_place {
                Some(count) => {
                    assert_eq!((Some(count), fast), (serde.ok(), slow), "{text}");
                    answered += 1;
                }
                None => assert!(!plain, "a plain List left to serde: {text}"),
            }
        }
        assert!(answered > 1000, "{answered}");
        assert_eq!(
            each_listed_in_place(b"[]", 3, TextReader::plain_string, drop),
            None
        );
        assert_eq!(
            each_listed_in_place(b"{} x", 3, TextReader::plain_string, drop),
            None
        );
        assert_eq!(
            each_listed_in_place(b"{\"items\":[\"\xff\"]}", 3, TextReader::plain_string, drop),
            None
        );
        assert_eq!(
            each_listed_in_place(b"{}", 3, TextReader::plain_string, drop),
            Some(0)
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

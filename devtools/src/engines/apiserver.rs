//! A small Kubernetes API server on loopback that serves a case's recorded
//! objects, so that the real policy-server answers context-aware lookups
//! through its own callback path (kube-rs client, `get_opt`, reflectors).
//!
//! It serves what that path asks (kubewarden/kubewarden-controller 3460bb71,
//! `crates/policy-evaluator/src/callback_handler/kubernetes/client.rs`):
//! discovery (`/api/v1`, `/apis/{group}/{version}`, from which `build_kube_resource`
//! takes the plural and the scope), GET of one object (a missing one is the
//! `404 NotFound` Status that `get_opt` turns into "Cannot find …"), and LIST
//! with the WATCH that follows it (a reflector lists, then watches; the watch
//! stays open and quiet, as nothing changes during a case). A recorded
//! `error` is answered with [`ApiStatus`], the Status kube-apiserver sends.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use conformance::cluster::{namespaced, plural, ApiStatus, Recorded};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use host_test::capabilities::ContextAwareResource;

/// One kind the server knows.
#[derive(Debug, Clone)]
struct Kind {
    api_version: String,
    kind: String,
    plural: String,
    namespaced: bool,
}

struct Cluster {
    kinds: Vec<Kind>,
    objects: Vec<Recorded>,
}

/// A running server; dropping it stops it.
pub struct ApiServer {
    pub addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl ApiServer {
    /// Serves `objects`; `granted` adds kinds that have no recorded object.
    pub async fn start(
        objects: Vec<Recorded>,
        granted: &[ContextAwareResource],
    ) -> std::io::Result<Self> {
        let cluster = Arc::new(Cluster {
            kinds: kinds(&objects, granted),
            objects,
        });
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let app = Router::new().fallback(serve).with_state(cluster);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Self { addr, _stop: stop })
    }

    /// A kubeconfig that points a kube-rs client here, without credentials.
    pub fn kubeconfig(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: corpus\n  cluster:\n    server: http://{}\n\
             users:\n- name: corpus\n  user: {{}}\ncontexts:\n- name: corpus\n  context:\n    cluster: corpus\n    user: corpus\n\
             current-context: corpus\n",
            self.addr
        )
    }
}

/// The kinds to serve: every recorded and every granted one. Plurals follow
/// the English rule the Flux, ASO and core kinds of the corpus use; which
/// kinds are cluster-scoped is the harness's own rule (`cluster::namespaced`).
fn kinds(objects: &[Recorded], granted: &[ContextAwareResource]) -> Vec<Kind> {
    let mut pairs: Vec<(String, String)> = objects
        .iter()
        .map(|o| (o.api_version.clone(), o.kind.clone()))
        .chain(
            granted
                .iter()
                .map(|g| (g.api_version.clone(), g.kind.clone())),
        )
        .collect();
    pairs.sort();
    pairs.dedup();
    pairs
        .into_iter()
        .map(|(api_version, kind)| Kind {
            plural: plural(&kind),
            namespaced: namespaced(objects, &api_version, &kind),
            api_version,
            kind,
        })
        .collect()
}

/// What a path names.
enum Target<'a> {
    Version,
    Discovery(&'a str),
    Collection {
        api_version: String,
        plural: &'a str,
        namespace: Option<&'a str>,
    },
    Object {
        api_version: String,
        plural: &'a str,
        namespace: Option<&'a str>,
        name: &'a str,
    },
}

fn parse(path: &str) -> Option<Target<'_>> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (api_version, rest): (String, &[&str]) = match segments.as_slice() {
        ["version"] => return Some(Target::Version),
        ["api", "v1", rest @ ..] => ("v1".into(), rest),
        ["apis", group, version, rest @ ..] => (format!("{group}/{version}"), rest),
        _ => return None,
    };
    Some(match rest {
        [] => {
            let gv = path.trim_matches('/');
            let gv = gv
                .strip_prefix("api/")
                .or_else(|| gv.strip_prefix("apis/"))?;
            Target::Discovery(gv)
        }
        [plural] => Target::Collection {
            api_version,
            plural,
            namespace: None,
        },
        [plural, name] => Target::Object {
            api_version,
            plural,
            namespace: None,
            name,
        },
        ["namespaces", namespace, plural] => Target::Collection {
            api_version,
            plural,
            namespace: Some(namespace),
        },
        ["namespaces", namespace, plural, name] => Target::Object {
            api_version,
            plural,
            namespace: Some(namespace),
            name,
        },
        _ => return None,
    })
}

async fn serve(
    State(cluster): State<Arc<Cluster>>,
    uri: Uri,
    Query(query): Query<Vec<(String, String)>>,
) -> Response {
    let param = |k: &str| {
        query
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    if param("labelSelector").is_some_and(|s| !s.is_empty())
        || param("fieldSelector").is_some_and(|s| !s.is_empty())
    {
        return failure(&ApiStatus::plain(
            400,
            "BadRequest",
            "this test server serves no selectors",
        ));
    }
    match parse(uri.path()) {
        Some(Target::Version) => json_reply(json!({
            "major": "1", "minor": "34", "gitVersion": "v1.34.0", "gitCommit": "",
            "gitTreeState": "clean", "buildDate": "", "goVersion": "", "compiler": "gc",
            "platform": "linux/amd64",
        })),
        Some(Target::Discovery(group_version)) => discovery(&cluster, group_version),
        Some(Target::Collection {
            api_version,
            plural,
            namespace,
        }) => match cluster.kind(&api_version, plural) {
            None => not_served(),
            Some(_) if matches!(param("watch"), Some("true" | "1")) => quiet_watch(),
            Some(kind) => list(&cluster, kind, namespace),
        },
        Some(Target::Object {
            api_version,
            plural,
            namespace,
            name,
        }) => match cluster.kind(&api_version, plural) {
            None => not_served(),
            Some(kind) => get(&cluster, kind, namespace, name),
        },
        None => not_served(),
    }
}

impl Cluster {
    fn kind(&self, api_version: &str, plural: &str) -> Option<&Kind> {
        self.kinds
            .iter()
            .find(|k| k.api_version == api_version && k.plural == plural)
    }

    fn of_kind<'a>(&'a self, kind: &'a Kind) -> impl Iterator<Item = &'a Recorded> + 'a {
        self.objects
            .iter()
            .filter(|o| o.api_version == kind.api_version && o.kind == kind.kind)
    }
}

fn discovery(cluster: &Cluster, group_version: &str) -> Response {
    let resources: Vec<Value> = cluster
        .kinds
        .iter()
        .filter(|k| k.api_version == group_version)
        .map(|k| {
            json!({
                "name": k.plural,
                "singularName": k.kind.to_ascii_lowercase(),
                "namespaced": k.namespaced,
                "kind": k.kind,
                "verbs": ["get", "list", "watch"],
            })
        })
        .collect();
    if resources.is_empty() {
        return not_served();
    }
    json_reply(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}

fn get(cluster: &Cluster, kind: &Kind, namespace: Option<&str>, name: &str) -> Response {
    let found = cluster
        .of_kind(kind)
        .find(|o| o.name == name && o.namespace == namespace.unwrap_or(""));
    match found {
        Some(Recorded {
            error: Some(message),
            ..
        }) => failure(&ApiStatus::of(message, &kind.api_version, &kind.kind, name)),
        Some(Recorded {
            object: Some(object),
            ..
        }) => json_reply(object.clone()),
        _ => failure(&ApiStatus::not_found(&kind.api_version, &kind.kind, name)),
    }
}

fn list(cluster: &Cluster, kind: &Kind, namespace: Option<&str>) -> Response {
    let mut items = Vec::new();
    for o in cluster
        .of_kind(kind)
        .filter(|o| namespace.is_none_or(|ns| o.namespace == ns))
    {
        if let Some(message) = &o.error {
            return failure(&ApiStatus::of(message, &kind.api_version, &kind.kind, ""));
        }
        items.extend(o.object.clone());
    }
    json_reply(json!({
        "apiVersion": kind.api_version,
        "kind": format!("{}List", kind.kind),
        "metadata": {"resourceVersion": "1"},
        "items": items,
    }))
}

/// A watch that reports nothing and stays open until the server stops.
fn quiet_watch() -> Response {
    let body = Body::from_stream(futures_util::stream::pending::<Result<Bytes, Infallible>>());
    (StatusCode::OK, [("content-type", "application/json")], body).into_response()
}

/// A failure, as kube-apiserver answers it.
fn failure(status: &ApiStatus) -> Response {
    let code = StatusCode::from_u16(status.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        code,
        [("content-type", "application/json")],
        status.body().to_string(),
    )
        .into_response()
}

fn not_served() -> Response {
    failure(&ApiStatus::plain(
        404,
        "NotFound",
        "the server could not find the requested resource",
    ))
}

fn json_reply(body: Value) -> Response {
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(kind: &str, namespace: &str, name: &str, error: Option<&str>) -> Recorded {
        let api_version = if kind == "Namespace" { "v1" } else { "g.io/v1" };
        Recorded {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
            object: error.is_none().then(
                || json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}),
            ),
            error: error.map(str::to_string),
        }
    }

    /// The answers kube-rs turns into policy-server's texts: the scope from
    /// discovery, a missing object as a NotFound Status, a refusal as 403.
    #[tokio::test]
    async fn serves_what_policy_servers_client_reads() {
        let objects = vec![
            recorded("Namespace", "", "shop", None),
            recorded(
                "Gate",
                "ops",
                "locked",
                Some(
                    "gates.g.io \"locked\" is forbidden: User \"u\" cannot get resource \"gates\"",
                ),
            ),
        ];
        let server = ApiServer::start(objects, &[]).await.unwrap();
        let get = |path: &str| {
            let url = format!("http://{}{path}", server.addr);
            async move {
                let r = reqwest::get(url).await.unwrap();
                (r.status().as_u16(), r.json::<Value>().await.unwrap())
            }
        };
        let (code, core) = get("/api/v1").await;
        assert_eq!(code, 200);
        assert_eq!(core["resources"][0]["name"], "namespaces");
        assert_eq!(core["resources"][0]["namespaced"], false);
        let (code, _) = get("/api/v1/namespaces/shop").await;
        assert_eq!(code, 200);
        let (code, missing) = get("/api/v1/namespaces/absent").await;
        assert_eq!((code, missing["reason"].as_str()), (404, Some("NotFound")));
        assert_eq!(missing["message"], "namespaces \"absent\" not found");
        let (code, refused) = get("/apis/g.io/v1/namespaces/ops/gates/locked").await;
        assert_eq!((code, refused["reason"].as_str()), (403, Some("Forbidden")));
        assert_eq!(refused["details"]["name"], "locked");
        let (code, list) = get("/api/v1/namespaces").await;
        assert_eq!(code, 200);
        assert_eq!(list["items"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn paths_name_what_kube_rs_asks() {
        assert!(matches!(parse("/api/v1"), Some(Target::Discovery("v1"))));
        assert!(matches!(
            parse("/apis/notification.toolkit.fluxcd.io/v1beta3"),
            Some(Target::Discovery("notification.toolkit.fluxcd.io/v1beta3"))
        ));
        assert!(matches!(
            parse("/api/v1/namespaces/shop"),
            Some(Target::Object {
                name: "shop",
                namespace: None,
                ..
            })
        ));
        assert!(matches!(
            parse("/apis/g.io/v1/namespaces/ns/gates/a"),
            Some(Target::Object {
                name: "a",
                namespace: Some("ns"),
                ..
            })
        ));
        assert!(matches!(
            parse("/apis/g.io/v1/alerts"),
            Some(Target::Collection {
                namespace: None,
                ..
            })
        ));
    }
}

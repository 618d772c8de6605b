//! Protected resources inside an ASO resource being deleted. ASO deletes a
//! resource with one ARM DELETE of its `resource-id`, and Azure deletes
//! everything inside it (a ResourceGroup's servers, a server's databases),
//! whatever their own reconcile policy says. So protection follows the whole
//! tree, found two ways:
//!
//! - by ARM id: a resource whose `serviceoperator.azure.com/resource-id`, or
//!   whose owner's `spec.owner.armId`, lies inside the deleted one's id, in
//!   any namespace (an owner in another namespace can only be named by ARM
//!   id, and ASO then sets no owner reference);
//! - by the owner chain in Kubernetes: an owner reference (ASO records the
//!   resolved owner, with its uid, once it claimed the child), or for a child
//!   not claimed yet its `spec.owner.name` in the same namespace, leading to
//!   the deleted object or to anything already found inside it.

use std::borrow::Cow;
use std::collections::BTreeSet;

use guard_core::request::null_default;
use guard_core::{context, Cluster, ClusterObject, StringMap};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::failure::{Failure, LookupError, Search};
use crate::settings::{DeletionProtection, ProtectedKind, MAX_LISTED_KINDS};
use crate::values::{deletes_more, Removes, RESOURCE_ID};

/// A protected object inside the deleted one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Child {
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

/// The object being deleted, as stored.
pub(crate) struct Owner<'a> {
    pub name: &'a str,
    pub uid: &'a str,
    pub namespace: &'a str,
    /// Its `serviceoperator.azure.com/resource-id`, the id ASO deletes.
    pub resource_id: Option<&'a str>,
    /// What its kind's delete code removes besides that id.
    pub more: Option<&'a More>,
}

/// What an ASO kind's own delete code removes in Azure besides the
/// object's `resource-id` ([`guard_core::model::aso::DELETES_MORE`]), for
/// the object being deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum More {
    /// The subscription `/subscriptions/<id>`, cancelled first.
    Subscription(String),
    /// The resource `product` (an ARM id), and the objects of
    /// `group`/`kind` inside `parent` whose `spec.scope` is one of `scopes`.
    Scoped {
        group: &'static str,
        kind: &'static str,
        parent: String,
        product: String,
        scopes: Vec<String>,
    },
}

impl More {
    /// The ARM ids it removes, with everything inside them.
    fn roots(&self) -> [&str; 1] {
        match self {
            Self::Subscription(id) => [id.as_str()],
            Self::Scoped { product, .. } => [product.as_str()],
        }
    }

    /// Whether `n` is one of the scoped objects it removes.
    fn scopes(&self, n: &Node<'_>) -> bool {
        let Self::Scoped {
            group,
            kind,
            parent,
            scopes,
            ..
        } = self
        else {
            return false;
        };
        let scope = n.listed.spec.scope.as_ref();
        n.group == *group
            && n.kind == *kind
            && !scope.is_empty()
            && scopes.iter().any(|s| same_id(s, scope))
            && n.listed
                .metadata
                .annotations
                .get(RESOURCE_ID)
                .is_some_and(|id| within(id, parent))
    }
}

/// What deleting an object of `group`/`kind` named `name` with `resource_id`
/// removes besides that id, as the model records its kind's delete code;
/// `subscription` is its `status.properties.subscriptionId`, read only for
/// the kind whose code reads it. `None` when it removes nothing more.
pub(crate) fn more(
    group: &str,
    kind: &str,
    name: &str,
    resource_id: Option<&str>,
    subscription: impl FnOnce() -> Result<Option<String>, Failure>,
) -> Result<Option<More>, Failure> {
    let Some(d) = deletes_more(group, kind) else {
        return Ok(None);
    };
    match d.removes {
        Removes::SubscriptionInStatus => Ok(subscription()?
            .filter(|id| !id.is_empty())
            .map(|id| More::Subscription(format!("/subscriptions/{id}")))),
        Removes::Scoped {
            group,
            kind,
            collection,
        } => {
            // The extension deletes in the parent of the object's id; without
            // an id ASO issues nothing.
            let Some(id) = resource_id.map(|id| id.trim_end_matches('/')) else {
                return Ok(None);
            };
            let Some((parent, own)) = id
                .rsplit_once('/')
                .and_then(|(rest, own)| Some((rest.rsplit_once('/')?.0, own)))
            else {
                return Ok(None);
            };
            let product = format!("{parent}/{collection}/{name}");
            let mut scopes = Vec::new();
            for n in [own, name] {
                scopes.push(format!("/{collection}/{n}"));
                scopes.push(format!("{parent}/{collection}/{n}"));
            }
            Ok(Some(More::Scoped {
                group,
                kind,
                parent: parent.to_string(),
                product,
                scopes,
            }))
        }
    }
}

/// What is read of a listed object; the rest of it is skipped unparsed.
#[derive(Deserialize)]
pub(crate) struct Listed<'a> {
    #[serde(borrow, default, deserialize_with = "null_default")]
    pub metadata: ListedMeta<'a>,
    #[serde(borrow, default, deserialize_with = "null_default")]
    spec: ListedSpec<'a>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListedMeta<'a> {
    #[serde(borrow, default, deserialize_with = "null_default")]
    pub name: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "null_default")]
    pub namespace: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "null_default")]
    uid: Cow<'a, str>,
    /// Read only when a label selector asks.
    #[serde(borrow, default)]
    labels: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "null_default")]
    pub annotations: StringMap,
    #[serde(borrow, default, deserialize_with = "null_default")]
    pub finalizers: Vec<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub deletion_timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "null_default")]
    owner_references: Vec<OwnerReference<'a>>,
}

#[derive(Deserialize)]
struct OwnerReference<'a> {
    #[serde(borrow, default, deserialize_with = "null_default")]
    uid: Cow<'a, str>,
}

#[derive(Default, Deserialize)]
struct ListedSpec<'a> {
    #[serde(borrow, default, deserialize_with = "null_default")]
    owner: SpecOwner<'a>,
    /// What an API Management subscription is for (`/products/<name>`, ...).
    #[serde(borrow, default, deserialize_with = "null_default")]
    scope: Cow<'a, str>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecOwner<'a> {
    #[serde(borrow, default, deserialize_with = "null_default")]
    name: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "null_default")]
    arm_id: Cow<'a, str>,
}

impl Listed<'_> {
    /// Whether the protection's namespaces and label selector (if any) select it.
    pub fn selected(&self, p: &DeletionProtection) -> Result<bool, Failure> {
        if !p.namespaces.is_empty() && !p.namespaces.iter().any(|n| *n == self.metadata.namespace) {
            return Ok(false);
        }
        let Some(selector) = &p.label_selector else {
            return Ok(true);
        };
        let labels: StringMap = match self.metadata.labels {
            Some(raw) => context::read::<Option<StringMap>>(raw)
                .map_err(|error| Failure::Labels {
                    name: self.metadata.name.to_string(),
                    error,
                })?
                .unwrap_or_default(),
            None => StringMap::default(),
        };
        Ok(selector.matches(&labels))
    }
}

/// Whether any protected kind can be looked up, i.e. lists a version.
pub(crate) fn needed(p: &DeletionProtection) -> bool {
    p.kinds.iter().any(|k| k.api_version().is_some())
}

/// The objects of each protected kind with a version in `namespace`, or in
/// every namespace: one list per kind. `Err` names the lookup that failed.
pub(crate) fn list<'p>(
    p: &'p DeletionProtection,
    namespace: Option<&str>,
    search: Search,
    cluster: &dyn Cluster,
) -> Result<Vec<(&'p ProtectedKind, Vec<ClusterObject>)>, Failure> {
    let mut lists = Vec::new();
    for k in &p.kinds {
        let Some(api_version) = k.api_version() else {
            continue;
        };
        let items = cluster
            .list(&api_version, &k.kind, namespace)
            .map_err(|e| cannot(k, namespace, search, LookupError::Cluster(e)))?;
        lists.push((k, items));
    }
    Ok(lists)
}

/// A lookup that failed or answered what does not read.
pub(crate) fn cannot(
    k: &ProtectedKind,
    scope: Option<&str>,
    search: Search,
    error: LookupError,
) -> Failure {
    Failure::List {
        api_version: k.api_version().unwrap_or_default(),
        kind: k.kind.clone(),
        namespace: scope.map(str::to_string),
        search,
        error,
    }
}

/// One listed object, as the walk needs it.
struct Node<'a> {
    group: &'a str,
    kind: &'a str,
    listed: Listed<'a>,
    /// Found inside the deleted object.
    inside: bool,
}

/// Every protected object inside the deleted one, in any namespace it can
/// be. `Err` names the lookup that failed: without it the answer is unknown.
pub(crate) fn protected_inside(
    owner: &Owner<'_>,
    p: &DeletionProtection,
    cluster: &dyn Cluster,
) -> Result<Vec<Child>, Failure> {
    const SEARCH: Search = Search::Inside;
    let lists = lists_that_can_hold(p, SEARCH, cluster)?;
    let mut nodes = Vec::new();
    let mut seen = BTreeSet::new();
    for (k, scope, items) in &lists {
        for raw in items {
            // kube-apiserver stored it past its schema; an object that does
            // not read is a broken reply, and what it is inside stays unknown.
            let listed: Listed<'_> =
                context::read(raw).map_err(|e| cannot(k, *scope, SEARCH, LookupError::Shape(e)))?;
            // The same object listed twice (two versions of one kind) counts once.
            let uid = listed.metadata.uid.clone();
            if !uid.is_empty() && !seen.insert(uid) {
                continue;
            }
            nodes.push(Node {
                group: &k.group,
                kind: &k.kind,
                listed,
                inside: false,
            });
        }
    }
    walk(owner, &mut nodes);
    let mut children = Vec::new();
    for n in nodes.iter().filter(|n| n.inside) {
        if n.listed.selected(p)? {
            children.push(Child {
                kind: n.kind.to_string(),
                namespace: n.listed.metadata.namespace.to_string(),
                name: n.listed.metadata.name.to_string(),
            });
        }
    }
    Ok(children)
}

/// The lists that can hold a protected object inside the deleted one: each
/// protected kind in every namespace, or, when `namespaces` narrows the
/// protection, in each of those. That leaves out no protected object inside:
/// one in another namespace than the deleted object is inside it by ARM id
/// alone, judged against the deleted object's id, and a chain of owner
/// references or owner names stays within one namespace (the garbage
/// collector looks a namespaced owner up in the dependent's own namespace:
/// kubernetes/kubernetes 02830ed2, `pkg/controller/garbagecollector/garbagecollector.go`,
/// `isDangling`; ASO resolves `spec.owner.name` there too), so it never
/// passes through a namespace that is not protected. Per namespace only
/// while that takes no more lists than one per kind may (`MAX_LISTED_KINDS`):
/// each distinct list is a watch policy-server starts and keeps
/// (kubewarden/kubewarden-controller 3460bb71,
/// `crates/policy-evaluator/src/callback_handler/kubernetes/client.rs`,
/// `list_resources_from_reflector`; the reflector's id includes the namespace).
#[expect(clippy::type_complexity, reason = "kind, scope, objects")]
fn lists_that_can_hold<'p>(
    p: &'p DeletionProtection,
    search: Search,
    cluster: &dyn Cluster,
) -> Result<Vec<(&'p ProtectedKind, Option<&'p str>, Vec<ClusterObject>)>, Failure> {
    let kinds = p.kinds.iter().filter(|k| k.api_version().is_some()).count();
    let per_namespace =
        !p.namespaces.is_empty() && kinds.saturating_mul(p.namespaces.len()) <= MAX_LISTED_KINDS;
    let scopes: Vec<Option<&str>> = if per_namespace {
        p.namespaces.iter().map(|n| Some(n.as_str())).collect()
    } else {
        vec![None]
    };
    let mut lists = Vec::new();
    for scope in scopes {
        for (k, items) in list(p, scope, search, cluster)? {
            lists.push((k, scope, items));
        }
    }
    Ok(lists)
}

/// Marks the nodes inside `owner`: by ARM id first, then along owner
/// references and unclaimed owner names, one level deeper each round, until
/// a round finds nothing new (at most one round per node).
fn walk(owner: &Owner<'_>, nodes: &mut [Node<'_>]) {
    let root_id = owner.resource_id.filter(|id| !id.is_empty());
    let is_owner = |m: &ListedMeta<'_>| !owner.uid.is_empty() && m.uid == owner.uid;
    // What is inside, as owner references (uids) and owner names name it.
    let mut uids: BTreeSet<String> = BTreeSet::new();
    let mut names: BTreeSet<(String, String)> = BTreeSet::new();
    uids.insert(owner.uid.to_string());
    names.insert((owner.namespace.to_string(), owner.name.to_string()));
    let mark =
        |n: &mut Node<'_>, uids: &mut BTreeSet<String>, names: &mut BTreeSet<(String, String)>| {
            n.inside = true;
            let m = &n.listed.metadata;
            uids.insert(m.uid.to_string());
            names.insert((m.namespace.to_string(), m.name.to_string()));
        };
    let more = owner.more;
    let roots: Vec<&str> = root_id
        .into_iter()
        .chain(more.into_iter().flat_map(More::roots))
        .collect();
    for n in nodes.iter_mut() {
        if is_owner(&n.listed.metadata) {
            continue;
        }
        let id = n.listed.metadata.annotations.get(RESOURCE_ID);
        let arm_owner = &n.listed.spec.owner.arm_id;
        // Another object for the same Azure resource (an adoption
        // twice over) goes with it as surely as what lies inside.
        let under = |root: &str| {
            id.is_some_and(|id| same_id(id, root) || within(id, root))
                || (!arm_owner.is_empty() && (same_id(arm_owner, root) || within(arm_owner, root)))
        };
        if roots.iter().any(|root| under(root)) || more.is_some_and(|m| m.scopes(n)) {
            mark(n, &mut uids, &mut names);
        }
    }
    loop {
        let mut found = false;
        for n in nodes.iter_mut() {
            if n.inside || is_owner(&n.listed.metadata) {
                continue;
            }
            if owned_by(n, &uids, &names) {
                mark(n, &mut uids, &mut names);
                found = true;
            }
        }
        if !found {
            break;
        }
    }
}

/// Whether `n` names as its owner something in `uids`/`names`. The owner
/// reference ASO resolved (by uid) decides; a child not yet claimed (no
/// owner references) is judged by `spec.owner.name` in its namespace.
fn owned_by(n: &Node<'_>, uids: &BTreeSet<String>, names: &BTreeSet<(String, String)>) -> bool {
    let m = &n.listed.metadata;
    if !m.owner_references.is_empty() {
        return m
            .owner_references
            .iter()
            .any(|r| !r.uid.is_empty() && uids.contains(r.uid.as_ref()));
    }
    let owner = &n.listed.spec.owner;
    !owner.name.is_empty()
        && owner.arm_id.is_empty()
        && names.contains(&(m.namespace.to_string(), owner.name.to_string()))
}

/// ARM ids are case-insensitive; a trailing `/` changes nothing.
fn same_id(a: &str, b: &str) -> bool {
    a.trim_end_matches('/')
        .eq_ignore_ascii_case(b.trim_end_matches('/'))
}

/// Whether the ARM id `inner` lies strictly inside `outer`: it continues
/// `outer` with a `/` and more segments.
pub(crate) fn within(inner: &str, outer: &str) -> bool {
    let outer = outer.trim_end_matches('/');
    if outer.is_empty() {
        return false;
    }
    let inner = inner.trim_end_matches('/');
    match (inner.get(..outer.len()), inner.get(outer.len()..)) {
        (Some(head), Some(rest)) => {
            head.eq_ignore_ascii_case(outer) && rest.len() > 1 && rest.starts_with('/')
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::children as describe;
    use crate::test_support::{Recorded, RecordedCluster};
    use serde_json::{json, Value};

    /// `objects` recorded under the apiVersion `p` names for their kind (the
    /// test objects carry none of their own).
    fn recorded(p: &DeletionProtection, objects: Vec<Value>) -> Vec<Recorded> {
        let api_version = |kind: &Value| {
            let k = p.kinds.iter().find(|k| *kind == k.kind.as_str())?;
            Some(format!("{}/{}", k.group, k.version.as_deref()?))
        };
        objects
            .into_iter()
            .map(|mut o| {
                o["apiVersion"] = json!(api_version(&o["kind"]));
                Recorded::of(o)
            })
            .collect()
    }

    /// The lists asked for: kind and namespace.
    fn asked(c: &RecordedCluster) -> Vec<(String, Option<String>)> {
        c.listed()
            .into_iter()
            .map(|(_, kind, ns)| (kind, ns))
            .collect()
    }

    fn protection(settings: Value) -> DeletionProtection {
        serde_json::from_value(settings).unwrap()
    }

    const FS: &str = "FlexibleServer";
    const DB: &str = "FlexibleServersDatabase";
    const SUB: &str = "/subscriptions/3f2c1b0a-9e8d-4c7b-a6f5-e4d3c2b1a098";

    fn object(kind: &str, ns: &str, name: &str, uid: &str) -> Value {
        json!({"kind": kind, "metadata": {"name": name, "namespace": ns, "uid": uid}})
    }

    fn with_id(mut o: Value, id: &str) -> Value {
        o["metadata"]["annotations"] = json!({ RESOURCE_ID: format!("{SUB}{id}") });
        o
    }

    /// A `kind` object `ns/name` naming `owner` (resolved to `owner_uid` once claimed).
    fn child(
        kind: &str,
        ns: &str,
        name: &str,
        uid: &str,
        owner: &str,
        owner_uid: Option<&str>,
    ) -> Value {
        owned(object(kind, ns, name, uid), owner, owner_uid)
    }

    fn owned(mut o: Value, owner_name: &str, owner_uid: Option<&str>) -> Value {
        o["spec"] = json!({"owner": {"name": owner_name}});
        if let Some(uid) = owner_uid {
            o["metadata"]["ownerReferences"] = json!([{"name": owner_name, "uid": uid}]);
        }
        o
    }

    fn both() -> DeletionProtection {
        protection(json!({"kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer", "version": "v1api20230601preview"},
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServersDatabase", "version": "v1api20230601preview"}]}))
    }

    const RG: Owner<'static> = Owner {
        name: "shop-rg",
        uid: "9d1c",
        namespace: "shop",
        resource_id: Some(
            "/subscriptions/3f2c1b0a-9e8d-4c7b-a6f5-e4d3c2b1a098/resourceGroups/shop-rg",
        ),
        more: None,
    };

    fn names(children: &[Child]) -> Vec<String> {
        children
            .iter()
            .map(|c| format!("{}/{}", c.namespace, c.name))
            .collect()
    }

    #[test]
    fn an_alias_holds_what_is_in_the_subscription_it_cancels() {
        let p = protection(json!({"kinds": [
            {"group": "resources.azure.com", "kind": "ResourceGroup", "version": "v1api20200601"}]}));
        let rg = with_id(
            object("ResourceGroup", "infra", "rg-shop", "g1"),
            "/resourceGroups/rg-shop",
        );
        let c = recorded(&p, vec![rg]);
        let c = RecordedCluster::new(&c);
        let alias_id = "/providers/Microsoft.Subscription/aliases/shop";
        let more = |sub: Option<&str>| {
            more(
                "subscription.azure.com",
                "Alias",
                "shop",
                Some(alias_id),
                || Ok(sub.map(str::to_string)),
            )
            .unwrap()
        };
        let sub = SUB.trim_start_matches("/subscriptions/");
        let alias = |more| Owner {
            name: "shop",
            uid: "a1",
            namespace: "platform",
            resource_id: Some(alias_id),
            more,
        };
        let cancelled = more(Some(sub));
        assert_eq!(cancelled, Some(More::Subscription(SUB.to_string())));
        let children = protected_inside(&alias(cancelled.as_ref()), &p, &c).unwrap();
        assert_eq!(names(&children), ["infra/rg-shop"]);
        // No subscription id in its status: ASO cancels nothing.
        assert_eq!(more(None), None);
        assert_eq!(more(Some("")), None);
        assert!(protected_inside(&alias(None), &p, &c).unwrap().is_empty());
    }

    #[test]
    fn a_product_holds_the_subscriptions_scoped_to_it() {
        const APIM: &str = "/resourceGroups/rg/providers/Microsoft.ApiManagement/service/apim";
        let p = protection(json!({"kinds": [
            {"group": "apimanagement.azure.com", "kind": "Subscription", "version": "v1api20220801"}]}));
        let sub = |name: &str, uid: &str, scope: &str| {
            let mut o = with_id(
                object("Subscription", "shop", name, uid),
                &format!("{APIM}/subscriptions/{name}"),
            );
            o["spec"] = json!({"scope": scope, "owner": {"name": "apim"}});
            o
        };
        let c = recorded(
            &p,
            vec![
                sub("by-short-scope", "s1", "/products/starter"),
                sub(
                    "by-full-scope",
                    "s2",
                    &format!("{SUB}{APIM}/PRODUCTS/starter"),
                ),
                sub("by-k8s-name", "s3", "/products/starter-object"),
                sub("other-product", "s4", "/products/premium"),
                sub("all-apis", "s5", "/apis"),
            ],
        );
        let c = RecordedCluster::new(&c);
        let id = format!("{SUB}{APIM}/products/starter");
        let more = more(
            "apimanagement.azure.com",
            "Product",
            "starter-object",
            Some(&id),
            || Err(Failure::NoUid),
        )
        .unwrap();
        let product = Owner {
            name: "starter-object",
            uid: "p1",
            namespace: "shop",
            resource_id: Some(&id),
            more: more.as_ref(),
        };
        let children = protected_inside(&product, &p, &c).unwrap();
        assert_eq!(
            names(&children),
            [
                "shop/by-short-scope",
                "shop/by-full-scope",
                "shop/by-k8s-name"
            ]
        );
        // Another kind's delete removes nothing more.
        let none = super::more(
            "resources.azure.com",
            "ResourceGroup",
            "rg",
            Some(&id),
            || Err(Failure::NoUid),
        );
        assert_eq!(none.unwrap(), None);
    }

    #[test]
    fn children_by_owner_reference_or_by_name_before_the_claim() {
        let p = both();
        let c = recorded(
            &p,
            vec![
                child(FS, "shop", "orders-db", "s1", "shop-rg", Some("9d1c")),
                child(FS, "shop", "new-db", "s2", "shop-rg", None),
                // Same name, another owner resolved by ASO (another kind).
                child(FS, "shop", "other-db", "s3", "shop-rg", Some("77aa")),
                child(FS, "shop", "far-db", "s4", "other-rg", None),
                // The name means nothing in another namespace.
                child(FS, "app", "app-db", "s5", "shop-rg", None),
            ],
        );
        let c = RecordedCluster::new(&c);
        let children = protected_inside(&RG, &p, &c).unwrap();
        assert_eq!(names(&children), ["shop/orders-db", "shop/new-db"]);
        assert_eq!(
            describe(&children, "shop"),
            "FlexibleServer \"orders-db\" and FlexibleServer \"new-db\""
        );
    }

    #[test]
    fn grandchildren_through_an_unprotected_or_unlisted_owner() {
        let p = protection(json!({"kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServersDatabase", "version": "v1"}]}));
        // The server is not listed: the database is found by its ARM id.
        let c = recorded(&p, vec![with_id(
            child(DB, "shop", "orders", "d1", "orders-db", Some("s1")),
            "/resourceGroups/shop-rg/providers/Microsoft.DBforPostgreSQL/flexibleServers/orders-db/databases/orders",
        )]);
        let c = RecordedCluster::new(&c);
        let children = protected_inside(&RG, &p, &c).unwrap();
        assert_eq!(names(&children), ["shop/orders"]);
        // Not claimed yet (no id, no owner reference): through the listed server.
        let c = recorded(
            &both(),
            vec![
                child(FS, "shop", "orders-db", "s1", "shop-rg", Some("9d1c")),
                child(DB, "shop", "orders", "d1", "orders-db", None),
                child(DB, "shop", "claimed", "d2", "orders-db", Some("s1")),
            ],
        );
        let c = RecordedCluster::new(&c);
        let children = protected_inside(&RG, &both(), &c).unwrap();
        assert_eq!(
            names(&children),
            ["shop/orders-db", "shop/orders", "shop/claimed"]
        );
    }

    #[test]
    fn across_namespaces_by_arm_id() {
        let p = both();
        let c = recorded(&p, vec![
            // Owner named by ARM id: no owner reference.
            json!({"kind": "FlexibleServer", "metadata": {"name": "app-db", "namespace": "app", "uid": "s9"},
                "spec": {"owner": {"armId": format!("{SUB}/resourcegroups/SHOP-RG")}}}),
            // Claimed, with its id inside the group.
            with_id(object("FlexibleServer", "team", "team-db", "s8"),
                "/resourceGroups/shop-rg/providers/Microsoft.DBforPostgreSQL/flexibleServers/team-db"),
            // Another group whose name starts the same.
            with_id(object("FlexibleServer", "team", "near-db", "s7"),
                "/resourceGroups/shop-rg2/providers/Microsoft.DBforPostgreSQL/flexibleServers/near-db"),
        ]);
        let c = RecordedCluster::new(&c);
        let children = protected_inside(&RG, &p, &c).unwrap();
        assert_eq!(names(&children), ["app/app-db", "team/team-db"]);
        assert_eq!(
            describe(&children, "shop"),
            "FlexibleServer \"app-db\" in namespace \"app\" and FlexibleServer \"team-db\" in \
             namespace \"team\""
        );
        // Every namespace is listed once per kind.
        assert_eq!(
            asked(&c),
            [
                ("FlexibleServer".to_string(), None),
                ("FlexibleServersDatabase".to_string(), None)
            ]
        );
    }

    #[test]
    fn another_object_for_the_same_azure_resource_goes_with_it() {
        let p = protection(json!({"kinds": [
            {"group": "resources.azure.com", "kind": "ResourceGroup", "version": "v1"}]}));
        // Adopted twice: the platform team's object, the id cased and ended
        // differently; and the deleted object itself, which is not reported.
        let c = recorded(
            &p,
            vec![
                with_id(
                    object("ResourceGroup", "infra", "shop-rg", "r2"),
                    "/resourcegroups/SHOP-RG/",
                ),
                with_id(
                    object("ResourceGroup", "shop", "shop-rg", "9d1c"),
                    "/resourceGroups/shop-rg",
                ),
            ],
        );
        let c = RecordedCluster::new(&c);
        assert_eq!(
            names(&protected_inside(&RG, &p, &c).unwrap()),
            ["infra/shop-rg"]
        );
    }

    #[test]
    fn only_protected_namespaces_count() {
        let p = protection(json!({"kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer", "version": "v1"}],
            "namespaces": ["prod", "data"]}));
        let id = "/resourceGroups/shop-rg/providers/Microsoft.DBforPostgreSQL/flexibleServers/";
        let c = recorded(
            &p,
            vec![
                with_id(
                    object("FlexibleServer", "data", "d", "s1"),
                    &format!("{id}d"),
                ),
                with_id(
                    object("FlexibleServer", "app", "a", "s2"),
                    &format!("{id}a"),
                ),
            ],
        );
        let c = RecordedCluster::new(&c);
        assert_eq!(names(&protected_inside(&RG, &p, &c).unwrap()), ["data/d"]);
        // Listed in the protected namespaces only: app's server is not handed over.
        assert_eq!(
            asked(&c),
            [
                (FS.to_string(), Some("prod".to_string())),
                (FS.to_string(), Some("data".to_string()))
            ]
        );
    }

    #[test]
    fn more_namespaces_than_lists_allowed_are_listed_at_once() {
        let namespaces: Vec<String> = (0..17).map(|i| format!("team-{i}")).collect();
        let p = protection(json!({"kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": FS, "version": "v1"},
            {"group": "dbforpostgresql.azure.com", "kind": DB, "version": "v1"}],
            "namespaces": namespaces}));
        let id = "/resourceGroups/shop-rg/providers/Microsoft.DBforPostgreSQL/flexibleServers/d";
        let c = recorded(&p, vec![with_id(object(FS, "team-16", "d", "s1"), id)]);
        let c = RecordedCluster::new(&c);
        assert_eq!(
            names(&protected_inside(&RG, &p, &c).unwrap()),
            ["team-16/d"]
        );
        // 2 kinds x 17 namespaces is more than MAX_LISTED_KINDS lists.
        assert_eq!(asked(&c), [(FS.to_string(), None), (DB.to_string(), None)]);
    }

    #[test]
    fn arm_id_containment() {
        let rg = "/subscriptions/s/resourceGroups/rg";
        assert!(within(
            "/subscriptions/s/resourcegroups/RG/providers/a/b/c",
            rg
        ));
        assert!(within(
            "/subscriptions/s/resourceGroups/rg/x/",
            &format!("{rg}/")
        ));
        assert!(!within(rg, rg));
        assert!(!within(
            "/subscriptions/s/resourceGroups/rg2/providers/a/b/c",
            rg
        ));
        assert!(!within("/subscriptions/s/resourceGroups/rg/", rg));
        assert!(!within("/x", ""));
        assert!(!within(
            "/subscriptions/s/resourceGroups/r\u{e9}",
            "/subscriptions/s/resourceGroups/rg"
        ));
        assert!(same_id("/Subscriptions/S/", "/subscriptions/s"));
    }

    #[test]
    fn the_deleted_object_and_unselected_ones_are_not_reported() {
        let p = protection(json!({"kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer", "version": "v1"}],
            "labelSelector": {"matchLabels": {"tier": "data"}}}));
        let mut web = child(FS, "shop", "web", "s1", "shop-rg", Some("9d1c"));
        web["metadata"]["labels"] = json!({"tier": "web"});
        // Its database is selected, and inside through the unselected server.
        let mut db = child(FS, "shop", "db", "s2", "web", Some("s1"));
        db["metadata"]["labels"] = json!({"tier": "data"});
        let itself = with_id(
            object("FlexibleServer", "shop", "shop-rg", "9d1c"),
            "/resourceGroups/shop-rg/x/y",
        );
        let c = recorded(&p, vec![web, db, itself]);
        let c = RecordedCluster::new(&c);
        assert_eq!(names(&protected_inside(&RG, &p, &c).unwrap()), ["shop/db"]);
        let no_version = protection(
            json!({"kinds": [{"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer"}]}),
        );
        assert!(!needed(&no_version));
        assert!(protected_inside(&RG, &no_version, &c).unwrap().is_empty());
    }

    #[test]
    fn a_failed_list_is_an_error() {
        let p = protection(json!({"kinds": [
            {"group": "storage.azure.com", "kind": "StorageAccount", "version": "v1api20230101"}]}));
        let api_version = "storage.azure.com/v1api20230101";
        let c = [Recorded::failing(
            api_version,
            "StorageAccount",
            "shop",
            "a",
            "forbidden",
        )];
        let c = RecordedCluster::new(&c);
        let e = protected_inside(&RG, &p, &c).unwrap_err();
        // The error the cluster handed the policy (a refused LIST gets no
        // answer from policy-server; the native run carries on with this).
        let error = c.unanswered().unwrap().to_string();
        assert_eq!(
            e,
            Failure::List {
                api_version: api_version.into(),
                kind: "StorageAccount".into(),
                namespace: None,
                search: Search::Inside,
                error: LookupError::Cluster(guard_core::ClusterError(error))
            }
        );
    }

    #[test]
    fn a_listed_object_that_does_not_read_leaves_the_answer_unknown() {
        let p = protection(json!({"kinds": [
            {"group": "storage.azure.com", "kind": "StorageAccount", "version": "v1api20230101"}]}));
        let broken = json!({"kind": "StorageAccount",
            "metadata": {"name": "a", "namespace": "shop", "ownerReferences": "x"}});
        let c = recorded(&p, vec![broken]);
        let e = protected_inside(&RG, &p, &RecordedCluster::new(&c)).unwrap_err();
        assert!(
            matches!(&e, Failure::List { kind, error, .. }
                if kind == "StorageAccount" && matches!(error, LookupError::Shape(e)
                    if e.to_string().starts_with("invalid type: string"))),
            "{e:?}"
        );
    }

    #[test]
    fn long_lists_are_bounded() {
        let many: Vec<Child> = (0..8)
            .map(|i| Child {
                kind: "Vault".into(),
                namespace: "shop".into(),
                name: format!("v{i}"),
            })
            .collect();
        let d = describe(&many, "shop");
        assert!(d.ends_with("Vault \"v4\" and 3 more"), "{d}");
    }
}

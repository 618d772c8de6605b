//! Protected resources inside an owner being deleted. ASO deletes an owner
//! (a ResourceGroup, a server holding databases) with one ARM DELETE, and
//! Azure deletes everything inside it, whatever the children's own reconcile
//! policy says. A child names its owner in `spec.owner`; once ASO has claimed
//! the child it also records the resolved owner, with its uid, in
//! `metadata.ownerReferences`.

use std::borrow::Cow;

use guard_core::names::quote;
use guard_core::request::null_default;
use guard_core::{context, Cluster, StringMap};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::settings::DeletionProtection;

/// A protected object that names the deleted one as its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Child {
    pub kind: String,
    pub name: String,
}

/// The owner being deleted, as stored.
pub struct Owner<'a> {
    pub name: &'a str,
    pub uid: &'a str,
    pub namespace: &'a str,
}

/// What is read of a listed object; the rest of it is skipped unparsed.
#[derive(Deserialize)]
struct Listed<'a> {
    #[serde(borrow, default, deserialize_with = "null_default")]
    metadata: ListedMeta<'a>,
    #[serde(borrow, default, deserialize_with = "null_default")]
    spec: ListedSpec<'a>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListedMeta<'a> {
    #[serde(borrow, default, deserialize_with = "null_default")]
    name: Cow<'a, str>,
    /// Read only when a label selector asks.
    #[serde(borrow, default)]
    labels: Option<&'a RawValue>,
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
}

#[derive(Default, Deserialize)]
struct SpecOwner<'a> {
    #[serde(borrow, default, deserialize_with = "null_default")]
    name: Cow<'a, str>,
}

/// Whether any protected kind can be looked up, i.e. lists a version.
pub fn needed(p: &DeletionProtection) -> bool {
    p.kinds.iter().any(|k| k.api_version().is_some())
}

/// Every protected object in the owner's namespace that it owns. `Err`
/// names the lookup that failed: without it the answer is unknown.
pub fn protected_children(
    owner: &Owner<'_>,
    p: &DeletionProtection,
    cluster: &dyn Cluster,
) -> Result<Vec<Child>, String> {
    if !p.namespaces.is_empty() && !p.namespaces.iter().any(|n| n == owner.namespace) {
        return Ok(Vec::new());
    }
    let mut children = Vec::new();
    for k in &p.kinds {
        let Some(api_version) = k.api_version() else {
            continue;
        };
        let cannot = |e: String| {
            format!(
                "cannot list {api_version} {} in namespace {} to find protected resources it \
                 owns ({}); grant the lookup or retry",
                k.kind,
                quote(owner.namespace),
                quote(&e)
            )
        };
        let items = cluster
            .list(&api_version, &k.kind, Some(owner.namespace))
            .map_err(|e| cannot(e.to_string()))?;
        for raw in &items {
            // kube-apiserver stored it past its schema; an object that does
            // not read is a broken reply, and its owner stays unknown.
            let item: Listed<'_> = context::read(raw).map_err(cannot)?;
            if owned_by(&item, owner) && selected(&item, p)? {
                children.push(Child {
                    kind: k.kind.clone(),
                    name: item.metadata.name.into_owned(),
                });
            }
        }
    }
    Ok(children)
}

fn selected(item: &Listed<'_>, p: &DeletionProtection) -> Result<bool, String> {
    let Some(selector) = &p.label_selector else {
        return Ok(true);
    };
    let labels: StringMap = match item.metadata.labels {
        Some(raw) => context::read::<Option<StringMap>>(raw)
            .map_err(|e| {
                format!(
                    "cannot read the labels of {}: {e}",
                    quote(&item.metadata.name)
                )
            })?
            .unwrap_or_default(),
        None => StringMap::default(),
    };
    Ok(selector.matches(&labels))
}

/// The owner reference ASO resolved (by uid) decides; a child not yet
/// claimed, with no owner references, is judged by the name in `spec.owner`.
fn owned_by(item: &Listed<'_>, owner: &Owner<'_>) -> bool {
    let refs = &item.metadata.owner_references;
    if refs.is_empty() {
        item.spec.owner.name == owner.name
    } else {
        !owner.uid.is_empty() && refs.iter().any(|r| r.uid == owner.uid)
    }
}

/// `FlexibleServer "a", StorageAccount "b" and 3 more`, bounded for messages.
pub fn describe(children: &[Child]) -> String {
    const SHOWN: usize = 5;
    let mut named: Vec<String> = children
        .iter()
        .take(SHOWN)
        .map(|c| format!("{} {}", c.kind, quote(&c.name)))
        .collect();
    if children.len() > SHOWN {
        named.push(format!("{} more", children.len().saturating_sub(SHOWN)));
    }
    match named.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => named.join(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::testing::raw;
    use guard_core::{ClusterError, ClusterObject, ObjectRef};
    use serde_json::{json, Value};

    struct Cluster(Result<Vec<Value>, String>);

    impl guard_core::Cluster for Cluster {
        fn get(&self, _: &ObjectRef<'_>) -> Result<Option<ClusterObject>, ClusterError> {
            Ok(None)
        }
        fn list_all(&self, _: &str, _: &str) -> Result<Vec<ClusterObject>, ClusterError> {
            self.0
                .as_ref()
                .map(|items| items.iter().map(raw).collect())
                .map_err(|e| ClusterError(e.clone()))
        }
    }

    fn protection(settings: Value) -> DeletionProtection {
        serde_json::from_value(settings).unwrap()
    }

    fn server(name: &str, owner: &str, refs: Value, labels: Value) -> Value {
        json!({"metadata": {"name": name, "namespace": "shop", "labels": labels,
            "ownerReferences": refs}, "spec": {"owner": {"name": owner}}})
    }

    const OWNER: Owner<'static> = Owner {
        name: "shop-rg",
        uid: "9d1c",
        namespace: "shop",
    };

    #[test]
    fn children_by_owner_reference_or_by_name_before_the_claim() {
        let p = protection(json!({"kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer", "version": "v1api20230601preview"}]}));
        let cluster = Cluster(Ok(vec![
            server(
                "orders-db",
                "shop-rg",
                json!([{"kind": "ResourceGroup", "name": "shop-rg", "uid": "9d1c"}]),
                json!({}),
            ),
            server("new-db", "shop-rg", json!(null), json!({})),
            // Same name, another owner resolved by ASO (another kind).
            server(
                "other-db",
                "shop-rg",
                json!([{"kind": "VirtualNetwork", "name": "shop-rg", "uid": "77aa"}]),
                json!({}),
            ),
            server("far-db", "other-rg", json!(null), json!({})),
        ]));
        let children = protected_children(&OWNER, &p, &cluster).unwrap();
        let names: Vec<&str> = children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["orders-db", "new-db"]);
        assert_eq!(
            describe(&children),
            "FlexibleServer \"orders-db\" and FlexibleServer \"new-db\""
        );
    }

    #[test]
    fn only_kinds_with_a_version_and_the_selected_ones_count() {
        let cluster = Cluster(Ok(vec![server(
            "a",
            "shop-rg",
            json!(null),
            json!({"tier": "web"}),
        )]));
        let no_version = protection(
            json!({"kinds": [{"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer"}]}),
        );
        assert!(!needed(&no_version));
        assert!(protected_children(&OWNER, &no_version, &cluster)
            .unwrap()
            .is_empty());
        let labelled = protection(json!({"kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer", "version": "v1"}],
            "labelSelector": {"matchLabels": {"tier": "data"}}}));
        assert!(protected_children(&OWNER, &labelled, &cluster)
            .unwrap()
            .is_empty());
        let elsewhere = protection(json!({"kinds": [
            {"group": "dbforpostgresql.azure.com", "kind": "FlexibleServer", "version": "v1"}],
            "namespaces": ["prod"]}));
        assert!(protected_children(&OWNER, &elsewhere, &cluster)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_failed_list_is_an_error() {
        let p = protection(json!({"kinds": [
            {"group": "storage.azure.com", "kind": "StorageAccount", "version": "v1api20230101"}]}));
        let e = protected_children(&OWNER, &p, &Cluster(Err("forbidden".into()))).unwrap_err();
        assert!(
            e.contains(
                "cannot list storage.azure.com/v1api20230101 StorageAccount in namespace \"shop\""
            ),
            "{e}"
        );
    }

    #[test]
    fn a_listed_object_that_does_not_read_leaves_the_answer_unknown() {
        let p = protection(json!({"kinds": [
            {"group": "storage.azure.com", "kind": "StorageAccount", "version": "v1api20230101"}]}));
        let broken =
            json!({"metadata": {"name": "a", "namespace": "shop", "ownerReferences": "x"}});
        let e = protected_children(&OWNER, &p, &Cluster(Ok(vec![broken]))).unwrap_err();
        assert!(
            e.contains("cannot list storage.azure.com/v1api20230101 StorageAccount"),
            "{e}"
        );
        assert!(e.contains("invalid type: string"), "{e}");
    }

    #[test]
    fn long_lists_are_bounded() {
        let many: Vec<Child> = (0..8)
            .map(|i| Child {
                kind: "Vault".into(),
                name: format!("v{i}"),
            })
            .collect();
        let d = describe(&many);
        assert!(d.ends_with("Vault \"v4\" and 3 more"), "{d}");
    }
}

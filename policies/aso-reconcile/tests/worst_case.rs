//! The worst case the settings and kube-apiserver allow, as `make bench` times it.
//!
//! `target/bench/worst-case/aso-reconcile-worst-case.yaml` (conformance::worst_case) is built here along the
//! policy's most expensive path: the DELETE of a ResourceGroup under
//! deletion protection, whose effective reconcile policy comes from its
//! Namespace (looked up once, for the policy and for its confirmation), and
//! which owns protected resources of every listed kind (each of the
//! [`MAX_LISTED_KINDS`] kinds with a version listed in all namespaces, every
//! object's namespace and labels matched against the settings and its owner
//! references walked). Other settings lists are not bounded by
//! the validation, so each has [`LIST_ENTRIES`] entries, the one that
//! matches last. The test writes the case for `make bench` and checks the
//! verdict it records.
//!
//! Bounds this case relies on (`conformance::worst_case`, each cited there):
//!
//! - A DELETE's review carries one object, `oldObject`, so it may fill
//!   policy-server's 2 MiB AdmissionReview limit ([`REVIEW_LIMIT`]); the
//!   Namespace, a stored object looked up, is given the same size (under
//!   kube-apiserver's 3 MiB write limit).
//! - The annotations of a stored object hold at most 256 KiB
//!   ([`TOTAL_ANNOTATION_SIZE_LIMIT_B`]). Labels have no total limit, so
//!   they fill each object.
//! - What the cluster holds is not bounded by the request: the protected
//!   objects listed are [`CHILDREN_PER_KIND`] of each listed kind, each a
//!   few KiB. The time grows with them linearly.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

use aso_reconcile::settings::MAX_LISTED_KINDS;
use conformance::worst_case::{
    self, HEADROOM, LIST_ENTRIES, MAX_REQUEST_BODY_BYTES, REVIEW_LIMIT,
    TOTAL_ANNOTATION_SIZE_LIMIT_B,
};
use serde_json::{json, Map, Value};

/// The share of policy-server's AdmissionReview limit for the one object of the request.
const OBJECT_BYTES: usize = REVIEW_LIMIT;
/// Entries in a list inside a settings list entry (selector values).
const INNER_ENTRIES: usize = 16;
/// Protected objects of each listed kind in the namespace.
const CHILDREN_PER_KIND: usize = 16;
/// Owner references on each protected object, the deleted one's last.
const OWNER_REFERENCES: usize = 8;

const NOW: &str = "2026-11-20T10:00:00Z";
const NAMESPACE: &str = "shop";
const NAME: &str = "rg-shop-prod";
const OWNER_UID: &str = "b3e1f0a2-6c4d-4e8f-9a1b-2c3d4e5f6a70";
const VERSION: &str = "v1api20230601";

/// A protected kind: the first [`MAX_LISTED_KINDS`] have a version and are listed.
fn protected_kind(i: usize) -> (String, String) {
    (
        format!("service{i:04}.azure.com"),
        format!("Protected{i:04}"),
    )
}

/// The longest annotation key accepted: a 253-byte prefix and a 63-byte name.
fn confirmation_annotation() -> String {
    format!("{}/{}", "c".repeat(253), "d".repeat(63))
}

/// Labels every selected object carries: the selector's, each expression's
/// value the last of its values.
fn selected_labels() -> Map<String, Value> {
    let mut labels = Map::new();
    for i in 0..INNER_ENTRIES {
        labels.insert(format!("protect.example.com/label-{i:02}"), json!("yes"));
        labels.insert(
            format!("protect.example.com/tier-{i:02}"),
            json!(format!("tier-{}", INNER_ENTRIES - 1)),
        );
    }
    labels
}

fn settings() -> Value {
    let mut kinds: Vec<Value> = (0..LIST_ENTRIES - 1)
        .map(|i| {
            let (group, kind) = protected_kind(i);
            if i < MAX_LISTED_KINDS {
                json!({"group": group, "kind": kind, "version": VERSION})
            } else {
                json!({"group": group, "kind": kind})
            }
        })
        .collect();
    kinds.push(json!({"group": "resources.azure.com", "kind": "ResourceGroup"}));
    let namespaces: Vec<String> = (0..LIST_ENTRIES - 1)
        .map(|i| format!("team-{i:04}"))
        .chain([NAMESPACE.to_string()])
        .collect();
    let match_labels: Map<String, Value> = (0..INNER_ENTRIES)
        .map(|i| (format!("protect.example.com/label-{i:02}"), json!("yes")))
        .collect();
    let expressions: Vec<Value> = (0..INNER_ENTRIES)
        .map(|i| {
            let values: Vec<String> = (0..INNER_ENTRIES).map(|v| format!("tier-{v}")).collect();
            json!({"key": format!("protect.example.com/tier-{i:02}"), "operator": "In", "values": values})
        })
        .collect();
    let operators: Vec<String> = (0..LIST_ENTRIES)
        .map(|i| format!("system:serviceaccount:aso-{i:04}:azureserviceoperator-default"))
        .collect();
    let mut defaults: Map<String, Value> = (0..LIST_ENTRIES - 1)
        .map(|i| (format!("team-{i:04}"), json!("detach-on-delete")))
        .collect();
    defaults.insert("*".into(), json!("skip"));
    json!({
        "defaultReconcilePolicy": "manage",
        "acceptLegacyValues": true,
        "operatorIdentities": {"serviceAccounts": operators},
        "ifExistsChangeAfterFinalizer": "deny",
        "namespaceLookupFailure": "deny",
        "deletionProtection": {
            "kinds": kinds,
            "namespaces": namespaces,
            "labelSelector": {"matchLabels": match_labels, "matchExpressions": expressions},
            "confirmationAnnotation": confirmation_annotation(),
        },
        "explicitDefaults": defaults,
    })
}

/// `object` with its annotations filled to their validated limit, then its
/// labels (which have no total limit) to the object's share of the review.
fn filled(mut object: Value) -> Value {
    worst_case::fill_annotations(
        &mut object,
        'a',
        OBJECT_BYTES - HEADROOM,
        TOTAL_ANNOTATION_SIZE_LIMIT_B,
    );
    worst_case::fill_labels(&mut object, OBJECT_BYTES - HEADROOM);
    object
}

/// The stored ResourceGroup: taken over by ASO (finalizer, status), carrying
/// a confirmation that does not name it, no reconcile policy of its own, and
/// labels that select it filling it to the request limit.
fn old_object() -> Value {
    let mut annotations = Map::new();
    annotations.insert(confirmation_annotation(), json!("rg-shop-staging"));
    annotations.insert(
        "serviceoperator.azure.com/resource-id".into(),
        json!("/subscriptions/3f2c1b0a-9e8d-4c7b-a6f5-e4d3c2b1a098/resourceGroups/rg-shop-prod"),
    );
    let object = json!({"apiVersion": "resources.azure.com/v1api20200601", "kind": "ResourceGroup",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "uid": OWNER_UID,
            "resourceVersion": "48712", "generation": 1, "creationTimestamp": "2026-06-03T14:21:08Z",
            "labels": selected_labels(), "annotations": annotations,
            "finalizers": ["serviceoperator.azure.com/finalizer"]},
        "spec": {"location": "westeurope"},
        "status": {"conditions": [{"type": "Ready", "status": "True", "severity": "", "reason": "Succeeded",
            "observedGeneration": 1, "lastTransitionTime": "2026-06-03T14:21:12Z"}],
            "id": "/subscriptions/3f2c1b0a-9e8d-4c7b-a6f5-e4d3c2b1a098/resourceGroups/rg-shop-prod",
            "location": "westeurope", "name": NAME, "provisioningState": "Succeeded"}});
    filled(object)
}

/// The Namespace, whose annotation makes the effective policy `manage`.
fn namespace() -> Value {
    let object = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": NAMESPACE, "uid": "4f002bd8-786d-5135-b148-adda623ed846",
            "resourceVersion": "1207", "creationTimestamp": "2026-05-11T07:30:00Z",
            "labels": {"kubernetes.io/metadata.name": NAMESPACE},
            "annotations": {"serviceoperator.azure.com/reconcile-policy": "manage"}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
    filled(object)
}

/// A protected object the ResourceGroup owns, found by its owner references.
fn child(kind_index: usize, n: usize) -> Value {
    let (group, kind) = protected_kind(kind_index);
    let name = format!("{}-{n}", kind.to_lowercase());
    let references: Vec<Value> = (0..OWNER_REFERENCES)
        .map(|r| {
            let uid = if r + 1 == OWNER_REFERENCES {
                OWNER_UID.to_string()
            } else {
                format!("00000000-0000-4000-8000-{r:012}")
            };
            json!({"apiVersion": "resources.azure.com/v1api20200601", "kind": "ResourceGroup",
                   "name": format!("rg-{r}"), "uid": uid})
        })
        .collect();
    json!({"apiVersion": format!("{group}/{VERSION}"), "kind": kind,
        "namespace": NAMESPACE, "name": name, "object": {
        "apiVersion": format!("{group}/{VERSION}"), "kind": kind,
        "metadata": {"name": name, "namespace": NAMESPACE,
            "uid": format!("6a7b8c9d-0e1f-4a2b-8c3d-{kind_index:06}{n:06}"),
            "resourceVersion": "50211", "generation": 1,
            "labels": selected_labels(), "ownerReferences": references,
            "finalizers": ["serviceoperator.azure.com/finalizer"]},
        "spec": {"owner": {"name": NAME}, "location": "westeurope"}}})
}

fn context() -> Vec<Value> {
    let mut context = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "name": NAMESPACE,
                                  "object": namespace()}),
    ];
    for k in 0..MAX_LISTED_KINDS {
        context.extend((0..CHILDREN_PER_KIND).map(|n| child(k, n)));
    }
    context
}

fn granted() -> Vec<Value> {
    let mut granted = vec![json!({"apiVersion": "v1", "kind": "Namespace"})];
    granted.extend((0..MAX_LISTED_KINDS).map(|i| {
        let (group, kind) = protected_kind(i);
        json!({"apiVersion": format!("{group}/{VERSION}"), "kind": kind})
    }));
    granted
}

fn case() -> Value {
    json!({
        "description": "The worst case the settings and kube-apiserver allow: the DELETE of a protected ResourceGroup at the request size limit, its policy inherited from a Namespace at the same limit, owning protected objects of every kind with a version (32), each listed, selected by label and found by its owner references",
        "now": NOW,
        "settings": settings(),
        "request": worst_case::review("resources.azure.com", "v1api20200601", "ResourceGroup", "resourcegroups", json!({
            "uid": "5d7f9b1c-3e5a-4c7e-9b2d-8a0c2e4f6b17",
            "name": NAME, "namespace": NAMESPACE, "operation": "DELETE",
            "userInfo": {"username": "system:serviceaccount:flux-system:kustomize-controller",
                "uid": "2f6b8d0a-7c1e-4e3b-9a5d-1c3e5a7b9d2f",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:flux-system", "system:authenticated"]},
            "object": null,
            "oldObject": old_object(),
            "dryRun": false,
            "options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Background"}})),
        "context": context(),
        "contextAwareResources": granted(),
        "expect": {"allowed": false, "code": 400,
            "message": format!("^ResourceGroup {NAMESPACE}/{NAME} is protected from deletion: ASO would delete the Azure resource as well, because its effective serviceoperator\\.azure\\.com/reconcile-policy is manage \\(inherited from Namespace \"{NAMESPACE}\"\\), and Azure deletes what is inside it, including the protected Protected0000 \"protected0000-0\", .* and {} more\\. Annotation ",
                MAX_LISTED_KINDS * CHILDREN_PER_KIND - 5)},
    })
}

#[test]
fn the_benchmarked_worst_case_uses_every_list_the_path_reads() {
    let case = case();
    // The verdict it records is the policy's.
    worst_case::write_checked(&aso_reconcile::ENTRY, &case).unwrap();

    // The settings are accepted as they are, and fit the ClusterAdmissionPolicy
    // that carries them.
    let s = &case["settings"];
    assert!(
        guard_core::settings::parse::<aso_reconcile::Settings>(s.to_string().as_bytes()).is_ok()
    );
    assert!(
        worst_case::json_size(s) < MAX_REQUEST_BODY_BYTES - HEADROOM,
        "{}",
        worst_case::json_size(s)
    );

    // Each stored object is as large as kube-apiserver admits, its
    // annotations within their validated limit.
    let objects = [
        case["request"]["request"]["oldObject"].clone(),
        case["context"][0]["object"].clone(),
    ];
    for object in &objects {
        worst_case::takes(object, OBJECT_BYTES - HEADROOM).unwrap();
        worst_case::fills_annotations(object, 16).unwrap();
    }
}

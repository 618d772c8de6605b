//! kustomize-controller's server-side apply of an object from Git, as it
//! sends it.
//!
//! What kustomize-controller does, read in its source:
//! - it labels every object it applies `kustomize.toolkit.fluxcd.io/name`
//!   (fluxcd/pkg `ssa/manager.go` `SetOwnerLabels`, commit e2cfd1a2);
//! - before applying, unless the object is annotated
//!   `kustomize.toolkit.fluxcd.io/ssa: Merge` (any case, `utils.AnyInMetadata`),
//!   it renames the managedFields entries of the managers guard-core's model
//!   lists (`model::cleanup::KUSTOMIZE_CONTROLLER`: `kubectl…`, Apply and
//!   Update, `before-first-apply…` and its own Update entries, with their
//!   sources) into its `Apply` entry, a JSON patch under field manager
//!   `kustomize-controller`: [`cleanup`];
//! - its server-side apply then sets the fields of the manifest and removes
//!   the fields its `Apply` entry owned that the manifest no longer states,
//!   unless another manager owns them too: [`apply`].

use super::managed_fields::{fields_set, merge_fields};
use guard_core::model::cleanup::{self, Operation};
use guard_core::model::controllers::KUSTOMIZE_CONTROLLER;
use serde_json::{json, Map, Value};

pub const OWNER_LABEL: &str = guard_core::model::keys::KUSTOMIZATION_OWNER.name;
pub const OWNER_NAMESPACE_LABEL: &str = guard_core::model::keys::KUSTOMIZATION_OWNER.namespace;
const SSA_ANNOTATION: &str = "kustomize.toolkit.fluxcd.io/ssa";
/// The field manager of kustomize-controller's applies (the model's).
pub fn applier() -> &'static str {
    KUSTOMIZE_CONTROLLER.apply_manager().unwrap_or_default()
}

/// kustomize-controller's own identity in the standard install.
pub fn applier_user() -> String {
    KUSTOMIZE_CONTROLLER.service_account.username()
}

/// Does the object's owner apply it (and the command need survive that)?
pub fn owned(object: &Value) -> bool {
    object
        .pointer("/metadata/labels")
        .and_then(|l| l.get(OWNER_LABEL))
        .is_some()
}

/// Objects annotated `ssa: Merge` skip the managedFields cleanup.
pub fn merge_only(object: &Value) -> bool {
    ["labels", "annotations"].iter().any(|map| {
        object
            .pointer(&format!("/metadata/{map}"))
            .and_then(|m| m.get(SSA_ANNOTATION))
            .and_then(Value::as_str)
            .is_some_and(|v| v.eq_ignore_ascii_case("merge"))
    })
}

fn text<'a>(entry: &'a Value, key: &str) -> &'a str {
    entry.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An entry whose fields the cleanup hands to the owner's apply (the
/// model's `cleanup::KUSTOMIZE_CONTROLLER`).
fn taken_over(entry: &Value) -> bool {
    Operation::parse(text(entry, "operation")).is_some_and(|operation| {
        cleanup::KUSTOMIZE_CONTROLLER.takes_over(
            text(entry, "manager"),
            operation,
            text(entry, "subresource"),
        )
    })
}

fn is_applier(entry: &Value) -> bool {
    text(entry, "manager") == applier()
        && text(entry, "operation") == "Apply"
        && text(entry, "subresource").is_empty()
}

fn entries(object: &Value) -> Vec<Value> {
    object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The fields the owner's apply entry holds (`{}` when it has none).
pub fn applier_fields(object: &Value) -> Value {
    entries(object)
        .iter()
        .find(|e| is_applier(e))
        .and_then(|e| e.get("fieldsV1").cloned())
        .unwrap_or_else(|| json!({}))
}

/// Replaces the managedFields entries.
fn set_entries(object: &mut Value, list: Vec<Value>) {
    if let Some(slot) = object.pointer_mut("/metadata/managedFields") {
        *slot = Value::Array(list);
    }
}

/// The cleanup: entries taken over merge into the owner's apply entry.
fn take_over(object: &mut Value) -> bool {
    let all = entries(object);
    if !all.iter().any(taken_over) {
        return false;
    }
    let mut fields = applier_fields(object);
    let mut kept = Vec::new();
    let mut applier = None;
    for entry in all {
        if taken_over(&entry) {
            if let Some(f) = entry.get("fieldsV1") {
                merge_fields(&mut fields, f);
            }
            if applier.is_none() {
                applier = Some(entry);
            }
        } else if is_applier(&entry) {
            applier = Some(entry);
        } else {
            kept.push(entry);
        }
    }
    let mut applier = applier.unwrap_or_else(|| json!({}));
    if let Some(map) = applier.as_object_mut() {
        map.insert("manager".into(), json!(self::applier()));
        map.insert("operation".into(), json!("Apply"));
        map.insert("fieldsV1".into(), fields);
    }
    kept.push(applier);
    set_entries(object, kept);
    true
}

/// The object after kustomize-controller's managedFields cleanup, when the
/// cleanup changes anything (it then sends it as its own request).
pub fn cleanup(object: &Value) -> Option<Value> {
    if merge_only(object) {
        return None;
    }
    let mut cleaned = object.clone();
    let mut changed = false;
    for (map, key) in CLEANED_METADATA {
        if let Some(m) = cleaned
            .pointer_mut(&format!("/metadata/{map}"))
            .and_then(Value::as_object_mut)
        {
            changed |= m.remove(key).is_some();
        }
    }
    changed |= take_over(&mut cleaned);
    changed.then_some(cleaned)
}

/// The annotations and labels the cleanup removes (kustomize-controller
/// `ApplyCleanupOptions.Annotations` and `.Labels`: kubectl's
/// last-applied-configuration and Flux v1's marks).
const CLEANED_METADATA: [(&str, &str); 4] = [
    (
        "annotations",
        "kubectl.kubernetes.io/last-applied-configuration",
    ),
    ("annotations", "kustomize.toolkit.fluxcd.io/checksum"),
    ("annotations", "fluxcd.io/sync-checksum"),
    ("labels", "fluxcd.io/sync-gc-mark"),
];

/// The `fieldsV1` set of a manifest: every member it states but `apiVersion`,
/// `kind` and the object's name and namespace, which kube-apiserver does not
/// track as managed fields.
pub fn manifest_fields(manifest: &Value) -> Value {
    let mut stated = manifest.clone();
    if let Some(map) = stated.as_object_mut() {
        map.remove("apiVersion");
        map.remove("kind");
        map.remove("status");
    }
    if let Some(meta) = stated.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in [
            "name",
            "namespace",
            "managedFields",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
        ] {
            meta.remove(key);
        }
    }
    fields_set(&stated).unwrap_or_else(|| json!({}))
}

/// The field paths a `fieldsV1` set holds, by member name. A member
/// keyed by list item or value (`k:`, `v:`, `i:`) is taken whole.
fn leaves(fields: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let children: Vec<(&String, &Value)> = fields
        .as_object()
        .map(|m| m.iter().filter(|(k, _)| k.as_str() != ".").collect())
        .unwrap_or_default();
    let named = children.iter().all(|(k, _)| k.starts_with("f:"));
    if children.is_empty() || !named {
        if !prefix.is_empty() {
            out.push(prefix.clone());
        }
        return;
    }
    for (k, v) in children {
        prefix.push(k.trim_start_matches("f:").to_string());
        leaves(v, prefix, out);
        prefix.pop();
    }
}

fn paths(fields: &Value) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    leaves(fields, &mut Vec::new(), &mut out);
    out
}

fn get<'a>(object: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(object, |v, k| v.get(k))
}

fn remove(object: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = object;
    for k in parents {
        match at.get_mut(k) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(map) = at.as_object_mut() {
        map.remove(last);
    }
}

fn set(object: &mut Value, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = object;
    for k in parents {
        let Some(map) = at.as_object_mut() else {
            return;
        };
        at = map
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if let Some(map) = at.as_object_mut() {
        map.insert(last.clone(), value);
    }
}

/// The owner's server-side apply of `git` (its manifest: `manifest`
/// fields with their values in `git`) over `current`.
pub fn apply(current: &Value, git: &Value, manifest: &Value, time: &str) -> Value {
    let mut object = current.clone();
    let wanted = paths(manifest);
    let mut others = json!({});
    for entry in entries(current) {
        if !is_applier(&entry) && text(&entry, "subresource").is_empty() {
            if let Some(f) = entry.get("fieldsV1") {
                merge_fields(&mut others, f);
            }
        }
    }
    let other_paths = paths(&others);
    for path in paths(&applier_fields(current)) {
        let stated = wanted
            .iter()
            .any(|w| path.starts_with(w) || w.starts_with(&path));
        let shared = other_paths
            .iter()
            .any(|o| path.starts_with(o) || o.starts_with(&path));
        if !stated && !shared {
            remove(&mut object, &path);
        }
    }
    for path in &wanted {
        if let Some(value) = get(git, path) {
            set(&mut object, path, value.clone());
        }
    }
    // The applier's entry, in its place, now holds exactly the manifest's fields.
    let entry = json!({"manager": applier(), "operation": "Apply",
                       "apiVersion": current.get("apiVersion").cloned().unwrap_or(Value::Null),
                       "time": time, "fieldsType": "FieldsV1", "fieldsV1": manifest});
    let mut list = entries(current);
    match list.iter_mut().find(|e| is_applier(e)) {
        Some(slot) => *slot = entry,
        None => list.push(entry),
    }
    set_entries(&mut object, list);
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(managed: Value) -> Value {
        json!({"apiVersion": "v1", "metadata": {
            "labels": {OWNER_LABEL: "apps"},
            "annotations": {"a": "git", "b": "kubectl", "c": "mine"},
            "managedFields": managed}, "spec": {"x": 1}})
    }

    #[test]
    fn kubectl_fields_are_taken_over_and_dropped_others_stay() {
        let managed = json!([
            {"manager": applier(), "operation": "Apply",
             "fieldsV1": {"f:metadata": {"f:annotations": {"f:a": {}}}, "f:spec": {"f:x": {}}}},
            {"manager": "kubectl-annotate", "operation": "Update",
             "fieldsV1": {"f:metadata": {"f:annotations": {"f:b": {}}}}},
            {"manager": "flux-suspend", "operation": "Update",
             "fieldsV1": {"f:metadata": {"f:annotations": {"f:c": {}}}}}
        ]);
        let before = object(managed);
        let mut cleaned = before.clone();
        assert!(take_over(&mut cleaned));
        let applied = apply(&cleaned, &before, &applier_fields(&before), "t");
        assert_eq!(
            applied.pointer("/metadata/annotations").unwrap(),
            &json!({"a": "git", "c": "mine"})
        );
        assert_eq!(applied.pointer("/spec").unwrap(), &json!({"x": 1}));
        assert_eq!(entries(&applied).len(), 2);
    }

    #[test]
    fn the_manifest_restores_its_values_and_merge_objects_are_left_alone() {
        let managed = json!([
            {"manager": applier(), "operation": "Apply",
             "fieldsV1": {"f:spec": {"f:x": {}}}}
        ]);
        let before = object(managed);
        let mut changed = before.clone();
        changed["spec"]["x"] = json!(2);
        let applied = apply(&changed, &before, &applier_fields(&before), "t");
        assert_eq!(applied.pointer("/spec/x"), Some(&json!(1)));
        let mut merge = before.clone();
        merge["metadata"]["annotations"][SSA_ANNOTATION] = json!("merge");
        assert!(merge_only(&merge));
        assert!(!merge_only(&before));
    }
}

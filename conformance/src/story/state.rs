//! The cluster as kube-apiserver stores it, and what its registry does to an
//! admitted write.
//!
//! The registry's effects, read in k8s.io/apiserver (commit 24a394e5):
//! - a CREATE gets its `uid` and `creationTimestamp` in the store
//!   (`pkg/registry/generic/registry/store.go` `Store.Create`,
//!   `rest.FillObjectMetaSystemFields`), after mutating admission (which the
//!   handler runs first, `pkg/endpoints/handlers/create.go`) and before
//!   validating admission (`createValidation`); custom resources start at
//!   `generation: 1` (kubernetes/kubernetes f9cfc9d9
//!   `staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/strategy.go`
//!   `customResourceStrategy.PrepareForCreate`);
//! - an UPDATE keeps the stored `status` (with the status subresource) and
//!   its `generation` increases when anything but `metadata` and `status`
//!   changed (`customResourceStrategy.PrepareForUpdate`), in
//!   `rest.BeforeUpdate`, after mutating and before validating admission;
//! - every write stores a new `resourceVersion`;
//! - a DELETE of an object with finalizers (or one that the propagation
//!   policy gives one: `foregroundDeletion`, `orphan`) marks it deleting:
//!   `deletionTimestamp` now, `deletionGracePeriodSeconds: 0`, `generation`
//!   up by one the first time (`Store.Delete`,
//!   `updateForGracefulDeletionAndFinalizers`, `markAsDeleting`,
//!   `deletionFinalizersForGarbageCollection`); without finalizers it is
//!   gone;
//! - an UPDATE that leaves a deleting object without finalizers deletes it
//!   (`ShouldDeleteDuringUpdate`), except a Namespace whose `spec.finalizers`
//!   remain: only the namespace controller's finalize ends it
//!   (kubernetes/kubernetes 94341df3 `pkg/registry/core/namespace/storage/storage.go`
//!   `ShouldDeleteNamespaceDuringUpdate`), so an annotation of a terminating
//!   Namespace keeps it;
//! - a Namespace DELETE leaves it `Terminating` until the namespace
//!   controller has emptied it (kubernetes/kubernetes
//!   `pkg/registry/core/namespace/storage/storage.go` `REST.Delete`, the stored version read
//!   at commit 00bdb3fa).

use guard_core::Timestamp;
use serde_json::{json, Value};

use super::format::Target;
use crate::cluster::Recorded;

#[derive(Debug, Clone, Default)]
pub struct State {
    pub objects: Vec<Value>,
    /// The last `resourceVersion` stored.
    last_version: u64,
}

fn meta<'a>(object: &'a Value, key: &str) -> &'a str {
    object
        .pointer(&format!("/metadata/{key}"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn text<'a>(object: &'a Value, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Does `object` stand at `target`?
pub fn is(object: &Value, target: &Target) -> bool {
    text(object, "apiVersion") == target.api_version
        && text(object, "kind") == target.kind
        && meta(object, "namespace") == target.namespace
        && meta(object, "name") == target.name
}

/// The target naming `object`.
pub fn target_of(object: &Value) -> Target {
    Target {
        api_version: text(object, "apiVersion").to_string(),
        kind: text(object, "kind").to_string(),
        namespace: meta(object, "namespace").to_string(),
        name: meta(object, "name").to_string(),
    }
}

/// A custom resource (or any kind of a named group) has a `generation`.
fn has_generation(object: &Value) -> bool {
    text(object, "apiVersion").contains('/')
}

fn finalizers(object: &Value) -> usize {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// A Namespace still waiting for its `spec.finalizers` (the namespace
/// controller's `kubernetes`).
fn awaits_namespace_finalizers(object: &Value) -> bool {
    is_namespace(object)
        && object
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|list| !list.is_empty())
}

fn is_namespace(object: &Value) -> bool {
    text(object, "apiVersion") == "v1" && text(object, "kind") == "Namespace"
}

/// `object` without `metadata` and `status`: what `generation` counts.
fn content(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("metadata");
        map.remove("status");
    }
    copy
}

fn set_meta(object: &mut Value, key: &str, value: Value) {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert(key.to_string(), value);
    }
}

impl State {
    /// The starting state; every object needs `apiVersion`, `kind` and a name.
    pub fn new(objects: Vec<Value>) -> Result<Self, String> {
        let mut last_version = 0;
        for object in &objects {
            let t = target_of(object);
            if t.api_version.is_empty() || t.kind.is_empty() || t.name.is_empty() {
                return Err(format!(
                    "a cluster object needs apiVersion, kind and metadata.name: {object}"
                ));
            }
            let version = meta(object, "resourceVersion").parse::<u64>().unwrap_or(0);
            last_version = last_version.max(version);
        }
        Ok(Self {
            objects,
            last_version,
        })
    }

    pub fn get(&self, target: &Target) -> Option<&Value> {
        self.objects.iter().find(|o| is(o, target))
    }

    /// Every object as the recorded cluster the policy's lookups read.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.objects
            .iter()
            .map(|o| {
                let t = target_of(o);
                Recorded {
                    api_version: t.api_version,
                    kind: t.kind,
                    namespace: t.namespace,
                    name: t.name,
                    object: Some(o.clone()),
                    error: None,
                }
            })
            .collect()
    }

    /// The objects in a namespace, in the order stored.
    pub fn in_namespace(&self, namespace: &str) -> Vec<Value> {
        self.objects
            .iter()
            .filter(|o| !is_namespace(o) && meta(o, "namespace") == namespace)
            .cloned()
            .collect()
    }

    fn put(&mut self, mut object: Value) {
        self.last_version += 1;
        set_meta(
            &mut object,
            "resourceVersion",
            json!(self.last_version.to_string()),
        );
        let target = target_of(&object);
        match self.objects.iter_mut().find(|o| is(o, &target)) {
            Some(slot) => *slot = object,
            None => self.objects.push(object),
        }
    }

    fn remove(&mut self, target: &Target) {
        self.objects.retain(|o| !is(o, target));
    }

    /// Stores an admitted write of `object` (already prepared, see
    /// [`prepare_create`] and [`prepare_update`]).
    pub fn store(&mut self, object: Value) {
        let target = target_of(&object);
        let deleting = self
            .get(&target)
            .is_some_and(|old| old.pointer("/metadata/deletionTimestamp").is_some());
        if deleting && finalizers(&object) == 0 && !awaits_namespace_finalizers(&object) {
            self.remove(&target);
        } else {
            self.put(object);
        }
    }

    /// Carries out an admitted DELETE.
    pub fn delete(&mut self, target: &Target, propagation: Option<&str>, now: Timestamp) {
        let Some(mut object) = self.get(target).cloned() else {
            return;
        };
        if is_namespace(&object) {
            if object.pointer("/metadata/deletionTimestamp").is_none() {
                set_meta(
                    &mut object,
                    "deletionTimestamp",
                    json!(guard_core::rfc3339::format(now)),
                );
            }
            if let Some(map) = object.as_object_mut() {
                map.insert("status".into(), json!({"phase": "Terminating"}));
            }
            self.put(object);
            return;
        }
        let extra = match propagation {
            Some("Foreground") => Some("foregroundDeletion"),
            Some("Orphan") => Some("orphan"),
            _ => None,
        };
        if let Some(extra) = extra {
            if object.pointer("/metadata/deletionTimestamp").is_none() {
                let list = object
                    .pointer_mut("/metadata/finalizers")
                    .and_then(Value::as_array_mut);
                match list {
                    Some(list) if list.iter().any(|f| f == extra) => {}
                    Some(list) => list.push(json!(extra)),
                    None => set_meta(&mut object, "finalizers", json!([extra])),
                }
            }
        }
        if finalizers(&object) == 0 {
            self.remove(target);
            return;
        }
        if object.pointer("/metadata/deletionTimestamp").is_none() {
            if let Some(g) = object
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
            {
                if g > 0 {
                    set_meta(&mut object, "generation", json!(g + 1));
                }
            }
            set_meta(
                &mut object,
                "deletionTimestamp",
                json!(guard_core::rfc3339::format(now)),
            );
        }
        set_meta(&mut object, "deletionGracePeriodSeconds", json!(0));
        self.put(object);
    }

    /// The namespace controller finalizes an emptied terminating Namespace.
    pub fn finish_namespace(&mut self, name: &str) {
        let target = Target {
            api_version: "v1".into(),
            kind: "Namespace".into(),
            namespace: String::new(),
            name: name.into(),
        };
        if self.in_namespace(name).is_empty() {
            self.remove(&target);
        }
    }
}

/// A CREATE as the store completes it: `uid` (from `uid`), `creationTimestamp`,
/// and `generation: 1` for a kind that counts generations.
pub fn prepare_create(object: &mut Value, uid: &str, now: Timestamp) {
    set_meta(object, "uid", json!(uid));
    set_meta(
        object,
        "creationTimestamp",
        json!(guard_core::rfc3339::format(now)),
    );
    if has_generation(object) {
        set_meta(object, "generation", json!(1));
    }
}

/// An UPDATE as `rest.BeforeUpdate` completes it: what the client cannot
/// change is kept, and `generation` counts a change of content.
pub fn prepare_update(object: &mut Value, old: &Value) {
    for key in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        match old.pointer(&format!("/metadata/{key}")) {
            Some(v) => set_meta(object, key, v.clone()),
            None => {
                if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove(key);
                }
            }
        }
    }
    // A custom resource with the status subresource keeps its stored status
    // on a main-resource write (every guarded Flux kind but Alert and Provider).
    if has_generation(old) {
        if let (Some(status), Some(map)) = (old.get("status").cloned(), object.as_object_mut()) {
            map.insert("status".into(), status);
        }
    }
    let generation = old.pointer("/metadata/generation").and_then(Value::as_i64);
    if let Some(g) = generation {
        let next = if content(object) != content(old) {
            g + 1
        } else {
            g
        };
        set_meta(object, "generation", json!(next));
    }
}

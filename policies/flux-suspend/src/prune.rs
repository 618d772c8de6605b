//! The prune hazard: what kustomize-controller deletes when a Kustomization
//! is deleted, and a suspension by annotation alone, which does not stop it
//! on any Flux release.
//!
//! The rule is kustomize-controller's `finalizerShouldDeleteResources`
//! (fluxcd/kustomize-controller `internal/controller/kustomization_controller.go`,
//! commit 186fb3b2, v1.9.0+36): nothing is deleted when `spec.suspend` is
//! true or the inventory is empty; otherwise `deletionPolicy` decides:
//! `MirrorPrune` (the default, `GetDeletionPolicy` in `api/v1/kustomization_types.go`)
//! follows `spec.prune`, `Delete` and `WaitForTermination` always delete, and
//! `Orphan` (or any other value) never does.

use guard_core::object::ObjectName;
use guard_core::request::json_type;
use guard_core::{names, AdmissionRequest, Verdict, Which};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use crate::commands;
use crate::kinds::{Kind, SUSPEND_ANNOTATION};
use crate::view::{self, State};

/// Why deleting a Kustomization would delete its inventory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collects {
    /// `deletionPolicy` MirrorPrune (or unset) with `spec.prune: true`.
    Prune,
    /// `deletionPolicy: Delete`.
    Delete,
    /// `deletionPolicy: WaitForTermination`.
    WaitForTermination,
}

impl Collects {
    /// The deciding field, as messages name it.
    pub fn deciding(self) -> &'static str {
        match self {
            Collects::Prune => "spec.prune is true",
            Collects::Delete => "spec.deletionPolicy is Delete",
            Collects::WaitForTermination => "spec.deletionPolicy is WaitForTermination",
        }
    }
}

/// kustomize-controller's deletion policy, suspension and inventory aside.
pub fn collects(deletion_policy: Option<&str>, prune: bool) -> Option<Collects> {
    match deletion_policy.unwrap_or("") {
        "" | "MirrorPrune" => prune.then_some(Collects::Prune),
        "Delete" => Some(Collects::Delete),
        "WaitForTermination" => Some(Collects::WaitForTermination),
        _ => None,
    }
}

/// `status.inventory.entries`, counted without being read. Absent or null
/// at any level is no inventory, as kustomize-controller's nil checks read it.
#[derive(Deserialize)]
struct InventoryView {
    #[serde(default)]
    status: Option<StatusView>,
}

#[derive(Deserialize)]
struct StatusView {
    #[serde(default)]
    inventory: Option<Inventory>,
}

#[derive(Deserialize)]
struct Inventory {
    #[serde(default)]
    entries: Option<Vec<IgnoredAny>>,
}

/// How many objects a Kustomization would prune, as its status says (0
/// without an inventory). `Err` names the field that cannot be read: an
/// inventory of the wrong shape is not an empty one.
fn inventory_size(request: &AdmissionRequest) -> Result<usize, String> {
    let view = request
        .object_as::<InventoryView>(Which::OldObject)
        .map_err(|e| inventory_error(request).unwrap_or(e))?;
    Ok(view
        .and_then(|v| v.status)
        .and_then(|s| s.inventory)
        .and_then(|i| i.entries)
        .map_or(0, |entries| entries.len()))
}

/// The member of `status.inventory.entries` that is not what
/// kustomize-controller writes, for a message better than serde's. Runs
/// only on the error path.
fn inventory_error(request: &AdmissionRequest) -> Option<String> {
    let old = request.object_value(Which::OldObject).ok()??;
    let mut value = &old;
    let mut path = String::new();
    for (member, shape, is) in [
        ("status", "a map", Value::is_object as fn(&Value) -> bool),
        ("inventory", "a map", Value::is_object),
        ("entries", "a list", Value::is_array),
    ] {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(member);
        value = match value.get(member) {
            None | Some(Value::Null) => return None,
            Some(v) if is(v) => v,
            Some(other) => {
                return Some(format!(
                    "malformed oldObject: {path} must be {shape}, found {}",
                    json_type(other)
                ))
            }
        };
    }
    None
}

/// Judges a DELETE: refused when the object looks suspended but
/// kustomize-controller would delete its inventory.
pub fn delete(request: &AdmissionRequest, kind: &Kind) -> Verdict {
    if !kind.prunes() {
        return Verdict::allow();
    }
    // kube-apiserver sends the object being deleted as oldObject; without it
    // nothing says whether its inventory would be deleted.
    let object = match view::load(request, Which::OldObject) {
        Ok(Some(o)) => o,
        Ok(None) => {
            return Verdict::deny(format!(
                "malformed request: a DELETE of {} has no oldObject, so whether \
                 kustomize-controller would delete its inventory cannot be judged",
                kind.kind
            ))
        }
        Err(e) => return Verdict::deny(e),
    };
    let state = match State::of(&object, kind, true) {
        Ok(state) => state,
        Err(e) => return Verdict::deny(format!("malformed oldObject: {e}")),
    };
    let Some(collects) = state.collects else {
        return Verdict::allow();
    };
    // An empty or absent inventory: the controller deletes nothing.
    let objects = match inventory_size(request) {
        Err(e) => return Verdict::deny(e),
        Ok(0) => return Verdict::allow(),
        Ok(1) => "the 1 object in its inventory".to_string(),
        Ok(n) => format!("the {n} objects in its inventory"),
    };
    let target = ObjectName::of(request, Some(&object.metadata));
    if state.spec_suspend {
        return Verdict::allow().warn(format!(
            "{} is suspended (spec.suspend: true), so kustomize-controller deletes it without \
             deleting {objects} although {}: they stay in the cluster, unmanaged",
            target.describe(),
            collects.deciding()
        ));
    }
    let Some(reason) = state.reason else {
        return Verdict::allow();
    };
    Verdict::deny(format!(
        "Deleting {} would garbage-collect {objects}: {} and it is suspended only by \
         annotation {SUSPEND_ANNOTATION} ({}), which kustomize-controller does not honour. \
         To delete it and keep its objects, suspend it first:\n  {}\n\
         To delete it and its objects, remove the annotation first:\n  {}",
        target.describe(),
        collects.deciding(),
        names::quote(reason),
        commands::honour(&target, kind),
        commands::unannotate(&target),
    ))
}

/// Annotation-only mode's refusal: the annotation alone on a Kustomization
/// whose deletion would delete its inventory, the RFC's version-skew hazard.
/// `suspend` sets both in one request; `resume`, when the request was
/// resuming, removes both.
pub fn hazard_message(
    target: &ObjectName<'_>,
    collects: Collects,
    suspend: &str,
    resume: Option<&str>,
) -> String {
    let mut message = format!(
        "{} would be suspended only by annotation {SUSPEND_ANNOTATION} while {}. \
         Flux releases that do not implement RFC-0006 keep reconciling it, and deleting it would \
         garbage-collect everything it applied. Set spec.suspend in the same request:\n  {suspend}",
        target.describe(),
        collects.deciding(),
    );
    if let Some(resume) = resume {
        message.push_str(&format!(
            "\nor, to resume it, remove the annotation in the same request:\n  {resume}"
        ));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds;

    fn ks() -> Kind {
        kinds::find("kustomize.toolkit.fluxcd.io", "Kustomization").unwrap()
    }

    fn delete_of(old: &str) -> Verdict {
        let r: AdmissionRequest = serde_json::from_str(&format!(
            r#"{{"operation":"DELETE","kind":{{"group":"kustomize.toolkit.fluxcd.io","version":"v1","kind":"Kustomization"}},
                "resource":{{"group":"kustomize.toolkit.fluxcd.io","version":"v1","resource":"kustomizations"}},
                "name":"apps","namespace":"flux-system","object":null,"oldObject":{old}}}"#
        ))
        .unwrap();
        delete(&r, &ks())
    }

    #[test]
    fn deleting_an_annotation_only_suspended_pruning_kustomization_is_refused() {
        let v = delete_of(
            r#"{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"INC-1 cutover"}},
                "spec":{"prune":true},"status":{"inventory":{"entries":[{"id":"a","v":"v1"},{"id":"b","v":"v1"}]}}}"#,
        );
        assert!(!v.allowed);
        let m = v.message.unwrap();
        assert!(m.starts_with("Deleting Kustomization flux-system/apps would garbage-collect the 2 objects in its inventory"), "{m}");
        assert!(m.contains(r#"kubectl patch kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --type=merge -p '{"spec":{"suspend":true}}'"#), "{m}");
        assert!(m.contains("kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system reconcile.fluxcd.io/suspended-"), "{m}");
        // Without an inventory the controller deletes nothing.
        let v = delete_of(
            r#"{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"INC-1 cutover"}},"spec":{"prune":true}}"#,
        );
        assert_eq!(v, Verdict::allow());
    }

    const INVENTORY: &str = r#""status":{"inventory":{"entries":[{"id":"a","v":"v1"}]}}"#;

    fn annotated(spec: &str) -> Verdict {
        delete_of(&format!(
            r#"{{"metadata":{{"annotations":{{"reconcile.fluxcd.io/suspended":"INC-1 x"}}}},"spec":{spec},{INVENTORY}}}"#
        ))
    }

    #[test]
    fn the_deletion_policy_decides_as_the_controller_does() {
        for (spec, refused) in [
            (r#"{"prune":true}"#, Some("spec.prune is true")),
            (
                r#"{"prune":true,"deletionPolicy":"MirrorPrune"}"#,
                Some("spec.prune is true"),
            ),
            (r#"{"prune":false}"#, None),
            (
                r#"{"prune":false,"deletionPolicy":"Delete"}"#,
                Some("spec.deletionPolicy is Delete"),
            ),
            (
                r#"{"deletionPolicy":"WaitForTermination"}"#,
                Some("spec.deletionPolicy is WaitForTermination"),
            ),
            (r#"{"prune":true,"deletionPolicy":"Orphan"}"#, None),
        ] {
            let v = annotated(spec);
            match refused {
                Some(field) => {
                    let m = v.message.unwrap_or_default();
                    assert!(
                        m.contains(&format!("the 1 object in its inventory: {field} and")),
                        "{spec}: {m}"
                    );
                }
                None => assert_eq!(v, Verdict::allow(), "{spec}"),
            }
        }
    }

    #[test]
    fn suspended_or_unannotated_deletes_are_allowed() {
        let v = delete_of(&format!(
            r#"{{"metadata":{{}},"spec":{{"deletionPolicy":"Delete","suspend":true}},{INVENTORY}}}"#
        ));
        assert!(v.allowed);
        assert!(v.warnings[0].contains(
            "without deleting the 1 object in its inventory although spec.deletionPolicy is Delete"
        ));
        assert_eq!(
            delete_of(&format!(
                r#"{{"metadata":{{}},"spec":{{"prune":true}},{INVENTORY}}}"#
            )),
            Verdict::allow()
        );
    }

    /// kube-apiserver always sends the object being deleted; without it, or
    /// with an inventory of the wrong shape, the prune rule cannot be judged
    /// and the deletion is refused, naming the field, instead of allowed.
    #[test]
    fn a_delete_that_cannot_be_judged_is_refused() {
        let m = delete_of("null").message.unwrap_or_default();
        assert!(
            m.starts_with("malformed request: a DELETE of Kustomization has no oldObject"),
            "{m}"
        );
        let annotation =
            r#""metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"INC-1 x"}}"#;
        for (status, field) in [
            (
                r#"{"inventory":{"entries":"a,b"}}"#,
                "status.inventory.entries must be a list, found a string",
            ),
            (
                r#"{"inventory":[{"id":"a"}]}"#,
                "status.inventory must be a map, found a list",
            ),
            (r#"true"#, "status must be a map, found a boolean"),
        ] {
            let v = delete_of(&format!(
                r#"{{{annotation},"spec":{{"prune":true}},"status":{status}}}"#
            ));
            assert_eq!(
                v.message.as_deref(),
                Some(format!("malformed oldObject: {field}").as_str()),
                "{status}"
            );
        }
        // The fields that decide are read strictly on the object deleted.
        let v = delete_of(&format!(
            r#"{{{annotation},"spec":{{"prune":"true"}},{INVENTORY}}}"#
        ));
        assert_eq!(
            v.message.as_deref(),
            Some(
                "malformed oldObject: spec.prune must be a boolean (true or false), found the \
                 string \"true\""
            )
        );
        // Absent or null at any level is no inventory, as in the controller.
        for status in [
            r#"null"#,
            r#"{}"#,
            r#"{"inventory":null}"#,
            r#"{"inventory":{}}"#,
        ] {
            let v = delete_of(&format!(
                r#"{{{annotation},"spec":{{"prune":true}},"status":{status}}}"#
            ));
            assert_eq!(v, Verdict::allow(), "{status}");
        }
    }

    #[test]
    fn other_kinds_never_prune() {
        let r: AdmissionRequest = serde_json::from_str(
            r#"{"operation":"DELETE","oldObject":{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"x"}},"spec":{"prune":true}}}"#,
        )
        .unwrap();
        assert_eq!(
            delete(
                &r,
                &kinds::find("helm.toolkit.fluxcd.io", "HelmRelease").unwrap()
            ),
            Verdict::allow()
        );
    }

    #[test]
    fn the_hazard_message_offers_both_ways_out_when_resuming() {
        let t = ObjectName::new("Kustomization", ks().resource(), "flux-system", "apps");
        let m = hazard_message(&t, Collects::Delete, "SUSPEND", Some("RESUME"));
        assert!(
            m.contains("while spec.deletionPolicy is Delete")
                && m.contains("same request:\n  SUSPEND\n")
                && m.ends_with("same request:\n  RESUME"),
            "{m}"
        );
        assert!(!hazard_message(&t, Collects::Prune, "SUSPEND", None).contains("RESUME"));
    }
}

//! The prune hazard: kustomize-controller garbage-collects a deleted
//! Kustomization's objects when `spec.prune && !spec.suspend`. A suspension
//! by annotation alone does not stop that on any Flux release.

use guard_core::{names, AdmissionRequest, Verdict, Which};
use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::commands::{self, Target};
use crate::kinds::{Kind, SUSPEND_ANNOTATION};
use crate::view::{self, State};

/// `status.inventory.entries`, counted without being read.
#[derive(Deserialize)]
struct InventoryView {
    status: StatusView,
}

#[derive(Deserialize)]
struct StatusView {
    inventory: Inventory,
}

#[derive(Deserialize)]
struct Inventory {
    entries: Vec<IgnoredAny>,
}

/// How many objects a Kustomization would prune, when its status says.
fn inventory_size(request: &AdmissionRequest) -> Option<usize> {
    request
        .object_as::<InventoryView>(Which::OldObject)
        .ok()
        .flatten()
        .map(|v| v.status.inventory.entries.len())
}

/// Judges a DELETE: refused when the object looks suspended but would prune.
pub fn delete(request: &AdmissionRequest, kind: &Kind) -> Verdict {
    if !kind.prunes() {
        return Verdict::allow();
    }
    let object = match view::load(request, Which::OldObject) {
        Ok(Some(o)) => o,
        Ok(None) => return Verdict::allow(),
        Err(e) => return Verdict::deny(e),
    };
    let Ok(state) = State::of(&object, kind, false) else {
        return Verdict::allow();
    };
    let name = request.display_name(Some(&object.metadata));
    let target = Target {
        kind,
        name: &name,
        namespace: &request.namespace,
    };
    if !state.prune {
        return Verdict::allow();
    }
    if state.spec_suspend {
        return Verdict::allow().warn(format!(
            "{} is suspended (spec.suspend: true), so kustomize-controller deletes it without pruning: \
             the objects it applied stay in the cluster, unmanaged",
            target.describe()
        ));
    }
    let Some(reason) = state.reason else {
        return Verdict::allow();
    };
    let objects = match inventory_size(request) {
        Some(1) => "the 1 object in its inventory".to_string(),
        Some(n) => format!("the {n} objects in its inventory"),
        None => "every object it applied".to_string(),
    };
    Verdict::deny(format!(
        "Deleting {} would garbage-collect {objects}: spec.prune is true and it is suspended only by \
         annotation {SUSPEND_ANNOTATION} ({}), which kustomize-controller does not honour. \
         To delete it and keep its objects, suspend it first:\n  {}\n\
         To delete it and its objects, remove the annotation first:\n  {}",
        target.describe(),
        names::quote(reason),
        commands::honour(&target),
        commands::unannotate(&target),
    ))
}

/// Annotation-only mode's refusal: the annotation alone on a pruning
/// Kustomization, the RFC's version-skew hazard.
pub fn hazard_message(target: &Target<'_>, resuming: bool, resume: &str) -> String {
    let mut message = format!(
        "{} would be suspended only by annotation {SUSPEND_ANNOTATION} while spec.prune is true. \
         Flux releases that do not implement RFC-0006 keep reconciling it, and deleting it would \
         garbage-collect everything it applied. Set spec.suspend as well:\n  {}",
        target.describe(),
        commands::honour(target)
    );
    if resuming {
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

    fn ks() -> &'static Kind {
        kinds::find("kustomize.toolkit.fluxcd.io", "Kustomization").unwrap()
    }

    fn delete_of(old: &str) -> Verdict {
        let r: AdmissionRequest = serde_json::from_str(&format!(
            r#"{{"operation":"DELETE","name":"apps","namespace":"flux-system","object":null,"oldObject":{old}}}"#
        ))
        .unwrap();
        delete(&r, ks())
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
        let v = delete_of(
            r#"{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"INC-1 cutover"}},"spec":{"prune":true}}"#,
        );
        assert!(v
            .message
            .unwrap()
            .contains("garbage-collect every object it applied"));
    }

    #[test]
    fn suspended_or_unannotated_or_non_pruning_deletes_are_allowed() {
        let v = delete_of(
            r#"{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"INC-1 x"}},"spec":{"prune":true,"suspend":true}}"#,
        );
        assert!(v.allowed);
        assert!(v.warnings[0].contains("deletes it without pruning"));
        assert_eq!(
            delete_of(r#"{"metadata":{},"spec":{"prune":true}}"#),
            Verdict::allow()
        );
        assert_eq!(
            delete_of(
                r#"{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"INC-1 x"}},"spec":{"prune":false}}"#
            ),
            Verdict::allow()
        );
        assert_eq!(delete_of("null"), Verdict::allow());
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
                kinds::find("helm.toolkit.fluxcd.io", "HelmRelease").unwrap()
            ),
            Verdict::allow()
        );
    }

    #[test]
    fn the_hazard_message_offers_both_ways_out_when_resuming() {
        let t = Target {
            kind: ks(),
            name: "apps",
            namespace: "flux-system",
        };
        let m = hazard_message(&t, true, "RESUME");
        assert!(
            m.contains("spec.prune is true") && m.ends_with("same request:\n  RESUME"),
            "{m}"
        );
        assert!(!hazard_message(&t, false, "RESUME").contains("RESUME"));
    }
}

//! The deletion hazard: an object deleted while suspended by annotation
//! alone, which its controller does not read as suspended, so its finalizer
//! deletes what the kind's deletion deletes ([`Kind::collects`], from the
//! model's `Deletion`) on any Flux release: a Kustomization's inventory as
//! its deletion policy says, a HelmRelease's Helm release, a FluxInstance's
//! or ResourceSet's whole inventory.

use guard_core::request::json_type;
use guard_core::{AdmissionRequest, Which};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use crate::kinds::{Collects, Kind};
use crate::view::{self, Malformed, Shape, State, Target, Unreadable};
use crate::warnings::Warning;

/// Deleting it would delete `objects` objects (inventory entries, or the
/// releases in a HelmRelease's history) although it reads as suspended (by
/// `reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hazard {
    pub(crate) target: Target,
    pub(crate) kind: Kind,
    pub(crate) objects: usize,
    pub(crate) collects: Collects,
    pub(crate) reason: String,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    Unreadable(Unreadable),
    Hazard(Box<Hazard>),
}

/// `status.inventory.entries` (Kustomization, FluxInstance, ResourceSet:
/// fluxcd/pkg `apis/meta` `ResourceInventory`, which Flux Operator's
/// `status.inventory` shares) and `status.history` (HelmRelease: the
/// releases helm-controller uninstalls the latest of, `reconcileReleaseDeletion`,
/// nothing when it is empty), counted without being read. Absent or null at
/// any level is nothing to delete, as the controllers' nil checks read it.
#[derive(Deserialize)]
struct InventoryView {
    #[serde(default)]
    status: Option<StatusView>,
}

#[derive(Deserialize)]
struct StatusView {
    #[serde(default)]
    inventory: Option<Inventory>,
    #[serde(default)]
    history: Option<Vec<IgnoredAny>>,
}

#[derive(Deserialize)]
struct Inventory {
    #[serde(default)]
    entries: Option<Vec<IgnoredAny>>,
}

/// How many objects (or releases) deleting it would delete, as its status
/// says (0 without any). `Err` names the field that cannot be read: an
/// inventory of the wrong shape is not an empty one.
fn inventory_size(request: &AdmissionRequest, collects: Collects) -> Result<usize, Box<Malformed>> {
    let view = request
        .object_as::<InventoryView>(Which::OldObject)
        .map_err(|e| {
            Box::new(
                inventory_error(request, collects).map_or(Malformed::Read(e), |shape| {
                    Malformed::Shape {
                        which: Which::OldObject,
                        shape,
                    }
                }),
            )
        })?;
    let status = view.and_then(|v| v.status);
    let counted = match collects {
        Collects::Release => status.and_then(|s| s.history),
        Collects::Policy(_) | Collects::Inventory => {
            status.and_then(|s| s.inventory).and_then(|i| i.entries)
        }
    };
    Ok(counted.map_or(0, |entries| entries.len()))
}

/// A member on the way to what is counted: its name, its path from the
/// object, the shape it must have, and the test of that shape.
type Step = (&'static str, &'static str, &'static str, fn(&Value) -> bool);

/// The member of the status read that is not what the controller writes,
/// for a message better than serde's. Runs only on the error path.
fn inventory_error(request: &AdmissionRequest, collects: Collects) -> Option<Shape> {
    let old = request.object_value(Which::OldObject).ok()??;
    let mut value = &old;
    let is_map = Value::is_object as fn(&Value) -> bool;
    let steps: &[Step] = match collects {
        Collects::Release => &[
            ("status", "status", "a map", is_map),
            ("history", "status.history", "a list", Value::is_array),
        ],
        Collects::Policy(_) | Collects::Inventory => &[
            ("status", "status", "a map", is_map),
            ("inventory", "status.inventory", "a map", Value::is_object),
            (
                "entries",
                "status.inventory.entries",
                "a list",
                Value::is_array,
            ),
        ],
    };
    for (member, path, shape, is) in steps {
        value = match value.get(member) {
            None | Some(Value::Null) => return None,
            Some(v) if is(v) => v,
            Some(other) => {
                return Some(Shape::Status {
                    path,
                    shape,
                    found: json_type(other),
                })
            }
        };
    }
    None
}

/// Judges a DELETE: refused when the object looks suspended but its
/// controller would delete what it manages; a warning when the honoured
/// mechanism keeps it, unmanaged.
pub(crate) fn check_delete(
    request: &AdmissionRequest,
    kind: &Kind,
) -> Result<Option<Warning>, Refused> {
    if !kind.may_collect() {
        return Ok(None);
    }
    // kube-apiserver sends the object being deleted as oldObject; without it
    // nothing says whether its inventory would be deleted.
    let object = view::load_required(
        request,
        Which::OldObject,
        &view::annotations_read(kind, None),
    )
    .map_err(Refused::Unreadable)?;
    let state =
        State::of(&object, kind, true).map_err(|e| Refused::Unreadable(Unreadable::OldField(e)))?;
    let Some(collects) = state.collects else {
        return Ok(None);
    };
    // An empty or absent inventory (or history): the controller deletes nothing.
    let objects = match inventory_size(request, collects) {
        Err(e) => return Err(Refused::Unreadable(Unreadable::Object(e))),
        Ok(0) => return Ok(None),
        Ok(n) => n,
    };
    let target = view::target(request, Some(&object.metadata));
    if state.honoured() {
        return Ok(Some(Warning::InventoryKept {
            target,
            kind: *kind,
            objects,
            collects,
        }));
    }
    match state.reason {
        None => Ok(None),
        Some(reason) => Err(Refused::Hazard(Box::new(Hazard {
            target,
            kind: *kind,
            objects,
            collects,
            reason,
        }))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds;
    use crate::view::{Found, SpecField, WrongType};
    use guard_core::model::kinds::Collects as Policy;

    fn ks() -> Kind {
        kinds::find("kustomize.toolkit.fluxcd.io", "Kustomization").unwrap()
    }

    fn request(old: &str) -> AdmissionRequest {
        serde_json::from_str(&format!(
            r#"{{"operation":"DELETE","kind":{{"group":"kustomize.toolkit.fluxcd.io","version":"v1","kind":"Kustomization"}},
                "resource":{{"group":"kustomize.toolkit.fluxcd.io","version":"v1","resource":"kustomizations"}},
                "name":"apps","namespace":"flux-system","object":null,"oldObject":{old}}}"#
        ))
        .unwrap()
    }

    fn delete_of(old: &str) -> Result<Option<Warning>, Refused> {
        let r = request(old);
        check_delete(&r, &ks())
    }

    fn target() -> Target {
        view::target(&request("null"), None)
    }

    fn hazard(
        objects: usize,
        collects: Collects,
        reason: &str,
    ) -> Result<Option<Warning>, Refused> {
        Err(Refused::Hazard(Box::new(Hazard {
            target: target(),
            kind: ks(),
            objects,
            collects,
            reason: reason.into(),
        })))
    }

    #[test]
    fn deleting_an_annotation_only_suspended_pruning_kustomization_is_refused() {
        let v = delete_of(
            r#"{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"INC-1 cutover"}},
                "spec":{"prune":true},"status":{"inventory":{"entries":[{"id":"a","v":"v1"},{"id":"b","v":"v1"}]}}}"#,
        );
        assert_eq!(
            v,
            hazard(2, Collects::Policy(Policy::Prune), "INC-1 cutover")
        );
        // Without an inventory the controller deletes nothing.
        let v = delete_of(
            r#"{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"INC-1 cutover"}},"spec":{"prune":true}}"#,
        );
        assert_eq!(v, Ok(None));
    }

    const INVENTORY: &str = r#""status":{"inventory":{"entries":[{"id":"a","v":"v1"}]}}"#;

    fn annotated(spec: &str) -> Result<Option<Warning>, Refused> {
        delete_of(&format!(
            r#"{{"metadata":{{"annotations":{{"reconcile.fluxcd.io/suspended":"INC-1 x"}}}},"spec":{spec},{INVENTORY}}}"#
        ))
    }

    #[test]
    fn the_deletion_policy_decides_as_the_controller_does() {
        for (spec, refused) in [
            (r#"{"prune":true}"#, Some(Collects::Policy(Policy::Prune))),
            (
                r#"{"prune":true,"deletionPolicy":"MirrorPrune"}"#,
                Some(Collects::Policy(Policy::Prune)),
            ),
            (r#"{"prune":false}"#, None),
            (
                r#"{"prune":false,"deletionPolicy":"Delete"}"#,
                Some(Collects::Policy(Policy::Delete)),
            ),
            (
                r#"{"deletionPolicy":"WaitForTermination"}"#,
                Some(Collects::Policy(Policy::WaitForTermination)),
            ),
            (r#"{"prune":true,"deletionPolicy":"Orphan"}"#, None),
        ] {
            let want = match refused {
                Some(collects) => hazard(1, collects, "INC-1 x"),
                None => Ok(None),
            };
            assert_eq!(annotated(spec), want, "{spec}");
        }
    }

    #[test]
    fn suspended_or_unannotated_deletes_are_allowed() {
        let v = delete_of(&format!(
            r#"{{"metadata":{{}},"spec":{{"deletionPolicy":"Delete","suspend":true}},{INVENTORY}}}"#
        ));
        assert_eq!(
            v,
            Ok(Some(Warning::InventoryKept {
                target: target(),
                kind: ks(),
                objects: 1,
                collects: Collects::Policy(Policy::Delete)
            }))
        );
        assert_eq!(
            delete_of(&format!(
                r#"{{"metadata":{{}},"spec":{{"prune":true}},{INVENTORY}}}"#
            )),
            Ok(None)
        );
    }

    /// kube-apiserver always sends the object being deleted; without it, or
    /// with an inventory of the wrong shape, the prune rule cannot be judged
    /// and the deletion is refused, naming the field, instead of allowed.
    #[test]
    fn a_delete_that_cannot_be_judged_is_refused() {
        assert_eq!(
            delete_of("null"),
            Err(Refused::Unreadable(Unreadable::Missing {
                which: Which::OldObject,
                target: target()
            }))
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
            let Err(Refused::Unreadable(Unreadable::Object(e))) = v else {
                panic!("{status}: {v:?}")
            };
            assert_eq!(e.to_string(), format!("malformed oldObject: {field}"));
        }
        // The fields that decide are read strictly on the object deleted.
        let v = delete_of(&format!(
            r#"{{{annotation},"spec":{{"prune":"true"}},{INVENTORY}}}"#
        ));
        assert_eq!(
            v,
            Err(Refused::Unreadable(Unreadable::OldField(WrongType {
                field: SpecField::Prune,
                found: Box::new(Found::String("true".into()))
            })))
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
            assert_eq!(v, Ok(None), "{status}");
        }
    }

    fn delete_of_kind(group: &str, kind: &str, old: &str) -> Result<Option<Warning>, Refused> {
        let r = request(old);
        check_delete(&r, &kinds::find(group, kind).unwrap())
    }

    /// helm-controller uninstalls the release of a HelmRelease deleted
    /// without `spec.suspend`, whatever annotation it carries; nothing when
    /// it has no release in its history.
    #[test]
    fn a_helmrelease_suspended_by_annotation_alone_would_be_uninstalled() {
        let hr = |spec: &str, status: &str| {
            delete_of_kind(
                "helm.toolkit.fluxcd.io",
                "HelmRelease",
                &format!(
                    r#"{{"metadata":{{"annotations":{{"reconcile.fluxcd.io/suspended":"INC-1 x"}}}},"spec":{spec},"status":{status}}}"#
                ),
            )
        };
        let history =
            r#"{"history":[{"name":"podinfo","version":3},{"name":"podinfo","version":2}]}"#;
        let Err(Refused::Hazard(h)) = hr("{}", history) else {
            panic!("{:?}", hr("{}", history))
        };
        assert_eq!((h.collects, h.objects), (Collects::Release, 2));
        assert!(matches!(
            hr(r#"{"suspend":true}"#, history),
            Ok(Some(Warning::InventoryKept {
                collects: Collects::Release,
                ..
            }))
        ));
        for empty in ["{}", r#"{"history":[]}"#, "null"] {
            assert_eq!(hr("{}", empty), Ok(None), "{empty}");
        }
        assert!(matches!(
            hr("{}", r#"{"history":{"name":"podinfo"}}"#),
            Err(Refused::Unreadable(Unreadable::Object(e))) if e.to_string() == "malformed oldObject: status.history must be a list, found a map"
        ));
    }

    /// flux-operator deletes a ResourceSet's (and a FluxInstance's)
    /// inventory unless `fluxcd.controlplane.io/reconcile` is disabled.
    #[test]
    fn a_resourceset_suspended_by_annotation_alone_would_delete_its_inventory() {
        let rs = |annotations: &str| {
            delete_of_kind(
                "fluxcd.controlplane.io",
                "ResourceSet",
                &format!(
                    r#"{{"metadata":{{"annotations":{annotations}}},"spec":{{}},{INVENTORY}}}"#
                ),
            )
        };
        let Err(Refused::Hazard(h)) = rs(r#"{"reconcile.fluxcd.io/suspended":"INC-1 x"}"#) else {
            panic!()
        };
        assert_eq!((h.collects, h.objects), (Collects::Inventory, 1));
        assert!(matches!(
            rs(
                r#"{"reconcile.fluxcd.io/suspended":"INC-1 x","fluxcd.controlplane.io/reconcile":"Disabled"}"#
            ),
            Ok(Some(Warning::InventoryKept {
                collects: Collects::Inventory,
                ..
            }))
        ));
        assert_eq!(rs("{}"), Ok(None));
    }

    #[test]
    fn other_kinds_never_prune() {
        let r: AdmissionRequest = serde_json::from_str(
            r#"{"operation":"DELETE","oldObject":{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"x"}},"spec":{"prune":true},"status":{"inventory":{"entries":[{"id":"a","v":"v1"}]}}}}"#,
        )
        .unwrap();
        for (group, kind) in [
            ("notification.toolkit.fluxcd.io", "Alert"),
            ("source.extensions.fluxcd.io", "ArtifactGenerator"),
            ("fluxcd.controlplane.io", "ResourceSetInputProvider"),
        ] {
            assert_eq!(
                check_delete(&r, &kinds::find(group, kind).unwrap()),
                Ok(None),
                "{kind}"
            );
        }
    }
}

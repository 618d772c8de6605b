//! The Flux Kustomizations kustomize-controller cannot build, as findings:
//! it applies nothing of such a Kustomization and prunes nothing of it
//! either, while every other Kustomization is applied (fluxcd/
//! kustomize-controller 186fb3b2, `internal/controller/
//! kustomization_controller.go`, `reconcile` returns before `apply` and the
//! garbage collection of `prune`).

use serde_json::Value;

use super::identity::Identity;
use super::manifests::Unbuilt;
use super::report::PolicyInfo;
use super::{Checked, Finding, Level, Revision, FLUX_KUSTOMIZE_GROUP};
use guard_core::model::kinds::KUSTOMIZATION;

/// Who reports a build that fails: the name findings carry.
pub const BUILDER: &str = "kustomize-controller";

/// The builder as the reports describe it next to the policies.
pub fn builder() -> PolicyInfo {
    PolicyInfo {
        name: BUILDER.to_string(),
        description: "kustomize-controller's build of each Flux Kustomization".to_string(),
    }
}

/// One finding per Kustomization whose build fails: a CREATE, or an UPDATE
/// where the base has the Kustomization.
pub(super) fn findings(
    unbuilt: &[Unbuilt],
    head: &Revision,
    base: Option<&Revision>,
) -> Vec<Checked> {
    unbuilt
        .iter()
        .map(|u| {
            let (namespace, name) = &u.kustomization;
            let (object, operation) = head.reported_on(
                Identity {
                    group: FLUX_KUSTOMIZE_GROUP.to_string(),
                    version: "v1".to_string(),
                    kind: KUSTOMIZATION.kind.to_string(),
                    namespace: Some(namespace.clone()),
                    name: name.clone(),
                },
                base,
            );
            Checked {
                origin: u.origin.clone(),
                object,
                operation,
                policy: BUILDER.to_string(),
                findings: vec![if u.undecided {
                    Finding {
                        level: Level::Undecided,
                        message: format!(
                            "its build depends on the cluster, so nothing of it is judged: {} (give that object with --context)",
                            u.message
                        ),
                    }
                } else {
                    Finding {
                        level: Level::NotApplied,
                        message: format!(
                            "its build fails, so nothing of it is applied or pruned (Ready=False, reason {}): {}",
                            u.reason, u.message
                        ),
                    }
                }],
                unchanged: false,
            }
        })
        .collect()
}

/// Whether kustomize-controller keeps `object` of the base where the head
/// no longer has it: a Kustomization that applied it, directly or through
/// the Kustomizations that applied that one, fails to build, so nothing is
/// pruned.
pub(super) fn held_back(unbuilt: &[Unbuilt], base: &Revision, object: &Value) -> bool {
    let mut owner = owner_of(object);
    // A chain of Kustomizations is short; the bound stops a cycle.
    for _ in 0..64 {
        let Some((namespace, name)) = owner else {
            return false;
        };
        if unbuilt
            .iter()
            .any(|u| u.kustomization == (namespace.clone(), name.clone()))
        {
            return true;
        }
        owner = find_object(base, &namespace, &name).and_then(owner_of);
    }
    false
}

/// The Kustomization that applies an object, from the owner labels.
fn owner_of(object: &Value) -> Option<(String, String)> {
    let labels = object.pointer("/metadata/labels")?;
    let owner = guard_core::model::keys::KUSTOMIZATION_OWNER;
    let text = |k: &str| labels.get(k).and_then(Value::as_str).map(str::to_string);
    Some((text(owner.namespace)?, text(owner.name)?))
}

/// A Kustomization of the revision, by its namespace and name.
fn find_object<'a>(revision: &'a Revision, namespace: &str, name: &str) -> Option<&'a Value> {
    let key = (
        FLUX_KUSTOMIZE_GROUP.to_string(),
        KUSTOMIZATION.kind.to_string(),
        Some(namespace.to_string()),
        name.to_string(),
    );
    revision.get(&key).map(|(_, _, object)| object)
}

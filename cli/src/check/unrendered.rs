//! The ResourceSets whose objects check cannot render, as findings: a run
//! that leaves what a ResourceSet generates unjudged says so and fails,
//! as it does for a Kustomization it cannot build ([`super::unbuilt`]).

use super::identity::Identity;
use super::manifests::Unrendered;
use super::report::PolicyInfo;
use super::{Checked, Finding, Level, Revision};
use guard_core::model::kinds::{OPERATOR, RESOURCE_SET};

/// Who reports a ResourceSet that is not rendered: the name findings carry.
pub const RENDERER: &str = "flux-operator";

/// The renderer as the reports describe it next to the policies.
pub fn renderer() -> PolicyInfo {
    PolicyInfo {
        name: RENDERER.to_string(),
        description: "Flux Operator's rendering of each ResourceSet".to_string(),
    }
}

/// One finding per ResourceSet not rendered: a CREATE, or an UPDATE where
/// the base has it.
pub(super) fn findings(
    unrendered: &[Unrendered],
    head: &Revision,
    base: Option<&Revision>,
) -> Vec<Checked> {
    unrendered
        .iter()
        .map(|u| {
            let (namespace, name) = &u.resource_set;
            let (object, operation) = head.reported_on(
                Identity {
                    group: OPERATOR.to_string(),
                    version: "v1".to_string(),
                    kind: RESOURCE_SET.kind.to_string(),
                    namespace: Some(namespace.clone()),
                    name: name.clone(),
                },
                base,
            );
            let finding = if u.fails {
                Finding {
                    level: Level::NotApplied,
                    message: format!("nothing it generates is applied: {}", u.message),
                }
            } else {
                Finding {
                    level: Level::Undecided,
                    message: format!(
                        "the objects it generates are not judged (the ResourceSet itself is): {}",
                        u.message
                    ),
                }
            };
            Checked {
                origin: u.origin.clone(),
                object,
                operation,
                policy: RENDERER.to_string(),
                findings: vec![finding],
                unchanged: false,
            }
        })
        .collect()
}

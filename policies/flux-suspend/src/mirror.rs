//! Mirror mode: keeps the RFC-0006 annotation and the mechanism the kind's
//! controller honours in step, so an annotated object is suspended for every
//! Flux release, and a resume by either mechanism resumes it fully.

use guard_core::json_text::{EditError, ObjectText, RawObject};
use guard_core::{AdmissionRequest, Which};
use serde_json::Value;

use crate::kinds::{Honours, Kind, DISABLED, SUSPEND_ANNOTATION};
use crate::view::State;

/// One change to the object the request stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Edit {
    SpecSuspend(bool),
    SetAnnotation(String, String),
    RemoveAnnotation(String),
}

/// What mirroring did, for the warning that explains it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mirrored {
    /// The annotation was given: the honoured mechanism was set.
    Honoured,
    /// A reconciler re-applied a manifest carrying the annotation but not the
    /// honoured mechanism its earlier apply had set: set again.
    Reasserted,
    /// The annotation was removed: the honoured mechanism was unset (resume).
    ResumedByAnnotation,
    /// The honoured mechanism was unset (`flux resume`): the stale
    /// annotation was removed.
    ResumedByMechanism,
}

/// Brings `new` in step with itself, given what was stored before, and
/// returns the edits that do so. `reconciler`: the request comes from a
/// controller applying Git, whose manifest states the annotation on purpose.
/// Writes that change nothing never reach here ([`crate::noop`]).
///
/// Otherwise a stored annotation without the mechanism (stored before the
/// policy, or in another mode) is honoured on the next write.
pub(crate) fn mirror(
    kind: &Kind,
    old: Option<&State>,
    new: &mut State,
    reconciler: bool,
) -> Option<(Mirrored, Vec<Edit>)> {
    let remove = || vec![Edit::RemoveAnnotation(SUSPEND_ANNOTATION.to_string())];
    let was_mirrored = old.is_some_and(|o| o.reason.is_some() && o.honoured());
    if new.reason.is_some() && !new.honoured() {
        // An unchanged annotation with the mechanism dropped is a resume
        // through the mechanism (`flux resume`), unless Git re-applied it.
        let unchanged = old.is_some_and(|o| o.reason == new.reason);
        if was_mirrored && unchanged && !reconciler {
            new.reason = None;
            return Some((Mirrored::ResumedByMechanism, remove()));
        }
        new.set_honoured(kind, true);
        let how = if was_mirrored && unchanged {
            Mirrored::Reasserted
        } else {
            Mirrored::Honoured
        };
        return Some((how, vec![honour(kind, true)]));
    }
    if new.reason.is_none() && new.honoured() && was_mirrored {
        new.set_honoured(kind, false);
        return Some((Mirrored::ResumedByAnnotation, vec![honour(kind, false)]));
    }
    None
}

/// The edit that sets or unsets what the kind's controller honours.
fn honour(kind: &Kind, on: bool) -> Edit {
    match (kind.honours, on) {
        (Honours::SpecSuspend, on) => Edit::SpecSuspend(on),
        (Honours::DisableAnnotation(key), true) => {
            Edit::SetAnnotation(key.to_string(), DISABLED.to_string())
        }
        (Honours::DisableAnnotation(key), false) => Edit::RemoveAnnotation(key.to_string()),
    }
}

/// The object as the request stores it, after the policy's edits.
#[derive(Debug)]
pub(crate) struct Mutated(pub(crate) ObjectText);

impl PartialEq for Mutated {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

/// The request's object with `edits` applied; `None` without edits. The
/// error names the field whose shape prevents it.
pub(crate) fn edited(
    request: &AdmissionRequest,
    edits: &[Edit],
) -> Result<Option<Mutated>, EditError> {
    if edits.is_empty() {
        return Ok(None);
    }
    let Some(raw) = request.raw(Which::Object) else {
        return Ok(None);
    };
    let mut object = RawObject::of_raw(raw)?;
    apply(edits, &mut object)?;
    Ok(Some(Mutated(object.to_raw()?)))
}

/// Applies edits to the full object, expanding only the members they touch.
/// Errors name the field whose shape prevents it (already refused earlier in
/// practice).
fn apply(edits: &[Edit], object: &mut RawObject) -> Result<(), EditError> {
    for edit in edits {
        match edit {
            Edit::SpecSuspend(on) => {
                object.child("spec")?.insert("suspend", Value::Bool(*on));
            }
            Edit::SetAnnotation(key, value) => {
                object.set_annotation(key, value)?;
            }
            Edit::RemoveAnnotation(key) => {
                let metadata = object.child("metadata")?;
                if metadata.has_object("annotations") {
                    metadata.child("annotations")?.remove(key);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds;
    use serde_json::json;

    fn ks() -> Kind {
        kinds::find("kustomize.toolkit.fluxcd.io", "Kustomization").unwrap()
    }

    fn ag() -> Kind {
        kinds::find("source.extensions.fluxcd.io", "ArtifactGenerator").unwrap()
    }

    fn state(spec_suspend: bool, reason: Option<&str>) -> State {
        State {
            spec_suspend,
            disabled: false,
            reason: reason.map(str::to_string),
            collects: None,
        }
    }

    #[test]
    fn the_annotation_sets_spec_suspend() {
        let mut new = state(false, Some("INC-1 migration"));
        let got = mirror(&ks(), Some(&state(false, None)), &mut new, false);
        assert_eq!(
            got,
            Some((Mirrored::Honoured, vec![Edit::SpecSuspend(true)]))
        );
        assert!(new.spec_suspend);
        let mut created = state(false, Some("INC-1 migration"));
        assert!(mirror(&ks(), None, &mut created, false).is_some());
    }

    #[test]
    fn removing_the_annotation_resumes() {
        let mut new = state(true, None);
        let got = mirror(&ks(), Some(&state(true, Some("INC-1 x"))), &mut new, false);
        assert_eq!(
            got,
            Some((
                Mirrored::ResumedByAnnotation,
                vec![Edit::SpecSuspend(false)]
            ))
        );
        assert!(!new.suspended());
    }

    #[test]
    fn flux_resume_removes_the_stale_annotation() {
        let mut new = state(false, Some("INC-1 x"));
        let got = mirror(&ks(), Some(&state(true, Some("INC-1 x"))), &mut new, false);
        assert_eq!(
            got,
            Some((
                Mirrored::ResumedByMechanism,
                vec![Edit::RemoveAnnotation(SUSPEND_ANNOTATION.into())]
            ))
        );
        assert!(!new.suspended());
    }

    #[test]
    fn a_stored_annotation_is_honoured_on_the_next_write() {
        let mut new = state(false, Some("INC-1 x"));
        let got = mirror(&ks(), Some(&state(false, Some("INC-1 x"))), &mut new, false);
        assert_eq!(got.map(|g| g.0), Some(Mirrored::Honoured));
    }

    #[test]
    fn a_reconciler_reapplying_the_annotation_keeps_it_suspended() {
        let mut new = state(false, Some("INC-1 x"));
        let got = mirror(&ks(), Some(&state(true, Some("INC-1 x"))), &mut new, true);
        assert_eq!(
            got,
            Some((Mirrored::Reasserted, vec![Edit::SpecSuspend(true)]))
        );
    }

    #[test]
    fn a_changed_reason_with_the_mechanism_dropped_stays_suspended() {
        let mut new = state(false, Some("INC-2 new reason"));
        let got = mirror(&ks(), Some(&state(true, Some("INC-1 x"))), &mut new, false);
        assert_eq!(got.map(|g| g.0), Some(Mirrored::Honoured));
        assert!(new.spec_suspend);
    }

    #[test]
    fn consistent_or_reasonless_states_are_left_alone() {
        let mut both = state(true, Some("INC-1 x"));
        assert!(mirror(&ks(), None, &mut both, false).is_none());
        let mut spec_only = state(true, None);
        assert!(mirror(&ks(), Some(&state(false, None)), &mut spec_only, false).is_none());
        let mut none = state(false, None);
        assert!(mirror(&ks(), Some(&state(false, None)), &mut none, false).is_none());
    }

    #[test]
    fn annotation_kinds_get_the_disable_annotation() {
        let mut new = state(false, Some("INC-1 x"));
        let got = mirror(&ag(), None, &mut new, false);
        assert_eq!(
            got.map(|g| g.1),
            Some(vec![Edit::SetAnnotation(
                "source.extensions.fluxcd.io/reconcile".into(),
                "disabled".into()
            )])
        );
        assert!(new.disabled);
    }

    /// `edits` applied to `object`, read back.
    fn applied(object: Value, edits: &[Edit]) -> Result<Value, EditError> {
        let text = object.to_string();
        let mut o = RawObject::parse(&text).unwrap();
        apply(edits, &mut o)?;
        Ok(serde_json::from_str(o.to_raw().unwrap().get()).unwrap())
    }

    #[test]
    fn edits_apply_to_the_full_object() {
        assert_eq!(
            applied(
                json!({"metadata": {"name": "a"}, "spec": {"path": "./"}}),
                &[
                    Edit::SpecSuspend(true),
                    Edit::SetAnnotation("k".into(), "v".into()),
                    Edit::RemoveAnnotation("gone".into()),
                ],
            )
            .unwrap(),
            json!({"metadata": {"name": "a", "annotations": {"k": "v"}}, "spec": {"path": "./", "suspend": true}})
        );
        assert_eq!(
            applied(
                json!({"metadata": {"annotations": null}}),
                &[Edit::SpecSuspend(true), Edit::RemoveAnnotation("x".into())],
            )
            .unwrap(),
            json!({"metadata": {"annotations": null}, "spec": {"suspend": true}})
        );
        assert_eq!(
            applied(
                json!({"metadata": {}, "spec": "x"}),
                &[Edit::SpecSuspend(true)]
            )
            .unwrap_err(),
            EditError::NotObjectAt("spec".into())
        );
    }
}

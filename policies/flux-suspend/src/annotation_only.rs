//! A suspension by annotation alone, which no Flux release honours, in the
//! modes that do not mirror: `annotation-only` refuses it where deleting the
//! Kustomization would delete its inventory (the RFC's version-skew hazard),
//! `deny-annotation-only` refuses it everywhere. A state kept from the
//! stored object is not refused again, so unrelated updates go through.

use crate::kinds::Collects;
use crate::settings::{Mode, Settings};
use crate::view::State;
use crate::write::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finding {
    /// `annotation-only`: the annotation alone while deleting would collect.
    PruneHazard(Collects),
    /// `deny-annotation-only`: the annotation alone.
    Unhonoured,
}

pub(crate) fn check(write: &Write<'_>, settings: &Settings) -> Option<Finding> {
    let state = &write.state;
    match (settings.mode, state.collects) {
        (Mode::AnnotationOnly, Some(collects)) if hazard(state) && !write.kept(hazard) => {
            Some(Finding::PruneHazard(collects))
        }
        (Mode::DenyAnnotationOnly, _)
            if state.annotation_only() && !write.kept(State::annotation_only) =>
        {
            Some(Finding::Unhonoured)
        }
        _ => None,
    }
}

fn hazard(state: &State) -> bool {
    state.annotation_only() && state.collects.is_some()
}

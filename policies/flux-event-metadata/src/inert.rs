//! Event annotations on a kind that emits no Flux events do nothing at all:
//! no controller copies them into any event.

use guard_core::model::kinds::NOTIFICATION;
use guard_core::object::ObjectName;
use guard_core::Metadata;

use crate::annotations;
use crate::findings::Findings;
use crate::kinds::PREFIX;
use crate::settings::Settings;

/// At most this many of the keys are named.
const SHOWN: usize = 5;

/// The object's event annotations, which have no effect.
#[derive(Debug, PartialEq)]
pub(crate) struct Finding {
    /// The first [`SHOWN`] of them, prefix included.
    pub(crate) keys: Vec<String>,
    pub(crate) count: usize,
    /// The object is an Alert, whose metadata for every notification
    /// belongs in its `.spec.eventMetadata`.
    pub(crate) on_alert: bool,
}

pub(crate) fn check<F: From<Finding>>(
    target: &ObjectName<'_>,
    meta: &Metadata,
    old: Option<&Metadata>,
    settings: &Settings,
    findings: &mut Findings<F>,
) {
    let mut keys = Vec::new();
    let mut count = 0usize;
    let mut all_unchanged = true;
    for entry in annotations::entries(meta, old) {
        count = count.saturating_add(1);
        all_unchanged &= entry.unchanged;
        if keys.len() < SHOWN {
            keys.push(format!("{PREFIX}{}", entry.key));
        }
    }
    if count == 0 {
        return;
    }
    let on_alert =
        target.kind == "Alert" && target.resource.strip_prefix("alerts.") == Some(NOTIFICATION);
    findings.report(settings.inert_annotations, all_unchanged, || Finding {
        keys,
        count,
        on_alert,
    });
}

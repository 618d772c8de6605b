//! What the policy decided about one request, before any text is written:
//! the unit tests assert these values, `render` turns them into the verdict.

use guard_core::Which;

use crate::annotations::Malformed;
use crate::findings::Findings;
use crate::generated::Origin;
use crate::template::Chart;
use crate::{alert_rules, conflicts, inert, object_rules};

#[derive(Debug, PartialEq)]
pub(crate) enum Decision {
    /// Only CREATE and UPDATE are checked.
    NotChecked,
    /// The request carries no object.
    NoObject,
    /// The object (`which`) cannot be read.
    Unreadable { which: Which, malformed: Malformed },
    /// The chart template of the HelmRelease `release` cannot be read.
    UnreadableTemplate {
        release: Target,
        which: Which,
        malformed: Malformed,
    },
    /// The rules ran: what they found.
    Reviewed(Review),
}

/// What the rules found on a readable object.
#[derive(Debug, PartialEq)]
pub(crate) struct Review {
    pub(crate) target: Target,
    /// Set when a Flux controller generated the object from a template.
    pub(crate) origin: Option<Origin>,
    /// The HelmChart a HelmRelease's template generates, which findings
    /// [`crate::subject::On::Template`] are about.
    pub(crate) chart: Option<Chart>,
    pub(crate) findings: Findings<Finding>,
}

/// The object under review: its namespace and name as the request and the
/// object give them (its kind and resource are the request's).
#[derive(Debug, PartialEq)]
pub(crate) struct Target {
    pub(crate) namespace: String,
    pub(crate) name: String,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Finding {
    Object(object_rules::Finding),
    Conflict(conflicts::Finding),
    Alert(alert_rules::Finding),
    Inert(inert::Finding),
}

impl From<object_rules::Finding> for Finding {
    fn from(f: object_rules::Finding) -> Self {
        Self::Object(f)
    }
}

impl From<conflicts::Finding> for Finding {
    fn from(f: conflicts::Finding) -> Self {
        Self::Conflict(f)
    }
}

impl From<alert_rules::Finding> for Finding {
    fn from(f: alert_rules::Finding) -> Self {
        Self::Alert(f)
    }
}

impl From<inert::Finding> for Finding {
    fn from(f: inert::Finding) -> Self {
        Self::Inert(f)
    }
}

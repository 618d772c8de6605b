//! What the policy decided about one request, before any text is written:
//! what tests assert, and what [`crate::render`] turns into the reply.

use guard_core::json_text::EditError;

use crate::annotation_only;
use crate::audit::Audit;
use crate::deletion;
use crate::identity_rules::Act;
use crate::mirror::Mutated;
use crate::namespace;
use crate::reason;
use crate::view::Unreadable;
use crate::warnings::Warning;
use crate::write::Write;

#[derive(Debug, PartialEq)]
pub(crate) enum Decision<'a> {
    Allow(Allowed),
    Refuse(Refusal<'a>),
}

/// Let through: what the person should know, what is recorded, and the
/// object as stored when the policy changed it.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Allowed {
    pub(crate) warnings: Vec<Warning>,
    pub(crate) audit: Option<Audit>,
    pub(crate) mutated: Option<Mutated>,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Refusal<'a> {
    Unreadable(Unreadable),
    /// The object's text cannot carry the edits back (a field on their path
    /// has another shape; refused earlier in practice).
    Unwritable(EditError),
    /// A rule refused the write (CREATE or UPDATE) of a suspendable object.
    Write {
        write: Write<'a>,
        rule: WriteRule,
    },
    Delete(deletion::Refused),
    /// The DELETE of a Namespace (named by the request).
    Namespace(namespace::Refused),
}

/// The rule that refused a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WriteRule {
    /// `suspenders` or `resumers`.
    NotAllowed(Act),
    Reason(reason::Finding),
    Mode(annotation_only::Finding),
}

impl Decision<'_> {
    /// Let through with nothing to say.
    pub(crate) fn allow() -> Self {
        Decision::Allow(Allowed::default())
    }

    pub(crate) fn warn(warnings: Vec<Warning>) -> Self {
        Decision::Allow(Allowed {
            warnings,
            ..Allowed::default()
        })
    }
}

//! What the policy decided about one request, before any word of it is
//! written: [`crate::decide`] makes it, `render` writes it for the user.

use guard_core::request::ReadError;
use guard_core::Which;
use jiff::Timestamp;

use crate::binding::AnnotationError;
use crate::emergency_override::OwnerError;
use crate::gate::{Gate, Zone};
use crate::gate_object::{LookupError, WriteError};
use crate::opening::Opening;
use crate::split_object::SplitError;

/// One request's outcome.
#[derive(Debug, PartialEq)]
pub(crate) enum Decision<'a> {
    /// Passes with nothing to say.
    Allow,
    /// The request cannot be read; the reader's error.
    Unreadable(Unreadable),
    /// The request lacks the object the operation must carry.
    MissingObject { which: Which, object: Named },
    /// A write of a Gate object, checked.
    GateWrite(GateWrite),
    /// Someone outside emergencyOverride.groups adds or changes the override
    /// annotation on a Kustomization or HelmRelease.
    OverrideAnnotationRefused {
        object: Named,
        user: String,
        groups: Vec<String>,
    },
    /// The object's gates annotation cannot be read, and the write changes
    /// the desired state or the annotation itself.
    GatesAnnotationMalformed {
        object: Named,
        error: Box<AnnotationError>,
    },
    /// A metadata-only or suspend-only write: passes, and says what stays held.
    Passes {
        object: Named,
        kind: Passing,
        /// The gates annotation's fault, when it has one.
        malformed: Option<Box<AnnotationError>>,
        closed: Option<ClosedGates<'a>>,
    },
    /// A change no closed gate holds; the Gate objects that could not be
    /// read are let pass (onGateLookupError: allow).
    Unchecked(Vec<Failed>),
    /// A change let through a closed gate by an exemption, recorded.
    Exempt(Exemption),
    /// A change held by closed gates.
    Held(Box<Held<'a>>),
    /// A dry run that previews a Flux apply from someone else's identity
    /// (`flux diff kustomization`, [`crate::preview`]): passes, and says
    /// the apply would be held.
    Preview(Box<Held<'a>>),
}

/// An object as decisions name it (owned: the request's metadata is read
/// while deciding and gone after).
pub(crate) type Named = guard_core::object::OwnedObjectName;

/// Why a request cannot be read, as its reader said.
#[derive(Debug, PartialEq)]
pub(crate) enum Unreadable {
    /// guard-core's readers: an object's metadata, the options.
    Read(ReadError),
    /// An UPDATE's object, split for the comparison.
    Split(SplitError),
}

impl From<ReadError> for Unreadable {
    fn from(e: ReadError) -> Self {
        Unreadable::Read(e)
    }
}

impl From<SplitError> for Unreadable {
    fn from(e: SplitError) -> Self {
        Unreadable::Split(e)
    }
}

/// A Gate object's CREATE or UPDATE.
#[derive(Debug, PartialEq)]
pub(crate) enum GateWrite {
    Refused {
        object: Named,
        error: WriteError,
        now: Timestamp,
    },
    /// Accepted: the state it leads to.
    Accepted {
        label: String,
        open: bool,
        /// Open or closed by a request until then, then back to its default.
        request_until: Option<Timestamp>,
        /// At its default until a request takes effect then.
        next_change: Option<Timestamp>,
    },
}

/// What a metadata-only or suspend-only write is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Passing {
    MetadataOnly,
    /// Only a stop field changed (`spec.suspend`, a Deployment's
    /// `spec.paused`): names it.
    SuspendOnly(&'static str),
}

/// The closed gates a passing write is told about.
#[derive(Debug, PartialEq)]
pub(crate) struct ClosedGates<'a> {
    pub(crate) labels: Vec<String>,
    pub(crate) opening: Opening,
    pub(crate) zones: Vec<&'a Zone>,
}

/// A Gate object that could not be used.
#[derive(Debug, PartialEq)]
pub(crate) struct Failed {
    pub(crate) label: String,
    pub(crate) error: LookupError,
}

/// What a held write does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    Creates,
    Deletes,
    /// Changes this field (`spec.path`, `metadata.ownerReferences`).
    Field(String),
    /// Changes this label, annotation or finalizer, applied from Git by
    /// this field manager.
    FromGit {
        field: String,
        manager: String,
    },
    /// Sets a stop field (`spec.suspend`, a Deployment's `spec.paused`)
    /// from true to something else.
    Resumes(&'static str),
    /// Drops the gates with these labels from the object's bindings.
    RemovesGates(Vec<String>),
}

/// Who passed a closed gate, and how.
#[derive(Debug, PartialEq)]
pub(crate) struct Exemption {
    pub(crate) by: Exempted,
    pub(crate) user: String,
    /// The closed gates (and unreadable Gate objects) passed, as labels.
    pub(crate) blocked: Vec<String>,
    pub(crate) change: Change,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Exempted {
    BreakGlass,
    /// The override on the object itself, by a member of `group`.
    Override {
        group: String,
        reason: String,
        object: Named,
    },
    /// The override on the Flux object that applies it, used by its applier.
    OwnerOverride {
        owner: Named,
        reason: String,
        object: Named,
    },
}

/// A held change: the gates, when they open, and how to get through.
#[derive(Debug, PartialEq)]
pub(crate) struct Held<'a> {
    pub(crate) object: Named,
    pub(crate) change: Change,
    pub(crate) closed: Vec<Gate<'a>>,
    pub(crate) now: Timestamp,
    /// When all the gates are open again (`None` when none is closed, only
    /// unreadable).
    pub(crate) opening: Option<Opening>,
    pub(crate) zones: Vec<&'a Zone>,
    /// Gate objects that could not be read (onGateLookupError: deny).
    pub(crate) failed: Vec<Failed>,
    /// Overrides on owners that do not cover this sender.
    pub(crate) foreign_overrides: Vec<ForeignOverride>,
    /// Owners whose override could not be read, and why.
    pub(crate) unchecked_overrides: Vec<(Named, OwnerError)>,
    pub(crate) override_problem: Option<OverrideProblem>,
}

/// An override on the Flux object that applies this one, which lets through
/// only its applier's writes.
#[derive(Debug, PartialEq)]
pub(crate) struct ForeignOverride {
    pub(crate) owner: Named,
    pub(crate) applier: String,
    pub(crate) field_manager: &'static str,
    /// Who sent this request, and under which field manager (empty: none).
    pub(crate) sender: String,
    pub(crate) manager: String,
}

/// Why the override annotation on the object itself was not honoured.
#[derive(Debug, PartialEq)]
pub(crate) enum OverrideProblem {
    /// Set by a member, without a reason.
    NoReason,
    /// Set by someone outside emergencyOverride.groups.
    NotMember { user: String, groups: Vec<String> },
}

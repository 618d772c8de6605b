//! What was decided about a request, before any word of it is written:
//! `render` turns it into the verdict users read.

use guard_core::json_text::ObjectText;
use guard_core::request::ReadError;
use guard_core::Which;

use crate::conflicts::{Conflict, IfExistsChange};
use crate::deletion::Protected;
use crate::effective::{Note, Resolved};
use crate::explicit_default::Unwritable;
use crate::failure::Failure;
use crate::matrix::Outcome;
use crate::owners::Child;
use crate::repoint::Repoint;
use crate::values::{Annotation, ReconcilePolicy};

/// The request's verdict: refused or not, what the requester should know,
/// the audit value, and the object as it is to be stored.
#[derive(Debug, PartialEq)]
pub(crate) struct Decision {
    /// The object the messages are about.
    pub subject: Subject,
    pub refusal: Option<Refusal>,
    pub warnings: Vec<Warning>,
    pub audit: Option<Audit>,
    pub mutation: Option<Mutation>,
}

impl Decision {
    /// Allowed with nothing to say.
    pub fn pass(subject: Subject) -> Self {
        Self {
            subject,
            refusal: None,
            warnings: Vec::new(),
            audit: None,
            mutation: None,
        }
    }

    pub fn refuse(subject: Subject, refusal: Refusal) -> Self {
        Self {
            refusal: Some(refusal),
            ..Self::pass(subject)
        }
    }

    pub fn warned(mut self, warnings: impl IntoIterator<Item = Warning>) -> Self {
        self.warnings.extend(warnings);
        self
    }

    pub fn audited(mut self, audit: Audit) -> Self {
        self.audit = Some(audit);
        self
    }
}

/// An object as messages name it and `kubectl` takes it, owned.
pub(crate) type Subject = guard_core::object::OwnedObjectName;

/// Why the request is refused.
#[derive(Debug, PartialEq)]
pub(crate) enum Refusal {
    /// The request lacks the object its operation carries.
    NoObject(Which),
    /// The request's object does not read (guard-core's reader's error).
    Malformed(ReadError),
    /// A lookup or a stored object needed for the answer failed.
    Failed(Failure),
    /// A new, empty `reconcile-policy`: ASO reads it as none, which would
    /// give this effective policy.
    EmptyReconcilePolicy(Resolved),
    /// A new value of an annotation on an ASO resource that is not one of its values.
    InvalidValue { key: Annotation, value: String },
    /// A key set or changed that is a near miss of `meant`, which ASO reads
    /// instead: ASO ignores this one.
    NearMissKey {
        key: String,
        meant: Annotation,
        value: String,
    },
    /// A new value of the Namespace's `reconcile-policy` that ASO does not know.
    InvalidOnNamespace { value: String },
    /// Annotations ADR 2023-02 makes conflict.
    Conflict(Conflict),
    /// `reconcile-policy-if-exists` changed after ASO took over (setting `deny`).
    IfExistsAfterTakeover(IfExistsChange),
    /// The explicit default is due but the object cannot carry it back.
    ExplicitDefaultUnwritable(Unwritable),
    /// A deletion ASO would carry into Azure, unconfirmed; `switch` when it
    /// is an UPDATE of an object already being deleted.
    Protected {
        protected: Box<Protected>,
        switch: Option<Box<Switch>>,
    },
    /// `resource-id` re-pointed while the object keeps the confirmation it
    /// carried for the old id.
    ConfirmationCarried(Repoint),
    /// A Namespace's DELETE while it holds protected resources under `manage`.
    NamespaceHolds { held: Vec<Child> },
    /// A Namespace switched to `manage` from `before` while protected
    /// resources following it are being deleted.
    NamespaceSwitchDeletes {
        before: ReconcilePolicy,
        held: Vec<Child>,
    },
}

/// An UPDATE of an object being deleted that makes its deletion one in Azure.
#[derive(Debug, PartialEq)]
pub(crate) struct Switch {
    /// The effective policy before the change.
    pub before: Resolved,
    /// The policy stays `manage` and `resource-id` changes to this id
    /// (empty when removed).
    pub repointed: Option<String>,
}

/// What the requester should know, in the order it is told.
#[derive(Debug, PartialEq)]
pub(crate) enum Warning {
    /// A legacy value let through; ASO applies its default.
    Legacy {
        key: Annotation,
        value: String,
        modern: &'static str,
    },
    /// A stored value this request does not change is not valid.
    StoredInvalid {
        key: Annotation,
        value: String,
    },
    IfExistsAfterTakeover(IfExistsChange),
    /// What resolving the effective policy found.
    Note(Note),
    /// What will happen in Azure (the adoption matrix).
    Outcome(Outcome),
    /// ASO releases to date ignore `key`: an existing resource is treated by `policy`.
    NotImplemented {
        key: Annotation,
        policy: ReconcilePolicy,
    },
    /// An ADR annotation on a Namespace, where nothing reads it.
    NoEffectOnNamespace(Annotation),
    /// A stored Namespace value ASO does not know.
    NamespaceKeepsInvalid {
        value: String,
    },
    /// Objects in the Namespace without their own annotation now follow `policy`.
    NamespaceFollows {
        policy: ReconcilePolicy,
        why: Inherited,
    },
    /// A deleted object ASO never took over: nothing happens in Azure.
    NotTakenOver,
    /// A deletion that keeps the Azure resource.
    Kept(Resolved),
    /// ASO has already issued the Azure DELETE of `resource_id` of an object
    /// being deleted: whatever `effective` now says, Azure carries it out.
    DeleteUnderWay {
        effective: Resolved,
        resource_id: String,
    },
    /// A deletion confirmed on the object.
    Confirmed(Resolved),
    /// A deletion confirmed on the Namespace being deleted.
    ConfirmedOnNamespace(Resolved),
    /// A Namespace's DELETE confirmed on it.
    NamespaceDeletionConfirmed,
}

/// Why a Namespace's objects follow the policy they now do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inherited {
    SetOnNamespace,
    /// The Namespace no longer sets it: the operator default.
    Removed,
    /// ASO does not know the Namespace's (legacy) value: the operator default.
    Unknown,
}

/// The audit annotation's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Audit {
    Policy(ReconcilePolicy),
    /// Differs by whether the Azure resource exists.
    Split {
        existing: ReconcilePolicy,
        missing: ReconcilePolicy,
    },
    Confirmed,
    ConfirmedOnNamespace,
}

/// The whole object as it is to be stored, as JSON text.
#[derive(Debug)]
pub(crate) struct Mutation(pub ObjectText);

impl PartialEq for Mutation {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

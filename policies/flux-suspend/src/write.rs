//! One CREATE or UPDATE of a suspendable object, read once: the input every
//! rule of a write borrows, and how the write moves the suspension.

use guard_core::{Operation, UserInfo};

use crate::kinds::Kind;
use crate::view::{State, Target};

/// How the request moves the object's effective suspend state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Not suspended before or after.
    Unsuspended,
    Enter,
    Leave,
    /// Suspended before and after; `reason_changed` when the annotation differs.
    Stay {
        reason_changed: bool,
    },
}

impl Change {
    pub(crate) fn of(old: Option<&State>, new: &State) -> Self {
        match (old.is_some_and(State::suspended), new.suspended()) {
            (false, false) => Change::Unsuspended,
            (false, true) => Change::Enter,
            (true, false) => Change::Leave,
            (true, true) => Change::Stay {
                reason_changed: old.map(|o| &o.reason) != Some(&new.reason),
            },
        }
    }

    /// Entering suspension or giving a new reason: the reason is judged as new.
    pub(crate) fn gives_reason(self) -> bool {
        matches!(
            self,
            Change::Enter
                | Change::Stay {
                    reason_changed: true
                }
        )
    }
}

/// What kind of write brings the state: the fix a refusal offers differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A CREATE someone sends: the manifest needs the fix.
    Create,
    /// The audit scanner's replay of a stored object: it exists, so the fix
    /// is a command on it (a new reason or expiry, or a resume).
    Replay,
    Update,
}

impl Origin {
    /// Kubewarden's audit scanner replays stored objects as CREATEs without
    /// any userInfo (kubewarden/audit-scanner `internal/scanner/admission_request.go`
    /// `newAdmissionRequest`, commit 8472a7cf; policy-server's `/audit`
    /// handler passes the request on as it is). kube-apiserver never sends an
    /// empty username: an unauthenticated request is `system:anonymous`
    /// (k8s.io/apiserver `pkg/authentication/request/anonymous`).
    pub(crate) fn of(operation: Operation, user: &UserInfo) -> Self {
        match operation {
            Operation::Create if user.username.is_empty() => Origin::Replay,
            Operation::Create => Origin::Create,
            _ => Origin::Update,
        }
    }
}

/// The write as the rules judge it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Write<'a> {
    pub(crate) kind: Kind,
    pub(crate) target: Target,
    pub(crate) user: &'a UserInfo,
    pub(crate) origin: Origin,
    /// The state stored before (UPDATE only), read leniently: its CRD
    /// schema validated it.
    pub(crate) old: Option<State>,
    /// The state the request would store, after mirroring.
    pub(crate) state: State,
    pub(crate) change: Change,
    /// Sent by the Flux Operator Web UI ([`crate::operator_ui::wrote`]).
    pub(crate) by_operator_ui: bool,
}

impl Write<'_> {
    /// Was the object suspended by what its controller honours? A refusal
    /// then also offers to resume.
    pub(crate) fn resuming(&self) -> bool {
        self.old.as_ref().is_some_and(State::honoured)
    }

    /// The state stayed as `same` says since the stored object, and the
    /// reason did not change: such a state is kept, not refused again.
    pub(crate) fn kept(&self, same: fn(&State) -> bool) -> bool {
        self.old.as_ref().is_some_and(|o| {
            same(o)
                && !matches!(
                    self.change,
                    Change::Stay {
                        reason_changed: true
                    }
                )
        })
    }
}

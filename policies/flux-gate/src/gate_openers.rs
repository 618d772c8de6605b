//! Who may open a Gate. The people the RBAC on Gates names (README, "Who
//! opens a Gate"): a commit may not. A Gate kept in Git is applied by a Flux
//! applier, which the policy tells by its field manager alone (as it holds
//! metadata from Git), so a write under that manager that opens the gate,
//! or creates it open by a request, is refused; and a Gate is deleted only
//! once it is open by default, since what a deleted gate held passes as
//! soon as the references to it are dropped.

use guard_core::model::controllers;
use guard_core::{AdmissionRequest, Operation, Which};
use jiff::Timestamp;

use crate::gate::ObjectGate;
use crate::gate_object::{self, GateView, WriteError};
use crate::settings::Compiled;
use crate::writer::{self, Sender};

/// A Gate's DELETE: refused unless the Gate is open now and by default.
/// Kubernetes' own controllers (the namespace controller emptying a
/// Namespace whose deletion was judged at the Namespace) and `breakGlass`
/// pass; a stored Gate that cannot be read holds nothing and goes.
pub(crate) fn check_delete(
    request: &AdmissionRequest,
    c: &Compiled,
    now: Timestamp,
) -> Result<(), WriteError> {
    if controllers::kube_controller(&request.user_info).is_some()
        || c.break_glass_matches(&request.user_info)
    {
        return Ok(());
    }
    let Some(gate) = stored(request) else {
        return Ok(());
    };
    if gate.default_open && gate.state_at(now).open {
        return Ok(());
    }
    Err(WriteError::ClosedDeleted {
        gate: Box::new(gate),
    })
}

/// A Gate's CREATE or UPDATE by a Flux applier: refused when it opens the
/// gate at an instant the stored Gate keeps it closed (on CREATE: when an
/// open request it carries does).
pub(crate) fn check_from_git(
    request: &AdmissionRequest,
    c: &Compiled,
    new: &ObjectGate,
    now: Timestamp,
) -> Result<(), WriteError> {
    // An unreadable field manager holds like the applier's.
    let manager = request.field_manager().unwrap_or_default();
    if !matches!(writer::sender(request, c), Ok(Sender::Applier) | Err(_)) {
        return Ok(());
    }
    let before = match request.operation {
        Operation::Create => Some(ObjectGate {
            open_at: None,
            ..new.clone()
        }),
        _ => stored(request),
    };
    match gate_object::opens_at(before.as_ref(), new, now) {
        None => Ok(()),
        Some(at) => Err(WriteError::OpenedFromGit {
            at,
            manager,
            gate: Box::new(new.clone()),
        }),
    }
}

/// The stored Gate (`oldObject`), when it can be read.
fn stored(request: &AdmissionRequest) -> Option<ObjectGate> {
    let view = request.object_as::<GateView>(Which::OldObject).ok()??;
    let namespace = if request.namespace.is_empty() {
        view.metadata.namespace.clone()
    } else {
        request.namespace.clone()
    };
    let mut gate = gate_object::read(&view.metadata, view.spec, &namespace).ok()?;
    if gate.name.is_empty() {
        gate.name.clone_from(&request.name);
    }
    Some(gate)
}

//! `explicitDefaults`: on CREATE, the reconcile policy written on an object
//! when nothing else decides it, so that a later change of the operator
//! default does not reach it unseen.

use guard_core::json_text::{EditError, ObjectText, RawObject};
use guard_core::{AdmissionRequest, Which};

use crate::effective::{Effective, Source};
use crate::settings::Settings;
use crate::values::{ReconcilePolicy, Vocabulary, RECONCILE_POLICY};

/// The explicit default is due but the object cannot carry it back.
#[derive(Debug, PartialEq)]
pub(crate) struct Unwritable {
    /// Why the object's text cannot carry it.
    pub error: EditError,
    pub policy: ReconcilePolicy,
}

/// The object with `reconcile-policy` written from `explicitDefaults`, when
/// nothing else decides the policy: neither the object nor a readable
/// Namespace carries a valid annotation (a Namespace annotation stays in
/// charge, so changing it later still reaches this object).
///
/// Only the annotation is edited: every other member is copied as the
/// request's text has it. `Err` when the mutation is due but the object
/// cannot carry it back (text the host could not read in the reply, such as
/// a lone `\ud800` escape, `1e400` or nesting past the reply's depth):
/// refusing, rather than admitting the object without the annotation, keeps
/// the explicit default from being dropped silently.
pub(crate) fn written(
    request: &AdmissionRequest,
    settings: &Settings,
    namespace: &str,
    effective: &Effective,
) -> Result<Option<(ReconcilePolicy, ObjectText)>, Unwritable> {
    if effective.source != Source::OperatorDefault || !effective.namespace_read {
        return Ok(None);
    }
    let Some(policy) = settings
        .explicit_defaults
        .get(namespace)
        .or_else(|| settings.explicit_defaults.get("*"))
        .copied()
    else {
        return Ok(None);
    };
    // Not reached: the flow refuses a request without an object first.
    let Some(raw) = request.raw(Which::Object) else {
        return Ok(None);
    };
    RawObject::of_raw(raw)
        .and_then(|mut object| {
            object.set_annotation(RECONCILE_POLICY, policy.as_str())?;
            object.to_raw()
        })
        .map(|object| Some((policy, object)))
        .map_err(|error| Unwritable { error, policy })
}

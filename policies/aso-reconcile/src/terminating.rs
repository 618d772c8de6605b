//! Objects already being deleted. Once `deletionTimestamp` is set, ASO reads
//! the reconcile policy on each reconcile until it removes its finalizer
//! (`GenericReconciler.delete`): an object deleted while detached (allowed)
//! whose policy is switched to `manage` before ASO let it go is deleted in
//! Azure on the next reconcile. So that switch needs what a DELETE of it
//! would need: the confirmation, or nothing protected at stake.

use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Context, Metadata, Verdict};

use crate::deletion::{assess, Assessment};
use crate::effective::{namespace_annotation, resolve_with, Effective};
use crate::settings::Settings;
use crate::values::{ReconcilePolicy, FINALIZER, RECONCILE_POLICY};

/// `None` when the request does not turn a terminating object's deletion
/// into one in Azure; otherwise the verdict a DELETE would get now.
pub fn check(
    request: &AdmissionRequest,
    settings: &Settings,
    ctx: &Context<'_>,
    target: &ObjectName<'_>,
    new: &Metadata,
    old: &Metadata,
) -> Result<Option<Verdict>, String> {
    let waiting = old.deletion_timestamp.is_some()
        && old.finalizers.iter().any(|f| f == FINALIZER)
        && new.finalizers.iter().any(|f| f == FINALIZER);
    if !waiting
        || !settings.deletion_protection.is_enabled()
        || old.annotation(RECONCILE_POLICY) == new.annotation(RECONCILE_POLICY)
    {
        return Ok(None);
    }
    // The Namespace is read once for both, and only when one needs it.
    let read = std::cell::OnceCell::new();
    let namespace = || {
        read.get_or_init(|| namespace_annotation(target.namespace, ctx.cluster))
            .clone()
    };
    let effective = |meta: &Metadata| -> Result<Effective, String> {
        resolve_with(
            meta.annotation(RECONCILE_POLICY),
            target.namespace,
            settings,
            namespace,
        )
    };
    let before = effective(old)?;
    let after = effective(new)?;
    if before.policy == ReconcilePolicy::Manage || after.policy != ReconcilePolicy::Manage {
        return Ok(None);
    }
    Ok(Some(
        match assess(request, settings, ctx, target, new, Some(after)) {
            Assessment::Passes(verdict) => verdict,
            Assessment::Refused(r) => r.refusal(
                format!(
                    "{} is being deleted and waits for ASO's finalizer, under {}; with this change \
                     its effective {RECONCILE_POLICY} becomes manage and it is protected from \
                     deletion",
                    target.describe(),
                    before.describe()
                ),
                "Then make this change again.",
            ),
        },
    ))
}

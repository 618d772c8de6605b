//! A DELETE: the namespace controller's follow-ups, who may end a
//! suspension by deleting, and the prune hazard ([`crate::prune`]).

use guard_core::model::controllers;
use guard_core::{AdmissionRequest, Which};

use crate::identity_rules::{self, Act};
use crate::kinds::Kind;
use crate::prune::{self, Hazard};
use crate::settings::Settings;
use crate::view::{self, State, Target, Unreadable};
use crate::warnings::Warning;

/// The namespace controller's follow-ups are let through: they delete
/// everything a terminating Namespace holds, whose deletion was judged at
/// the Namespace ([`crate::namespace`]); refusing one leaves the Namespace
/// stuck in Terminating with nobody told why. Who it is, with and without
/// per-controller credentials, is the model's
/// ([`controllers::is_namespace_controller`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    Unreadable(Unreadable),
    /// With `resumers` listed, someone else deletes a suspended object.
    NotAllowed(Target),
    Hazard(Box<Hazard>),
}

pub(crate) fn check(
    request: &AdmissionRequest,
    kind: &Kind,
    settings: &Settings,
) -> Result<Option<Warning>, Refused> {
    if controllers::is_namespace_controller(&request.user_info, &request.name) {
        return Ok(None);
    }
    if !settings.resumers.is_empty() {
        // Deleting a suspended object and creating it again unsuspended
        // resumes it: only the resumers may.
        let object = view::load_required(
            request,
            Which::OldObject,
            &view::annotations_read(kind, None),
        )
        .map_err(Refused::Unreadable)?;
        let suspended = State::of(&object, kind, false).is_ok_and(|s| s.suspended());
        if suspended && !identity_rules::may(Act::Delete, settings, &request.user_info) {
            return Err(Refused::NotAllowed(view::target(
                request,
                Some(&object.metadata),
            )));
        }
    }
    prune::check_delete(request, kind).map_err(|refused| match refused {
        prune::Refused::Unreadable(e) => Refused::Unreadable(e),
        prune::Refused::Hazard(h) => Refused::Hazard(h),
    })
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use serde_json::{json, Value};

    const RESUMERS: &str = r#"{"resumers":{"groups":["platform"]}}"#;

    #[test]
    fn only_resumers_may_delete_a_suspended_object() {
        let r = request("DELETE", "alice", Value::Null, suspended());
        let v = run(&r, RESUMERS);
        assert_eq!(v.code, Some(403), "{v:?}");
        assert!(message(&v).starts_with(
            "alice may not delete Kustomization flux-system/apps while it is suspended"
        ));
        // Without resumers, or for an object that is not suspended, anyone may.
        assert!(run(&r, "{}").allowed);
        let running = request("DELETE", "alice", Value::Null, ks(json!({}), json!({})));
        assert!(run(&running, RESUMERS).allowed);
        // The namespace controller's follow-up deletes are judged at the Namespace.
        let ns = request(
            "DELETE",
            "system:serviceaccount:kube-system:namespace-controller",
            Value::Null,
            suspended(),
        );
        assert!(run(&ns, RESUMERS).allowed);
    }

    #[test]
    fn a_delete_without_old_object_is_refused_when_resumers_are_listed() {
        let r = request("DELETE", "alice", Value::Null, Value::Null);
        assert_eq!(
            message(&run(&r, RESUMERS)),
            "Kustomization flux-system/apps: the DELETE request carries no oldObject"
        );
    }
}

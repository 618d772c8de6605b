//! A DELETE: the namespace controller's follow-ups, who may end a
//! suspension by deleting, and the prune hazard ([`crate::prune`]).

use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Verdict, Which};

use crate::identity_rules::check_delete;
use crate::kinds::Kind;
use crate::prune;
use crate::settings::Settings;
use crate::view::{self, State};

/// The namespace controller of kube-controller-manager, which deletes
/// everything a terminating Namespace holds: its client is built for the
/// service account `namespace-controller` in `kube-system` (kubernetes
/// `cmd/kube-controller-manager/app/core.go`, `ClientOrDie("namespace-controller")`).
/// It sends one `deletecollection` per resource
/// (`pkg/controller/namespace/deletion/namespaced_resources_deleter.go`
/// `deleteCollection`, deleting item by item only where that is not
/// supported), which kube-apiserver admits object by object with an empty
/// name and the object in `oldObject` (k8s.io/apiserver
/// `pkg/registry/rest/delete.go` `AdmissionToValidateObjectDeleteFunc`,
/// commit 24a394e5). Refusing one leaves the Namespace stuck in Terminating
/// with nobody told why: the deletion was decided at the Namespace.
pub const NAMESPACE_CONTROLLER: &str = "system:serviceaccount:kube-system:namespace-controller";

pub fn delete(request: &AdmissionRequest, kind: &Kind, settings: &Settings) -> Verdict {
    if request.user_info.username == NAMESPACE_CONTROLLER {
        return Verdict::allow();
    }
    if !settings.resumers.is_empty() {
        // Deleting a suspended object and creating it again unsuspended
        // resumes it: only the resumers may.
        let object = match view::load(request, Which::OldObject) {
            Ok(Some(o)) => o,
            Ok(None) => {
                return Verdict::deny(format!(
                    "malformed request: a DELETE of {} has no oldObject, so whether it is \
                     suspended cannot be judged",
                    kind.kind
                ))
            }
            Err(e) => return Verdict::deny(e),
        };
        let suspended = State::of(&object, kind, false).is_ok_and(|s| s.suspended());
        if suspended {
            let target = ObjectName::of(request, Some(&object.metadata));
            if let Some(refusal) = check_delete(settings, &request.user_info, &target) {
                return refusal;
            }
        }
    }
    prune::delete(request, kind)
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
            super::NAMESPACE_CONTROLLER,
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
            "malformed request: a DELETE of Kustomization has no oldObject, so whether it is \
             suspended cannot be judged"
        );
    }
}

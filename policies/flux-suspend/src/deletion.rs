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

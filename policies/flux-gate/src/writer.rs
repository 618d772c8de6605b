//! Who wrote a request, as a freeze sees it: Kubernetes' own controllers
//! completing or maintaining objects, or the Flux controller that applies an
//! object from Git. Both are told by the request's identity and field
//! manager, never by labels or annotations, which any writer controls.

use guard_core::model::controllers;
use guard_core::AdmissionRequest;

use crate::flux_owner::FluxOwnerKind;
use crate::settings::Compiled;

/// Who sent a write that names a Flux controller's field manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sender {
    /// The field manager of a Flux controller's applies (kustomize-controller,
    /// helm-controller, Flux Operator: the model's
    /// [`controllers::flux_applier`]): held like a change from Git, whoever
    /// sends it; only the identity check of [`applier`] lets anything pass.
    Applier,
    /// That manager, from the controller's own identity, on a kind it
    /// reconciles ([`controllers::flux_bookkeeper`]): its upkeep (helm-controller
    /// adds and removes its finalizer under the manager of its applies).
    Upkeep,
    /// Anyone else.
    Other,
}

pub(crate) fn sender(request: &AdmissionRequest, c: &Compiled) -> Result<Sender, String> {
    let manager = request.field_manager().map_err(|e| e.to_string())?;
    if controllers::flux_applier(&manager).is_none() {
        return Ok(Sender::Other);
    }
    let upkeep = controllers::flux_bookkeeper(
        &request.user_info,
        &manager,
        &c.flux_namespace,
        &request.kind.group,
        &request.kind.kind,
    );
    Ok(match upkeep {
        Some(_) => Sender::Upkeep,
        None => Sender::Applier,
    })
}

/// The username a Flux object's applies are sent as: its
/// `spec.serviceAccountName`, else the controllers'
/// `--default-service-account`, both in the object's namespace; else the
/// controller's own service account in `fluxNamespace` (the model's
/// [`guard_core::model::controllers::Controller::applier`]).
pub(crate) fn applier(
    kind: FluxOwnerKind,
    namespace: &str,
    service_account_name: &str,
    c: &Compiled,
) -> String {
    let impersonated = if service_account_name.is_empty() {
        c.default_service_account.as_str()
    } else {
        service_account_name
    };
    kind.controller()
        .applier(namespace, impersonated, &c.flux_namespace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::settings;
    use serde_json::json;

    #[test]
    fn appliers_follow_impersonation() {
        let plain = settings(json!({}));
        let k = FluxOwnerKind::Kustomization;
        assert_eq!(
            applier(k, "apps", "", &plain),
            "system:serviceaccount:flux-system:kustomize-controller"
        );
        assert_eq!(
            applier(FluxOwnerKind::HelmRelease, "team-a", "deployer", &plain),
            "system:serviceaccount:team-a:deployer"
        );
        let locked = settings(json!({"fluxNamespace": "gitops", "defaultServiceAccount": "flux"}));
        assert_eq!(
            applier(k, "team-a", "", &locked),
            "system:serviceaccount:team-a:flux"
        );
        assert_eq!(
            applier(k, "team-a", "own", &locked),
            "system:serviceaccount:team-a:own"
        );
    }
}

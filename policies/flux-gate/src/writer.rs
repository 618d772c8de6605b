//! Who wrote a request, as a freeze sees it: Kubernetes' own controllers
//! completing or maintaining objects, or the Flux controller that applies an
//! object from Git. Both are told by the request's identity and field
//! manager, never by labels or annotations, which any writer controls.

use guard_core::{AdmissionRequest, UserInfo};

use crate::flux_owner::FluxOwnerKind;
use crate::settings::Compiled;

const SA_PREFIX: &str = "system:serviceaccount:";

/// kube-controller-manager's own identity, which every controller uses
/// unless it runs with `--use-service-account-credentials`
/// (kubernetes/kubernetes `staging/src/k8s.io/apiserver/pkg/authentication/user/user.go`,
/// `KubeControllerManager`).
const KUBE_CONTROLLER_MANAGER: &str = "system:kube-controller-manager";

/// With `--use-service-account-credentials` each controller runs as its own
/// service account in kube-system (`createClientBuilders` builds the
/// clients with `metav1.NamespaceSystem`), named as its start function asks
/// `ClientBuilder.ClientOrDie` / `ConfigOrDie` for it
/// (kubernetes/kubernetes 00115d34, `cmd/kube-controller-manager/app/`
/// `core.go`, `apps.go`, `batch.go`, `rbac.go`, `discovery.go`; and
/// `certificates.go` for `root-ca-cert-publisher`).
const KUBE_CONTROLLERS: [&str; 31] = [
    "attachdetach-controller",
    "clusterrole-aggregation-controller",
    "cronjob-controller",
    "daemon-set-controller",
    "deployment-controller",
    "endpoint-controller",
    "endpointslice-controller",
    "endpointslicemirroring-controller",
    "ephemeral-volume-controller",
    "expand-controller",
    "generic-garbage-collector",
    "job-controller",
    "legacy-service-account-token-cleaner",
    "namespace-controller",
    "node-controller",
    "persistent-volume-binder",
    "pod-garbage-collector",
    "pv-protection-controller",
    "pvc-protection-controller",
    "replicaset-controller",
    "replication-controller",
    "resource-claim-controller",
    "resourcequota-controller",
    "root-ca-cert-publisher",
    "route-controller",
    "service-account-controller",
    "service-controller",
    "statefulset-controller",
    "storage-version-garbage-collector",
    "ttl-after-finished-controller",
    "ttl-controller",
];

/// The kube-controller-manager controller that sent the request, if one did.
pub(crate) fn kube_controller(user: &UserInfo) -> Option<&'static str> {
    if user.username == KUBE_CONTROLLER_MANAGER {
        return Some("kube-controller-manager");
    }
    let name = user
        .username
        .strip_prefix(SA_PREFIX)?
        .strip_prefix("kube-system:")?;
    KUBE_CONTROLLERS.iter().copied().find(|c| *c == name)
}

impl FluxOwnerKind {
    /// The field manager of every apply the controller sends: kustomize-
    /// controller's `ssa.Owner.Field` is its controller name
    /// (fluxcd/kustomize-controller 186fb3b, `main.go` `controllerName`,
    /// `kustomization_controller.go` `reconcile`), helm-controller sets
    /// Helm's `kube.ManagedFieldsManager` to its name (fluxcd/helm-controller
    /// 0f61a86, `main.go`).
    pub(crate) fn field_manager(self) -> &'static str {
        match self {
            FluxOwnerKind::Kustomization => "kustomize-controller",
            FluxOwnerKind::HelmRelease => "helm-controller",
        }
    }
}

/// The Flux controller whose field manager the request names, if any. A
/// write under that name is held like one from Git; only the identity
/// check of [`applier`] lets anything pass on it.
pub(crate) fn flux_field_manager(
    request: &AdmissionRequest,
) -> Result<Option<FluxOwnerKind>, String> {
    let manager = request.field_manager()?;
    Ok([FluxOwnerKind::Kustomization, FluxOwnerKind::HelmRelease]
        .into_iter()
        .find(|k| k.field_manager() == manager))
}

/// The username a Flux object's applies are sent as: its
/// `spec.serviceAccountName`, else the controllers'
/// `--default-service-account`, both in the object's namespace
/// (fluxcd/pkg runtime/v0.111.0 `runtime/client/impersonator.go`
/// `setImpersonationConfig`; fluxcd/helm-controller 0f61a86
/// `internal/kube/impersonate.go` `SetImpersonationConfig`); else the
/// controller's own service account (fluxcd/flux2 da2d22d
/// `manifests/bases/*-controller/account.yaml`) in `fluxNamespace`.
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
    if impersonated.is_empty() {
        format!("{SA_PREFIX}{}:{}", c.flux_namespace, kind.field_manager())
    } else {
        format!("{SA_PREFIX}{namespace}:{impersonated}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::settings;
    use serde_json::json;

    fn user(name: &str) -> UserInfo {
        UserInfo {
            username: name.into(),
            ..Default::default()
        }
    }

    #[test]
    fn kube_controllers_by_their_identities() {
        assert_eq!(
            kube_controller(&user(
                "system:serviceaccount:kube-system:persistent-volume-binder"
            )),
            Some("persistent-volume-binder")
        );
        assert_eq!(
            kube_controller(&user("system:kube-controller-manager")),
            Some("kube-controller-manager")
        );
        for other in [
            "system:serviceaccount:team-a:persistent-volume-binder",
            "system:serviceaccount:kube-systemx:persistent-volume-binder",
            "system:serviceaccount:kube-system:persistent-volume-binder:x",
            "system:serviceaccount:kube-system:",
            "system:serviceaccount:kube-system:coredns",
            "persistent-volume-binder",
            "system:kube-scheduler",
        ] {
            assert_eq!(kube_controller(&user(other)), None, "{other}");
        }
        let mut sorted = KUBE_CONTROLLERS;
        sorted.sort_unstable();
        assert_eq!(sorted, KUBE_CONTROLLERS);
    }

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

//! The controllers that write the kinds the policies judge, as
//! kube-apiserver sees their requests: identity, field managers, and whose
//! identity they borrow.
//!
//! A PATCH (a server-side apply among them) reaches admission as an UPDATE,
//! or a CREATE, whose options carry the client's field manager, or none
//! (k8s.io/apiserver `pkg/endpoints/handlers/patch.go` `patchToUpdateOptions`,
//! `patchToCreateOptions`, commit 24a394e5). A field manager is a name any
//! client may send; only the identity is authenticated. So the model says
//! both, and the questions below ask for both where a verdict depends on it.

use super::{ServiceAccount, Source};
use crate::request::UserInfo;

/// A field manager a controller writes with, and what it writes under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldManager {
    /// Empty: the controller names none, so the request's options carry
    /// none (kube-apiserver records one from the User-Agent in
    /// managedFields; admission does not see it).
    pub name: &'static str,
    /// Desired state from a source (Git, an artifact, a chart): applies,
    /// and the metadata cleanup that goes with them.
    pub applies: bool,
    /// The controller's own upkeep of the objects it reconciles: adding and
    /// removing its finalizer, status, storage migrations.
    pub bookkeeping: bool,
    pub source: Source,
}

/// Whose identity a controller's applies reach kube-apiserver with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Impersonation {
    /// Always its own service account.
    Never,
    /// The service account the object names in `spec.serviceAccountName`,
    /// else the controller's `--default-service-account` when set, both in
    /// the object's namespace; else its own. Only the applies: its
    /// bookkeeping is always sent as itself.
    ServiceAccountName,
}

/// An object a controller generates for a user's object (its owner), with
/// metadata copied from a template in the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generates {
    pub group: &'static str,
    pub kind: &'static str,
    /// The field manager it applies them with.
    pub field_manager: &'static str,
    pub owner_kind: &'static str,
    /// The owner's field whose annotations the controller copies.
    pub template: &'static str,
    pub source: Source,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Controller {
    pub name: &'static str,
    /// Its service account in the standard install. The namespace is the
    /// install's default; settings name another where a cluster differs.
    pub service_account: ServiceAccount,
    pub field_managers: &'static [FieldManager],
    pub impersonation: Impersonation,
    /// What it generates, under its field manager, as itself.
    pub generates: &'static [Generates],
    pub source: Source,
}

impl Controller {
    /// Its field manager of this name.
    pub fn field_manager(&self, name: &str) -> Option<&'static FieldManager> {
        self.field_managers.iter().find(|m| m.name == name)
    }

    /// The field manager its applies are sent with.
    pub fn apply_manager(&self) -> Option<&'static str> {
        self.field_managers
            .iter()
            .find(|m| m.applies)
            .map(|m| m.name)
    }

    /// Is `username` this controller's own service account in `namespace`?
    pub fn is_itself(&self, username: &str, namespace: &str) -> bool {
        self.service_account.is(username, namespace)
    }

    /// The username its applies for an object in `object_namespace` are
    /// sent as: `service_account_name` (the object's, or the lockdown
    /// default when the object names none) when it impersonates and one is
    /// given, else its own service account in `flux_namespace`.
    pub fn applier(
        &self,
        object_namespace: &str,
        service_account_name: &str,
        flux_namespace: &str,
    ) -> String {
        match self.impersonation {
            Impersonation::ServiceAccountName if !service_account_name.is_empty() => {
                format!(
                    "{}{object_namespace}:{service_account_name}",
                    super::SERVICE_ACCOUNT_PREFIX
                )
            }
            _ => format!(
                "{}{flux_namespace}:{}",
                super::SERVICE_ACCOUNT_PREFIX,
                self.service_account.name
            ),
        }
    }
}

/// The namespace Flux, and Flux Operator beside it, is installed in
/// (fluxcd/flux2 `manifests/install/kustomization.yaml` `namespace`).
pub const FLUX_NAMESPACE: &str = "flux-system";

const fn flux_sa(name: &'static str) -> ServiceAccount {
    ServiceAccount {
        namespace: FLUX_NAMESPACE,
        name,
    }
}

const fn manager(
    name: &'static str,
    applies: bool,
    bookkeeping: bool,
    source: &'static str,
) -> FieldManager {
    FieldManager {
        name,
        applies,
        bookkeeping,
        source: Source::new(source),
    }
}

const ACCOUNTS: &str = "fluxcd/flux2 `manifests/bases/<controller>/account.yaml`, commit da2d22d3";

pub const SOURCE_CONTROLLER: Controller = Controller {
    name: "source-controller",
    service_account: flux_sa("source-controller"),
    field_managers: &[
        manager(
            "source-controller",
            false,
            true,
            "fluxcd/source-controller `main.go` `controllerName`; finalizer and status patches \
         `summarize.WithPatchFieldOwner(r.ControllerName)` in \
         `internal/controller/*_controller.go`, commit 39b711b1",
        ),
        manager(
            "",
            false,
            true,
            "fluxcd/source-controller `internal/controller/helmrepository_controller.go` \
             (`type: oci` HelmRepository migration, a patch without options), commit 39b711b1",
        ),
    ],
    impersonation: Impersonation::Never,
    generates: &[],
    source: Source::new(ACCOUNTS),
};

pub const KUSTOMIZE_CONTROLLER: Controller = Controller {
    name: "kustomize-controller",
    service_account: flux_sa("kustomize-controller"),
    field_managers: &[
        manager(
            "kustomize-controller",
            true,
            false,
            "fluxcd/kustomize-controller `main.go` `controllerName`, passed as `ssa.Owner.Field` \
             in `internal/controller/kustomization_controller.go` `apply`; the metadata cleanup \
             under the same manager, fluxcd/pkg `ssa/manager_apply.go` `cleanupMetadata`; \
             commits 186fb3b2, e2cfd1a2",
        ),
        manager(
            "gotk-kustomize-controller",
            false,
            true,
            "fluxcd/kustomize-controller `main.go` `StatusManager` \
             (`fmt.Sprintf(\"gotk-%s\", controllerName)`), the finalizer and status patches \
             `patch.WithFieldOwner(r.StatusManager)` in `kustomization_controller.go`, commit 186fb3b2",
        ),
    ],
    impersonation: Impersonation::ServiceAccountName,
    generates: &[],
    source: Source::new(
        "fluxcd/pkg `runtime/client/impersonator.go` `setImpersonationConfig` (runtime v0.111.0); \
         fluxcd/flux2 `manifests/bases/kustomize-controller/account.yaml`, commit da2d22d3",
    ),
};

pub const HELM_CONTROLLER: Controller = Controller {
    name: "helm-controller",
    service_account: flux_sa("helm-controller"),
    field_managers: &[
        manager(
        "helm-controller",
        true,
        true,
        "fluxcd/helm-controller `main.go` (`controllerName`; `kube.ManagedFieldsManager`, Helm's \
         installs, upgrades and drift correction; `FieldManager` of the HelmChart template's \
         server-side apply and of the reconciler, whose deferred patch adds and removes the \
         finalizer, `internal/controller/helmrelease_controller.go` `Reconcile`, \
         `reconcileDelete`), commit 0f61a860",
        ),
        manager(
            "",
            false,
            true,
            "fluxcd/helm-controller `internal/action/config.go` (Helm's release storage \
             Secrets, written by Helm's `secrets` driver without a field manager), commit \
             0f61a860",
        ),
    ],
    impersonation: Impersonation::ServiceAccountName,
    generates: &[Generates {
        group: super::kinds::SOURCE,
        kind: "HelmChart",
        field_manager: "helm-controller",
        owner_kind: "HelmRelease",
        template: "spec.chart.metadata.annotations",
    source: Source::new(
            "fluxcd/helm-controller `internal/reconcile/helmchart_template.go` `Reconcile` \
             (server-side apply under `FieldManager`, owner labels by fluxcd/pkg \
             `ssa.ResourceManager.SetOwnerLabels`; named `<namespace>-<name>`, api/v2 \
             `GetHelmChartName`), commit 0f61a860",
        ),
    }],
    source: Source::new(
        "fluxcd/helm-controller `internal/kube/impersonate.go` `SetImpersonationConfig`, commit \
         0f61a860; fluxcd/flux2 `manifests/bases/helm-controller/account.yaml`, commit da2d22d3",
    ),
};

pub const NOTIFICATION_CONTROLLER: Controller = Controller {
    name: "notification-controller",
    service_account: flux_sa("notification-controller"),
    field_managers: &[
        manager(
            "notification-controller",
            false,
            true,
            "fluxcd/notification-controller `main.go` `controllerName`, the Receiver's \
             finalizer and status patches (`internal/controller/receiver_controller.go`, \
             `patch.WithFieldOwner(r.ControllerName)`), commit 2e46958a",
        ),
        manager(
            "",
            false,
            true,
            "fluxcd/notification-controller `internal/controller/alert_controller.go` and \
             `provider_controller.go` (finalizer patches without options), \
             `internal/server/receiver_handlers.go` (the `reconcile.fluxcd.io/requestedAt` \
             patch of a Receiver's targets), commit 2e46958a",
        ),
    ],
    impersonation: Impersonation::Never,
    generates: &[],
    source: Source::new(ACCOUNTS),
};

pub const IMAGE_REFLECTOR_CONTROLLER: Controller = Controller {
    name: "image-reflector-controller",
    service_account: flux_sa("image-reflector-controller"),
    field_managers: &[manager(
        "image-reflector-controller",
        false,
        true,
        "fluxcd/image-reflector-controller `internal/controller/imagepolicy_controller.go` \
         (`controllerutil.AddFinalizer`, `AddPatchOptions(…, r.ControllerName)`), commit debe2aaa",
    )],
    impersonation: Impersonation::Never,
    generates: &[],
    source: Source::new(ACCOUNTS),
};

pub const IMAGE_AUTOMATION_CONTROLLER: Controller = Controller {
    name: "image-automation-controller",
    service_account: flux_sa("image-automation-controller"),
    field_managers: &[manager(
        "image-automation-controller",
        false,
        true,
        "fluxcd/image-automation-controller \
         `internal/controller/imageupdateautomation_controller.go`, commit d36e2ea0",
    )],
    impersonation: Impersonation::Never,
    generates: &[],
    source: Source::new(ACCOUNTS),
};

pub const SOURCE_WATCHER: Controller = Controller {
    name: "source-watcher",
    service_account: flux_sa("source-watcher"),
    field_managers: &[manager(
        "source-watcher",
        false,
        true,
        "fluxcd/source-watcher `cmd/main.go` `controllerName`; the ExternalArtifacts' server-side \
         apply in `internal/controller/artifactgenerator_controller.go` \
         `reconcileExternalArtifact`, commit 825fa15b",
    )],
    impersonation: Impersonation::Never,
    generates: &[Generates {
        group: super::kinds::SOURCE,
        kind: "ExternalArtifact",
        field_manager: "source-watcher",
        owner_kind: "ArtifactGenerator",
        template: "spec.commonMetadata.annotations",
        source: Source::new(
            "fluxcd/source-watcher `internal/controller/artifactgenerator_controller.go` \
             `reconcileExternalArtifact` (label `source.extensions.fluxcd.io/generator`, \
             `spec.sourceRef` to the generator), commit 825fa15b",
        ),
    }],
    source: Source::new(ACCOUNTS),
};

pub const FLUX_OPERATOR: Controller = Controller {
    name: "flux-operator",
    service_account: flux_sa("flux-operator"),
    field_managers: &[
        manager(
            "flux-operator",
            true,
            true,
            "controlplaneio-fluxcd/flux-operator `cmd/operator/main.go` `controllerName`, the \
             `StatusManager` of every reconciler: FluxInstance and ResourceSet server-side \
             applies (`ssa.Owner{Field: r.StatusManager}`, `fluxinstance_controller.go`, \
             `resourceset_controller.go` `apply`), finalizer and status patches, FluxReport \
             writes, commit 17c6aead",
        ),
        manager(
            "",
            false,
            true,
            "controlplaneio-fluxcd/flux-operator `internal/controller/fluxinstance_migrator.go` \
             `migrateCR` (`{}` or a JSON patch of `metadata.managedFields`), \
             `fluxinstance_uninstaller.go` `removeFinalizersFor`, commit 17c6aead",
        ),
    ],
    impersonation: Impersonation::ServiceAccountName,
    generates: &[],
    source: Source::new(
        "controlplaneio-fluxcd/flux-operator: ResourceSet applies impersonate \
         `spec.serviceAccountName`, else `--default-service-account` \
         (`internal/controller/resourceset_controller.go`); FluxInstance never does; the \
         operator's service account `flux-operator` in the install's namespace, commit 17c6aead",
    ),
};

/// Flux's controllers and Flux Operator: every writer of the Flux kinds that
/// runs in the Flux namespace.
pub const FLUX: &[&Controller] = &[
    &SOURCE_CONTROLLER,
    &KUSTOMIZE_CONTROLLER,
    &HELM_CONTROLLER,
    &NOTIFICATION_CONTROLLER,
    &IMAGE_REFLECTOR_CONTROLLER,
    &IMAGE_AUTOMATION_CONTROLLER,
    &SOURCE_WATCHER,
    &FLUX_OPERATOR,
];

/// The Flux controller that generates objects of this group and kind, and
/// how.
pub fn generator(group: &str, kind: &str) -> Option<(&'static Controller, &'static Generates)> {
    FLUX.iter().find_map(|c| {
        c.generates
            .iter()
            .find(|g| g.group == group && g.kind == kind)
            .map(|g| (*c, g))
    })
}

/// The Flux controller of this name.
pub fn flux(name: &str) -> Option<&'static Controller> {
    FLUX.iter().copied().find(|c| c.name == name)
}

/// The Flux controller whose applies use this field manager: the name alone,
/// which any client may send. What a policy grants on it must be no more
/// than what anyone could do anyway, or must also check the identity.
pub fn flux_applier(field_manager: &str) -> Option<&'static Controller> {
    FLUX.iter().copied().find(|c| {
        c.field_managers
            .iter()
            .any(|m| m.applies && m.name == field_manager)
    })
}

/// The Flux controller doing its own upkeep of an object of a kind it
/// reconciles (`group`, `kind`): the request comes from its own service
/// account (in `flux_namespace`) under a field manager it keeps objects
/// with (none, for the writes that name none). What the write may change
/// (finalizers, status) is the policy's to check; who sent it is settled
/// here. helm-controller's field manager is both its applies' and its
/// upkeep's, so the kind tells them apart: it reconciles HelmReleases and
/// applies everything else (a chart holding a HelmRelease is applied under
/// the same identity, so a policy checks what changed too).
pub fn flux_bookkeeper(
    user: &UserInfo,
    field_manager: &str,
    flux_namespace: &str,
    group: &str,
    kind: &str,
) -> Option<&'static Controller> {
    let reconciler = super::kinds::find(group, kind)?.controller;
    (reconciler.is_itself(&user.username, flux_namespace)
        && reconciler
            .field_managers
            .iter()
            .any(|m| m.bookkeeping && m.name == field_manager))
    .then_some(reconciler)
}

/// kube-controller-manager's own identity, which every one of its
/// controllers uses unless it runs with `--use-service-account-credentials`
/// (kubernetes `staging/src/k8s.io/apiserver/pkg/authentication/user/user.go`
/// `KubeControllerManager`; `cmd/kube-controller-manager/app/controllermanager.go`
/// `createClientBuilders`, `SimpleControllerClientBuilder`, commit 00115d34).
pub const KUBE_CONTROLLER_MANAGER: &str = "system:kube-controller-manager";

/// With `--use-service-account-credentials` each controller runs as its own
/// service account in kube-system (`createClientBuilders` builds the
/// clients with `metav1.NamespaceSystem`), named as its start function asks
/// `ClientBuilder.ClientOrDie` / `ConfigOrDie` for it (kubernetes/kubernetes
/// 00115d34, `cmd/kube-controller-manager/app/` `core.go`, `apps.go`,
/// `batch.go`, `rbac.go`, `discovery.go`; and `certificates.go` for
/// `root-ca-cert-publisher`). Sorted.
pub const KUBE_CONTROLLERS: [&str; 31] = [
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

/// The namespace kube-controller-manager's controllers' service accounts live in.
pub const KUBE_SYSTEM: &str = "kube-system";

/// The namespace controller's own service account, used with
/// `--use-service-account-credentials` (`ClientOrDie("namespace-controller")`).
pub const NAMESPACE_CONTROLLER: ServiceAccount = ServiceAccount {
    namespace: KUBE_SYSTEM,
    name: "namespace-controller",
};

/// The garbage collector's own service account, used with
/// `--use-service-account-credentials` (`ClientOrDie("generic-garbage-collector")`).
pub const GARBAGE_COLLECTOR: ServiceAccount = ServiceAccount {
    namespace: KUBE_SYSTEM,
    name: "generic-garbage-collector",
};

/// The kube-controller-manager controller that sent the request, if one did:
/// its name, or `kube-controller-manager` when it ran with the manager's own
/// credentials (then which controller is not known from the identity).
pub fn kube_controller(user: &UserInfo) -> Option<&'static str> {
    if user.username == KUBE_CONTROLLER_MANAGER {
        return Some("kube-controller-manager");
    }
    let name = user
        .username
        .strip_prefix(super::SERVICE_ACCOUNT_PREFIX)?
        .strip_prefix(KUBE_SYSTEM)?
        .strip_prefix(':')?;
    KUBE_CONTROLLERS.iter().copied().find(|c| *c == name)
}

/// Is this DELETE the namespace controller emptying a terminating
/// Namespace? Its own service account with per-controller credentials;
/// without them, kube-controller-manager's identity deleting under an empty
/// name: the namespace controller sends one `deletecollection` per resource
/// (kubernetes `pkg/controller/namespace/deletion/namespaced_resources_deleter.go`
/// `deleteCollection`, commit 023feb4a), which kube-apiserver admits object
/// by object with the request's name empty (k8s.io/apiserver
/// `pkg/endpoints/handlers/delete.go` `DeleteCollection`, commit 24a394e5),
/// while the garbage collector, the manager's other deleter of these kinds,
/// deletes one object by name (`pkg/controller/garbagecollector/operations.go`
/// `deleteObject`).
pub fn is_namespace_controller(user: &UserInfo, request_name: &str) -> bool {
    NAMESPACE_CONTROLLER.is(&user.username, KUBE_SYSTEM)
        || (user.username == KUBE_CONTROLLER_MANAGER && request_name.is_empty())
}

/// Azure Service Operator v2's controller, as its Helm chart installs it
/// (Azure/azure-service-operator `v2/charts/azure-service-operator/templates/`
/// service account `azureserviceoperator-default` in the release namespace,
/// `azureserviceoperator-system` in the docs' install). It writes with plain
/// updates, no field manager (`v2/internal/reconcilers/generic/generic_reconciler.go`
/// `claimResource`, `CommitUpdate`; `v2/internal/util/kubeclient/kube_client.go`
/// `CommitObject`).
pub const ASO: ServiceAccount = ServiceAccount {
    namespace: "azureserviceoperator-system",
    name: "azureserviceoperator-default",
};

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_namespace_controller_with_and_without_its_own_credentials() {
        let own = user("system:serviceaccount:kube-system:namespace-controller");
        assert!(is_namespace_controller(&own, ""));
        assert!(is_namespace_controller(&own, "apps"));
        let manager = user(KUBE_CONTROLLER_MANAGER);
        assert!(is_namespace_controller(&manager, ""));
        // The garbage collector under the manager's identity deletes by name.
        assert!(!is_namespace_controller(&manager, "apps"));
        let lookalike = user("system:serviceaccount:team-a:namespace-controller");
        assert!(!is_namespace_controller(&lookalike, ""));
    }

    #[test]
    fn appliers_follow_impersonation() {
        let k = &KUSTOMIZE_CONTROLLER;
        assert_eq!(
            k.applier("apps", "", FLUX_NAMESPACE),
            "system:serviceaccount:flux-system:kustomize-controller"
        );
        assert_eq!(
            HELM_CONTROLLER.applier("team-a", "deployer", FLUX_NAMESPACE),
            "system:serviceaccount:team-a:deployer"
        );
        assert_eq!(
            k.applier("team-a", "", "gitops"),
            "system:serviceaccount:gitops:kustomize-controller"
        );
        assert_eq!(
            SOURCE_WATCHER.applier("team-a", "deployer", FLUX_NAMESPACE),
            "system:serviceaccount:flux-system:source-watcher"
        );
    }

    #[test]
    fn appliers_and_bookkeepers_are_told_apart() {
        assert_eq!(
            flux_applier("kustomize-controller"),
            Some(&KUSTOMIZE_CONTROLLER)
        );
        assert_eq!(flux_applier("helm-controller"), Some(&HELM_CONTROLLER));
        assert_eq!(flux_applier("gotk-kustomize-controller"), None);
        assert_eq!(flux_applier("kubectl"), None);
        use crate::model::kinds::{HELM, KUSTOMIZE, NOTIFICATION, SOURCE};
        let ks = |u: &UserInfo, m: &str| {
            flux_bookkeeper(u, m, FLUX_NAMESPACE, KUSTOMIZE, "Kustomization")
        };
        let hr = |u: &UserInfo, m: &str| flux_bookkeeper(u, m, FLUX_NAMESPACE, HELM, "HelmRelease");
        let kc = user("system:serviceaccount:flux-system:kustomize-controller");
        assert_eq!(
            ks(&kc, "gotk-kustomize-controller"),
            Some(&KUSTOMIZE_CONTROLLER)
        );
        assert_eq!(ks(&kc, "kustomize-controller"), None);
        let hc = user("system:serviceaccount:flux-system:helm-controller");
        assert_eq!(hr(&hc, "helm-controller"), Some(&HELM_CONTROLLER));
        // Its own kinds only: a HelmChart it applies is no upkeep of its.
        let chart = flux_bookkeeper(&hc, "helm-controller", FLUX_NAMESPACE, SOURCE, "HelmChart");
        assert_eq!(chart, None);
        // Another controller's kind, or a tenant naming the manager: nobody's upkeep.
        assert_eq!(ks(&hc, "helm-controller"), None);
        let tenant = user("system:serviceaccount:team-a:helm-controller");
        assert_eq!(hr(&tenant, "helm-controller"), None);
        // notification-controller's finalizer patches name no field manager.
        let nc = user("system:serviceaccount:flux-system:notification-controller");
        let alert = flux_bookkeeper(&nc, "", FLUX_NAMESPACE, NOTIFICATION, "Alert");
        assert_eq!(alert, Some(&NOTIFICATION_CONTROLLER));
    }
}

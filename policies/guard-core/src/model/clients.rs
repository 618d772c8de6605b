//! Every writer that is not a controller: command-line tools, user
//! interfaces and scanners, with the identity kube-apiserver sees and the
//! field manager they send. Policies read these where a verdict depends on
//! who wrote; the story runner and the README writers tables read them all.

use super::{ServiceAccount, Source};

/// Whose identity a client's requests carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SentAs {
    /// The person (or CI) running it.
    Person,
    /// Its own service account.
    ServiceAccount(ServiceAccount),
    /// No user at all: a request it builds itself and never sends to
    /// kube-apiserver.
    Nobody,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client {
    /// The program it is part of (`kubectl`, `flux`, `flux-operator-web`, ...).
    pub program: &'static str,
    /// The command or component, as users name it.
    pub name: &'static str,
    /// `options.fieldManager`; `None` when it sends none.
    pub field_manager: Option<&'static str>,
    pub sent_as: SentAs,
    /// What it sends, in kube-apiserver's terms.
    pub sends: &'static str,
    pub source: Source,
}

const fn client(
    program: &'static str,
    name: &'static str,
    field_manager: Option<&'static str>,
    sent_as: SentAs,
    sends: &'static str,
    source: &'static str,
) -> Client {
    Client {
        program,
        name,
        field_manager,
        sent_as,
        sends,
        source: Source::new(source),
    }
}

use SentAs::{Nobody, Person};

/// Flux Operator's Web UI: the program its clients below belong to, and the
/// field manager it writes with as the logged-in user
/// (controlplaneio-fluxcd/flux-operator `internal/web/kubeclient/client.go`
/// `FieldOwner`, commit 17c6aead).
pub const WEB_UI: &str = "flux-operator-web";

const FLUX_CLIENT: &str = "fluxcd/flux2 `internal/utils/utils.go` `KubeClient` (no field owner)";

/// Every client the model knows.
pub const CLIENTS: &[Client] = &[
    client(
        "flux",
        "flux suspend",
        None,
        Person,
        "UPDATE, merge patch `{\"spec\":{\"suspend\":true}}`",
        "fluxcd/flux2 `cmd/flux/suspend.go` `suspendCommand.patch`; `internal/utils/utils.go` \
         `KubeClient` (no field owner)",
    ),
    client(
        "flux",
        "flux resume",
        None,
        Person,
        "UPDATE, merge patch `{\"spec\":{\"suspend\":null}}`",
        "fluxcd/flux2 `cmd/flux/resume.go` `resumeCommand.patch`",
    ),
    client(
        "flux",
        "flux reconcile",
        None,
        Person,
        "UPDATE, merge patch of `reconcile.fluxcd.io/requestedAt`",
        "fluxcd/flux2 `cmd/flux/reconcile.go` `requestReconciliation`",
    ),
    client(
        "flux",
        "flux migrate",
        None,
        Person,
        "UPDATE, `{}` or a JSON patch of `metadata.managedFields` only",
        FLUX_CLIENT,
    ),
    client(
        "kubectl",
        "kubectl annotate",
        Some("kubectl-annotate"),
        Person,
        "UPDATE, merge patch of the annotations",
        "kubernetes/kubectl `pkg/cmd/annotate/annotate.go` (`AddFieldManagerFlagVar`, default \
         `kubectl-annotate`), commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl label",
        Some("kubectl-label"),
        Person,
        "UPDATE, merge patch of the labels",
        "kubernetes/kubectl `pkg/cmd/label/label.go` (`AddFieldManagerFlagVar`), commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl patch",
        Some("kubectl-patch"),
        Person,
        "UPDATE, the patch as given",
        "kubernetes/kubectl `pkg/cmd/patch/patch.go` (`AddFieldManagerFlagVar`), commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl edit",
        Some("kubectl-edit"),
        Person,
        "UPDATE, a JSON merge patch of the edited fields",
        "kubernetes/kubectl `pkg/cmd/edit/edit.go` (`AddFieldManagerFlagVar`), \
         `pkg/cmd/util/editor/editoptions.go` `visitToPatch`, commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl apply",
        Some("kubectl-client-side-apply"),
        Person,
        "CREATE, or UPDATE with a three-way merge patch",
        "kubernetes/kubectl `pkg/cmd/apply/apply.go` (`AddFieldManagerFlagVar`, \
         `FieldManagerClientSideApply`), commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl apply --server-side",
        Some("kubectl"),
        Person,
        "CREATE or UPDATE, an apply patch",
        "kubernetes/kubectl `pkg/cmd/apply/apply.go` (`GetServerSideFieldManager`), commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl create",
        Some("kubectl-create"),
        Person,
        "CREATE",
        "kubernetes/kubectl `pkg/cmd/create/create.go` (`AddFieldManagerFlagVar`), commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl replace",
        Some("kubectl-replace"),
        Person,
        "UPDATE of the whole object",
        "kubernetes/kubectl `pkg/cmd/replace/replace.go` (`AddFieldManagerFlagVar`), commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl rollout",
        Some("kubectl-rollout"),
        Person,
        "UPDATE: `pause` a strategic merge patch `{\"spec\":{\"paused\":true}}` \
         (Deployments), `resume` `false`, `restart` the template's \
         `kubectl.kubernetes.io/restartedAt`",
        "kubernetes/kubectl `pkg/cmd/rollout/rollout_pause.go`, `rollout_resume.go`, \
         `rollout_restart.go` (`AddFieldManagerFlagVar`, default `kubectl-rollout`); \
         `pkg/polymorphichelpers/objectpauser.go`, commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl rollout undo",
        None,
        Person,
        "UPDATE, a JSON patch replacing `/spec/template` and the annotations (Deployments)",
        "kubernetes/kubectl `pkg/cmd/rollout/rollout_undo.go`, \
         `pkg/polymorphichelpers/rollback.go` `DeploymentRollbacker` (no field manager flag), \
         commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl scale",
        None,
        Person,
        "UPDATE of the `scale` subresource, a merge patch",
        "kubernetes/kubectl `pkg/cmd/scale/scale.go` (no field manager flag), commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl set",
        Some("kubectl-set"),
        Person,
        "UPDATE, a strategic merge patch",
        "kubernetes/kubectl `pkg/cmd/set/set_image.go` (`AddFieldManagerFlagVar`), commit dee3483a",
    ),
    client(
        "kubectl",
        "kubectl delete",
        None,
        Person,
        "DELETE with `DeleteOptions` (`propagationPolicy` from `--cascade`, `Background` by \
         default), the object in `oldObject`",
        "kubernetes/kubectl `pkg/cmd/delete/delete.go`; k8s.io/apiserver \
         `pkg/registry/rest/delete.go` `AdmissionToValidateObjectDeleteFunc`, commit 24a394e5",
    ),
    client(
        "flux",
        "flux install",
        Some("flux"),
        Person,
        "CREATE or UPDATE, an apply patch of Flux's components (also `flux bootstrap`)",
        "fluxcd/flux2 `internal/utils/apply.go` `Apply` (`ssa.Owner{Field: \"flux\"}`), commit \
         da2d22d3",
    ),
    client(
        "flux",
        "flux diff kustomization",
        Some("kustomize-controller"),
        Person,
        "CREATE or UPDATE with `dryRun`, a server-side apply dry run of each built object, \
         carrying the Kustomization's owner labels; nothing is stored",
        "fluxcd/flux2 `internal/build/diff.go` `Manager` (`ssa.Owner{Field: \"kustomize-controller\"}`), \
         `internal/build/build.go` `setOwnerLabels`; fluxcd/pkg `ssa/manager_diff.go` `dryRunApply`, \
         commit da2d22d3",
    ),
    client(
        "flux",
        "flux create",
        None,
        Person,
        "CREATE or UPDATE of the whole object (`controllerutil.CreateOrUpdate`)",
        "fluxcd/flux2 `cmd/flux/create.go`, commit da2d22d3",
    ),
    client(
        WEB_UI,
        "Flux Operator Web UI",
        Some(WEB_UI),
        Person,
        "UPDATE, merge patches: suspend sets `fluxcd.controlplane.io/reconcile: disabled` \
         (Flux Operator kinds) or `spec.suspend: true` (Flux kinds) with \
         `fluxcd.controlplane.io/suspendedBy`; resume sets `reconcile: enabled` (or removes \
         `spec.suspend`), `reconcile.fluxcd.io/requestedAt`, and removes `suspendedBy`; as the \
         logged-in user it impersonates",
        "controlplaneio-fluxcd/flux-operator `internal/web/kubeclient/client.go` \
         (`FieldOwner`, `newUserClient`), `internal/web/resource_actions.go`, commit 17c6aead",
    ),
    client(
        WEB_UI,
        "Flux Operator Web UI, fine-grained access",
        None,
        SentAs::ServiceAccount(super::controllers::FLUX_OPERATOR.service_account),
        "the same patches as the operator's service account, after its own access check",
        "controlplaneio-fluxcd/flux-operator `api/v1/webconfig_types.go` \
         (`userActions.access: FineGrained`), `internal/web/server.go`, \
         `internal/web/action_access.go`, commit 17c6aead",
    ),
    client(
        "flux-operator-ctl",
        "flux-operator CLI",
        Some("flux-operator-ctl"),
        Person,
        "UPDATE, merge patches: suspend and resume as the Web UI, without `suspendedBy`",
        "controlplaneio-fluxcd/flux-operator `cmd/cli/client.go` `newKubeClient`, commit 17c6aead",
    ),
    client(
        "flux-operator-ctl",
        "flux-operator install",
        Some("kubectl-flux-operator"),
        Person,
        "CREATE or UPDATE, apply patches of the operator, a FluxInstance and its Secrets",
        "controlplaneio-fluxcd/flux-operator `internal/install/options.go` `DefaultOwner`, \
         commit 17c6aead",
    ),
    client(
        "flux-operator-mcp",
        "Flux Operator MCP server",
        Some("flux-operator-mcp"),
        Person,
        "UPDATE, merge patches: reconcile requests, suspend and resume",
        "controlplaneio-fluxcd/flux-operator `cmd/mcp/k8s/client.go`, commit 17c6aead",
    ),
    client(
        "flux-operator-mcp",
        "Flux Operator MCP server, apply_manifest",
        Some("kubectl-flux-mcp"),
        Person,
        "CREATE or UPDATE, an apply patch of the manifests it is given",
        "controlplaneio-fluxcd/flux-operator `cmd/mcp/k8s/client.go`, `cmd/mcp/k8s/actions.go`, \
         commit 17c6aead",
    ),
    client(
        "helm",
        "helm",
        Some("helm"),
        Person,
        "CREATE, or UPDATE with a patch (Helm 3) or an apply patch (Helm 4), per object of the chart",
        "helm/helm `pkg/kube/client.go` `getManagedFieldsManager` (default `helm` since v3.7.0, \
         commit aeb94798; v4 commit 002ac784)",
    ),
    client(
        "audit-scanner",
        "Kubewarden audit scanner",
        None,
        Nobody,
        "a CREATE of each stored object, with no userInfo, no options and no oldObject, to \
         policy-server only",
        "kubewarden/audit-scanner `internal/scanner/admission_request.go`",
    ),
];

/// The client that sends this field manager, if one of them does.
pub fn by_field_manager(field_manager: &str) -> Option<&'static Client> {
    CLIENTS
        .iter()
        .find(|c| c.field_manager == Some(field_manager))
}

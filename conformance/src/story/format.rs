//! One story a file: `tests/stories/<policy>/<story>.yaml` (the format and
//! its rules: `tests/stories/README.md`).

use std::path::Path;

use guard_core::Timestamp;
use serde::Deserialize;
use serde_json::Value;

use crate::case::{empty_object, Expect};
use crate::deployment::ContextAwareResource;
use crate::response::PolicyMode;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Story {
    /// `<policy>/<file stem>`, filled in when loaded.
    #[serde(skip)]
    pub id: String,
    pub description: String,
    /// The clock at the first step.
    pub now: Timestamp,
    #[serde(default = "empty_object")]
    pub settings: Value,
    #[serde(default)]
    pub policy_mode: PolicyMode,
    #[serde(default)]
    pub allowed_to_mutate: Option<bool>,
    #[serde(default)]
    pub context_aware_resources: Option<Vec<ContextAwareResource>>,
    /// The starting state: objects exactly as kube-apiserver stores them.
    #[serde(default)]
    pub cluster: Vec<Value>,
    pub steps: Vec<Step>,
    #[serde(default)]
    pub end: Vec<EndCheck>,
}

/// An object by `apiVersion`, `kind`, `namespace` (empty when cluster
/// scoped) and `name`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Target {
    pub api_version: String,
    pub kind: String,
    #[serde(default)]
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{} {}", self.kind, self.name)
        } else {
            write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PatchType {
    Merge,
    Json,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PatchWrite {
    pub target: Target,
    /// `merge` (the default) or `json`.
    #[serde(rename = "type", default = "merge")]
    pub patch_type: PatchType,
    pub body: Value,
    /// `options.fieldManager`; none when the client names none.
    #[serde(default)]
    pub field_manager: Option<String>,
    /// The manager managedFields record when the client names none: its user
    /// agent's first word (k8s.io/apiserver `managerOrUserAgent`).
    #[serde(default)]
    pub user_agent: Option<String>,
    #[serde(default)]
    pub subresource: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ApplyWrite {
    /// What the applier sends: the manifest from Git, with the owner labels
    /// kustomize-controller adds.
    pub manifest: Value,
    #[serde(default = "kustomize_controller")]
    pub field_manager: String,
    /// The client that sends it.
    #[serde(default)]
    pub client: ApplyClient,
}

/// How a server-side apply is sent, which decides the requests it takes.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ApplyClient {
    /// fluxcd/pkg `ssa` `ResourceManager.Apply`, as kustomize-controller and
    /// helm-controller (the HelmChart it generates) send it: a dry run, the
    /// managedFields cleanup, then the apply when something changed.
    #[default]
    SsaManager,
    /// One apply patch and nothing before it: Helm v4, as helm-controller
    /// installs and upgrades a chart's objects (helm/helm 002ac784
    /// `pkg/kube/client.go` `Client.Update`, `patchResourceServerSide`), and
    /// source-watcher writing an ExternalArtifact (fluxcd/source-watcher
    /// 825fa15b `internal/controller/artifactgenerator_controller.go`
    /// `reconcileExternalArtifact`, `r.Patch(ctx, ea, client.Apply, …)`).
    Single,
    /// The dry run alone, nothing stored: `flux diff kustomization`, a
    /// server-side apply dry run of each object under kustomize-controller's
    /// field manager from whoever runs it (fluxcd/flux2
    /// `internal/build/diff.go` `Manager`, `ssa.Owner{Field:
    /// "kustomize-controller"}`, and fluxcd/pkg `ssa/manager_diff.go` `Diff`,
    /// commits da2d22d3 and e2cfd1a2).
    DryRun,
}

fn merge() -> PatchType {
    PatchType::Merge
}

fn kustomize_controller() -> String {
    super::owner_apply::applier().to_string()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateWrite {
    /// The object as the client sends it.
    pub object: Value,
    #[serde(default)]
    pub field_manager: Option<String>,
    #[serde(default)]
    pub user_agent: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeleteWrite {
    pub target: Target,
    #[serde(default)]
    pub propagation_policy: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CollectWrite {
    /// The owner that is gone; its dependents are deleted.
    pub owner: Target,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NamespaceRef {
    pub name: String,
}

/// How the writer expresses its intent; exactly one per step.
#[derive(Debug, Clone)]
pub enum Write {
    Kubectl(String),
    Flux(String),
    Patch(PatchWrite),
    Apply(ApplyWrite),
    Create(CreateWrite),
    /// A PUT of the stored object with `body` (a merge patch) applied: it
    /// reaches admission as a merge patch of the same change does.
    Update(PatchWrite),
    Delete(DeleteWrite),
    Collect(CollectWrite),
    DeleteNamespace(NamespaceRef),
    /// Kubewarden's audit scanner evaluating the stored object: a CREATE of
    /// it with no userInfo, options or oldObject, to policy-server only;
    /// nothing is stored (the model's `audit-scanner` client).
    Audit(Target),
}

/// What one request of a step that sends several must get.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PerRequest {
    pub target: Target,
    pub expect: Expect,
}

/// What a step's requests must get.
#[derive(Debug, Clone)]
pub enum StepExpect {
    /// The step sends one request.
    One(Expect),
    /// Every request the step sends.
    Each(Expect),
    /// Exactly these requests, in the order sent.
    Requests(Vec<PerRequest>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "StepForm")]
pub struct Step {
    pub name: String,
    pub at: Option<Timestamp>,
    /// userInfo: a known writer's name, a person's username, or a whole userInfo.
    pub by: Option<Value>,
    pub write: Write,
    pub expect: StepExpect,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct StepForm {
    name: String,
    #[serde(default)]
    at: Option<Timestamp>,
    #[serde(default)]
    by: Option<Value>,
    #[serde(default)]
    kubectl: Option<String>,
    #[serde(default)]
    flux: Option<String>,
    #[serde(default)]
    patch: Option<PatchWrite>,
    #[serde(default)]
    apply: Option<ApplyWrite>,
    #[serde(default)]
    create: Option<CreateWrite>,
    #[serde(default)]
    update: Option<PatchWrite>,
    #[serde(default)]
    delete: Option<DeleteWrite>,
    #[serde(default)]
    collect: Option<CollectWrite>,
    #[serde(default)]
    delete_namespace: Option<NamespaceRef>,
    #[serde(default)]
    audit: Option<Target>,
    #[serde(default)]
    expect: Option<Expect>,
    #[serde(default)]
    each: Option<Expect>,
    #[serde(default)]
    requests: Option<Vec<PerRequest>>,
}

impl TryFrom<StepForm> for Step {
    type Error = String;

    fn try_from(f: StepForm) -> Result<Self, String> {
        let mut writes: Vec<Write> = Vec::new();
        writes.extend(f.kubectl.map(Write::Kubectl));
        writes.extend(f.flux.map(Write::Flux));
        writes.extend(f.patch.map(Write::Patch));
        writes.extend(f.apply.map(Write::Apply));
        writes.extend(f.create.map(Write::Create));
        writes.extend(f.update.map(Write::Update));
        writes.extend(f.delete.map(Write::Delete));
        writes.extend(f.collect.map(Write::Collect));
        writes.extend(f.delete_namespace.map(Write::DeleteNamespace));
        writes.extend(f.audit.map(Write::Audit));
        let write = match writes.len() {
            1 => writes.remove(0),
            0 => return Err(format!("step {:?} has no write (kubectl, flux, patch, apply, create, update, delete, collect, deleteNamespace or audit)", f.name)),
            _ => return Err(format!("step {:?} has more than one write", f.name)),
        };
        let expect = match (f.expect, f.each, f.requests) {
            (Some(e), None, None) => StepExpect::One(e),
            (None, Some(e), None) => StepExpect::Each(e),
            (None, None, Some(r)) => StepExpect::Requests(r),
            _ => {
                return Err(format!(
                    "step {:?} needs exactly one of expect, each and requests",
                    f.name
                ))
            }
        };
        Ok(Self {
            name: f.name,
            at: f.at,
            by: f.by,
            write,
            expect,
        })
    }
}

/// An assertion on the state the story ends in.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EndCheck {
    #[serde(default)]
    pub target: Option<Target>,
    /// The object exists (true) or does not (false).
    #[serde(default)]
    pub exists: Option<bool>,
    /// A JSON pointer into the object, checked by `equals` or `absent`.
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub equals: Option<Value>,
    #[serde(default)]
    pub absent: Option<bool>,
    /// Exactly these steps had a request refused.
    #[serde(default)]
    pub refused: Option<Vec<String>>,
}

/// Loads one story file, or every `*.yaml` under a folder (recursively),
/// sorted by path.
pub fn load_stories(path: &Path) -> Result<Vec<Story>, String> {
    let mut files = Vec::new();
    crate::case::collect(path, &mut files)?;
    files.sort();
    files.iter().map(|f| load_story(f)).collect()
}

pub fn load_story(file: &Path) -> Result<Story, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    parse_story(&text, &crate::case::id_of(file))
}

/// A story from its text; `id` names it in failures.
pub fn parse_story(text: &str, id: &str) -> Result<Story, String> {
    let mut story: Story = serde_norway::from_str(text).map_err(|e| format!("{id}: {e}"))?;
    story.id = id.to_string();
    Ok(story)
}

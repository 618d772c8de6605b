//! How the corpus deploys each policy: as its generated ClusterAdmissionPolicy
//! `deploy/<policy>.yaml` (what the README tells users to apply), which
//! `devtools scaffold` makes from the policy's metadata.yml and, where its
//! settings decide what it reads, its lookups under the manifest's settings
//! (`{}`); the distribution test (cli/tests/distribution.rs) keeps the committed file equal to it.
//! So the deployment is derived here from the same sources, carried by the
//! policy's catalog [`Entry`].
//!
//! kubewarden-controller turns a ClusterAdmissionPolicy named `p` into the
//! policy-server entry `clusterwide-p` with `allowedToMutate: spec.mutating`,
//! its `contextAwareResources`, and `hostCapabilities: ["*"]`
//! (kubewarden/kubewarden-controller 3460bb71,
//! `api/policies/v1/clusteradmissionpolicy_types.go`, `GetUniqueName`;
//! `internal/controller/policyserver_controller_configmap.go`,
//! `buildPoliciesMap` and `hostCapabilitiesForPolicy`).

use guard_core::{Entry, Lookups};
use serde::Deserialize;

pub use guard_core::ContextAwareResource;

/// What policy-server is told about one policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deployment {
    pub policy_id: String,
    pub allowed_to_mutate: bool,
    pub context_aware_resources: Vec<ContextAwareResource>,
    /// The host capabilities its lookups call, for a standalone policy-server
    /// (which denies every one but logging unless granted).
    pub host_capabilities: Vec<&'static str>,
}

/// The Kubernetes calls guard-core's adapter makes for `get`, `list_all` and
/// a namespace's `list`: what a policy that reads the cluster needs, unless
/// its settings say which ([`guard_core::Policy::lookups`]).
const CLUSTER_LOOKUPS: [&str; 3] = [
    "kubernetes/get_resource",
    "kubernetes/list_resources_all",
    "kubernetes/list_resources_by_namespace",
];

/// The part of metadata.yml a deployment is made from.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    mutating: bool,
    #[serde(default)]
    context_aware_resources: Vec<ContextAwareResource>,
}

impl Deployment {
    /// policy-server's `allowedToMutate`, which also decides whether
    /// kube-apiserver calls the policy as a mutating or a validating webhook:
    /// the ClusterAdmissionPolicy's `spec.mutating` unless a case or story
    /// overrides it.
    pub fn mutating(&self, overridden: Option<bool>) -> bool {
        overridden.unwrap_or(self.allowed_to_mutate)
    }
}

/// The deployment of `entry` as its generated ClusterAdmissionPolicy, with
/// the manifests' settings (`{}`).
pub fn of(entry: &Entry) -> Result<Deployment, String> {
    let name = entry.name;
    let metadata: Metadata = serde_norway::from_str(entry.metadata)
        .map_err(|e| format!("policies/{name}/metadata.yml: {e}"))?;
    let lookups = (entry.lookups)(b"{}")
        .map_err(|e| format!("{name}: its default settings are refused: {e}"))?;
    let Lookups {
        resources,
        capabilities,
    } = lookups.unwrap_or_else(|| {
        let capabilities = if metadata.context_aware_resources.is_empty() {
            Vec::new()
        } else {
            CLUSTER_LOOKUPS.to_vec()
        };
        Lookups {
            resources: metadata.context_aware_resources,
            capabilities,
        }
    });
    Ok(Deployment {
        policy_id: format!("clusterwide-{name}"),
        allowed_to_mutate: metadata.mutating,
        context_aware_resources: resources,
        host_capabilities: capabilities,
    })
}

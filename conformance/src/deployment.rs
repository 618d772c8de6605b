//! How the corpus deploys each policy: as the generated ClusterAdmissionPolicy
//! in `deploy/<policy>.yaml` (what the README tells users to apply).
//!
//! kubewarden-controller turns a ClusterAdmissionPolicy named `p` into the
//! policy-server entry `clusterwide-p` with `allowedToMutate: spec.mutating`,
//! its `contextAwareResources`, and `hostCapabilities: ["*"]`
//! (kubewarden/kubewarden-controller 3460bb71,
//! `api/policies/v1/clusteradmissionpolicy_types.go`, `GetUniqueName`;
//! `internal/controller/policyserver_controller_configmap.go`,
//! `buildPoliciesMap` and `hostCapabilitiesForPolicy`).

use serde::Deserialize;

/// The manifests, embedded so that native tests and the playground see them too.
const MANIFESTS: [(&str, &str); 4] = [
    (
        "flux-suspend",
        include_str!("../../deploy/flux-suspend.yaml"),
    ),
    ("flux-gate", include_str!("../../deploy/flux-gate.yaml")),
    (
        "aso-reconcile",
        include_str!("../../deploy/aso-reconcile.yaml"),
    ),
    (
        "flux-event-metadata",
        include_str!("../../deploy/flux-event-metadata.yaml"),
    ),
];

/// What policy-server is told about one policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deployment {
    pub policy_id: String,
    pub allowed_to_mutate: bool,
    pub context_aware_resources: Vec<ContextAwareResource>,
}

/// A `contextAwareResources` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextAwareResource {
    pub api_version: String,
    pub kind: String,
}

#[derive(Deserialize)]
struct Manifest {
    metadata: ManifestMetadata,
    spec: Spec,
}

#[derive(Deserialize)]
struct ManifestMetadata {
    name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    #[serde(default)]
    mutating: bool,
    #[serde(default)]
    context_aware_resources: Vec<ContextAwareResource>,
}

/// The deployment of `policy` as its generated ClusterAdmissionPolicy, or a
/// plain policy-server entry named after it when the repository has none.
pub fn of(policy: &str) -> Result<Deployment, String> {
    let Some((_, text)) = MANIFESTS.iter().find(|(name, _)| *name == policy) else {
        return Ok(Deployment {
            policy_id: policy.to_string(),
            allowed_to_mutate: false,
            context_aware_resources: Vec::new(),
        });
    };
    let manifest: Manifest = serde_norway::from_str(text)
        .map_err(|e| format!("deploy/{policy}.yaml is not a ClusterAdmissionPolicy: {e}"))?;
    Ok(Deployment {
        policy_id: format!("clusterwide-{}", manifest.metadata.name),
        allowed_to_mutate: manifest.spec.mutating,
        context_aware_resources: manifest.spec.context_aware_resources,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_manifest_reads() {
        for (name, _) in super::MANIFESTS {
            let d = super::of(name).unwrap();
            assert_eq!(d.policy_id, format!("clusterwide-{name}"));
        }
        assert!(super::of("flux-suspend").unwrap().allowed_to_mutate);
        assert!(!super::of("flux-gate").unwrap().allowed_to_mutate);
    }
}

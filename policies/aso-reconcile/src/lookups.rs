//! The cluster lookups these settings make, for the manifests that deploy
//! the policy: policy-server answers only the kinds in
//! `contextAwareResources` and only the host capabilities granted.

use guard_core::{ContextAwareResource as Resource, Lookups};

use crate::settings::Settings;

/// What the policy reads with `settings`: the Namespace (its
/// `reconcile-policy`, and whether its deletion was confirmed) with
/// `kubernetes/get_resource`; each protected kind with a version with
/// `kubernetes/list_resources_all` (what is inside a deleted resource, in any
/// namespace) and `kubernetes/list_resources_by_namespace` (what a deleted
/// Namespace holds, or one switched to `manage`).
pub fn needed(settings: &Settings) -> Lookups {
    let mut resources = vec![Resource {
        api_version: "v1".into(),
        kind: "Namespace".into(),
    }];
    let mut capabilities = vec!["kubernetes/get_resource"];
    let listed: Vec<Resource> = settings
        .deletion_protection
        .kinds
        .iter()
        .filter_map(|k| {
            Some(Resource {
                api_version: k.api_version()?,
                kind: k.kind.clone(),
            })
        })
        .collect();
    if !listed.is_empty() {
        capabilities.push("kubernetes/list_resources_all");
        capabilities.push("kubernetes/list_resources_by_namespace");
    }
    for r in listed {
        if !resources.contains(&r) {
            resources.push(r);
        }
    }
    Lookups {
        resources,
        capabilities,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_read_the_namespace_only() {
        let Lookups {
            resources,
            capabilities,
        } = needed(&Settings::default());
        assert_eq!(resources.len(), 1);
        assert_eq!(capabilities, ["kubernetes/get_resource"]);
    }

    #[test]
    fn protected_kinds_with_a_version_are_listed() {
        let s: Settings = guard_core::settings::parse(
            br#"{"deletionProtection":{"kinds":[
                {"group":"storage.azure.com","kind":"StorageAccount","version":"v1api20230101"},
                {"group":"keyvault.azure.com","kind":"*"}]}}"#,
        )
        .unwrap();
        let Lookups {
            resources,
            capabilities,
        } = needed(&s);
        assert_eq!(
            resources[1],
            Resource {
                api_version: "storage.azure.com/v1api20230101".into(),
                kind: "StorageAccount".into()
            }
        );
        assert_eq!(resources.len(), 2);
        assert_eq!(
            capabilities,
            [
                "kubernetes/get_resource",
                "kubernetes/list_resources_all",
                "kubernetes/list_resources_by_namespace"
            ]
        );
    }
}

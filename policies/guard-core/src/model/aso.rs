//! Azure Service Operator v2, as the policies meet it: its groups, the
//! annotations it reads and writes, and its controller's identity
//! ([`super::controllers::ASO`]).

/// How ASO treats the Azure resource behind an object (implemented by ASO:
/// Azure/azure-service-operator `v2/internal/reconcilers/reconcile_policy.go`
/// `ReconcilePolicyAnnotation`).
pub const RECONCILE_POLICY: &str = "serviceoperator.azure.com/reconcile-policy";
/// ADR 2023-02 option 4.2 (the decision): the reconcile policy to write when
/// the Azure resource already exists. Not implemented by ASO releases to date.
pub const RECONCILE_POLICY_IF_EXISTS: &str = "serviceoperator.azure.com/reconcile-policy-if-exists";
/// ADR 2023-02 option 4.1: adoption behaviour, combined with `reconcile-policy`
/// by "the most restrictive wins". Not implemented by ASO releases to date.
pub const ADOPTION_POLICY: &str = "serviceoperator.azure.com/adoption-policy";
/// Set by ASO when it takes over a resource; before it, nothing was done in
/// Azure (`v2/internal/reconcilers/generic/generic_reconciler.go` `claimResource`).
pub const FINALIZER: &str = "serviceoperator.azure.com/finalizer";
/// The ARM id ASO writes when it claims a resource, before any PUT, and
/// deletes in Azure (`deleteResource`, `BeginDeleteByID`).
pub const RESOURCE_ID: &str = "serviceoperator.azure.com/resource-id";

/// Every ASO kind has its own API group under `azure.com`
/// (`resources.azure.com`, `dbforpostgresql.azure.com`, ...: one per folder
/// of `v2/api`, pinned in `policies/aso-reconcile/aso-groups.txt`).
pub fn is_aso_group(group: &str) -> bool {
    group.ends_with(".azure.com")
}

/// ASO records a long-running Azure operation it started on the object
/// itself: the poller's id here and its resume token beside it
/// (`v2/internal/reconcilers/arm/annotations.go`, 972dd60a,
/// `PollerResumeIDAnnotation`, `SetPollerResumeToken`).
pub const POLLER_RESUME_ID: &str = "serviceoperator.azure.com/poller-resume-id";
/// The resume token of that operation (`PollerResumeTokenAnnotation`).
pub const POLLER_RESUME_TOKEN: &str = "serviceoperator.azure.com/poller-resume-token";
/// The poller id of an ARM DELETE ASO has issued and now monitors
/// (`v2/internal/genericarmclient/generic_client.go` `DeletePollerID`;
/// `azure_generic_arm_reconciler_instance.go` 0115059e `deleteResource`
/// records it, `DetermineDeleteAction` then only monitors it).
pub const DELETE_POLLER_ID: &str = "GenericClient.DeleteByID";

/// What an ASO kind's own delete code removes in Azure besides the ARM id
/// in its `resource-id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removes {
    /// The subscription whose id the object's `status.properties.subscriptionId`
    /// holds: cancelled before the object's own DELETE, and everything under
    /// `/subscriptions/<id>` with it. Nothing when the status holds no id.
    SubscriptionInStatus,
    /// The resource `<parent>/<collection>/<metadata.name>` (the extension
    /// names it by the object's Kubernetes name, not its `azureName`), and
    /// the objects of `group`/`kind` in the same parent whose `spec.scope`
    /// names it or the deleted id (`/<collection>/<name>`, or in full).
    Scoped {
        group: &'static str,
        kind: &'static str,
        collection: &'static str,
    },
}

/// An ASO kind whose `extensions.Deleter` removes more than its own ARM id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeletesMore {
    pub group: &'static str,
    pub kind: &'static str,
    pub removes: Removes,
    pub source: super::Source,
}

/// Every ASO resource extension implementing `extensions.Deleter`
/// (`v2/pkg/genruntime/extensions/deleter.go`, 07d6026b, `CreateDeleter`,
/// called by `StartDeleteOfResource` before the ARM DELETE) whose delete
/// removes more than its own id. The others found in `v2/api/*/customizations`
/// remove nothing more: keyvault `VaultsKey` (`vaults_key_extension.go`,
/// 136abd38) only blocks while the key exists; keyvault `VaultKey`
/// (`vault_key_extensions.go`, 193805f2) leaves, disables or soft-deletes
/// that key alone, by its `operatorSpec.deleteMode`.
pub const DELETES_MORE: [DeletesMore; 2] = [
    DeletesMore {
        group: "subscription.azure.com",
        kind: "Alias",
        removes: Removes::SubscriptionInStatus,
        source: super::Source::new(
            "Azure/azure-service-operator v2/api/subscription/customizations/alias_extensions.go \
             AliasExtension.Delete, getSubscriptionID (07d6026b): armsubscription \
             Client.Cancel(status.properties.subscriptionId), then the ARM DELETE",
        ),
    },
    DeletesMore {
        group: "apimanagement.azure.com",
        kind: "Product",
        removes: Removes::Scoped {
            group: "apimanagement.azure.com",
            kind: "Subscription",
            collection: "products",
        },
        source: super::Source::new(
            "Azure/azure-service-operator v2/api/apimanagement/customizations/product_extensions.go \
             ProductExtension.Delete (0677d5d6): ProductClient.Delete of the \
             product named metadata.name in the parent service, DeleteSubscriptions: true, \
             then the ARM DELETE",
        ),
    },
];

/// What deleting an object of `group`/`kind` removes beyond its own id.
pub fn deletes_more(group: &str, kind: &str) -> Option<&'static DeletesMore> {
    DELETES_MORE
        .iter()
        .find(|d| d.group == group && d.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletes_more_lists_each_kind_once_with_its_source() {
        for (i, d) in DELETES_MORE.iter().enumerate() {
            assert!(is_aso_group(d.group), "{d:?}");
            assert_eq!(deletes_more(d.group, d.kind), DELETES_MORE.get(i));
            #[cfg(not(target_family = "wasm"))]
            assert!(d
                .source
                .text()
                .starts_with("Azure/azure-service-operator v2/api/"));
        }
        assert_eq!(deletes_more("subscription.azure.com", "alias"), None);
        assert_eq!(deletes_more("resources.azure.com", "ResourceGroup"), None);
    }
}

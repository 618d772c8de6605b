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

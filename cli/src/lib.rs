//! What the `reconcile-guard` command line does beyond running a module in
//! the harness (`host_test`): the GitOps `check`, and modules in OCI
//! registries, signed and verified as cosign and kwctl do.

pub mod check;
pub mod oci;
pub mod signing;

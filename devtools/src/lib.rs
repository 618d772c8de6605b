//! reconcile-guard's development and release tooling, on the harness
//! (`host_test`): benchmarks and their growth curves, module sizes, the
//! comparison with the real engines, SBOMs and the generated distribution
//! files.

pub mod bench;
pub mod distribution;
pub mod engines;
pub mod growth;
pub mod measurements;
pub mod sbom;
pub mod sizes;

//! The reconcile-guard test harness: runs compiled policy modules the way
//! Kubewarden's policy-server runs them, and replays the recorded corpus.

pub mod bench;
pub mod capabilities;
pub mod check;
pub mod distribution;
pub mod engines;
pub mod growth;
pub mod harness;
pub mod host;
pub mod measurements;
pub mod metadata;
pub mod oci;
pub mod replay;
pub mod sbom;
pub mod signing;
pub mod sizes;
pub mod stories;

//! The reconcile-guard test harness: runs compiled policy modules the way
//! Kubewarden's policy-server runs them, and replays the recorded corpus.

pub mod bench;
pub mod capabilities;
pub mod distribution;
pub mod engines;
pub mod harness;
pub mod host;
pub mod metadata;
pub mod oci;
pub mod replay;
pub mod sbom;
pub mod signing;

use guard_core::Entry;

/// Every policy of the project, by name, with its native entry points
/// (benchmarks compare against them; replay checks wasm and native agree).
pub const POLICIES: [Entry; 4] = [
    flux_suspend::ENTRY,
    flux_gate::ENTRY,
    aso_reconcile::ENTRY,
    flux_event_metadata::ENTRY,
];

pub fn native(name: &str) -> Option<&'static Entry> {
    POLICIES.iter().find(|e| e.name == name)
}

//! guard-fuzz: a structure-aware fuzzer for the reconcile-guard policies.
//!
//! Inputs are corpus cases (`tests/cases/<policy>`) with structural
//! mutations of their request, objects, settings, recorded cluster state and
//! clock, and for a fraction of them a raw-level mutation of the payload
//! bytes. Each input runs natively in process ([`engine::Native`]) or
//! through the policy's wasm module in the harness ([`engine::Wasm`]); a
//! panic, trap, timeout, harness error, unreadable reply or reply echoing a
//! huge input is a finding, minimized ([`minimize`]) and saved as a corpus
//! case ([`repro`]).

pub mod engine;
pub mod minimize;
pub mod mutate;
pub mod oracle;
pub mod raw;
pub mod repro;
pub mod run;
pub mod seeds;
pub mod tree;
pub mod values;

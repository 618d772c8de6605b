//! The harness' integration tests, one test binary: each file here links
//! wasmtime, which costs a link per binary (issue 57). The files stay modules
//! of their own; `make lint-test-targets` fails when one is not declared
//! below.

mod dist;
// By its path, so that its `mod common;` is tests/common/mod.rs, as when it
// was a test crate of its own, rather than tests/harness/common.rs.
#[path = "harness.rs"]
mod harness;
mod layout;
mod writers_tables;

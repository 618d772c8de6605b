//! The harness' integration tests, one test binary: each file here links
//! wasmtime, which costs a link per binary (issue 57). The files stay modules
//! of their own; `make lint-test-targets` fails when one is not declared
//! below.

mod dist;
mod harness;
mod layout;
mod writers_tables;

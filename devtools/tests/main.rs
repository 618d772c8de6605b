//! The developer tools' integration tests, one test binary: each file here
//! links the harness (wasmtime) and the tools' network stack, which cost a
//! link per binary (issue 57). The files stay modules of their own;
//! `make lint-test-targets` fails when one is not declared below.

mod growth;
mod scaffold;
mod worst_case_memory;

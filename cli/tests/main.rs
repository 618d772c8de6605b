//! reconcile-guard's integration tests, one test binary: each file here links
//! the harness (wasmtime) and the CLI's registry and signing stack, which
//! cost a link per binary (issue 57). The files stay modules of their own;
//! `make lint-test-targets` fails when one is not declared below.

#![expect(
    clippy::duplicate_mod,
    reason = "each file includes host-test's tests/common by its path, as it did as a binary of its own"
)]

mod annotate;
mod check;
mod check_rejection_message;
mod cli;
mod distribution;
mod gitops_real;
mod push;
mod registry;

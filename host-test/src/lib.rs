//! The reconcile-guard test harness: runs compiled policy modules the way
//! Kubewarden's policy-server runs them, and replays the recorded corpus and
//! stories. The user CLI (`reconcile-guard`), the developer tools
//! (`devtools`) and the fuzzer build on it.

pub mod capabilities;
pub mod harness;
pub mod host;
pub mod input;
pub mod locate;
pub mod metadata;
pub mod replay;
pub mod stories;

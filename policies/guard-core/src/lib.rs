//! Shared, pure building blocks of the reconcile-guard policies.
//!
//! A policy is a pure function `AdmissionRequest + Settings + Context -> Verdict`
//! ([`Policy::evaluate`]). Everything that touches the outside world (the WASI
//! clock, Kubernetes host calls) lives in the one waPC adapter, [`wapc`], so the
//! same evaluator runs unchanged under policy-server, the wasmtime harness, the
//! browser playground and native tests.

// A trap is a 500 from policy-server, which blocks every write the webhook
// matches: arithmetic and casts that can overflow or truncate are refused
// outside tests; each proven exception is an `expect` with its reason.
#![cfg_attr(
    not(test),
    deny(
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        clippy::cast_sign_loss
    )
)]

// The WASI clock is read by the waPC adapter only (and tested natively).
#[cfg(any(test, all(target_arch = "wasm32", target_os = "wasi")))]
mod clock;
pub mod context;
pub mod duration;
pub mod identity;
pub mod json_text;
pub mod managed_fields;
pub mod model;
pub mod names;
pub mod object;
pub mod pattern;
pub mod payload;
pub mod policy;
pub mod request;
pub mod rfc3339;
pub mod selector;
pub mod settings;
pub mod string_map;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod text_setting;
mod verdict;

#[cfg(all(target_arch = "wasm32", target_os = "wasi"))]
pub mod wapc;

pub use context::{Cluster, ClusterError, ClusterObject, Context, NoCluster, ObjectRef};
pub use jiff::Timestamp;
pub use policy::{validate_json, validate_settings_json, Policy};
pub use request::{AdmissionRequest, GroupKind, Metadata, Operation, UserInfo};
pub use settings::Settings;
pub use string_map::StringMap;
pub use verdict::{ValidationResponse, Verdict};

/// Exports `wapc_init` registering the policy. Only on `wasm32-wasip1`, so the
/// same crate builds natively for tests and benchmarks.
#[macro_export]
macro_rules! kubewarden_policy {
    ($policy:ty) => {
        #[cfg(all(target_arch = "wasm32", target_os = "wasi"))]
        #[allow(
            unsafe_code,
            reason = "`no_mangle` is how waPC finds the init function"
        )]
        #[no_mangle]
        pub extern "C" fn wapc_init() {
            $crate::wapc::register::<$policy>();
        }
    };
}
pub use policy::{ContextAwareResource, Entry, Lookups};
pub use request::Which;

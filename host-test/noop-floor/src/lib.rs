//! The no-op floor: what the engine costs a module that reads nothing.
//!
//! `validate` allows without looking at its payload (the waPC guest is
//! still handed it: the host copies it into the instance before the call),
//! so `make bench` can set a policy's time on a request it has no rule for
//! beside the least any module pays for one `validate` call.

use kubewarden_policy_sdk::wapc_guest::{self as guest, CallResult};

#[expect(
    unsafe_code,
    reason = "`no_mangle` is how waPC finds the init function"
)]
#[no_mangle]
pub extern "C" fn wapc_init() {
    guest::register_function("validate", validate);
    guest::register_function("validate_settings", |_| {
        Ok(br#"{"valid":true,"message":null}"#.to_vec())
    });
    guest::register_function("protocol_version", |_| Ok(br#""v1""#.to_vec()));
}

fn validate(_: &[u8]) -> CallResult {
    Ok(br#"{"accepted":true}"#.to_vec())
}

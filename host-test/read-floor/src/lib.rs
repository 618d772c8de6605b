//! The read floor: what a policy cannot avoid paying to be handed a request.
//!
//! `validate` parses the whole payload strictly (every byte read, nothing
//! kept: serde's `IgnoredAny`), makes the lookups `settings.lookups` lists
//! (those the policy being measured made, in its order) and parses each
//! answer the same way, then allows. `make bench` times it on each policy's
//! worst case beside the policy, so that a policy's own time reads as a
//! multiple of the cost of reading its bytes.
//!
//! With `settings.writeBack` (the measured policy mutated) it also writes
//! the request's object back whole as its `mutated_object`: the protocol
//! has a mutating policy hand back the whole object, never a patch
//! (policy-server diffs the two itself), so that is the floor of a
//! mutation.

use kubewarden_policy_sdk::wapc_guest::{self as guest, CallResult};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

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

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(borrow)]
    request: Request<'a>,
    #[serde(borrow)]
    settings: Settings<'a>,
}

/// The request, every member read; the object is kept as its text.
#[derive(Deserialize)]
struct Request<'a> {
    #[serde(default, borrow)]
    object: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Settings<'a> {
    /// The measured policy's own settings, read as it must read them.
    #[serde(default, rename = "policy")]
    _policy: IgnoredAny,
    #[serde(default, borrow)]
    lookups: Vec<Lookup<'a>>,
    #[serde(default, rename = "writeBack")]
    write_back: bool,
}

/// One `kubernetes` host call: its operation and its payload as sent.
#[derive(Deserialize)]
struct Lookup<'a> {
    operation: String,
    #[serde(borrow)]
    payload: &'a RawValue,
}

fn validate(payload: &[u8]) -> CallResult {
    let input: Payload = serde_json::from_slice(payload)?;
    for lookup in &input.settings.lookups {
        // A failed lookup costs the policy nothing to read either.
        if let Ok(answer) = guest::host_call(
            "kubewarden",
            "kubernetes",
            &lookup.operation,
            lookup.payload.get().as_bytes(),
        ) {
            serde_json::from_slice::<IgnoredAny>(&answer)?;
        }
    }
    match input.request.object.filter(|_| input.settings.write_back) {
        Some(object) => {
            const HEAD: &[u8] = br#"{"accepted":true,"mutated_object":"#;
            let mut reply = Vec::with_capacity(HEAD.len() + object.get().len() + 1);
            reply.extend_from_slice(HEAD);
            reply.extend_from_slice(object.get().as_bytes());
            reply.push(b'}');
            Ok(reply)
        }
        None => Ok(br#"{"accepted":true}"#.to_vec()),
    }
}

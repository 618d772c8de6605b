//! The conformance layer every front end shares (in the manner of cedar's
//! conformance-test crate): the recorded admission payload corpus, the way
//! policy-server turns a policy's reply into an AdmissionResponse, recorded
//! cluster state, and the checking of a case's expectations.
//!
//! The harness (wasm), the policies' native tests and the playground all go
//! through [`response::admission_response`], so a difference between them can
//! only come from the policy module itself.

pub mod apiserver;
pub mod case;
pub mod cluster;
pub mod commands;
pub mod deployment;
pub mod expect;
pub mod request;
pub mod response;
pub mod worst_case;

use guard_core::{Context, Entry};
use serde_json::Value;

pub use case::{load_cases, Case, Expect};
pub use cluster::RecordedCluster;
pub use request::as_policy_server_sends;
pub use response::{admission_response, failure_response, CallFailure, ServerOptions};

/// The waPC `validate` payload policy-server builds: the request as it sends
/// it (see [`request::as_policy_server_sends`]) and the settings.
pub fn validate_payload(request: &Value, settings: &Value) -> Vec<u8> {
    let payload = serde_json::json!({
        "request": request,
        "settings": settings,
    });
    serde_json::to_vec(&payload).unwrap_or_default()
}

/// Evaluates a case with the policy's native code, as policy-server would.
pub fn evaluate_native(entry: &Entry, case: &Case) -> Result<Value, String> {
    let cluster = RecordedCluster::new(&case.context);
    let ctx = Context::new(case.now, &cluster);
    let request = as_policy_server_sends(&case.admission_request())?;
    let options = case.server_options(entry.name)?;
    let reply = (entry.validate)(&validate_payload(&request, &case.settings), &ctx);
    Ok(admission_response(&request, &reply, &options))
}

/// Runs every case of a corpus folder through the native evaluator and
/// returns one line per failing case; the policies' native tests assert that
/// it is empty, and that the folder is not.
pub fn check_native(entry: &Entry, dir: &std::path::Path) -> Result<(usize, Vec<String>), String> {
    let cases = load_cases(dir)?;
    let mut failures = Vec::new();
    for case in &cases {
        match evaluate_native(entry, case) {
            Ok(response) => {
                for problem in expect::check(&case.expect, &response) {
                    failures.push(format!("{}: {problem}", case.id));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", case.id)),
        }
    }
    Ok((cases.len(), failures))
}

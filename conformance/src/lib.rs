//! The conformance layer every front end shares (in the manner of cedar's
//! conformance-test crate): the recorded admission payload corpus, the way
//! policy-server turns a policy's reply into an AdmissionResponse, recorded
//! cluster state, and the checking of a case's expectations.
//!
//! The harness (wasm), the policies' native tests and the playground all go
//! through [`response::admission_response`], so a difference between them can
//! only come from the policy module itself.

pub mod case;
pub mod cluster;
pub mod expect;
pub mod response;

use guard_core::{Context, Entry};
use serde_json::Value;

pub use case::{load_cases, Case, Expect};
pub use cluster::RecordedCluster;
pub use response::{admission_response, strip_nulls, ServerOptions};

/// The waPC `validate` payload policy-server builds for a request: the
/// request without nulls, and the settings.
pub fn validate_payload(request: &Value, settings: &Value) -> Vec<u8> {
    let payload = serde_json::json!({
        "request": strip_nulls(request.clone()),
        "settings": settings,
    });
    serde_json::to_vec(&payload).unwrap_or_default()
}

/// Evaluates a case with the policy's native code, as policy-server would.
pub fn evaluate_native(entry: &Entry, case: &Case) -> Value {
    let cluster = RecordedCluster::new(&case.context);
    let ctx = Context::new(case.now, &cluster);
    let request = case.admission_request();
    let reply = (entry.validate)(&validate_payload(&request, &case.settings), &ctx);
    admission_response(&request, &reply, &case.server_options(entry.name))
}

/// Runs every case of a corpus folder through the native evaluator and
/// returns one line per failing case; the policies' native tests assert that
/// it is empty, and that the folder is not.
pub fn check_native(entry: &Entry, dir: &std::path::Path) -> Result<(usize, Vec<String>), String> {
    let cases = load_cases(dir)?;
    let mut failures = Vec::new();
    for case in &cases {
        let response = evaluate_native(entry, case);
        for problem in expect::check(&case.expect, &response) {
            failures.push(format!("{}: {problem}", case.id));
        }
    }
    Ok((cases.len(), failures))
}

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
pub mod story;
pub mod worst_case;

use cluster::Recorded;
use guard_core::{Context, Entry, Timestamp};
use serde_json::Value;

pub use case::{load_cases, Case, Expect};
pub use cluster::{NoAnswer, RecordedCluster};
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

/// What kube-apiserver gets back from policy-server for one review: an
/// AdmissionResponse, or nothing at all (see [`NoAnswer`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Response(Value),
    NoAnswer(NoAnswer),
}

/// The member that marks [`Reply::NoAnswer`] in its JSON form; no
/// AdmissionResponse has it.
pub const NO_ANSWER: &str = "noAnswer";

impl Reply {
    /// The JSON form the corpus checks, the playground shows and the parity
    /// test compares: the AdmissionResponse, or `{"noAnswer": why}`.
    pub fn to_json(&self) -> Value {
        match self {
            Reply::Response(r) => r.clone(),
            Reply::NoAnswer(n) => serde_json::json!({ NO_ANSWER: n.to_string() }),
        }
    }
}

/// Evaluates `request` (as policy-server sends it) with the policy's native
/// code at `now`, its lookups answered from `context`, as policy-server
/// would reply.
pub fn native_reply(
    entry: &Entry,
    request: &Value,
    settings: &Value,
    now: Timestamp,
    context: &[Recorded],
    options: &ServerOptions,
) -> Reply {
    let cluster = RecordedCluster::new(context);
    let ctx = Context::new(now, &cluster);
    let reply = (entry.validate)(&validate_payload(request, settings), &ctx);
    match cluster.unanswered() {
        Some(none) => Reply::NoAnswer(none.clone()),
        None => Reply::Response(admission_response(request, &reply, options)),
    }
}

/// Evaluates a case with the policy's native code, as policy-server would.
pub fn evaluate_native_reply(entry: &Entry, case: &Case) -> Result<Reply, String> {
    let request = as_policy_server_sends(&case.admission_request())?;
    let options = case.server_options(entry)?;
    Ok(native_reply(
        entry,
        &request,
        &case.settings,
        case.now,
        &case.context,
        &options,
    ))
}

/// [`evaluate_native_reply`] in its JSON form ([`Reply::to_json`]).
pub fn evaluate_native(entry: &Entry, case: &Case) -> Result<Value, String> {
    evaluate_native_reply(entry, case).map(|r| r.to_json())
}

/// Runs every case of a corpus folder through the native evaluator and
/// returns one line per failing case; the policies' native tests assert that
/// it is empty, and that the folder is not.
pub fn check_native(entry: &Entry, dir: &std::path::Path) -> Result<(usize, Vec<String>), String> {
    let cases = load_cases(dir)?;
    let mut failures = Vec::new();
    for case in &cases {
        let mutating = case.server_options(entry)?.allowed_to_mutate;
        if let Some(problem) = request::create_metadata_problem(&case.admission_request(), mutating)
        {
            failures.push(format!("{}: {problem}", case.id));
        }
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

//! Prints, as one JSON object, the reply the conformance crate's native
//! evaluation gives for every corpus case (`<policy>/<case>` -> the
//! AdmissionResponse, or `{"noAnswer": why}`):
//! the playground's browser tests compare the page against it when the
//! CLI (`target/host/reconcile-guard`) has not been built.
//!
//!     cargo run --example corpus_dump -p playground [tests/cases]

use serde_json::{Map, Value};

fn main() -> std::process::ExitCode {
    let root = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tests/cases".into());
    let cases = match conformance::load_cases(std::path::Path::new(&root)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut out = Map::new();
    for case in &cases {
        let policy = case.id.split('/').next().unwrap_or("");
        if let Some(entry) = playground::engine::entry(policy) {
            let response = conformance::evaluate_native(entry, case).unwrap_or_else(Value::String);
            out.insert(case.id.clone(), response);
        }
    }
    println!("{}", Value::Object(out));
    std::process::ExitCode::SUCCESS
}

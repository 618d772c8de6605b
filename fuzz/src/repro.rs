//! Reproducers: a minimized finding as a corpus case in the `tests/cases`
//! format, and the exact bytes the failing operation received.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use conformance::cluster::Recorded;
use serde_json::{json, Map, Value};

use crate::engine::{payloads, EngineKind};
use crate::mutate::Input;
use crate::oracle::{Finding, Operation};
use guard_core::testing::rng::name_hash;

/// A recorded context object as a case writes it.
pub fn recorded_to_value(r: &Recorded) -> Value {
    let mut m = Map::new();
    m.insert("apiVersion".into(), json!(r.api_version));
    m.insert("kind".into(), json!(r.kind));
    if !r.namespace.is_empty() {
        m.insert("namespace".into(), json!(r.namespace));
    }
    m.insert("name".into(), json!(r.name));
    if let Some(o) = &r.object {
        m.insert("object".into(), o.clone());
    }
    if let Some(e) = &r.error {
        m.insert("error".into(), json!(e));
    }
    Value::Object(m)
}

/// What a run knows about where a finding came from.
#[derive(Debug, Clone)]
pub struct Origin<'a> {
    pub policy: &'a str,
    pub engine: EngineKind,
    pub seed: u64,
}

/// The files written for one finding.
#[derive(Debug, Clone)]
pub struct Saved {
    pub case: PathBuf,
    pub payload: PathBuf,
    /// Whether the case file loads and holds the input exactly; when not,
    /// the payload file is the reproducer.
    pub case_exact: bool,
}

pub fn file_stem(origin: &Origin<'_>, finding: &Finding) -> String {
    format!(
        "{}-{}-{}-{:08x}",
        origin.engine.name(),
        finding.kind.name(),
        finding.operation.name().replace('_', "-"),
        name_hash(&finding.signature) as u32
    )
}

/// Writes `<out>/<policy>/<stem>.yaml` and `<stem>.payload.json`.
pub fn save(out: &Path, origin: &Origin<'_>, finding: &Finding, input: &Input) -> Result<Saved> {
    let dir = out.join(origin.policy);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let stem = file_stem(origin, finding);
    let case = dir.join(format!("{stem}.yaml"));
    let payload_file = dir.join(format!("{stem}.payload.json"));
    let p = payloads(input);
    let bytes = match finding.operation {
        Operation::Validate => p.validate.clone(),
        Operation::ValidateSettings => p.settings.clone().unwrap_or_default(),
    };
    std::fs::write(&payload_file, &bytes)
        .with_context(|| format!("cannot write {}", payload_file.display()))?;
    let text = case_yaml(origin, finding, input, p.reachable, &payload_file)?;
    std::fs::write(&case, text).with_context(|| format!("cannot write {}", case.display()))?;
    let case_exact = loads_back(&case, input);
    Ok(Saved {
        case,
        payload: payload_file,
        case_exact,
    })
}

/// The case file's text.
pub fn case_yaml(
    origin: &Origin<'_>,
    finding: &Finding,
    input: &Input,
    reachable: bool,
    payload_file: &Path,
) -> Result<String> {
    let payload_name = payload_file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("the payload file");
    let mut description = format!(
        "guard-fuzz {engine}: {kind} in {op}: {sig}. Found with seed {seed}, input {index} \
         (from {case}; mutations {muts}); minimized.",
        engine = origin.engine.name(),
        kind = finding.kind.name(),
        op = finding.operation.name(),
        sig = finding.signature,
        seed = origin.seed,
        index = input.index,
        case = input.seed_id,
        muts = input.mutations(),
    );
    if let Some(op) = &input.raw {
        description.push_str(&format!(
            " Raw-level input ({}): only {payload_name} holds the exact bytes; policy-server \
             re-serialises requests, so a deployed policy never receives them.",
            op.describe()
        ));
    } else if !reachable {
        description.push_str(
            " policy-server refuses this request before the policy (its typed AdmissionRequest \
             cannot hold it); the policy received it as written here.",
        );
    }
    let review = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": input.request,
    });
    let mut text = String::new();
    text.push_str(&format!(
        "# guard-fuzz finding ({} {}): {}\n# {}\n# Reproduce: guard-fuzz --policy {} --engine {} --seed {} --start {} --inputs 1 --jobs 1\n",
        origin.engine.name(),
        finding.kind.name(),
        finding.signature.replace('\n', " "),
        crate::oracle::preview(&finding.detail).replace('\n', " "),
        origin.policy,
        origin.engine.name(),
        origin.seed,
        input.index,
    ));
    for (key, value) in [
        ("description", json!(description)),
        ("now", json!(input.now.to_string())),
        ("settings", input.settings.clone()),
        ("request", review),
    ] {
        text.push_str(&serde_norway::to_string(&json!({ key: value }))?);
    }
    if !input.context.is_empty() {
        let context: Vec<Value> = input.context.iter().map(recorded_to_value).collect();
        text.push_str(&serde_norway::to_string(&json!({ "context": context }))?);
    }
    text.push_str(
        "expect:\n  # Placeholder: whoever fixes the policy sets the answer it must give here.\n  allowed: false\n",
    );
    Ok(text)
}

fn loads_back(case: &Path, input: &Input) -> bool {
    match conformance::case::load_case(case) {
        Ok(loaded) => {
            loaded.now == input.now
                && loaded.settings == input.settings
                && loaded.admission_request() == input.request
                && loaded.context == input.context
        }
        Err(_) => false,
    }
}

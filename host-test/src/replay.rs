//! `devtools replay`: every corpus case through the compiled module, checked
//! against its expectations and against the native evaluation of the same case.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, Result};
use conformance::{expect, Case};
use serde_json::Value;

use crate::capabilities::{Grants, Source};
use crate::harness::{Evaluation, Policy};
use crate::host::Limits;

/// The result of one case.
pub struct Outcome {
    pub id: String,
    pub policy: String,
    pub problems: Vec<String>,
    pub response: Value,
    /// Fresh-instance `validate` times, in microseconds.
    pub micros: Vec<f64>,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }

    /// `allowed`, `mutated`, `denied` or `no answer`, for tables.
    pub fn verdict(&self) -> String {
        if self.response.get(conformance::NO_ANSWER).is_some() {
            return "no answer".into();
        }
        let allowed = self.response.get("allowed").and_then(Value::as_bool) == Some(true);
        match (allowed, self.response.get("patch").is_some()) {
            (true, true) => "mutated".into(),
            (true, false) => "allowed".into(),
            (false, _) => "denied".into(),
        }
    }
}

/// Loads modules from `dist` on first use, one per policy.
pub struct Modules {
    dist: PathBuf,
    loaded: BTreeMap<String, Policy>,
}

impl Modules {
    pub fn new(dist: &Path) -> Self {
        Self {
            dist: dist.to_path_buf(),
            loaded: BTreeMap::new(),
        }
    }

    pub fn get(&mut self, name: &str) -> Result<&Policy> {
        if !self.loaded.contains_key(name) {
            let path = self.dist.join(format!("{name}.wasm"));
            let policy =
                Policy::load(&path).with_context(|| "run `make build` first".to_string())?;
            self.loaded.insert(name.to_string(), policy);
        }
        self.loaded
            .get(name)
            .ok_or_else(|| anyhow::anyhow!("policy {name} not loaded"))
    }
}

/// The policy a case belongs to: the folder it lives in.
pub fn policy_of(case: &Case) -> String {
    case.id.split('/').next().unwrap_or("").to_string()
}

/// The catalog entry of the case's policy; a folder the catalog does not
/// list is refused, naming where policies are listed.
pub fn entry_of(case: &Case) -> Result<&'static guard_core::Entry, String> {
    let name = policy_of(case);
    catalog::entry(&name).ok_or_else(|| {
        format!(
            "{}: no policy named {name:?} in the catalog (policies/catalog/src/lib.rs)",
            case.id
        )
    })
}

/// Runs one case `repeat` times (for timing) and checks the last response.
pub fn run_case(modules: &mut Modules, case: &Case, repeat: usize, limits: &Limits) -> Outcome {
    let policy_name = policy_of(case);
    let mut outcome = Outcome {
        id: case.id.clone(),
        policy: policy_name.clone(),
        problems: Vec::new(),
        response: Value::Null,
        micros: Vec::new(),
    };
    match evaluate(modules, case, repeat, limits, &mut outcome.micros) {
        Ok(response) => outcome.response = response,
        Err(problem) => {
            outcome.problems.push(problem);
            return outcome;
        }
    }
    outcome.problems = expect::check(&case.expect, &outcome.response);
    outcome
        .problems
        .extend(native_disagreement(case, &outcome.response));
    outcome
}

/// The reply of the case's policy module, evaluated `repeat` times on fresh
/// instances (each time pushed to `micros`), as policy-server would give it.
pub fn evaluate(
    modules: &mut Modules,
    case: &Case,
    repeat: usize,
    limits: &Limits,
    micros: &mut Vec<f64>,
) -> Result<Value, String> {
    let entry = entry_of(case)?;
    let policy = modules.get(entry.name).map_err(|e| format!("{e:#}"))?;
    // policy-server validates settings before serving; a case that records
    // invalid settings still gets the policy's own refusal from `validate`.
    let _ = policy.validate_settings(&case.settings, case.now);
    let request = case.admission_request();
    let server = case.server_options(entry)?;
    let granted = case.granted_resources(entry)?;
    let eval = Evaluation {
        now: case.now,
        limits: limits.clone(),
        source: Source::Recorded(case.context.clone().into()),
        grants: Grants::all_capabilities(granted),
        server,
    };
    let mut last = Value::Null;
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        let (response, _) = policy.evaluate(&request, &case.settings, &eval);
        micros.push(start.elapsed().as_secs_f64() * 1e6);
        last = response.map_err(|failure| failure.to_string())?;
    }
    Ok(last)
}

/// How the native evaluation of the case differs from the module's reply.
pub fn native_disagreement(case: &Case, response: &Value) -> Option<String> {
    match entry_of(case) {
        Ok(entry) => {
            let native = conformance::evaluate_native(entry, case).unwrap_or_else(Value::String);
            (native != *response).then(|| {
                format!(
                    "wasm and native disagree:\n      wasm:   {response}\n      native: {native}"
                )
            })
        }
        Err(e) => Some(e),
    }
}

pub fn median(values: &[f64]) -> f64 {
    percentile(values, 50.0)
}

pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted
        .get(rank.min(sorted.len() - 1))
        .copied()
        .unwrap_or(0.0)
}

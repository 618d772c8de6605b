//! One corpus case a file: `tests/cases/<policy>/<case>.yaml`.

use std::collections::BTreeMap;
use std::path::Path;

use guard_core::{Entry, Timestamp};
use serde::Deserialize;
use serde_json::Value;

use crate::cluster::Recorded;
use crate::deployment::{self, ContextAwareResource};
use crate::response::{PolicyMode, ServerOptions};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Case {
    /// `<policy>/<file stem>`, filled in when loaded.
    #[serde(skip)]
    pub id: String,
    pub description: String,
    /// The wall clock the policy sees.
    pub now: Timestamp,
    #[serde(default = "empty_object")]
    pub settings: Value,
    /// A full AdmissionReview, or a bare AdmissionRequest.
    pub request: Value,
    #[serde(default)]
    pub context: Vec<Recorded>,
    /// policy-server's `policyMode` for this case (default `protect`).
    #[serde(default)]
    pub policy_mode: PolicyMode,
    /// policy-server's `allowedToMutate`; by default the generated
    /// ClusterAdmissionPolicy's `spec.mutating` (see [`crate::deployment`]).
    #[serde(default)]
    pub allowed_to_mutate: Option<bool>,
    /// The `contextAwareResources` granted; by default the generated
    /// ClusterAdmissionPolicy's.
    #[serde(default)]
    pub context_aware_resources: Option<Vec<ContextAwareResource>>,
    pub expect: Expect,
}

pub(crate) fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// What the AdmissionResponse must say. Omitted fields are not checked;
/// `warnings: []` and `patch: []` mean "none at all".
///
/// `noAnswer: <pattern>` alone instead says that policy-server never
/// answers (see [`crate::NoAnswer`]); the pattern must match why.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "ExpectForm")]
pub struct Expect {
    /// `false` when no answer is expected.
    pub allowed: bool,
    pub code: Option<u16>,
    /// A regular expression the status message must match.
    pub message: Option<String>,
    /// Regular expressions, each of which must match one warning.
    pub warnings: Option<Vec<String>>,
    /// The exact JSONPatch policy-server would send.
    pub patch: Option<Vec<Value>>,
    /// Key to a regular expression the audit annotation's value must match.
    pub audit_annotations: Option<BTreeMap<String, String>>,
    /// A regular expression the reason policy-server never answers must match.
    pub no_answer: Option<String>,
}

/// An `expect` as written: either an AdmissionResponse's fields or `noAnswer`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpectForm {
    #[serde(default)]
    allowed: Option<bool>,
    #[serde(default)]
    code: Option<u16>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    warnings: Option<Vec<String>>,
    #[serde(default)]
    patch: Option<Vec<Value>>,
    #[serde(default)]
    audit_annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    no_answer: Option<String>,
}

impl TryFrom<ExpectForm> for Expect {
    type Error = String;

    fn try_from(f: ExpectForm) -> Result<Self, String> {
        let response_fields = f.code.is_some()
            || f.message.is_some()
            || f.warnings.is_some()
            || f.patch.is_some()
            || f.audit_annotations.is_some();
        let allowed = match (f.allowed, &f.no_answer) {
            (Some(allowed), None) => allowed,
            (None, Some(_)) if !response_fields => false,
            (None, Some(_)) => {
                return Err("`noAnswer` expects no AdmissionResponse: it stands alone".into())
            }
            (Some(_), Some(_)) => return Err("`allowed` and `noAnswer` exclude each other".into()),
            (None, None) => return Err("missing field `allowed` (or `noAnswer`)".into()),
        };
        Ok(Self {
            allowed,
            code: f.code,
            message: f.message,
            warnings: f.warnings,
            patch: f.patch,
            audit_annotations: f.audit_annotations,
            no_answer: f.no_answer,
        })
    }
}

impl Case {
    /// The AdmissionRequest itself, whether the case recorded a review or a request.
    pub fn admission_request(&self) -> Value {
        unwrap_review(&self.request)
    }

    /// policy-server's options for this case's policy, deployed as the
    /// repository's ClusterAdmissionPolicy with the case's overrides.
    pub fn server_options(&self, policy: &Entry) -> Result<ServerOptions, String> {
        let deployed = deployment::of(policy)?;
        Ok(ServerOptions {
            allowed_to_mutate: deployed.mutating(self.allowed_to_mutate),
            policy_id: deployed.policy_id,
            mode: self.policy_mode,
            // The repository's ClusterAdmissionPolicies set no `message`.
            rejection_message: None,
        })
    }

    /// The Kubernetes kinds policy-server lets this case's policy read.
    pub fn granted_resources(&self, policy: &Entry) -> Result<Vec<ContextAwareResource>, String> {
        match &self.context_aware_resources {
            Some(granted) => Ok(granted.clone()),
            None => Ok(deployment::of(policy)?.context_aware_resources),
        }
    }
}

/// `.request` of an AdmissionReview; a bare AdmissionRequest as it is.
pub fn unwrap_review(value: &Value) -> Value {
    match value.get("request") {
        Some(inner) if value.get("kind").and_then(Value::as_str) == Some("AdmissionReview") => {
            inner.clone()
        }
        Some(inner) if value.get("uid").is_none() && inner.is_object() => inner.clone(),
        _ => value.clone(),
    }
}

/// Loads one case file, or every `*.yaml` under a folder (recursively), sorted by path.
pub fn load_cases(path: &Path) -> Result<Vec<Case>, String> {
    let mut files = Vec::new();
    collect(path, &mut files)?;
    files.sort();
    files.iter().map(|f| load_case(f)).collect()
}

pub(crate) fn collect(path: &Path, files: &mut Vec<std::path::PathBuf>) -> Result<(), String> {
    if path.is_file() {
        files.push(path.to_path_buf());
        return Ok(());
    }
    let entries =
        std::fs::read_dir(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    for entry in entries {
        let p = entry.map_err(|e| e.to_string())?.path();
        if p.is_dir() {
            collect(&p, files)?;
        } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            files.push(p);
        }
    }
    Ok(())
}

pub fn load_case(file: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut case: Case =
        serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    case.id = id_of(file);
    if let Some(problem) = crate::request::options_shape_problem(&case.admission_request()) {
        return Err(format!("{}: {problem}", file.display()));
    }
    Ok(case)
}

/// `<folder>/<file stem>`: a case's or story's name in reports.
pub(crate) fn id_of(file: &Path) -> String {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("case");
    let policy = file
        .parent()
        .and_then(Path::file_name)
        .and_then(|s| s.to_str())
        .unwrap_or("");
    format!("{policy}/{stem}")
}

//! The benchmarked worst cases: where they are written and the sizes they
//! are built to. Each policy's `tests/worst_case.rs` builds its case from the
//! limits its settings enforce and writes it here (under `target/`, as the
//! files are megabytes); `devtools bench` and the memory test read them.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Relative to the workspace root.
pub const DIR: &str = "target/bench/worst-case";

/// policy-server reads an AdmissionReview of at most 2 MiB and answers a
/// larger one with 413 before any policy runs: its `validate` handlers take
/// axum's `Json` extractor (kubewarden/kubewarden-controller 3460bb71,
/// `crates/policy-server/src/api/handlers.rs`) and it sets no
/// `DefaultBodyLimit`, so axum-core 0.5.6's default applies
/// (`ext_traits/request.rs`, `with_limited_body`, `DEFAULT_LIMIT` 2,097,152).
/// That is tighter than kube-apiserver's own limit on a write, so it bounds
/// the objects of a request together.
pub const REVIEW_LIMIT: usize = 2_097_152;

/// kube-apiserver reads at most 3 MiB of a create, update or patch body
/// (kubernetes/apiserver 24a394e5, `pkg/server/config.go`, `NewConfig`,
/// `MaxRequestBodyBytes`; `limitedReadBody` in
/// `pkg/endpoints/handlers/rest.go`): the bound of a stored object the
/// policy looks up, and of a ClusterAdmissionPolicy holding settings.
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// The annotations of an object hold at most 256 KiB of keys and values
/// together (kubernetes/apimachinery eed236ce,
/// `pkg/api/validation/objectmeta.go`, `ValidateAnnotationsSize`). Validation
/// runs after mutating admission and before validating admission
/// (kubernetes/apiserver `pkg/endpoints/handlers/create.go`, `createHandler`;
/// `pkg/registry/generic/registry/store.go`, `Store.Create`), so a mutating
/// policy may see more, a validating one and every stored object not.
pub const TOTAL_ANNOTATION_SIZE_LIMIT_B: usize = 256 * 1024;

/// The workspace root, for the generators (tests run in their crate's folder).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The bytes `value` takes as compact JSON, as it travels in a request.
pub fn json_size(value: &Value) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len())
}

/// `Ok` when `object` takes `bytes` as compact JSON, to within 64 below:
/// a generated object as large as it was built to be.
pub fn takes(object: &Value, bytes: usize) -> Result<(), String> {
    let size = json_size(object);
    if size <= bytes && size > bytes.saturating_sub(64) {
        Ok(())
    } else {
        Err(format!("{size} bytes, not {bytes} (to within 64 below)"))
    }
}

/// Room left in each generated object for the rest of the review.
pub const HEADROOM: usize = 16 * 1024;

/// Entries in each settings list the validation does not bound.
pub const LIST_ENTRIES: usize = 1024;

/// The bytes of `object`'s annotations as kube-apiserver counts them: keys
/// and values.
pub fn annotation_bytes(object: &Value) -> usize {
    object
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| k.len().saturating_add(v.as_str().map_or(0, str::len)))
        .sum()
}

/// The JSON of one filler entry, `"x0000000":"",`; its key alone counts
/// [`FILLER_KEY`] bytes towards the annotations' limit.
const FILLER_JSON: usize = r#""x0000000":"","#.len();
const FILLER_KEY: usize = "x0000000".len();

/// Adds `count` entries `"{prefix}{i:07}": ""` to the map at `pointer`.
fn add_fillers(object: &mut Value, pointer: &str, prefix: char, count: usize) {
    if let Some(map) = object.pointer_mut(pointer).and_then(Value::as_object_mut) {
        map.extend((0..count).map(|i| (format!("{prefix}{i:07}"), Value::from(""))));
    }
}

/// How many filler entries `object` takes before it reaches `budget` bytes
/// as compact JSON.
fn fillers_within(object: &Value, budget: usize) -> usize {
    budget.saturating_sub(json_size(object)) / FILLER_JSON
}

/// Fills the map at `pointer` (labels, `spec.postBuild.substitute`) with
/// short entries (`{prefix}0000000: ""`) until `object` reaches `budget`.
pub fn fill_map(object: &mut Value, pointer: &str, prefix: char, budget: usize) {
    let count = fillers_within(object, budget);
    add_fillers(object, pointer, prefix, count);
}

/// Fills `object`'s labels (which have no total limit) with short ones
/// (`l0000000: ""`) until it reaches `budget`.
pub fn fill_labels(object: &mut Value, budget: usize) {
    fill_map(object, "/metadata/labels", 'l', budget);
}

/// Adds short annotations (`{prefix}0000000: ""`) while `object` stays
/// within `object_budget` bytes and its annotations within
/// `annotation_budget` (as [`annotation_bytes`] counts them; `usize::MAX`
/// for an object mutating admission sees before the size is validated).
pub fn fill_annotations(
    object: &mut Value,
    prefix: char,
    object_budget: usize,
    annotation_budget: usize,
) {
    let by_annotations = annotation_budget.saturating_sub(annotation_bytes(object)) / FILLER_KEY;
    let count = fillers_within(object, object_budget).min(by_annotations);
    add_fillers(object, "/metadata/annotations", prefix, count);
}

/// `Ok` when the keys and values of `object`'s annotations, as kube-apiserver
/// counts them, fill [`TOTAL_ANNOTATION_SIZE_LIMIT_B`] to within `slack` bytes.
pub fn fills_annotations(object: &Value, slack: usize) -> Result<(), String> {
    let size = annotation_bytes(object);
    if size <= TOTAL_ANNOTATION_SIZE_LIMIT_B
        && size > TOTAL_ANNOTATION_SIZE_LIMIT_B.saturating_sub(slack)
    {
        Ok(())
    } else {
        Err(format!(
            "annotations of {size} bytes, not {TOTAL_ANNOTATION_SIZE_LIMIT_B} (to within {slack} below)"
        ))
    }
}

/// `<root>/target/bench/worst-case/<policy>-worst-case.yaml`.
pub fn path(root: &Path, policy: &str) -> PathBuf {
    root.join(DIR).join(format!("{policy}-worst-case.yaml"))
}

/// The AdmissionReview of `request` (its `uid`, `name`, `operation`,
/// objects …) for an object of `group`, `version` and `kind` written to
/// `resource`, asked for as it is written (`requestKind`, `requestResource`).
pub fn review(group: &str, version: &str, kind: &str, resource: &str, mut request: Value) -> Value {
    let kind = serde_json::json!({"group": group, "version": version, "kind": kind});
    let resource = serde_json::json!({"group": group, "version": version, "resource": resource});
    if let Some(map) = request.as_object_mut() {
        map.insert("kind".into(), kind.clone());
        map.insert("requestKind".into(), kind);
        map.insert("resource".into(), resource.clone());
        map.insert("requestResource".into(), resource);
    }
    serde_json::json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// Writes a policy's worst case (a corpus case, as one line of JSON, which
/// YAML reads) after checking that its AdmissionReview fits what
/// policy-server reads; returns where it went.
pub fn write(root: &Path, policy: &str, case: &Value) -> Result<PathBuf, String> {
    let review = serde_json::to_string(&case["request"]).map_err(|e| e.to_string())?;
    if review.len() > REVIEW_LIMIT {
        return Err(format!(
            "{policy}: the AdmissionReview is {} bytes, over policy-server's {REVIEW_LIMIT}",
            review.len()
        ));
    }
    let file = path(root, policy);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string(case).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(file)
}

/// [`write`]s the worst case of `entry`'s policy and checks that the verdict
/// it records is the policy's (the native evaluation, as policy-server
/// would reply); returns where it went.
pub fn write_checked(entry: &guard_core::Entry, case: &Value) -> Result<PathBuf, String> {
    let file = write(&workspace_root(), entry.name, case)?;
    let (count, failures) = crate::check_native(entry, &file)?;
    if count != 1 || !failures.is_empty() {
        return Err(format!(
            "{}: {count} cases, failing: {}",
            file.display(),
            failures.join("\n")
        ));
    }
    Ok(file)
}

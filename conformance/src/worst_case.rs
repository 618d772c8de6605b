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

/// `Ok` when the keys and values of `object`'s annotations, as kube-apiserver
/// counts them, fill [`TOTAL_ANNOTATION_SIZE_LIMIT_B`] to within `slack` bytes.
pub fn fills_annotations(object: &Value, slack: usize) -> Result<(), String> {
    let size: usize = object
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| k.len().saturating_add(v.as_str().map_or(0, str::len)))
        .sum();
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

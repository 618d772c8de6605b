//! One evaluation as the page asks for it: the inputs as typed, read and
//! checked, then the policy's own evaluator called exactly as the harness and
//! policy-server call it (through [`conformance::native_reply`]: the same
//! payload, lookups and AdmissionResponse), and the reply explained: the decoded
//! patch and the object before and after it.

use conformance::cluster::Recorded;
use conformance::response::{decoded_patch, PolicyMode};
use conformance::ServerOptions;
use guard_core::{Entry, Timestamp};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::compose::{self, Form};
use crate::input::{parse_document, InputError};

pub use catalog::entry;

/// The page's state, as it hands it over (all text as typed).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Input {
    pub policy: String,
    /// `review` (an AdmissionReview or AdmissionRequest in `review`) or `form`.
    pub mode: String,
    pub review: String,
    pub object: String,
    pub old_object: String,
    pub operation: String,
    pub username: String,
    pub groups: String,
    pub dry_run: bool,
    pub settings: String,
    /// RFC 3339 instant.
    pub now: String,
    pub context: String,
    /// `protect` (default) or `monitor`.
    pub policy_mode: String,
    pub allowed_to_mutate: Option<bool>,
}

/// Everything an evaluation needs, read from the [`Input`].
pub struct Prepared {
    pub entry: &'static Entry,
    pub request: Value,
    pub settings: Value,
    pub now: Timestamp,
    pub context: Vec<Recorded>,
    pub options: ServerOptions,
}

impl Prepared {
    /// What policy-server would reply at `now`, in the corpus's JSON form:
    /// the AdmissionResponse, or `{"noAnswer": why}` when it never answers
    /// ([`conformance::Reply::to_json`]).
    pub fn respond_at(&self, now: Timestamp) -> Value {
        conformance::native_reply(
            self.entry,
            &self.request,
            &self.settings,
            now,
            &self.context,
            &self.options,
        )
        .to_json()
    }

    pub fn respond(&self) -> Value {
        self.respond_at(self.now)
    }
}

pub fn parse_now(text: &str) -> Result<Timestamp, InputError> {
    text.trim()
        .parse::<Timestamp>()
        .map_err(|e| InputError::new("now", format!("not an RFC 3339 instant: {e}")))
}

/// Reads the cluster context: a list of recorded objects as the corpus
/// writes them (`{apiVersion, kind, namespace, name, object}`), or plain
/// Kubernetes objects, which are recorded under their own coordinates.
pub fn parse_context(text: &str) -> Result<Vec<Recorded>, InputError> {
    let value = parse_document("context", text)?;
    let items = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        Value::Object(ref m)
            if m.get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| k.ends_with("List")) =>
        {
            m.get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        }
        other @ Value::Object(_) => vec![other],
        _ => return Err(InputError::new("context", "expected a list of objects")),
    };
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let recorded = if item.get("metadata").is_some() && item.get("object").is_none() {
            let s = |p: &str| {
                item.pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            Recorded {
                api_version: s("/apiVersion"),
                kind: s("/kind"),
                namespace: s("/metadata/namespace"),
                name: s("/metadata/name"),
                object: Some(item.clone()),
                error: None,
            }
        } else {
            serde_json::from_value::<Recorded>(item)
                .map_err(|e| InputError::new("context", format!("item {}: {e}", i + 1)))?
        };
        out.push(recorded);
    }
    Ok(out)
}

/// Reads and checks every input; all problems at once, so the page can show
/// each at its place.
#[expect(
    clippy::too_many_lines,
    reason = "every input's check, collecting all problems at once for the page"
)]
pub fn prepare(input: &Input) -> Result<Prepared, Vec<InputError>> {
    let mut errors = Vec::new();
    let entry = entry(&input.policy);
    if entry.is_none() {
        errors.push(InputError::new(
            "policy",
            format!("no policy named {:?}", input.policy),
        ));
    }

    let request = if input.mode == "form" {
        let object = parse_document("object", &input.object)
            .map_err(|e| errors.push(e))
            .ok();
        let old_object = parse_document("oldObject", &input.old_object)
            .map_err(|e| errors.push(e))
            .ok();
        let form = Form {
            object: object.unwrap_or(Value::Null),
            old_object: old_object.unwrap_or(Value::Null),
            operation: input.operation.clone(),
            username: input.username.clone(),
            groups: compose::split_groups(&input.groups),
            dry_run: input.dry_run,
        };
        if form.object.is_null() && form.old_object.is_null() {
            errors.push(InputError::new(
                "object",
                "paste the object the request is about",
            ));
        }
        for (name, v) in [("object", &form.object), ("oldObject", &form.old_object)] {
            if !v.is_null() && !v.is_object() {
                errors.push(InputError::new(
                    name,
                    "expected a Kubernetes object (a mapping)",
                ));
            }
        }
        compose::admission_request(&form)
    } else {
        match parse_document("request", &input.review) {
            Ok(Value::Null) => {
                errors.push(InputError::new(
                    "request",
                    "paste an AdmissionReview or an AdmissionRequest",
                ));
                Value::Null
            }
            Ok(v) if !v.is_object() => {
                errors.push(InputError::new(
                    "request",
                    "expected an AdmissionReview or an AdmissionRequest (a mapping)",
                ));
                Value::Null
            }
            Ok(v) => conformance::case::unwrap_review(&v),
            Err(e) => {
                errors.push(e);
                Value::Null
            }
        }
    };

    // What the policy sees is the request as policy-server re-serializes it.
    let request = if request.is_object() {
        conformance::as_policy_server_sends(&request).unwrap_or_else(|e| {
            errors.push(InputError::new(
                "request",
                format!("policy-server would refuse this AdmissionReview: {e}"),
            ));
            Value::Null
        })
    } else {
        request
    };

    let settings = match parse_document("settings", &input.settings) {
        Ok(Value::Null) => json!({}),
        Ok(v) => v,
        Err(e) => {
            errors.push(e);
            Value::Null
        }
    };
    if let (Some(entry), true) = (entry, !settings.is_null()) {
        // policy-server validates settings once, at boot, and refuses to start
        // with invalid ones: so does the page.
        let payload = serde_json::to_vec(&settings).unwrap_or_default();
        let reply: Value =
            serde_json::from_slice(&(entry.validate_settings)(&payload)).unwrap_or(Value::Null);
        if reply.get("valid") != Some(&Value::Bool(true)) {
            let message = reply
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("invalid settings");
            errors.push(InputError::new("settings", message));
        }
    }

    let now = parse_now(&input.now).map_err(|e| errors.push(e)).ok();
    let context = parse_context(&input.context)
        .map_err(|e| errors.push(e))
        .ok();
    let mode = match input.policy_mode.as_str() {
        "monitor" => PolicyMode::Monitor,
        _ => PolicyMode::Protect,
    };

    // Deployed as the repository's ClusterAdmissionPolicy, as the corpus is.
    let deployed = entry.map(conformance::deployment::of);
    match (entry, now, context, deployed) {
        (Some(entry), Some(now), Some(context), Some(Ok(deployed))) if errors.is_empty() => {
            Ok(Prepared {
                entry,
                request,
                settings,
                now,
                context,
                options: ServerOptions {
                    policy_id: deployed.policy_id,
                    mode,
                    allowed_to_mutate: input
                        .allowed_to_mutate
                        .unwrap_or(deployed.allowed_to_mutate),
                    rejection_message: None,
                },
            })
        }
        (_, _, _, Some(Err(e))) => {
            errors.push(InputError::new("policy", e));
            Err(errors)
        }
        _ => Err(errors),
    }
}

fn yaml(value: &Value) -> String {
    serde_norway::to_string(value).unwrap_or_else(|_| value.to_string())
}

/// The page's evaluation: the AdmissionResponse and what explains it.
pub fn run(input: &Input) -> Value {
    let prepared = match prepare(input) {
        Ok(p) => p,
        Err(errors) => return json!({"ok": false, "errors": errors}),
    };
    let response = prepared.respond();
    let mut out = Map::new();
    out.insert("ok".into(), json!(true));
    out.insert("errors".into(), json!([]));
    out.insert("now".into(), json!(prepared.now.to_string()));
    out.insert("request".into(), prepared.request.clone());
    match decoded_patch(&response) {
        Ok(patch) if !patch.is_empty() => {
            let original = prepared
                .request
                .get("object")
                .cloned()
                .unwrap_or(Value::Null);
            let mut patched = original.clone();
            let applied = serde_json::from_value::<json_patch::Patch>(Value::Array(patch.clone()))
                .map_err(|e| e.to_string())
                .and_then(|p| json_patch::patch(&mut patched, &p).map_err(|e| e.to_string()));
            out.insert("patch".into(), Value::Array(patch));
            out.insert("original".into(), json!(yaml(&original)));
            match applied {
                Ok(()) => out.insert("patched".into(), json!(yaml(&patched))),
                Err(e) => out.insert("patchError".into(), json!(e)),
            };
        }
        Ok(_) => {
            out.insert("patch".into(), json!([]));
        }
        Err(e) => {
            out.insert("patchError".into(), json!(e));
        }
    }
    out.insert("response".into(), response);
    Value::Object(out)
}

/// The first instant after `now`, within `horizon_minutes` and to the
/// second, at which the request would be allowed: stepping forward by
/// `step_minutes` for the first two days and by at least an hour after that
/// (so a month ahead costs about a thousand evaluations), then bisecting the
/// step where the verdict flips.
pub fn next_allowed(input: &Input, horizon_minutes: i64, step_minutes: i64) -> Value {
    let Ok(prepared) = prepare(input) else {
        return Value::Null;
    };
    let allowed = |t: Timestamp| prepared.respond_at(t).get("allowed") == Some(&Value::Bool(true));
    if allowed(prepared.now) {
        return json!({"at": prepared.now.to_string(), "already": true});
    }
    let start = prepared.now.as_second();
    let end = start.saturating_add(horizon_minutes.saturating_mul(60));
    let fine = step_minutes.max(1) * 60;
    let mut before = start;
    while before < end {
        let step = if before - start < 2 * 24 * 3600 {
            fine
        } else {
            fine.max(3600)
        };
        let after = before.saturating_add(step).min(end);
        let Ok(t) = Timestamp::from_second(after) else {
            break;
        };
        if allowed(t) {
            let (mut lo, mut hi) = (before, after);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                match Timestamp::from_second(mid) {
                    Ok(t) if allowed(t) => hi = mid,
                    Ok(_) => lo = mid,
                    Err(_) => break,
                }
            }
            let at = Timestamp::from_second(hi).unwrap_or(t);
            return json!({"at": at.to_string(), "already": false});
        }
        before = after;
    }
    json!({"at": null, "horizonMinutes": horizon_minutes})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_their_input() {
        let input = Input {
            policy: "flux-suspend".into(),
            review: "a: [1,\n".into(),
            settings: "{\"x\": }".into(),
            now: "yesterday".into(),
            ..Input::default()
        };
        let errors = prepare(&input).err().unwrap_or_default();
        let names: Vec<&str> = errors.iter().map(|e| e.input.as_str()).collect();
        assert!(names.contains(&"request"), "{errors:?}");
        assert!(names.contains(&"settings"), "{errors:?}");
        assert!(names.contains(&"now"), "{errors:?}");
    }

    #[test]
    fn plain_objects_in_the_context() {
        let c = parse_context(
            "- apiVersion: v1\n  kind: Namespace\n  metadata: {name: a}\n\
             - {apiVersion: v1, kind: Namespace, name: b, error: boom}\n",
        )
        .unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].name, "a");
        assert_eq!(c[1].error.as_deref(), Some("boom"));
    }
}

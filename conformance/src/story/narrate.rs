//! A story told step by step: for each request, the object as stored before
//! it, the request, and the verdict (for `devtools stories --verbose`).

use serde_json::Value;

use super::run::{RequestRun, StoryRun};

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// One line naming a request: operation, object, user and field manager.
pub fn request_line(request: &Value) -> String {
    let subject = match request.get("object") {
        Some(o) if o.is_object() => o,
        _ => request.get("oldObject").unwrap_or(&Value::Null),
    };
    let ns = text(subject, "/metadata/namespace");
    let name = text(subject, "/metadata/name");
    let manager = text(request, "/options/fieldManager");
    format!(
        "{}{} {} {}{}{} by {}{}",
        text(request, "/operation"),
        if request.get("dryRun") == Some(&Value::Bool(true)) {
            " (dry run)"
        } else {
            ""
        },
        text(subject, "/kind"),
        ns,
        if ns.is_empty() { "" } else { "/" },
        name,
        text(request, "/userInfo/username"),
        if manager.is_empty() {
            String::new()
        } else {
            format!(" as {manager}")
        },
    )
}

/// The verdict in one line, with its message, warnings and patch.
pub fn verdict_line(r: &RequestRun) -> String {
    if let Some(why) = r.response.get(crate::NO_ANSWER).and_then(Value::as_str) {
        return format!("no answer: {why}");
    }
    let mut line = if r.allowed {
        "allowed".to_string()
    } else {
        "REFUSED".to_string()
    };
    let message = text(&r.response, "/status/message");
    if !message.is_empty() {
        line.push_str(&format!(": {message}"));
    }
    if let Ok(patch) = crate::response::decoded_patch(&r.response) {
        if !patch.is_empty() {
            line.push_str(&format!("; patch {}", Value::Array(patch)));
        }
    }
    for w in r
        .response
        .get("warnings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        line.push_str(&format!("\n        warning: {}", w.as_str().unwrap_or("")));
    }
    line
}

/// The stored object the request is about, before it (`absent` when new).
fn before(r: &RequestRun) -> String {
    let subject = match r.request.get("object") {
        Some(o) if o.is_object() => o,
        _ => r.request.get("oldObject").unwrap_or(&Value::Null),
    };
    let same = |o: &&Value| {
        ["/kind", "/metadata/namespace", "/metadata/name"]
            .iter()
            .all(|p| o.pointer(p) == subject.pointer(p))
    };
    match r.state.iter().find(same) {
        None => "absent".to_string(),
        Some(o) => {
            let mut shown = o.clone();
            if let Some(meta) = shown.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("managedFields");
            }
            serde_json::to_string(&shown).unwrap_or_default()
        }
    }
}

impl StoryRun {
    /// The story step by step.
    pub fn narrate(&self) -> String {
        let mut out = String::new();
        for (n, step) in self.steps.iter().enumerate() {
            out.push_str(&format!(
                "  {}. {} ({})\n",
                n + 1,
                step.name,
                guard_core::rfc3339::format(step.now)
            ));
            if let Some(e) = &step.error {
                out.push_str(&format!("     cannot be carried out: {e}\n"));
            }
            for r in &step.requests {
                out.push_str(&format!("     stored:  {}\n", before(r)));
                out.push_str(&format!("     request: {}\n", request_line(&r.request)));
                out.push_str(&format!("     verdict: {}\n", verdict_line(r)));
            }
        }
        out
    }
}

/// The run as JSON, for the playground and its parity test: per step its
/// name, clock, error and requests (state before, request, reply, verdict
/// line, problems), then the end state, the end problems and `passed`.
pub fn to_json(run: &StoryRun) -> Value {
    let steps: Vec<Value> = run
        .steps
        .iter()
        .map(|s| {
            let requests: Vec<Value> = s
                .requests
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "state": r.state, "request": r.request, "response": r.response,
                        "allowed": r.allowed, "problems": r.problems,
                        "summary": request_line(&r.request), "verdict": verdict_line(r),
                    })
                })
                .collect();
            serde_json::json!({"name": s.name, "now": guard_core::rfc3339::format(s.now),
                               "error": s.error, "requests": requests})
        })
        .collect();
    serde_json::json!({"id": run.id, "steps": steps, "state": run.state,
                       "endProblems": run.end_problems, "failures": run.failures(),
                       "passed": run.passed()})
}

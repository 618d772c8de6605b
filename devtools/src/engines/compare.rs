//! The fields of two AdmissionResponses that reach a user, compared one by one.

use base64::Engine as _;
use serde_json::Value;

/// What one engine answered for one case.
#[derive(Debug, Clone)]
pub enum Answer {
    Response(Value),
    /// No answer before kube-apiserver's webhook timeout (policy-server's
    /// refused LIST, `conformance::NoAnswer`).
    NoAnswer(String),
    /// No AdmissionResponse: policy-server's HTTP status, or kwctl's failure
    /// (no status), with what it said.
    Refused {
        status: Option<u16>,
        detail: String,
    },
}

impl Answer {
    fn summary(&self) -> String {
        match self {
            Answer::Response(r) => format!("an AdmissionResponse {r}"),
            Answer::NoAnswer(why) => format!("no answer ({why})"),
            Answer::Refused {
                status: Some(s),
                detail,
            } => format!("HTTP {s}: {detail}"),
            Answer::Refused {
                status: None,
                detail,
            } => format!("a failure: {detail}"),
        }
    }
}

/// Where `engine` differs from `reference`; empty when identical.
pub fn differences(reference: &Answer, engine: &Answer) -> Vec<String> {
    match (reference, engine) {
        (Answer::Response(a), Answer::Response(b)) => response_differences(a, b),
        (Answer::NoAnswer(_), Answer::NoAnswer(_)) => Vec::new(),
        // kwctl reports no status; any failure matches a failure there.
        (Answer::Refused { status: a, .. }, Answer::Refused { status: b, .. })
            if a.is_none() || b.is_none() || a == b =>
        {
            Vec::new()
        }
        _ => vec![format!(
            "harness gave {}; the engine gave {}",
            reference.summary(),
            engine.summary()
        )],
    }
}

const FIELDS: [(&str, &str); 6] = [
    ("allowed", "/allowed"),
    ("status.message", "/status/message"),
    ("status.code", "/status/code"),
    ("warnings", "/warnings"),
    ("auditAnnotations", "/auditAnnotations"),
    ("patchType", "/patchType"),
];

fn response_differences(a: &Value, b: &Value) -> Vec<String> {
    let mut out: Vec<String> = FIELDS
        .iter()
        .filter_map(|(name, pointer)| {
            let (x, y) = (field(a, pointer), field(b, pointer));
            (x != y).then(|| format!("{name}: harness {x}, engine {y}"))
        })
        .collect();
    let (x, y) = (decoded_patch(a), decoded_patch(b));
    if x != y {
        out.push(format!("patch: harness {x}, engine {y}"));
    }
    out
}

/// A field's value, with `null` and an empty list or map counted as absent
/// (policy-server serializes an absent list as `null`, kwctl omits it).
fn field(response: &Value, pointer: &str) -> Value {
    match response.pointer(pointer) {
        None | Some(Value::Null) => Value::Null,
        Some(Value::Array(a)) if a.is_empty() => Value::Null,
        Some(Value::Object(o)) if o.is_empty() => Value::Null,
        Some(v) => v.clone(),
    }
}

/// The JSONPatch, decoded from base64; a patch that does not decode is kept
/// as its text so that it still compares.
fn decoded_patch(response: &Value) -> Value {
    let Some(text) = response.get("patch").and_then(Value::as_str) else {
        return Value::Null;
    };
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_else(|| Value::String(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn same_fields_in_another_encoding_are_identical() {
        let patch = |p: &str| base64::engine::general_purpose::STANDARD.encode(p);
        let a = json!({"uid": "1", "allowed": true, "warnings": null,
            "patchType": "JSONPatch", "patch": patch(r#"[{"op":"remove","path":"/a"}]"#)});
        let b = json!({"uid": "1", "allowed": true,
            "patchType": "JSONPatch", "patch": patch(r#"[ {"path":"/a", "op":"remove"} ]"#)});
        assert!(differences(&Answer::Response(a), &Answer::Response(b)).is_empty());
    }

    #[test]
    fn a_different_message_or_warning_is_reported_by_field() {
        let a =
            json!({"allowed": false, "status": {"message": "no", "code": 400}, "warnings": ["w"]});
        let b = json!({"allowed": false, "status": {"message": "no!", "code": 400}});
        let found = differences(&Answer::Response(a), &Answer::Response(b));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("status.message: "));
        assert!(found[1].starts_with("warnings: "));
    }

    #[test]
    fn a_refusal_is_not_a_response() {
        let a = Answer::Refused {
            status: Some(500),
            detail: "trap".into(),
        };
        let b = Answer::Response(json!({"allowed": true}));
        assert_eq!(differences(&a, &b).len(), 1);
        let kwctl = Answer::Refused {
            status: None,
            detail: "exit 1".into(),
        };
        assert!(differences(&a, &kwctl).is_empty());
    }

    #[test]
    fn no_answer_matches_only_no_answer() {
        let silent = Answer::NoAnswer("the LIST was refused".into());
        let timed_out = Answer::NoAnswer("no answer within 10s".into());
        assert!(differences(&silent, &timed_out).is_empty());
        let refused = Answer::Refused {
            status: None,
            detail: "exit 1".into(),
        };
        assert_eq!(differences(&silent, &refused).len(), 1);
        let response = Answer::Response(json!({"allowed": false}));
        assert_eq!(differences(&silent, &response).len(), 1);
    }
}

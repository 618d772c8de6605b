//! Checking a case's expectations against an AdmissionResponse.

use regex_lite::Regex;
use serde_json::Value;

use crate::case::Expect;
use crate::response::decoded_patch;

fn matches(pattern: &str, text: &str) -> Result<bool, String> {
    Regex::new(pattern)
        .map(|re| re.is_match(text))
        .map_err(|e| format!("bad expectation pattern {pattern:?}: {e}"))
}

/// Every way `response` (a reply in [`crate::Reply::to_json`]'s form)
/// differs from `expect`; empty when it conforms.
#[expect(
    clippy::too_many_lines,
    reason = "one comparison per field of an expectation, in the order a case writes them"
)]
pub fn check(expect: &Expect, response: &Value) -> Vec<String> {
    let no_answer = response.get(crate::NO_ANSWER).and_then(Value::as_str);
    match (&expect.no_answer, no_answer) {
        (Some(pattern), Some(why)) => {
            return match matches(pattern, why) {
                Ok(true) => Vec::new(),
                Ok(false) => vec![format!("no answer, but {why:?} does not match /{pattern}/")],
                Err(e) => vec![e],
            }
        }
        (Some(_), None) => {
            return vec![format!(
                "expected no answer from policy-server, got the AdmissionResponse {response}"
            )]
        }
        (None, Some(why)) => return vec![format!("expected an AdmissionResponse: {why}")],
        (None, None) => {}
    }
    let mut problems = Vec::new();
    let mut fail = |p: String| problems.push(p);
    let allowed = response
        .get("allowed")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let message = response
        .pointer("/status/message")
        .and_then(Value::as_str)
        .unwrap_or("");
    if allowed != expect.allowed {
        fail(format!(
            "allowed is {allowed}, expected {} (message: {message:?})",
            expect.allowed
        ));
    }
    if let Some(code) = expect.code {
        let got = response.pointer("/status/code").and_then(Value::as_u64);
        if got != Some(u64::from(code)) {
            fail(format!("code is {got:?}, expected {code}"));
        }
    }
    if let Some(pattern) = &expect.message {
        match matches(pattern, message) {
            Ok(true) => {}
            Ok(false) => fail(format!("message {message:?} does not match /{pattern}/")),
            Err(e) => fail(e),
        }
    }
    let warnings: Vec<&str> = response
        .get("warnings")
        .and_then(Value::as_array)
        .map(|w| w.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let owned: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    for problem in crate::apiserver::warning_problems(&owned) {
        fail(problem);
    }
    if let Some(expected) = &expect.warnings {
        if expected.is_empty() && !warnings.is_empty() {
            fail(format!("expected no warnings, got {warnings:?}"));
        }
        for pattern in expected {
            let mut found = false;
            for w in &warnings {
                match matches(pattern, w) {
                    Ok(true) => found = true,
                    Ok(false) => {}
                    Err(e) => {
                        fail(e);
                        found = true;
                        break;
                    }
                }
            }
            if !found {
                fail(format!(
                    "no warning matches /{pattern}/; warnings: {warnings:?}"
                ));
            }
        }
    }
    if let Some(expected) = &expect.patch {
        match decoded_patch(response) {
            Ok(got) if got == *expected => {}
            Ok(got) => fail(format!(
                "patch is {}, expected {}",
                Value::Array(got),
                Value::Array(expected.clone())
            )),
            Err(e) => fail(e),
        }
    }
    if let Some(expected) = &expect.audit_annotations {
        let got = response.get("auditAnnotations");
        for (key, pattern) in expected {
            match got.and_then(|a| a.get(key)).and_then(Value::as_str) {
                None => fail(format!("no audit annotation {key:?}; got {got:?}")),
                Some(v) => match matches(pattern, v) {
                    Ok(true) => {}
                    Ok(false) => fail(format!(
                        "audit annotation {key}={v:?} does not match /{pattern}/"
                    )),
                    Err(e) => fail(e),
                },
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn expect(yaml: &str) -> Result<Expect, String> {
        serde_norway::from_str(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn no_answer_is_its_own_expectation() {
        let silent = expect("noAnswer: LIST of v1/ConfigMap").unwrap();
        let none = json!({"noAnswer": "policy-server never answers: kube-apiserver refused the LIST of v1/ConfigMap (403 no)"});
        assert!(check(&silent, &none).is_empty());
        let response = json!({"uid": "1", "allowed": false, "status": {"message": "no"}});
        assert_eq!(check(&silent, &response).len(), 1);
        let answered = expect("allowed: false").unwrap();
        assert!(check(&answered, &response).is_empty());
        let problems = check(&answered, &none);
        assert!(
            problems[0].starts_with("expected an AdmissionResponse"),
            "{problems:?}"
        );
        assert!(expect("noAnswer: x\nallowed: false").is_err());
        assert!(expect("noAnswer: x\nmessage: y").is_err());
        assert!(expect("message: y").is_err());
    }
}

//! The reconcile-guard policies in the browser.
//!
//! A thin wasm-bindgen layer (in the manner of `cedar-wasm`) over the very
//! evaluators policy-server runs: nothing here judges a request. The page gets
//! the catalogue (policies, settings docs and defaults, the corpus as an
//! example gallery, generated at build time by `build.rs`) and evaluates
//! through [`conformance::admission_response`], the one implementation of
//! policy-server's reply that the harness and the native tests use too.
//!
//! Every export takes and returns strings (JSON where structured), so the
//! JavaScript side stays small and nothing crosses the boundary as HTML.

pub mod compose;
pub mod engine;
pub mod input;

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use crate::engine::Input;

const CATALOGUE: &str = include_str!(concat!(env!("OUT_DIR"), "/catalogue.json"));

/// The policies, their settings (docs and defaults) and their examples, as JSON.
/// A policy's generated default settings are checked against the policy's own
/// `validate_settings`; should they ever be refused, the page starts from `{}`.
#[wasm_bindgen]
pub fn catalogue() -> String {
    let mut catalogue: Value = serde_json::from_str(CATALOGUE).unwrap_or(json!({"policies": []}));
    if let Some(policies) = catalogue.get_mut("policies").and_then(Value::as_array_mut) {
        // The page lists them in the catalog's order.
        policies.sort_by_key(|p| {
            let name = p.get("name").and_then(Value::as_str).unwrap_or("");
            catalog::names().position(|n| n == name)
        });
        for policy in policies {
            let name = policy
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let text = policy
                .get("defaultSettings")
                .and_then(Value::as_str)
                .unwrap_or("{}");
            let valid = engine::entry(&name).is_some_and(|entry| {
                input::parse_document("settings", text).is_ok_and(|v| {
                    let v = if v.is_null() { json!({}) } else { v };
                    let reply =
                        (entry.validate_settings)(&serde_json::to_vec(&v).unwrap_or_default());
                    serde_json::from_slice::<Value>(&reply)
                        .ok()
                        .and_then(|r| r.get("valid").cloned())
                        == Some(Value::Bool(true))
                })
            });
            if !valid {
                policy["defaultSettings"] =
                    json!("# Every setting left out takes its default.\n{}\n");
            }
        }
    }
    catalogue.to_string()
}

/// `evaluate(policy, request, settings, now, context)`: the AdmissionResponse
/// policy-server would send, as JSON, byte for byte the harness' (`reconcile-guard
/// run`). `request` is an AdmissionReview or AdmissionRequest, `settings` and
/// `context` YAML or JSON, `now` an RFC 3339 instant. Unreadable inputs and
/// settings the policy refuses throw, with the input, line and column.
#[wasm_bindgen]
pub fn evaluate(
    policy: &str,
    request: &str,
    settings: &str,
    now: &str,
    context: &str,
) -> Result<String, JsError> {
    let input = Input {
        policy: policy.into(),
        mode: "review".into(),
        review: request.into(),
        settings: settings.into(),
        now: now.into(),
        context: context.into(),
        ..Input::default()
    };
    match engine::prepare(&input) {
        Ok(prepared) => Ok(prepared.respond().to_string()),
        Err(errors) => {
            let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
            Err(JsError::new(&text.join("\n")))
        }
    }
}

/// The page's evaluation: `input` is the page state as JSON ([`Input`]); the
/// result holds `ok`, located `errors`, the `request` sent, the `response`,
/// the decoded `patch` and the object before and after it as YAML.
#[wasm_bindgen]
pub fn run(input: &str) -> String {
    match serde_json::from_str::<Input>(input) {
        Ok(input) => engine::run(&input).to_string(),
        Err(e) => json!({"ok": false, "errors": [{"input": "page", "message": e.to_string()}]})
            .to_string(),
    }
}

/// When the request would first be allowed, searching `horizon_hours` ahead
/// in steps of `step_minutes`: `{"at": instant}`, `{"at": null}` when never
/// within the horizon, `null` when the inputs are unreadable.
#[wasm_bindgen]
pub fn next_allowed(input: &str, horizon_hours: u32, step_minutes: u32) -> String {
    match serde_json::from_str::<Input>(input) {
        Ok(input) => engine::next_allowed(
            &input,
            i64::from(horizon_hours) * 60,
            i64::from(step_minutes),
        )
        .to_string(),
        Err(_) => "null".into(),
    }
}

/// How a response differs from a corpus case's `expect` (JSON list of
/// problems, empty when it conforms), checked by the conformance crate.
#[wasm_bindgen]
pub fn check(expect: &str, response: &str) -> String {
    let parsed = serde_json::from_str::<conformance::Expect>(expect)
        .map_err(|e| e.to_string())
        .and_then(|x| {
            serde_json::from_str::<Value>(response)
                .map(|r| (x, r))
                .map_err(|e| e.to_string())
        });
    match parsed {
        Ok((expect, response)) => json!(conformance::expect::check(&expect, &response)).to_string(),
        Err(e) => json!([format!("unreadable: {e}")]).to_string(),
    }
}

/// A YAML or JSON document as JSON: `{"value": ...}` or `{"error": {input, line, column, message}}`.
#[wasm_bindgen]
pub fn parse(name: &str, text: &str) -> String {
    match input::parse_document(name, text) {
        Ok(v) => json!({"value": v}).to_string(),
        Err(e) => json!({"error": e}).to_string(),
    }
}

/// A JSON document written as YAML.
#[wasm_bindgen]
pub fn to_yaml(json_text: &str) -> String {
    match serde_json::from_str::<Value>(json_text) {
        Ok(Value::Null) => String::new(),
        Ok(v) => serde_norway::to_string(&v).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// The instant of a wall-clock time (`2026-11-20T17:00`) in a time zone
/// (`Europe/Berlin`), as RFC 3339 UTC; an empty string when either is invalid.
#[wasm_bindgen]
pub fn instant(local: &str, zone: &str) -> String {
    let Ok(dt) = local.trim().parse::<jiff::civil::DateTime>() else {
        return String::new();
    };
    dt.in_tz(zone.trim())
        .map(|z| z.timestamp().to_string())
        .unwrap_or_default()
}

/// An instant in a time zone: `{"local": "2026-11-20T17:00:00", "text": "Fri 2026-11-20 17:00:00 CET (+01:00)"}`,
/// or `null` when either is invalid.
#[wasm_bindgen]
pub fn describe(instant: &str, zone: &str) -> String {
    let Ok(ts) = instant.trim().parse::<jiff::Timestamp>() else {
        return "null".into();
    };
    let Ok(z) = ts.in_tz(zone.trim()) else {
        return "null".into();
    };
    json!({
        "local": z.strftime("%Y-%m-%dT%H:%M:%S").to_string(),
        "text": z.strftime("%a %Y-%m-%d %H:%M:%S %Z (%:z)").to_string(),
    })
    .to_string()
}

/// The IANA time zone names the module knows, as a JSON list.
#[wasm_bindgen]
pub fn time_zones() -> String {
    let mut names: Vec<String> = jiff::tz::db().available().map(|n| n.to_string()).collect();
    names.sort();
    json!(names).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every corpus case, evaluated through the page's entry point from the
    /// catalogue's YAML text, gives exactly what the conformance crate's
    /// native evaluation gives, and meets the case's expectations.
    #[test]
    fn catalogue_examples_match_native_evaluation() {
        let catalogue: Value = serde_json::from_str(&catalogue()).unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cases");
        let mut count = 0;
        for policy in catalogue["policies"].as_array().unwrap() {
            let name = policy["name"].as_str().unwrap();
            for example in policy["examples"].as_array().unwrap() {
                let id = example["id"].as_str().unwrap();
                let case =
                    conformance::case::load_case(&root.join(name).join(format!("{id}.yaml")))
                        .unwrap();
                let native =
                    conformance::evaluate_native(engine::entry(name).unwrap(), &case).unwrap();
                let input = json!({
                    "policy": name, "mode": "review",
                    "review": example["request"], "settings": example["settings"],
                    "now": example["now"], "context": example["context"],
                    "policyMode": example["policyMode"], "allowedToMutate": example["allowedToMutate"],
                });
                let out: Value = serde_json::from_str(&run(&input.to_string())).unwrap();
                assert_eq!(out["response"], native, "{name}/{id}: {out}");
                let problems: Value = serde_json::from_str(&check(
                    &example["expect"].to_string(),
                    &native.to_string(),
                ))
                .unwrap();
                assert_eq!(problems, json!([]), "{name}/{id}");
                count += 1;
            }
        }
        assert!(count > 0);
    }

    #[test]
    fn default_settings_are_valid() {
        let catalogue: Value = serde_json::from_str(CATALOGUE).unwrap();
        for policy in catalogue["policies"].as_array().unwrap() {
            let name = policy["name"].as_str().unwrap();
            let text = policy["defaultSettings"].as_str().unwrap();
            let v = input::parse_document("settings", text).unwrap();
            let v = if v.is_null() { json!({}) } else { v };
            let reply =
                (engine::entry(name).unwrap().validate_settings)(&serde_json::to_vec(&v).unwrap());
            assert!(
                String::from_utf8_lossy(&reply).contains("\"valid\":true"),
                "{name}: {text}"
            );
        }
    }

    #[test]
    fn time_zones_and_instants() {
        assert_eq!(
            instant("2026-11-20T17:00", "Europe/Berlin"),
            "2026-11-20T16:00:00Z"
        );
        assert_eq!(instant("2026-11-20T17:00", "Nowhere/Atlantis"), "");
        let d: Value =
            serde_json::from_str(&describe("2026-11-20T16:00:00Z", "Europe/Berlin")).unwrap();
        assert_eq!(d["local"], "2026-11-20T17:00:00");
        assert!(time_zones().contains("Europe/Berlin"));
    }
}

/// `story(id, text)`: runs a story (`tests/stories/<policy>/<story>.yaml`,
/// `id` is `<policy>/<story>`) with the policy compiled into the page, as
/// the native tests and `devtools stories` run it: every step with the state
/// before it, the request sent and the verdict, then the end state, as JSON
/// (`conformance::story::narrate::to_json`). An unreadable story throws.
#[wasm_bindgen]
pub fn story(id: &str, text: &str) -> Result<String, JsError> {
    let story = conformance::story::parse_story(text, id).map_err(|e| JsError::new(&e))?;
    let policy = id.split('/').next().unwrap_or("");
    let entry =
        engine::entry(policy).ok_or_else(|| JsError::new(&format!("no policy named {policy}")))?;
    let mut evaluate = |case: &conformance::Case| conformance::evaluate_native(entry, case);
    let run =
        conformance::story::run(&story, entry, &mut evaluate).map_err(|e| JsError::new(&e))?;
    Ok(conformance::story::narrate::to_json(&run).to_string())
}

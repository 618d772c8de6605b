//! The worst case the settings and kube-apiserver allow, as `make bench` times it.
//!
//! `target/bench/worst-case/flux-suspend-worst-case.yaml` (conformance::worst_case) is built here from the limits
//! the settings validation enforces (`flux_suspend::settings::limits`) and
//! the size kube-apiserver admits, along the policy's most expensive path: an
//! UPDATE that suspends a Kustomization with a reason, in mirror mode with
//! `recordSuspender`, so that the reason is read in full (`maxReasonLength`,
//! `minReasonLength`, every placeholder, `reasonPattern`, `until=`,
//! `maxDuration`) and the object is edited twice (`spec.suspend` and the
//! suspender annotation, which expands the whole annotation map). The test
//! writes the case for `make bench` and checks the verdict it records.
//!
//! Bounds this case relies on (`conformance::worst_case`, each cited there):
//!
//! - The two objects share policy-server's 2 MiB AdmissionReview limit
//!   ([`REVIEW_LIMIT`]), tighter than kube-apiserver's 3 MiB write limit.
//! - A stored object's annotations hold at most 256 KiB
//!   ([`TOTAL_ANNOTATION_SIZE_LIMIT_B`]); validation runs after mutating
//!   admission, so the new object flux-suspend (a mutating policy) sees may
//!   carry more, up to its share of the review.
//! - Settings lists the validation does not bound (`placeholderReasons`,
//!   `suspenders`, `resumers`, `reconcilers`) are given [`LIST_ENTRIES`]
//!   entries each; they are read one by one, and only the
//!   ClusterAdmissionPolicy's own size bounds them.
//! - `reasonPattern` is as long as accepted, of alternatives that all match
//!   every character of the reason; when the validation shares one matching
//!   budget between the pattern's program size and `maxReasonLength` (so that
//!   counted repetitions cannot make a short pattern cost more than it), the
//!   case takes the longest `maxReasonLength` it accepts beside that pattern,
//!   found by asking the validation itself.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

use conformance::worst_case::{
    self, HEADROOM, LIST_ENTRIES, REVIEW_LIMIT, TOTAL_ANNOTATION_SIZE_LIMIT_B,
};
use flux_suspend::settings::limits::*;
use flux_suspend::settings::SettingsError;
use guard_core::settings::SettingsError::Compile;
use serde_json::{json, Map, Value};

/// The share of policy-server's AdmissionReview limit for each of the request's two objects.
const OBJECT_BYTES: usize = REVIEW_LIMIT / 2;

const NOW: &str = "2026-11-20T10:00:00Z";
const UNTIL: &str = "until=2027-06-01T00:00:00Z";
const USER: &str = "alice@example.com";

/// The longest `maxReasonLength` the validation accepts beside
/// [`reason_pattern`]: the pattern's program size and the reason's length
/// share one matching budget, so the pattern sets how long a reason may be.
fn max_reason_length() -> usize {
    let accepted = |n: usize| {
        let probe = json!({"reasonPattern": reason_pattern(), "maxReasonLength": n,
                           "minReasonLength": 0});
        guard_core::settings::parse::<flux_suspend::Settings>(probe.to_string().as_bytes()).is_ok()
    };
    let (mut accepted_up_to, mut refused_from) = (0, MAX_ANNOTATION_BYTES + 1);
    while refused_from - accepted_up_to > 1 {
        let n = accepted_up_to + (refused_from - accepted_up_to) / 2;
        if accepted(n) {
            accepted_up_to = n;
        } else {
            refused_from = n;
        }
    }
    accepted_up_to
}

/// A ticket and words, then the expiry: `maxReasonLength` characters.
fn reason() -> String {
    let head = "INC-4711";
    let tail = format!(" {UNTIL}");
    let words: String = " abcdefghij"
        .chars()
        .cycle()
        .take(max_reason_length() - head.len() - tail.len())
        .collect();
    format!("{head}{words}{tail}")
}

/// The reason as the policy judges it: without `until=`.
fn reason_text() -> String {
    reason()
        .split_whitespace()
        .filter(|w| !w.starts_with("until="))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `MAX_PATTERN_LEN` bytes matching the whole reason, each character of it
/// against every one of as many alternatives as fit.
fn reason_pattern() -> String {
    let (head, alternative, tail) = ("^INC-[0-9]+(?:", "[a-z ]", ")*$");
    let fixed = head.len() + tail.len();
    let count = (MAX_PATTERN_LEN - fixed + 1) / (alternative.len() + 1);
    let mut alternatives = vec![alternative.to_string(); count];
    let spare = MAX_PATTERN_LEN - fixed - (count * (alternative.len() + 1) - 1);
    if let Some(first) = alternatives.first_mut() {
        *first = format!("[a-z {}]", "a".repeat(spare));
    }
    format!("{head}{}{tail}", alternatives.join("|"))
}

/// A placeholder as long as the reason, so that comparing them reads it all.
fn long_placeholder() -> String {
    let mut text = reason_text();
    text.pop();
    text.push('x');
    text
}

/// The longest annotation key accepted: a 253-byte prefix and a 63-byte name.
fn suspender_annotation() -> String {
    format!("{}/{}", "a".repeat(253), "b".repeat(63))
}

fn settings() -> Value {
    let visible = reason_text().chars().filter(|c| *c != ' ').count();
    let mut placeholders: Vec<String> = flux_suspend::settings::DEFAULT_PLACEHOLDERS
        .iter()
        .map(|p| p.to_string())
        .collect();
    placeholders.extend((placeholders.len()..LIST_ENTRIES - 1).map(|i| format!("placeholder-{i}")));
    placeholders.push(long_placeholder());
    let users = |who: &str| -> Vec<String> {
        (0..LIST_ENTRIES - 1)
            .map(|i| format!("{who}-{i}@example.com"))
            .chain([USER.to_string()])
            .collect()
    };
    let service_accounts: Vec<String> = (0..LIST_ENTRIES)
        .map(|i| format!("flux-system:controller-{i}"))
        .collect();
    json!({
        "mode": "mirror",
        "requireReason": true,
        "minReasonLength": visible,
        "maxReasonLength": max_reason_length(),
        "placeholderReasons": placeholders,
        "reasonPattern": reason_pattern(),
        "requireExpiry": true,
        "maxDuration": "8760h",
        "suspenders": {"users": users("suspender")},
        "resumers": {"users": users("resumer")},
        "reconcilers": {"serviceAccounts": service_accounts},
        "recordSuspender": true,
        "suspenderAnnotation": suspender_annotation(),
    })
}

/// The inventory a Kustomization that applied many objects records, to
/// bring the stored object to the request limit.
fn fill_inventory(object: &mut Value, budget: usize) {
    let entry = |i: usize| json!({"id": format!("apps_app-{i:06}_apps_Deployment"), "v": "v1"});
    let per_entry = worst_case::json_size(&entry(0)) + 1;
    let count = (budget - worst_case::json_size(object)) / per_entry;
    object["status"]["inventory"]["entries"] = Value::Array((0..count).map(entry).collect());
}

fn kustomization(annotations: Map<String, Value>, suspend: bool) -> Value {
    json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": "apps", "namespace": "flux-system",
            "uid": "3f9c2b6e-8a0d-4b7e-9c1a-5d2e7f4a6b10", "resourceVersion": "918273",
            "generation": 7, "creationTimestamp": "2026-09-01T08:00:00Z",
            "labels": {"kustomize.toolkit.fluxcd.io/name": "flux-system",
                       "kustomize.toolkit.fluxcd.io/namespace": "flux-system"},
            "annotations": annotations, "finalizers": ["finalizers.fluxcd.io"]},
        "spec": {"interval": "10m0s", "path": "./clusters/production/apps", "prune": true,
                 "wait": true, "timeout": "5m0s", "suspend": suspend,
                 "sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
        "status": {"observedGeneration": 7,
                   "lastAppliedRevision": "main@sha1:4f2a6c1d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49",
                   "inventory": {"entries": []}}})
}

/// The stored object: annotations within their validated limit, and an
/// inventory that brings it to the request limit.
fn old_object() -> Value {
    let mut old = kustomization(Map::new(), false);
    worst_case::fill_annotations(
        &mut old,
        'k',
        OBJECT_BYTES - HEADROOM,
        TOTAL_ANNOTATION_SIZE_LIMIT_B,
    );
    fill_inventory(&mut old, OBJECT_BYTES - HEADROOM);
    old
}

/// The object `kubectl annotate` sends: the stored annotations, the reason,
/// and as many more annotations as the request limit admits (mutating
/// admission runs before the annotation size is validated).
fn new_object() -> Value {
    let mut annotations = Map::new();
    annotations.insert(
        flux_suspend::SUSPEND_ANNOTATION.to_string(),
        json!(reason()),
    );
    let mut new = kustomization(annotations, false);
    worst_case::fill_annotations(&mut new, 'k', OBJECT_BYTES - HEADROOM, usize::MAX);
    new
}

fn case() -> Value {
    json!({
        "description": "The worst case the settings and kube-apiserver allow: a Kustomization suspended in mirror mode with recordSuspender, the reason as long as maxReasonLength and judged by every rule, the object at the request size limit with its annotations all edited",
        "now": NOW,
        "settings": settings(),
        "request": worst_case::review("kustomize.toolkit.fluxcd.io", "v1", "Kustomization", "kustomizations", json!({
            "uid": "5e0f3c1b-7a2d-4e8f-9b6c-1d2e3f4a5b6c",
            "name": "apps", "namespace": "flux-system", "operation": "UPDATE",
            "userInfo": {"username": USER, "uid": "5b1f6c0e-3c1a-4f7e-9d6b-1c2e3f4a5b60",
                "groups": ["sre", "system:authenticated"]},
            "object": new_object(),
            "oldObject": old_object(),
            "dryRun": false,
            "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl-annotate"}})),
        "expect": {"allowed": true,
            "warnings": ["^Kustomization flux-system/apps: suspended via annotation reconcile.fluxcd.io/suspended; spec.suspend: true mirrored",
                         "^Kustomization flux-system/apps is now suspended by spec.suspend: true and annotation reconcile.fluxcd.io/suspended \\(reason \"INC-4711 abcdefghij"]},
    })
}

#[test]
fn the_benchmarked_worst_case_uses_the_limits_the_settings_enforce() {
    let case = case();
    // The verdict it records is the policy's.
    worst_case::write_checked(&flux_suspend::ENTRY, &case).unwrap();

    // Every limit is reached, and the settings are accepted as they are.
    let s = &case["settings"];
    let longest = max_reason_length();
    assert_eq!(reason().chars().count(), longest);
    assert_eq!(s["maxReasonLength"], longest);
    assert_eq!(s["reasonPattern"].as_str().unwrap().len(), MAX_PATTERN_LEN);
    let parsed: flux_suspend::Settings =
        guard_core::settings::parse(s.to_string().as_bytes()).unwrap();
    assert!(parsed
        .reason_pattern
        .regex
        .unwrap()
        .is_match(&reason_text()));
    // One more of anything is refused.
    let mut longer = s.clone();
    longer["maxReasonLength"] = json!(longest + 1);
    let e = guard_core::settings::parse::<flux_suspend::Settings>(longer.to_string().as_bytes())
        .unwrap_err();
    // The pattern's program no longer fits its budget for the longer reasons.
    assert!(
        matches!(&e, Compile(b) if matches!(&**b, SettingsError::Pattern { refused, max_reason_length, .. }
            if *max_reason_length == longest + 1 && refused.limited_by_text_length())),
        "{e}"
    );
    let mut longer = s.clone();
    longer["reasonPattern"] = json!(format!("{}a", reason_pattern()));
    let e = guard_core::settings::parse::<flux_suspend::Settings>(longer.to_string().as_bytes())
        .unwrap_err();
    assert!(
        matches!(&e, Compile(b) if **b == SettingsError::PatternTooLong),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains(&format!("at most {MAX_PATTERN_LEN}")),
        "{e}"
    );
    let mut key = s.clone();
    key["suspenderAnnotation"] = json!(format!("{}/{}", "a".repeat(254), "b".repeat(63)));
    assert!(
        guard_core::settings::parse::<flux_suspend::Settings>(key.to_string().as_bytes()).is_err()
    );

    // Each object takes its share of the review; the stored one's
    // annotations are within their validated limit.
    let request = &case["request"]["request"];
    for which in ["object", "oldObject"] {
        worst_case::takes(&request[which], OBJECT_BYTES - HEADROOM)
            .map_err(|e| format!("{which}: {e}"))
            .unwrap();
    }
    worst_case::fills_annotations(&request["oldObject"], 16).unwrap();
}

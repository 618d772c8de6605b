//! The worst case the settings and kube-apiserver allow, as `make bench` times it.
//!
//! `target/bench/worst-case/flux-event-metadata-worst-case.yaml` (conformance::worst_case) is built here along the
//! policy's most expensive path: an UPDATE of a Kustomization that changes
//! every one of as many `event.toolkit.fluxcd.io/` annotations as
//! kube-apiserver admits, each checked against every settings list, with a
//! value pattern whose program is as large as the matching budget accepts,
//! and as many Alerts as the policy examines, each selecting the object
//! (after a few sources that do not) and setting keys it also sets, so that
//! every Alert key is a reported conflict. Every action that can warn warns:
//! a warning's text is built even when it is not shown. The test writes the
//! case for `make bench` and checks the verdict it records.
//!
//! Bounds this case relies on (`conformance::worst_case`, each cited there):
//!
//! - The two objects share policy-server's 2 MiB AdmissionReview limit
//!   ([`REVIEW_LIMIT`]), tighter than kube-apiserver's 3 MiB write limit.
//! - The annotations of an object hold at most 256 KiB
//!   ([`TOTAL_ANNOTATION_SIZE_LIMIT_B`]), checked before validating
//!   admission, so before flux-event-metadata. Labels have no total limit, so
//!   they fill each object to its share.
//! - `maxKeys` is at most [`MAX_KEYS`]; `maxValueLength` and the value
//!   patterns share one matching budget when the validation has one (the
//!   smaller the longest value, the larger a pattern's program), so the case
//!   takes the smallest `maxValueLength` and one pattern as large as the
//!   validation then accepts, found by asking it: its program is compiled
//!   for every request, whatever the values.
//! - Settings lists the validation does not bound are given [`LIST_ENTRIES`]
//!   entries each. What the cluster holds is not bounded by the request:
//!   [`ALERTS`] Alerts, the policy's own bound (`conflicts::MAX_ALERTS`,
//!   checked below), each of a few KiB.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

use conformance::worst_case::{
    self, HEADROOM, LIST_ENTRIES, MAX_REQUEST_BODY_BYTES, REVIEW_LIMIT,
    TOTAL_ANNOTATION_SIZE_LIMIT_B,
};
use serde_json::{json, Map, Value};

/// The share of policy-server's AdmissionReview limit for each of the request's two objects.
const OBJECT_BYTES: usize = REVIEW_LIMIT / 2;
/// The largest `maxKeys` accepted (checked below).
const MAX_KEYS: usize = 1000;
/// Alerts the policy examines at most (checked below).
const ALERTS: usize = 4096;
/// Labels an Alert's last source matches on.
const MATCH_LABELS: usize = 16;
/// `spec.eventMetadata` keys of each Alert, all set by the object too.
const ALERT_KEYS: usize = 16;

const PREFIX: &str = "event.toolkit.fluxcd.io/";
const NOW: &str = "2026-11-20T10:00:00Z";
const PATTERN_KEY: &str = "build";

fn parse(settings: &Value) -> Result<flux_event_metadata::Settings, String> {
    guard_core::settings::parse(settings.to_string().as_bytes()).map_err(|e| e.to_string())
}

/// The smallest `maxValueLength`: the one that leaves the pattern the
/// largest program.
const MAX_VALUE_LENGTH: usize = 1;

fn pattern(n: usize) -> String {
    format!("[a-z0-9 ]{{0,{n}}}")
}

/// The largest `n` for which the validation accepts `[a-z0-9 ]{0,n}`
/// beside `maxValueLength: 1`.
fn pattern_repeats() -> usize {
    let accepted = |n: usize| {
        parse(&json!({"maxValueLength": MAX_VALUE_LENGTH,
                      "valuePatterns": {PATTERN_KEY: pattern(n)}}))
        .is_ok()
    };
    let (mut accepted_up_to, mut refused_from) = (0, 1 << 24);
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

/// The keys the object sets: the ones with a rule of their own, then as many
/// short ones as the annotation limit admits beside their values.
fn keys() -> Vec<String> {
    let mut keys: Vec<String> = [
        "commit",
        "change_request",
        "revision",
        "summary",
        PATTERN_KEY,
    ]
    .map(String::from)
    .to_vec();
    let mut bytes: usize = keys.iter().map(|k| PREFIX.len() + k.len() + 1).sum();
    let entry = PREFIX.len() + "k0000".len() + 1;
    let mut i = 0;
    while bytes + entry <= TOTAL_ANNOTATION_SIZE_LIMIT_B {
        keys.push(format!("k{i:04}"));
        bytes += entry;
        i += 1;
    }
    keys
}

fn annotations(value: &str) -> Map<String, Value> {
    keys()
        .into_iter()
        .map(|k| (format!("{PREFIX}{k}"), json!(value)))
        .collect()
}

fn match_labels() -> Map<String, Value> {
    (0..MATCH_LABELS)
        .map(|i| (format!("team.example.com/label-{i:02}"), json!("payments")))
        .collect()
}

fn settings() -> Value {
    let list = |what: &str| -> Vec<String> {
        (0..LIST_ENTRIES)
            .map(|i| format!("{what}-{i:04}"))
            .collect()
    };
    // Keys the object sets, so that each lookup in them may succeed late.
    let allowed: Vec<String> = (0..LIST_ENTRIES).map(|i| format!("k{i:04}")).collect();
    let (kind_required, all_required) = allowed.split_at(LIST_ENTRIES / 2);
    let users: Vec<String> = (0..LIST_ENTRIES)
        .map(|i| format!("release-bot-{i:04}@example.com"))
        .collect();
    let controllers: Vec<String> = (0..LIST_ENTRIES)
        .map(|i| format!("flux-system:controller-{i:04}"))
        .collect();
    json!({
        "controllerKeys": "warn",
        "routingKeyFormat": "warn",
        "routingKeySetters": {"users": users},
        "deniedKeys": list("denied"),
        "allowedKeys": allowed,
        "requiredKeys": {"Kustomization": kind_required, "*": all_required},
        "valuePatterns": {PATTERN_KEY: pattern(pattern_repeats())},
        "maxValueLength": MAX_VALUE_LENGTH,
        "maxKeys": MAX_KEYS,
        "allowNewlines": false,
        "reservedKeys": list("reserved"),
        "alertConflicts": "warn",
        "alertLookupFailure": "warn",
        "inertAnnotations": "warn",
        "deprecatedSummary": "warn",
        "fluxControllers": {"serviceAccounts": controllers},
        "noCrossNamespaceRefs": false,
    })
}

fn kustomization(generation: u32, value: &str) -> Value {
    let mut object = json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": "apps", "namespace": "flux-system",
            "uid": "3f9c2b6e-8a0d-4b7e-9c1a-5d2e7f4a6b10", "resourceVersion": "918273",
            "generation": generation, "creationTimestamp": "2026-09-01T08:00:00Z",
            "labels": match_labels(), "annotations": annotations(value),
            "finalizers": ["finalizers.fluxcd.io"]},
        "spec": {"interval": "10m0s", "path": "./clusters/production/apps", "prune": true,
                 "sourceRef": {"kind": "GitRepository", "name": "flux-system"}}});
    worst_case::fill_labels(&mut object, OBJECT_BYTES - HEADROOM);
    object
}

/// An Alert that selects the object by its last source, with a summary and
/// `ALERT_KEYS` metadata keys the object also sets.
fn alert(i: usize, keys: &[String]) -> Value {
    let metadata: Map<String, Value> = (0..ALERT_KEYS)
        .filter_map(|j| keys.get((i * ALERT_KEYS + j) % keys.len()))
        .map(|k| (k.clone(), json!("from-the-alert")))
        .collect();
    let name = format!("alert-{i:04}");
    json!({"apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Alert",
        "namespace": "flux-system", "name": name, "object": {
        "apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Alert",
        "metadata": {"name": name, "namespace": "flux-system",
                     "uid": format!("9d8c7b6a-5f4e-4d3c-8b2a-{i:012}"), "resourceVersion": "7700",
                     "generation": 1},
        "spec": {"providerRef": {"name": "slack"}, "summary": "production cluster",
                 "eventSeverity": "info",
                 "eventSources": [
                     {"kind": "GitRepository", "name": "*"},
                     {"kind": "HelmRelease", "name": "*"},
                     {"kind": "Kustomization", "name": "infrastructure"},
                     {"kind": "Kustomization", "name": "*", "matchLabels": match_labels()}],
                 "eventMetadata": metadata}}})
}

fn case() -> Value {
    let keys = keys();
    let context: Vec<Value> = (0..ALERTS).map(|i| alert(i, &keys)).collect();
    json!({
        "description": "The worst case the settings and kube-apiserver allow: an UPDATE changing as many event annotations as kube-apiserver admits on an object at the request size limit, each checked against every settings list, a value pattern as large as the matching budget accepts, and as many Alerts as the policy examines, each selecting the object and overriding its keys",
        "now": NOW,
        "settings": settings(),
        "request": worst_case::review("kustomize.toolkit.fluxcd.io", "v1", "Kustomization", "kustomizations", json!({
            "uid": "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d",
            "name": "apps", "namespace": "flux-system", "operation": "UPDATE",
            "userInfo": {"username": "alice@example.com", "uid": "c1f0",
                "groups": ["sre", "system:authenticated"]},
            "object": kustomization(8, "a"),
            "oldObject": kustomization(7, "b"),
            "dryRun": false,
            "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl-client-side-apply"}})),
        "context": context,
        "expect": {"allowed": false, "code": 400,
            "message": "^\\d+ problems with the event metadata of Kustomization flux-system/apps: \\(1\\) "},
    })
}

#[test]
fn the_benchmarked_worst_case_uses_the_limits_the_settings_enforce() {
    let case = case();
    // The verdict it records is the policy's, and every Alert key conflicts.
    let file = worst_case::write_checked(&flux_event_metadata::ENTRY, &case).unwrap();
    let loaded = conformance::load_cases(&file).unwrap();
    let response = conformance::evaluate_native(&flux_event_metadata::ENTRY, &loaded[0]).unwrap();
    let last = response["warnings"].as_array().unwrap().last().unwrap();
    let unshown: usize = last
        .as_str()
        .and_then(|w| w.strip_prefix("… and "))
        .and_then(|w| w.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(unshown >= ALERTS * (ALERT_KEYS + 1) - 8, "{unshown}");

    // Every limit is reached, and the settings are accepted as they are.
    let s = &case["settings"];
    assert!(parse(s).is_ok());
    assert!(worst_case::json_size(s) < MAX_REQUEST_BODY_BYTES - HEADROOM);
    let mut more = s.clone();
    more["maxKeys"] = json!(MAX_KEYS + 1);
    assert!(parse(&more).unwrap_err().contains("maxKeys"));
    let mut smaller = s.clone();
    smaller["maxValueLength"] = json!(MAX_VALUE_LENGTH - 1);
    assert!(parse(&smaller).unwrap_err().contains("maxValueLength"));
    let mut larger = s.clone();
    larger["valuePatterns"][PATTERN_KEY] = json!(pattern(pattern_repeats() + 1));
    assert!(parse(&larger).is_err());

    // Each object is as large as kube-apiserver admits, its annotations
    // within their validated limit.
    let request = &case["request"]["request"];
    for which in ["object", "oldObject"] {
        let object = &request[which];
        worst_case::takes(object, OBJECT_BYTES - HEADROOM)
            .map_err(|e| format!("{which}: {e}"))
            .unwrap();
        worst_case::fills_annotations(object, 40)
            .map_err(|e| format!("{which}: {e}"))
            .unwrap();
    }
}

/// `ALERTS` is the policy's own bound: one Alert more is not examined, and
/// the policy says so.
#[test]
fn alerts_beyond_the_benchmarked_count_are_not_examined() {
    let alerts: Vec<Value> = (0..=ALERTS)
        .map(|i| {
            json!({"apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Alert",
                   "namespace": "flux-system", "name": format!("a{i}"),
                   "object": {"metadata": {"name": format!("a{i}"), "namespace": "flux-system"},
                              "spec": {"eventSources": []}}})
        })
        .collect();
    let mut case = case();
    case["settings"] = json!({});
    case["context"] = json!(alerts);
    case["request"]["request"]["object"] = json!({"metadata": {"name": "apps",
        "namespace": "flux-system", "annotations": {format!("{PREFIX}team"): "payments"}}});
    case["request"]["request"]["oldObject"] = json!({"metadata": {"name": "apps",
        "namespace": "flux-system"}});
    let case: conformance::Case = serde_json::from_value(case).unwrap();
    let response = conformance::evaluate_native(&flux_event_metadata::ENTRY, &case).unwrap();
    assert_eq!(
        response["warnings"],
        json!([format!(
            "only the first {ALERTS} of {} Alerts (notification.toolkit.fluxcd.io) were checked for metadata keys that override this object's annotations.",
            ALERTS + 1
        )])
    );
}

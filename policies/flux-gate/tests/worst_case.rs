//! The worst case the settings and kube-apiserver allow, as `make bench` times it.
//!
//! `target/bench/worst-case/flux-gate-worst-case.yaml` (conformance::worst_case) is built here from the limits the
//! settings validation enforces (`flux_gate::limits`): every limit
//! used to the full, each gate bound to the request, and gates that are never
//! open together minute by minute, so that the search for the next opening
//! runs until its own bounds stop it. The objects share policy-server's
//! AdmissionReview limit ([`REVIEW_LIMIT`], `conformance::worst_case`), their
//! annotations within kube-apiserver's validated total, and the update
//! changes the last entry of their largest spec member. The test writes the
//! case for `make bench` and checks the verdict it records.

use conformance::worst_case::{self, HEADROOM, REVIEW_LIMIT, TOTAL_ANNOTATION_SIZE_LIMIT_B};
use flux_gate::limits::*;
use serde_json::{json, Value};

const NOW: &str = "2026-11-20T10:00:30Z";

/// The share of policy-server's AdmissionReview limit for each of the
/// request's two objects.
const OBJECT_BYTES: usize = REVIEW_LIMIT / 2;

/// Zones with daylight saving time, each read once per evaluation.
const ZONES: [&str; 64] = [
    "Europe/Amsterdam",
    "Europe/Andorra",
    "Europe/Athens",
    "Europe/Belfast",
    "Europe/Belgrade",
    "Europe/Berlin",
    "Europe/Bratislava",
    "Europe/Brussels",
    "Europe/Bucharest",
    "Europe/Budapest",
    "Europe/Busingen",
    "Europe/Chisinau",
    "Europe/Copenhagen",
    "Europe/Dublin",
    "Europe/Gibraltar",
    "Europe/Guernsey",
    "Europe/Helsinki",
    "Europe/Isle_of_Man",
    "Europe/Jersey",
    "Europe/Kiev",
    "Europe/Kyiv",
    "Europe/Lisbon",
    "Europe/Ljubljana",
    "Europe/London",
    "Europe/Luxembourg",
    "Europe/Madrid",
    "Europe/Malta",
    "Europe/Mariehamn",
    "Europe/Monaco",
    "Europe/Nicosia",
    "Europe/Oslo",
    "Europe/Paris",
    "Europe/Podgorica",
    "Europe/Prague",
    "Europe/Riga",
    "Europe/Rome",
    "Europe/San_Marino",
    "Europe/Sarajevo",
    "Europe/Skopje",
    "Europe/Sofia",
    "Europe/Stockholm",
    "Europe/Tallinn",
    "Europe/Tirane",
    "Europe/Tiraspol",
    "Europe/Uzhgorod",
    "Europe/Vaduz",
    "Europe/Vatican",
    "Europe/Vienna",
    "Europe/Vilnius",
    "Europe/Warsaw",
    "Europe/Zagreb",
    "Europe/Zaporozhye",
    "Europe/Zurich",
    "America/Adak",
    "America/Anchorage",
    "America/Atka",
    "America/Boise",
    "America/Cambridge_Bay",
    "America/Chicago",
    "America/Ciudad_Juarez",
    "America/Denver",
    "America/Detroit",
    "America/Ensenada",
    "America/Fort_Wayne",
];

/// Declared gates: two that are open on alternate minutes (never together),
/// so that the search jumps minute by minute until its bounds stop it; the
/// others open by default, with close schedules in zones of their own and
/// freezes in the past, all checked at every jump. (Closing them for a
/// second every minute instead, which needs fresh firings at every jump,
/// stops the search earlier, on its cron-search bound, and costs less.)
fn gates() -> Vec<Value> {
    let mut zones = ZONES.iter().cycle();
    let mut schedules_left = MAX_SCHEDULES_TOTAL - 2;
    let mut freezes_left = MAX_FREEZES_TOTAL;
    let mut out = vec![
        json!({"name": "even-minutes", "default": "closed", "schedules": [
            {"cron": "*/2 * * * *", "timeZone": "UTC", "window": "1m", "action": "open"}]}),
        json!({"name": "odd-minutes", "default": "closed", "schedules": [
            {"cron": "1-59/2 * * * *", "timeZone": "UTC", "window": "1m", "action": "open"}]}),
    ];
    for i in 2..MAX_GATES {
        let gates_left = MAX_GATES - i;
        let n = schedules_left.div_ceil(gates_left).min(MAX_SCHEDULES);
        schedules_left -= n;
        let schedules: Vec<Value> = (0..n)
            .map(|_| {
                json!({"cron": "0 0 1 1 *", "timeZone": zones.next(), "window": "1s", "action": "close"})
            })
            .collect();
        let f = freezes_left.min(MAX_FREEZES);
        freezes_left -= f;
        let freezes: Vec<Value> = (0..f)
            .map(|k| {
                json!({"start": format!("2025-01-01T{:02}:{:02}:00Z", k / 60, k % 60),
                       "end": format!("2025-01-01T{:02}:{:02}:30Z", k / 60, k % 60),
                       "reason": "past freeze"})
            })
            .collect();
        out.push(json!({"name": format!("gate-{i}"), "default": "opened",
                        "schedules": schedules, "freezes": freezes}));
    }
    out
}

fn settings() -> Value {
    let declared: Vec<Value> = gates().iter().map(|g| g["name"].clone()).collect();
    let objects: Vec<Value> = (0..MAX_BOUND_OBJECTS)
        .map(|i| json!(format!("flux-system/bound-{i}")))
        .collect();
    let mut all = declared.clone();
    all.extend(objects);
    let bindings: Vec<Value> = (0..MAX_BINDINGS)
        .map(|_| {
            json!({"gates": all, "match": {"kinds": [
            {"group": "kustomize.toolkit.fluxcd.io", "kind": "Kustomization"}]}})
        })
        .collect();
    json!({"gates": gates(), "bindings": bindings,
           "emergencyOverride": {"groups": ["sre-oncall"]}})
}

/// A Gate object, closed by a request a minute ago for an hour.
fn gate_object(name: &str) -> Value {
    json!({"apiVersion": "gating.toolkit.fluxcd.io/v1alpha1", "kind": "Gate",
           "namespace": "flux-system", "name": name, "object": {
        "apiVersion": "gating.toolkit.fluxcd.io/v1alpha1", "kind": "Gate",
        "metadata": {"name": name, "namespace": "flux-system",
                     "uid": "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f", "resourceVersion": "40100",
                     "generation": 1, "creationTimestamp": "2026-09-01T08:00:00Z",
                     "annotations": {"close.gate.fluxcd.io/requestedAt": "2026-11-20T09:59:30Z"}},
        "spec": {"interval": "30s", "default": "opened", "window": "1h"}}})
}

/// A Kustomization as large as kube-apiserver admits: its annotations
/// filled to their validated limit, then `spec.postBuild.substitute` to the
/// request limit, its last entry `last` (so that comparing an update's specs
/// reads and parses all of them).
fn kustomization(generation: u32, annotations: &Value, last: &str) -> Value {
    let mut object = json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": "apps", "namespace": "flux-system",
            "uid": "3f9c2b6e-8a0d-4b7e-9c1a-5d2e7f4a6b10", "resourceVersion": "918273",
            "generation": generation, "creationTimestamp": "2026-09-01T08:00:00Z",
            "labels": {"kustomize.toolkit.fluxcd.io/name": "flux-system",
                       "kustomize.toolkit.fluxcd.io/namespace": "flux-system"},
            "annotations": annotations, "finalizers": ["finalizers.fluxcd.io"]},
        "spec": {"interval": "10m0s", "path": "./clusters/production/apps", "prune": true, "wait": true,
                 "timeout": "5m0s", "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
                 "postBuild": {"substitute": {"zz_last": last}}}});
    worst_case::fill_annotations(&mut object, 'a', usize::MAX, TOTAL_ANNOTATION_SIZE_LIMIT_B);
    worst_case::fill_map(
        &mut object,
        "/spec/postBuild/substitute",
        's',
        OBJECT_BYTES - HEADROOM,
    );
    object
}

fn case() -> Value {
    let named: Vec<String> = (0..MAX_ANNOTATED)
        .map(|i| format!("flux-system/annotated-{i}"))
        .collect();
    let annotations = json!({"gating.toolkit.fluxcd.io/gates": named.join(", ")});
    let mut context: Vec<Value> = (0..MAX_ANNOTATED)
        .map(|i| gate_object(&format!("annotated-{i}")))
        .collect();
    context.extend((0..MAX_BOUND_OBJECTS).map(|i| gate_object(&format!("bound-{i}"))));
    context.push(
        json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "namespace": "flux-system", "name": "flux-system",
        "object": kustomization(3, &json!({}), "v1")}),
    );
    json!({
        "description": "The worst case the settings and kube-apiserver allow: every limit used to the full, all gates bound, two of them never open together, so the search for the next opening runs to its bounds, and objects at the request size limit whose update changes the last entry of their largest spec member",
        "now": NOW,
        "settings": settings(),
        "request": worst_case::review("kustomize.toolkit.fluxcd.io", "v1", "Kustomization", "kustomizations", json!({
            "uid": "0b7c6d5e-4f3a-4b2c-9d1e-0f9a8b7c6d5e",
            "name": "apps", "namespace": "flux-system", "operation": "UPDATE",
            "userInfo": {"username": "system:serviceaccount:flux-system:kustomize-controller",
                "uid": "0d1c2b3a-4e5f-4a6b-9c7d-8e9f0a1b2c3d",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:flux-system", "system:authenticated"]},
            "object": kustomization(8, &annotations, "v2"),
            "oldObject": kustomization(7, &annotations, "v1"),
            "dryRun": true,
            "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kustomize-controller"}})),
        "context": context,
        "expect": {"allowed": false, "code": 400,
            "message": "^Reconciliation is waiting approval, gate 'odd-minutes' is closed: .* They are not all open at once before 2026-11-2.* Held: dry-run UPDATE of Kustomization flux-system/apps \\(changes spec\\.postBuild\\)"},
    })
}

#[test]
fn the_benchmarked_worst_case_uses_the_limits_the_settings_enforce() {
    // The verdict it records is the policy's.
    worst_case::write_checked(&flux_gate::ENTRY, &case()).unwrap();
    // Every limit is reached, and the settings are accepted as they are.
    let s = &case()["settings"];
    let gates = s["gates"].as_array().unwrap();
    assert_eq!(gates.len(), MAX_GATES);
    let count = |key: &str| -> usize {
        gates
            .iter()
            .map(|g| g[key].as_array().map_or(0, Vec::len))
            .sum()
    };
    assert_eq!(count("schedules"), MAX_SCHEDULES_TOTAL);
    assert_eq!(count("freezes"), MAX_FREEZES_TOTAL);
    assert!(gates
        .iter()
        .any(|g| g["freezes"].as_array().map_or(0, Vec::len) == MAX_FREEZES));
    assert_eq!(s["bindings"].as_array().unwrap().len(), MAX_BINDINGS);
    guard_core::settings::parse::<flux_gate::Compiled>(s.to_string().as_bytes()).unwrap();
    // One more of anything is refused.
    let mut more = s.clone();
    more["bindings"]
        .as_array_mut()
        .unwrap()
        .push(s["bindings"][0].clone());
    assert!(
        guard_core::settings::parse::<flux_gate::Compiled>(more.to_string().as_bytes())
            .unwrap_err()
            .to_string()
            .contains(&format!("at most {MAX_BINDINGS} bindings"))
    );
    // Each object takes its share of the review, its annotations
    // within their validated limit.
    let case = case();
    let request = &case["request"]["request"];
    for object in [&request["object"], &request["oldObject"]] {
        worst_case::takes(object, OBJECT_BYTES - HEADROOM).unwrap();
        worst_case::fills_annotations(object, 16).unwrap();
    }
}

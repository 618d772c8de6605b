//! `bench`'s growth table: how one typical request's cost grows with the
//! cluster. Each scenario is a corpus case (its request, settings and
//! recorded objects) judged again with its recorded cluster padded to 10,
//! 100, 1,000 and 10,000 objects of the kinds the policy may look up.
//!
//! The padding is made here, deterministically, from the case's own objects:
//! each copy moved to a namespace of its own (`growth-00042`; a
//! cluster-scoped object renamed so) and cut loose from the request
//! ([`Scenario`]'s `detach`), so that it cannot change the verdict; each row
//! says whether the reply stayed the case's. The case's own objects come
//! last: policy-server's reflector hands a list in no order a policy may
//! rely on, and last is where a bound on how many are read would miss them.

use std::path::Path;

use anyhow::{Context as _, Result};
use conformance::cluster::Recorded;
use serde::Serialize;
use serde_json::{json, Value};

use crate::bench::{evaluate_once, own_times, recorded_host, time_fresh, Input};
use host_test::harness::Policy;
use host_test::host::Limits;
use host_test::replay::median;

/// The cluster sizes: objects of the kinds the policy may look up.
pub const SIZES: [usize; 4] = [10, 100, 1_000, 10_000];

/// One typical request of a context-aware policy.
pub struct Scenario {
    pub policy: &'static str,
    /// The corpus case, `tests/cases/<policy>/<case>.yaml`.
    pub case: &'static str,
    /// Merged into the case's settings (a JSON merge patch).
    pub settings: Value,
    pub label: &'static str,
    /// Its lookups ask only for what can change the verdict, so what they
    /// hand the module does not grow with the padding.
    pub narrowed: bool,
    /// Cuts a padding object loose from the request (its `i`).
    detach: fn(&mut Value, usize),
}

/// A copy in another namespace is enough: the lookup names the request's.
fn nothing(_: &mut Value, _: usize) {}

/// An Alert's sources without a namespace name its own namespace only.
fn alert_watches_its_own_namespace(alert: &mut Value, _: usize) {
    if let Some(sources) = alert
        .pointer_mut("/spec/eventSources")
        .and_then(Value::as_array_mut)
    {
        for source in sources.iter_mut().filter_map(Value::as_object_mut) {
            source.remove("namespace");
        }
    }
}

/// An ASO resource of a resource group of its own, owned by nothing the
/// request deletes (by ARM id, owner reference or owner name).
fn aso_in_its_own_resource_group(object: &mut Value, i: usize) {
    if object.get("kind").and_then(Value::as_str) == Some("Namespace") {
        return;
    }
    let group = format!(
        "/subscriptions/3f2c1b0a-9e8d-4c7b-a6f5-e4d3c2b1a098/resourceGroups/rg-growth-{i:05}"
    );
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("x")
        .to_string();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("ownerReferences");
        if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            annotations.insert(
                "serviceoperator.azure.com/resource-id".into(),
                Value::String(format!("{group}/providers/Growth/things/{name}")),
            );
        }
    }
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("owner".into(), json!({ "armId": group }));
    }
    if let Some(status) = object.get_mut("status").and_then(Value::as_object_mut) {
        status.remove("id");
    }
}

/// The scenarios `make bench` times, one or two per context-aware policy.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            policy: "flux-suspend",
            case:
                "developer-may-not-delete-a-namespace-holding-a-suspension-when-resumers-are-listed",
            settings: json!({}),
            label: "Namespace DELETE",
            narrowed: true,
            detach: nothing,
        },
        Scenario {
            policy: "flux-gate",
            case: "create-with-closed-gate",
            settings: json!({}),
            label: "CREATE under a Gate",
            narrowed: true,
            detach: nothing,
        },
        Scenario {
            policy: "aso-reconcile",
            case: "delete-resource-group-owning-server-in-another-namespace-refused",
            settings: json!({}),
            label: "owner DELETE",
            narrowed: false,
            detach: aso_in_its_own_resource_group,
        },
        Scenario {
            policy: "aso-reconcile",
            case: "delete-resource-group-owning-server-in-another-namespace-refused",
            settings: json!({"deletionProtection": {"namespaces": ["shop"]}}),
            label: "owner DELETE, namespaces [shop]",
            narrowed: true,
            detach: aso_in_its_own_resource_group,
        },
        Scenario {
            policy: "flux-event-metadata",
            case: "alert-conflict-selected-by-name",
            settings: json!({}),
            label: "annotation added",
            narrowed: false,
            detach: alert_watches_its_own_namespace,
        },
        Scenario {
            policy: "flux-event-metadata",
            case: "alert-conflict-selected-by-name",
            settings: json!({"noCrossNamespaceRefs": true}),
            label: "annotation added, noCrossNamespaceRefs",
            narrowed: true,
            detach: alert_watches_its_own_namespace,
        },
    ]
}

/// RFC 7386: `patch` merged into `target`.
fn merge(target: &mut Value, patch: &Value) {
    match (target.as_object_mut(), patch.as_object()) {
        (Some(t), Some(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        _ => *target = patch.clone(),
    }
}

/// Padding object `i`, made from `template`.
fn padding(template: &Recorded, i: usize, detach: fn(&mut Value, usize)) -> Recorded {
    let mut r = template.clone();
    let place = format!("growth-{i:05}");
    let (field, value) = if r.namespace.is_empty() {
        r.name = place.clone();
        ("name", place)
    } else {
        r.namespace = place.clone();
        ("namespace", place)
    };
    if let Some(meta) = r
        .object
        .as_mut()
        .and_then(|o| o.get_mut("metadata"))
        .and_then(Value::as_object_mut)
    {
        meta.insert(field.into(), Value::String(value));
        meta.insert(
            "uid".into(),
            Value::String(format!("00000000-0000-4000-8000-{i:012}")),
        );
    }
    if let Some(object) = r.object.as_mut() {
        detach(object, i);
    }
    r
}

/// The case's cluster padded to `size` objects of the `granted` kinds.
pub fn padded(
    context: &[Recorded],
    granted: &[host_test::capabilities::ContextAwareResource],
    size: usize,
    detach: fn(&mut Value, usize),
) -> Vec<Recorded> {
    let is_granted = |r: &Recorded| {
        granted
            .iter()
            .any(|g| g.api_version == r.api_version && g.kind == r.kind)
    };
    let templates: Vec<&Recorded> = context
        .iter()
        .filter(|r| r.object.is_some() && is_granted(r))
        .collect();
    let own = context.iter().filter(|r| is_granted(r)).count();
    let mut out: Vec<Recorded> = (0..size.saturating_sub(own))
        .filter_map(|i| {
            templates
                .get(i % templates.len().max(1))
                .map(|t| padding(t, i, detach))
        })
        .collect();
    out.extend(context.iter().cloned());
    out
}

#[derive(Debug, Serialize)]
pub struct GrowthRow {
    pub policy: String,
    pub scenario: String,
    pub case: String,
    /// Objects of the kinds the policy may look up in the recorded cluster.
    pub objects: usize,
    /// The lookups made: `operation apiVersion/kind [namespace]`.
    pub lookups: Vec<String>,
    /// Bytes the lookups handed the module (replies and error texts);
    /// deterministic, unlike the times.
    pub handed_bytes: usize,
    pub fresh_median_us: f64,
    pub own_median_us: f64,
    pub host_median_us: f64,
    pub samples: usize,
    /// `null` when the reply is byte for byte the one on the case's own
    /// cluster; else it and the case's, in a few words ([`outline_reply`]).
    pub differs: Option<String>,
}

/// A reply in a few words: `accepted`/`rejected`, `mutated`, its warnings.
fn outline_reply(reply: &[u8]) -> String {
    let Ok(reply) = serde_json::from_slice::<Value>(reply) else {
        return "not JSON".into();
    };
    let mut words = vec![if reply.get("accepted") == Some(&Value::Bool(true)) {
        "accepted".to_string()
    } else {
        "rejected".to_string()
    }];
    if reply.get("mutated_object").is_some_and(|m| !m.is_null()) {
        words.push("mutated".into());
    }
    if let Some(warnings) = reply.get("warnings").and_then(Value::as_array) {
        words.extend(
            warnings
                .iter()
                .filter_map(Value::as_str)
                .map(|w| format!("warned: {w}")),
        );
    }
    words.join(", ")
}

fn describe(call: Option<(&'static str, Value)>) -> String {
    let Some((operation, payload)) = call else {
        return "?".into();
    };
    let field = |k: &str| payload.get(k).and_then(Value::as_str).unwrap_or("");
    let place = match (operation, field("namespace")) {
        ("get_resource", _) => format!(" {}", field("name")),
        (_, "") => String::new(),
        (_, ns) => format!(" in {ns}"),
    };
    format!("{operation} {}{place}", field("kind"))
}

/// A scenario ready to evaluate: its module, case, grants and payload, and
/// the reply on the case's own cluster.
pub struct Prepared<'s> {
    pub scenario: &'s Scenario,
    policy: Policy,
    case: conformance::Case,
    granted: Vec<host_test::capabilities::ContextAwareResource>,
    settings: Value,
    payload: Vec<u8>,
    case_reply: Vec<u8>,
}

/// One evaluation at one cluster size: the lookups made, the bytes they
/// handed the module, and whether the reply is the case's.
pub struct Judged {
    pub lookups: Vec<String>,
    pub handed_bytes: usize,
    /// When the reply is not the case's, both in a few words.
    pub differs: Option<String>,
}

impl Judged {
    pub fn same_reply_as_case(&self) -> bool {
        self.differs.is_none()
    }
}

impl<'s> Prepared<'s> {
    /// The scenario's case under `cases`, its module in `dist`.
    pub fn new(scenario: &'s Scenario, cases: &Path, dist: &Path) -> Result<Self> {
        let file = cases
            .join(scenario.policy)
            .join(format!("{}.yaml", scenario.case));
        let case = conformance::load_cases(&file)
            .map_err(anyhow::Error::msg)?
            .into_iter()
            .next()
            .with_context(|| format!("{}: no case", file.display()))?;
        let policy = Policy::load(&dist.join(format!("{}.wasm", scenario.policy)))?;
        let granted = case
            .context_aware_resources
            .clone()
            .unwrap_or_else(|| policy.context_aware_resources());
        let mut input = Input::from_case(&case);
        merge(&mut input.settings, &scenario.settings);
        let request = conformance::as_policy_server_sends(&input.request)
            .map_err(|e| anyhow::anyhow!("{}: {e}", scenario.case))?;
        let payload = conformance::validate_payload(&request, &input.settings);
        let host = recorded_host(&input, &granted);
        let (case_reply, _, _) = evaluate_once(&policy, &input, &Limits::default(), host, &payload);
        let case_reply = case_reply.map_err(|e| anyhow::anyhow!("{}: {e}", scenario.case))?;
        Ok(Self {
            scenario,
            policy,
            granted,
            settings: input.settings,
            payload,
            case_reply,
            case,
        })
    }

    /// The input with the case's cluster padded to `size` objects.
    fn input(&self, size: usize) -> Input {
        Input {
            context: padded(
                &self.case.context,
                &self.granted,
                size,
                self.scenario.detach,
            )
            .into(),
            settings: self.settings.clone(),
            ..Input::from_case(&self.case)
        }
    }

    /// One evaluation with the cluster padded to `size` objects.
    pub fn judge(&self, size: usize) -> Judged {
        let input = self.input(size);
        let host = recorded_host(&input, &self.granted);
        let (reply, _, lookups) = evaluate_once(
            &self.policy,
            &input,
            &Limits::default(),
            host,
            &self.payload,
        );
        let case = || outline_reply(&self.case_reply);
        let differs = match &reply {
            Ok(r) if *r == self.case_reply => None,
            Ok(r) => Some(format!("{} (the case: {})", outline_reply(r), case())),
            Err(e) => Some(format!("failed: {e} (the case: {})", case())),
        };
        Judged {
            lookups: lookups.iter().map(|e| describe(e.call())).collect(),
            handed_bytes: lookups.iter().map(|e| e.handed_bytes()).sum(),
            differs,
        }
    }
}

/// Times every scenario of the policies in `only` (all when empty) at every
/// size, with the modules in `dist` and the cases under `cases`.
pub fn run(
    cases: &Path,
    dist: &Path,
    only: &[String],
    iterations: usize,
) -> Result<Vec<GrowthRow>> {
    let mut rows = Vec::new();
    for scenario in &scenarios() {
        if !only.is_empty() && !only.iter().any(|p| p == scenario.policy) {
            continue;
        }
        let prepared = Prepared::new(scenario, cases, dist)?;
        eprintln!(
            "growth: {} ({}) at {SIZES:?} objects",
            scenario.policy, scenario.label
        );
        for size in SIZES {
            let judged = prepared.judge(size);
            let input = prepared.input(size);
            let host = || recorded_host(&input, &prepared.granted);
            let (fresh, host_times) = time_fresh(
                &prepared.policy,
                &input,
                &prepared.payload,
                iterations,
                host,
            );
            rows.push(GrowthRow {
                policy: scenario.policy.into(),
                scenario: scenario.label.into(),
                case: scenario.case.into(),
                objects: size,
                lookups: judged.lookups,
                handed_bytes: judged.handed_bytes,
                fresh_median_us: median(&fresh),
                own_median_us: median(&own_times(&fresh, &host_times)),
                host_median_us: median(&host_times),
                samples: fresh.len(),
                differs: judged.differs,
            });
        }
    }
    Ok(rows)
}

pub fn print_table(rows: &[GrowthRow]) {
    println!(
        "\nGrowth: one typical request (a corpus case) with its recorded cluster padded to more \
         objects of the kinds the policy may look up, each where it cannot change the verdict \
         (another namespace, another resource group); fresh instance, medians. handed KiB: what \
         the lookups handed the module (deterministic); same: the reply is the case's. The \
         case's own objects come after the padding, so a policy that reads a bounded number \
         of a lookup's objects (flux-event-metadata: 4,096 Alerts) may stop before them; how \
         the reply then differs is printed below the table."
    );
    println!(
        "{:<20} {:<40} {:>7} {:>11} {:>9} {:>9} {:>9} {:>5}  lookups",
        "policy", "scenario", "objects", "handed KiB", "fresh ms", "own ms", "host ms", "same"
    );
    for r in rows {
        println!(
            "{:<20} {:<40} {:>7} {:>11.1} {:>9.3} {:>9.3} {:>9.3} {:>5}  {}",
            r.policy,
            r.scenario,
            r.objects,
            r.handed_bytes as f64 / 1024.0,
            r.fresh_median_us / 1e3,
            r.own_median_us / 1e3,
            r.host_median_us / 1e3,
            if r.differs.is_none() { "yes" } else { "NO" },
            r.lookups.join(", ")
        );
    }
    for r in rows {
        if let Some(differs) = &r.differs {
            println!(
                "reply at {} objects, {} ({}): {differs}",
                r.objects, r.policy, r.scenario
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use host_test::capabilities::ContextAwareResource;

    fn recorded(kind: &str, namespace: &str, name: &str) -> Recorded {
        Recorded {
            api_version: "v1".into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
            object: Some(json!({"metadata": {"name": name, "namespace": namespace}})),
            error: None,
        }
    }

    #[test]
    fn padding_goes_elsewhere_and_the_case_comes_last() {
        let context = [
            recorded("ConfigMap", "apps", "a"),
            recorded("Namespace", "", "apps"),
            recorded("Secret", "apps", "s"),
        ];
        let granted = ["ConfigMap", "Namespace"].map(|kind| ContextAwareResource {
            api_version: "v1".into(),
            kind: kind.into(),
        });
        let cluster = padded(&context, &granted, 5, nothing);
        // 5 of the granted kinds: 3 made, the case's 2, and its Secret.
        assert_eq!(cluster.len(), 6);
        let places: Vec<(&str, &str)> = cluster
            .iter()
            .map(|r| (r.namespace.as_str(), r.name.as_str()))
            .collect();
        assert_eq!(
            places,
            [
                ("growth-00000", "a"),
                ("", "growth-00001"),
                ("growth-00002", "a"),
                ("apps", "a"),
                ("", "apps"),
                ("apps", "s")
            ]
        );
        let moved = cluster.first().and_then(|r| r.object.as_ref()).unwrap();
        assert_eq!(
            moved.pointer("/metadata/namespace").unwrap(),
            "growth-00000"
        );
        assert_eq!(padded(&context, &granted, 5, nothing), cluster);
    }

    #[test]
    fn a_reply_is_outlined_by_verdict_patch_and_warnings() {
        let reply = |v: Value| outline_reply(&serde_json::to_vec(&v).unwrap());
        assert_eq!(reply(json!({"accepted": false})), "rejected");
        assert_eq!(
            reply(json!({"accepted": true, "mutated_object": {"a": 1},
                "warnings": ["one", "two"]})),
            "accepted, mutated, warned: one, warned: two"
        );
        assert_eq!(
            reply(json!({"accepted": true, "mutated_object": null})),
            "accepted"
        );
        assert_eq!(outline_reply(b"{"), "not JSON");
    }

    #[test]
    fn settings_are_merged() {
        let mut settings = json!({"a": {"b": 1, "c": 2}, "d": 3});
        merge(
            &mut settings,
            &json!({"a": {"b": null, "e": [1]}, "f": true}),
        );
        assert_eq!(
            settings,
            json!({"a": {"c": 2, "e": [1]}, "d": 3, "f": true})
        );
    }

    #[test]
    fn an_aso_padding_object_is_in_a_resource_group_of_its_own() {
        let mut server = json!({"kind": "FlexibleServer",
            "metadata": {"name": "db", "ownerReferences": [{"uid": "x"}],
                "annotations": {"serviceoperator.azure.com/resource-id": "/subscriptions/s/resourceGroups/rg/x"}},
            "spec": {"owner": {"name": "rg"}}, "status": {"id": "/subscriptions/s/resourceGroups/rg/x"}});
        aso_in_its_own_resource_group(&mut server, 7);
        assert!(server.pointer("/metadata/ownerReferences").is_none());
        assert!(server.pointer("/status/id").is_none());
        let owner = server
            .pointer("/spec/owner/armId")
            .unwrap()
            .as_str()
            .unwrap();
        assert!(
            owner.ends_with("/resourceGroups/rg-growth-00007"),
            "{owner}"
        );
        assert!(server
            .pointer("/metadata/annotations/serviceoperator.azure.com~1resource-id")
            .unwrap()
            .as_str()
            .unwrap()
            .starts_with(owner));
    }
}

//! Runs a story: each step's requests judged by an evaluator (native, wasm,
//! or the playground's), the admitted ones stored as the registry stores
//! them, the end state checked.

use guard_core::Timestamp;
use serde_json::Value;

use super::format::{EndCheck, Step, StepExpect, Story};
use super::request::with_patch;
use super::state::{prepare_create, prepare_update, State};
use super::writers::{self, Built, Effect};
use crate::case::{Case, Expect};
use crate::expect;

/// Judges one request, given as a corpus case (its `request`, `context`,
/// settings and clock), and answers in [`crate::Reply::to_json`]'s form.
pub type Evaluate<'a> = dyn FnMut(&Case) -> Result<Value, String> + 'a;

/// One request of a step, as sent and answered.
#[derive(Debug, Clone)]
pub struct RequestRun {
    /// The cluster before the request.
    pub state: Vec<Value>,
    pub request: Value,
    pub response: Value,
    pub allowed: bool,
    pub problems: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct StepRun {
    pub name: String,
    pub now: Timestamp,
    pub requests: Vec<RequestRun>,
    /// Why the step could not be carried out at all.
    pub error: Option<String>,
}

#[derive(Debug, Clone)]
pub struct StoryRun {
    pub id: String,
    pub steps: Vec<StepRun>,
    /// The cluster the story ends with.
    pub state: Vec<Value>,
    pub end_problems: Vec<String>,
}

/// A value as YAML, indented under its heading.
fn pretty(value: &Value) -> String {
    let text = serde_norway::to_string(value).unwrap_or_else(|e| e.to_string());
    text.lines()
        .map(|l| format!("    {l}\n"))
        .collect::<String>()
}

impl StoryRun {
    /// One text per failure, naming the story and step, with the request
    /// sent and the state before it.
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (n, step) in self.steps.iter().enumerate() {
            let at = format!("{}: step {} {:?}", self.id, n + 1, step.name);
            if let Some(e) = &step.error {
                out.push(format!("{at}: {e}"));
            }
            for (i, r) in step.requests.iter().enumerate() {
                if r.problems.is_empty() {
                    continue;
                }
                out.push(format!(
                    "{at}, request {}: {}\n  request sent:\n{}  response:\n{}  state before it:\n{}",
                    i + 1,
                    r.problems.join("; "),
                    pretty(&r.request),
                    pretty(&r.response),
                    pretty(&Value::Array(r.state.clone()))
                ));
            }
        }
        if !self.end_problems.is_empty() {
            out.push(format!(
                "{}: end: {}\n  state:\n{}",
                self.id,
                self.end_problems.join("; "),
                pretty(&Value::Array(self.state.clone()))
            ));
        }
        out
    }

    pub fn passed(&self) -> bool {
        self.failures().is_empty()
    }

    /// The steps that had a request refused.
    pub fn refused(&self) -> Vec<String> {
        self.steps
            .iter()
            .filter(|s| s.requests.iter().any(|r| !r.allowed))
            .map(|s| s.name.clone())
            .collect()
    }
}

/// Runs `story` of `policy`, every request judged by `evaluate`.
pub fn run(
    story: &Story,
    policy: &guard_core::Entry,
    evaluate: &mut Evaluate<'_>,
) -> Result<StoryRun, String> {
    let deployed = crate::deployment::of(policy)?;
    let mut judge = Judge {
        story,
        mutating: deployed.mutating(story.allowed_to_mutate),
        evaluate,
    };
    let mut state = State::new(story.cluster.clone())?;
    let mut now = story.now;
    let mut names = std::collections::BTreeSet::new();
    let mut steps = Vec::new();
    for (n, step) in story.steps.iter().enumerate() {
        if !names.insert(step.name.as_str()) {
            return Err(format!("{}: two steps are named {:?}", story.id, step.name));
        }
        if let Some(at) = step.at {
            if at < now {
                return Err(format!(
                    "{}: step {:?} moves the clock back",
                    story.id, step.name
                ));
            }
            now = at;
        }
        let mut run = StepRun {
            name: step.name.clone(),
            now,
            requests: Vec::new(),
            error: None,
        };
        if let Err(e) = run_step(&mut judge, n, step, now, &mut state, &mut run) {
            run.error = Some(e);
        }
        steps.push(run);
    }
    let mut done = StoryRun {
        id: story.id.clone(),
        steps,
        state: state.objects.clone(),
        end_problems: Vec::new(),
    };
    done.end_problems = story
        .end
        .iter()
        .filter_map(|c| end_problem(c, &state, &done))
        .collect();
    Ok(done)
}

/// What every step of a story is judged with.
struct Judge<'s, 'e, 'f> {
    story: &'s Story,
    /// A mutating policy sees an object before the registry completes it; a
    /// validating one after (see `state`).
    mutating: bool,
    evaluate: &'e mut Evaluate<'f>,
}

#[expect(
    clippy::too_many_lines,
    reason = "a step's moves and the judgement of each reply, in the order a story reads"
)]
fn run_step(
    judge: &mut Judge<'_, '_, '_>,
    n: usize,
    step: &Step,
    now: Timestamp,
    state: &mut State,
    run: &mut StepRun,
) -> Result<(), String> {
    let (story, mutating) = (judge.story, judge.mutating);
    let user = match &step.by {
        Some(by) => writers::user(by)?,
        None => writers::default_user(&step.write),
    };
    let (moves, stop) = writers::plan(step, state)?;
    let mut index = 0;
    let mut memory = writers::Memory::default();
    for m in &moves {
        let Some(Built { mut sent, effect }) = writers::build(m, state, now, &mut memory)? else {
            continue;
        };
        sent.uid = writers::uid(&format!("{}#{n}#{index}", story.id));
        sent.user = user.clone();
        let expect = expectation(step, index, &sent)?;
        index += 1;
        if !mutating && !matches!(effect, Effect::Report) {
            prepare(&mut sent.object, &sent.old, &sent.uid, now);
        }
        let before = state.objects.clone();
        let case = Case {
            id: format!("{} step {}", story.id, n + 1),
            description: step.name.clone(),
            now,
            settings: story.settings.clone(),
            request: sent.admission_request(),
            context: state.recorded(),
            policy_mode: story.policy_mode,
            allowed_to_mutate: story.allowed_to_mutate,
            context_aware_resources: story.context_aware_resources.clone(),
            expect: expect.clone(),
        };
        let response = (judge.evaluate)(&case)?;
        let allowed = response.get("allowed") == Some(&Value::Bool(true));
        let problems = expect::check(&expect, &response);
        if allowed {
            match effect {
                Effect::Store => {
                    let mut object = with_patch(sent.object.clone(), &response)?;
                    if mutating {
                        prepare(&mut object, &sent.old, &sent.uid, now);
                    }
                    state.store(object);
                }
                Effect::StoreStatus => {
                    let mut object = sent.old.clone();
                    if let (Some(map), Some(status)) =
                        (object.as_object_mut(), sent.object.get("status"))
                    {
                        map.insert("status".into(), status.clone());
                    }
                    state.store(object);
                }
                Effect::DryRun => {
                    let mut object = with_patch(sent.object.clone(), &response)?;
                    if mutating {
                        prepare(&mut object, &sent.old, &sent.uid, now);
                    }
                    memory.dry_run = Some(object);
                }
                Effect::Report => {}
                Effect::Delete { propagation } => {
                    let target = super::state::target_of(&sent.old);
                    state.delete(&target, propagation.as_deref(), now);
                }
            }
        }
        run.requests.push(RequestRun {
            state: before,
            request: case.request,
            response,
            allowed,
            problems,
        });
        if !allowed && stop {
            break;
        }
    }
    if let super::format::Write::DeleteNamespace(ns) = &step.write {
        state.finish_namespace(&ns.name);
    }
    let sent = run.requests.len();
    match &step.expect {
        StepExpect::One(_) if sent != 1 => {
            Err(format!("`expect` is for one request; the step sent {sent}"))
        }
        StepExpect::Each(_) if sent == 0 => Err("the step sent no request".to_string()),
        StepExpect::Requests(list) if list.len() != sent => Err(format!(
            "`requests` lists {}, the step sent {sent}",
            list.len()
        )),
        _ => Ok(()),
    }
}

/// The registry's completion of a CREATE or UPDATE.
fn prepare(object: &mut Value, old: &Value, uid: &str, now: Timestamp) {
    if object.is_null() {
        return;
    }
    if old.is_null() {
        prepare_create(object, uid, now);
    } else {
        prepare_update(object, old);
    }
}

fn expectation(step: &Step, index: usize, sent: &super::request::Sent) -> Result<Expect, String> {
    match &step.expect {
        StepExpect::One(e) | StepExpect::Each(e) => Ok(e.clone()),
        StepExpect::Requests(list) => match list.get(index) {
            Some(r) if writers::names(sent, &r.target) => Ok(r.expect.clone()),
            Some(r) => Err(format!(
                "request {} is for {}, `requests` expects {}",
                index + 1,
                super::state::target_of(if sent.object.is_null() {
                    &sent.old
                } else {
                    &sent.object
                }),
                r.target
            )),
            None => Err(format!(
                "the step sends more than the {} `requests` listed",
                list.len()
            )),
        },
    }
}

fn end_problem(check: &EndCheck, state: &State, run: &StoryRun) -> Option<String> {
    if let Some(expected) = &check.refused {
        let got = run.refused();
        return (got != *expected)
            .then(|| format!("the refused steps are {got:?}, expected {expected:?}"));
    }
    let Some(target) = &check.target else {
        return Some("an end check needs `target` or `refused`".into());
    };
    let object = state.get(target);
    if let Some(exists) = check.exists {
        if object.is_some() != exists {
            return Some(format!(
                "{target} {}",
                if exists { "is gone" } else { "still exists" }
            ));
        }
    }
    let Some(path) = &check.path else {
        return check
            .exists
            .is_none()
            .then(|| "an end check on a target needs `exists` or `path`".into());
    };
    let Some(object) = object else {
        return Some(format!("{target} is gone, so {path} cannot be read"));
    };
    let got = object.pointer(path);
    if let Some(expected) = &check.equals {
        if got != Some(expected) {
            return Some(format!(
                "{target} {path} is {}, expected {expected}",
                got.map_or("absent".into(), Value::to_string)
            ));
        }
    }
    if check.absent == Some(true) && got.is_some() {
        return Some(format!(
            "{target} {path} is {}, expected absent",
            got.map_or(String::new(), Value::to_string)
        ));
    }
    if check.equals.is_none() && check.absent.is_none() {
        return Some(format!("the check of {path} needs `equals` or `absent`"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CLUSTER: &str = r#"
now: '2026-11-20T10:00:00Z'
cluster:
  - apiVersion: v1
    kind: Namespace
    metadata: {name: apps, uid: n1, resourceVersion: '10'}
    spec: {finalizers: [kubernetes]}
  - apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata: {name: a, namespace: apps, uid: k1, resourceVersion: '12', generation: 3,
               finalizers: [finalizers.fluxcd.io], managedFields: []}
    spec: {prune: true}
"#;

    fn story(steps: &str) -> Story {
        let text = format!("description: test\n{CLUSTER}{steps}");
        super::super::parse_story(&text, "test/story").unwrap()
    }

    /// Refuses requests by `refused@example.com`, admits the rest unchanged.
    fn judge(case: &Case) -> Result<Value, String> {
        let who = case
            .request
            .pointer("/userInfo/username")
            .and_then(Value::as_str);
        let allowed = who != Some("refused@example.com");
        Ok(json!({"uid": case.request["uid"], "allowed": allowed}))
    }

    /// A policy deployed as a mutating one (what flux-suspend is); its
    /// requests are judged by `judge`, never by `validate`.
    const MUTATING: guard_core::Entry = guard_core::Entry {
        name: "mutating",
        validate: |_, _| Vec::new(),
        validate_settings: |_| Vec::new(),
        lookups: |_| Ok(None),
        metadata: "mutating: true\n",
    };

    /// The same deployed as a validating policy (what flux-gate is).
    const VALIDATING: guard_core::Entry = guard_core::Entry {
        name: "validating",
        metadata: "mutating: false\n",
        ..MUTATING
    };

    fn get<'a>(run: &'a StoryRun, kind: &str, name: &str) -> Option<&'a Value> {
        run.state
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
    }

    #[test]
    fn an_admitted_patch_is_stored_and_a_refused_one_is_not() {
        let s = story(
            r#"steps:
  - name: refused
    by: refused@example.com
    kubectl: patch kustomization a -n apps --type merge -p '{"spec":{"prune":false}}'
    expect: {allowed: false}
  - name: admitted
    kubectl: annotate kustomization a -n apps x=y
    expect: {allowed: true}
  - name: a spec change
    flux: suspend kustomization a -n apps
    expect: {allowed: true}
end:
  - refused: [refused]
  - target: {apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, namespace: apps, name: a}
    path: /spec/prune
    equals: true
"#,
        );
        let run = run(&s, &MUTATING, &mut judge).unwrap();
        assert!(run.passed(), "{}", run.failures().join("\n"));
        let a = get(&run, "Kustomization", "a").unwrap();
        assert_eq!(a["metadata"]["annotations"]["x"], "y");
        // Two writes stored: resourceVersion 13 then 14; only the spec change counts.
        assert_eq!(a["metadata"]["resourceVersion"], "14");
        assert_eq!(a["metadata"]["generation"], 4);
        let sent = &run.steps[1].requests[0].request;
        assert_eq!(sent["options"]["fieldManager"], "kubectl-annotate");
        assert_eq!(sent["object"]["metadata"]["resourceVersion"], "12");
        assert_eq!(a["metadata"]["managedFields"][1]["manager"], "flux", "{a}");
    }

    #[test]
    fn a_namespace_deletion_runs_to_its_end() {
        let s = story(
            r#"steps:
  - name: delete the namespace
    kubectl: delete namespace apps
    expect: {allowed: true}
  - name: the namespace controller empties it
    deleteNamespace: {name: apps}
    each: {allowed: true}
  - name: kustomize-controller removes its finalizer
    by: kustomize-controller
    patch:
      target: {apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, namespace: apps, name: a}
      type: json
      body: [{op: remove, path: /metadata/finalizers}]
      fieldManager: kustomize-controller
    expect: {allowed: true}
  - name: the namespace controller finishes
    deleteNamespace: {name: apps}
    requests: []
end:
  - target: {apiVersion: v1, kind: Namespace, name: apps}
    exists: false
"#,
        );
        let run = run(&s, &MUTATING, &mut judge).unwrap();
        let deleted = &run.steps[1].requests[0].request;
        assert_eq!(deleted["name"], "");
        assert_eq!(deleted["operation"], "DELETE");
        assert_eq!(deleted["options"]["propagationPolicy"], "Background");
        assert_eq!(
            deleted["userInfo"]["username"],
            "system:serviceaccount:kube-system:namespace-controller"
        );
        // The finalizer held the Kustomization, deleting, generation counted.
        let state = &run.steps[2].requests[0].state;
        let a = state.iter().find(|o| o["kind"] == "Kustomization").unwrap();
        assert_eq!(a["metadata"]["deletionTimestamp"], "2026-11-20T10:00:00Z");
        assert_eq!(a["metadata"]["generation"], 4);
        assert!(run.passed(), "{}", run.failures().join("\n"));
        assert!(run.state.is_empty(), "{:?}", run.state);
    }

    #[test]
    fn an_annotation_of_a_terminating_namespace_keeps_it() {
        let s = story(
            r#"steps:
  - name: delete the namespace
    kubectl: delete namespace apps
    expect: {allowed: true}
  - name: annotate it while it waits for its content
    kubectl: annotate namespaces apps x=y
    expect: {allowed: true}
end:
  - target: {apiVersion: v1, kind: Namespace, name: apps}
    path: /metadata/annotations/x
    equals: y
"#,
        );
        let run = run(&s, &MUTATING, &mut judge).unwrap();
        assert!(run.passed(), "{}", run.failures().join("\n"));
        // A Namespace's requests carry its name as their namespace.
        let deleted = &run.steps[0].requests[0].request;
        assert_eq!(deleted["namespace"], "apps");
        assert_eq!(deleted["name"], "apps");
    }

    #[test]
    fn a_failure_names_the_step_and_shows_the_request_and_state() {
        let s = story(
            r#"steps:
  - name: the step
    kubectl: annotate kustomization a -n apps x=y
    expect: {allowed: false}
"#,
        );
        let run = run(&s, &MUTATING, &mut judge).unwrap();
        let failures = run.failures();
        assert_eq!(failures.len(), 1);
        let text = &failures[0];
        assert!(text.starts_with("test/story: step 1 \"the step\", request 1: allowed is true"));
        assert!(text.contains("request sent:") && text.contains("kubectl-annotate"));
        assert!(text.contains("state before it:") && text.contains("resourceVersion: '12'"));
    }

    #[test]
    fn the_garbage_collector_deletes_the_dependents_of_an_owner_that_is_gone() {
        let text = r#"description: test
now: '2026-11-20T10:00:00Z'
cluster:
  - apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    metadata: {name: r, namespace: apps, uid: h1, resourceVersion: '5', generation: 2,
               ownerReferences: [{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, name: gone, uid: k9}]}
    spec: {interval: 5m}
steps:
  - name: collect
    collect: {owner: {apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, namespace: apps, name: gone}}
    each: {allowed: true}
end:
  - target: {apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, namespace: apps, name: r}
    exists: false
"#;
        let s = super::super::parse_story(text, "test/collect").unwrap();
        let run = run(&s, &MUTATING, &mut judge).unwrap();
        assert!(run.passed(), "{}", run.failures().join("\n"));
        let sent = &run.steps[0].requests[0].request;
        assert_eq!(sent["name"], "r");
        assert_eq!(sent["options"]["preconditions"]["uid"], "h1");
        assert_eq!(sent["options"]["propagationPolicy"], "Background");
        assert_eq!(
            sent["userInfo"]["username"],
            "system:serviceaccount:kube-system:generic-garbage-collector"
        );
    }

    #[test]
    fn a_validating_policy_sees_the_object_the_store_completed() {
        let s = story(
            r#"steps:
  - name: create
    create:
      object: {apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization,
               metadata: {name: b, namespace: apps}, spec: {prune: true}}
      fieldManager: kubectl-create
    expect: {allowed: true}
  - name: change
    kubectl: patch kustomization b -n apps --type merge -p '{"spec":{"prune":false}}'
    expect: {allowed: true}
"#,
        );
        let validating = run(&s, &VALIDATING, &mut judge).unwrap();
        let created = &validating.steps[0].requests[0].request["object"];
        assert_eq!(created["metadata"]["generation"], 1);
        assert!(created["metadata"]["uid"].is_string());
        let changed = &validating.steps[1].requests[0].request["object"];
        assert_eq!(changed["metadata"]["generation"], 2);
        let mutating = run(&s, &MUTATING, &mut judge).unwrap();
        let created = &mutating.steps[0].requests[0].request["object"];
        assert!(created["metadata"].get("uid").is_none());
        let changed = &mutating.steps[1].requests[0].request["object"];
        assert_eq!(changed["metadata"]["generation"], 1);
        assert_eq!(changed["metadata"]["resourceVersion"], "13");
    }
}

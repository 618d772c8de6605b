//! `devtools conformance`: every corpus case through the real `kwctl` and the
//! real `policy-server`, each compared field by field with the harness's
//! answer under the same configuration (the engine's policy id, mode,
//! `allowedToMutate` and grants; the case's request, settings, context and
//! instant). The corpus expectations themselves are checked by `replay`; this
//! run checks that the harness those expectations were written against
//! behaves as the real engines do.
//!
//! The engines run as a PolicyServer without extra `env` runs: without
//! `RUST_BACKTRACE`, which would append a backtrace to every callback error
//! (`Callback evaluation failure: {e:?}` prints anyhow's backtrace when it is
//! set; `crates/policy-evaluator/src/runtimes/callback.rs`,
//! `send_request_and_wait_for_response`).

pub mod apiserver;
pub mod compare;
pub mod kwctl;

pub mod policy_server;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use conformance::cluster::Recorded;
use conformance::response::{PolicyMode, ServerOptions};
use conformance::{Case, Reply};
use futures_util::StreamExt as _;
use guard_core::Timestamp;
use serde::Deserialize;

use self::apiserver::ApiServer;
use self::compare::{differences, Answer};
use self::kwctl::Kwctl;
use self::policy_server::{Entry, PolicyServer};
use host_test::capabilities::{ContextAwareResource, Grants, Source};
use host_test::harness::{Evaluation, Policy, Trace};
use host_test::host::Limits;
use host_test::replay::policy_of;

/// The engines compared, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    Kwctl,
    PolicyServer,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Kwctl => "kwctl",
            Engine::PolicyServer => "policy-server",
        }
    }
}

/// How one case fared on one engine.
#[derive(Debug, Clone)]
pub enum Verdict {
    Identical,
    Differing(Vec<String>),
    /// Differing, and listed in the allow-list with this reason.
    AllowListed(String),
    /// The engine could not run the case (a failure of the run, not a skip).
    Failed(String),
    /// The engine is not installed here: the line saying so.
    Skipped(String),
}

pub struct Options {
    pub dist: PathBuf,
    /// Where each engine run keeps its files (requests, sessions, logs).
    pub work: PathBuf,
    pub engines: Vec<Engine>,
    pub allow_list: Vec<Allowed>,
    /// Concurrent kwctl processes.
    pub jobs: usize,
}

/// One allow-list entry: a known, explained difference.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowed {
    pub case: String,
    pub engine: Engine,
    pub reason: String,
}

pub fn load_allow_list(path: &Path) -> Result<Vec<Allowed>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Per engine, per case id.
pub type Results = BTreeMap<Engine, BTreeMap<String, Verdict>>;

/// Writes the instant the pinned clock reports.
pub fn pin_clock(file: &Path, now: Timestamp) -> Result<(), String> {
    // Written beside it and renamed over it: a running engine reads the file
    // at every clock call, and a rewrite in place shows it empty for a
    // moment, which fails the call (EIO) and panics policy-server's
    // `SystemTime::now`. A rename is atomic: a reader sees the old or the new.
    let next = file.with_extension("next");
    std::fs::write(&next, now.as_nanosecond().to_string())
        .and_then(|()| std::fs::rename(&next, file))
        .map_err(|e| format!("cannot pin the clock in {}: {e}", file.display()))
}

/// Runs an engine as a PolicyServer without extra `env` runs: without
/// `RUST_BACKTRACE` (see the module docs).
pub fn without_backtrace(command: &mut std::process::Command) -> &mut std::process::Command {
    command
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
}

/// An engine process as the conformance run starts it: no backtraces, and
/// its wall clock pinned (`pinned-clock`) at the instant in `now_file`.
fn engine_command(binary: &Path, clock: &Path, now_file: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(binary);
    without_backtrace(command.as_std_mut())
        .env("LD_PRELOAD", clock)
        .env("RECONCILE_GUARD_NOW_FILE", now_file);
    command.kill_on_drop(true);
    command
}

/// Writes `text` to `dir/name`, naming the file in the error.
fn write_file(dir: &Path, name: &str, text: &str) -> Result<PathBuf, String> {
    let path = dir.join(name);
    std::fs::write(&path, text)
        .map(|()| path)
        .map_err(|e| format!("cannot write {name}: {e}"))
}

/// The last `n` lines of an engine's output, on one line.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let skip = lines.len().saturating_sub(n);
    lines.into_iter().skip(skip).collect::<Vec<_>>().join(" | ")
}

/// policy-server's default `--policy-timeout`, which both engines apply.
const TIMEOUT_SECONDS: u64 = 2;

/// The harness's answer under one engine's configuration, its lookups
/// answered from the case's recorded objects or from a kwctl session.
fn reference(
    policy: &Policy,
    case: &Case,
    server: ServerOptions,
    granted: Vec<ContextAwareResource>,
    source: Source,
) -> (Answer, Trace) {
    let eval = Evaluation {
        now: case.now,
        limits: Limits {
            timeout_seconds: Some(TIMEOUT_SECONDS),
            memory_bytes: None,
        },
        source,
        grants: Grants::all_capabilities(granted),
        server,
    };
    let (response, trace) =
        policy.evaluate_traced(&case.admission_request(), &case.settings, &eval);
    let answer = match response {
        Ok(Reply::Response(r)) => Answer::Response(r),
        Ok(Reply::NoAnswer(none)) => Answer::NoAnswer(none.to_string()),
        Err(failure) => Answer::Refused {
            status: Some(failure.status),
            detail: failure.reason,
        },
    };
    (answer, trace)
}

/// [`run`] on a runtime of its own, for callers that are not async (the
/// `conformance` command, tests).
pub fn run_blocking(cases: &[Case], options: &Options) -> Result<Results, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?
        .block_on(run(cases, options))
}

/// Runs every case on every engine installed; an engine that is not is
/// reported as skipped with the reason, one that is misconfigured (a variable
/// naming no file, no pinned-clock library) fails the run.
pub async fn run(cases: &[Case], options: &Options) -> Result<Results, String> {
    let mut modules = BTreeMap::new();
    for case in cases {
        if let std::collections::btree_map::Entry::Vacant(slot) = modules.entry(policy_of(case)) {
            let name = slot.key();
            let path =
                std::fs::canonicalize(options.dist.join(format!("{name}.wasm"))).map_err(|e| {
                    format!(
                        "{name}.wasm in {}: {e} (run `make build`)",
                        options.dist.display()
                    )
                })?;
            let policy = Policy::load(&path).map_err(|e| format!("{e:#}"))?;
            slot.insert((path, policy));
        }
    }
    let mut results = Results::new();
    for &engine in &options.engines {
        let found = match engine {
            Engine::Kwctl => host_test::locate::engine("kwctl", "KWCTL"),
            Engine::PolicyServer => host_test::locate::engine("policy-server", "POLICY_SERVER"),
        }?;
        let verdicts = match found {
            host_test::locate::Found::Absent(reason) => cases
                .iter()
                .map(|c| (c.id.clone(), Verdict::Skipped(reason.clone())))
                .collect(),
            host_test::locate::Found::At(binary) => {
                let binary = std::fs::canonicalize(&binary).map_err(|e| e.to_string())?;
                let clock = host_test::locate::pinned_clock()?;
                let work = options.work.join(engine.name());
                std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
                let work = std::fs::canonicalize(&work).map_err(|e| e.to_string())?;
                match engine {
                    Engine::Kwctl => {
                        let kwctl = Kwctl { binary, clock };
                        run_kwctl(&kwctl, cases, &modules, &work, options.jobs).await
                    }
                    Engine::PolicyServer => {
                        run_policy_server(&binary, &clock, cases, &modules, &work).await
                    }
                }
            }
        };
        let verdicts = verdicts
            .into_iter()
            .map(|(id, v)| {
                let v = allow(&options.allow_list, engine, &id, v);
                (id, v)
            })
            .collect();
        results.insert(engine, verdicts);
    }
    Ok(results)
}

/// Allow-list entries whose case ran on their engine and did not differ:
/// a fixed difference must leave the list.
pub fn stale_entries<'a>(list: &'a [Allowed], results: &Results) -> Vec<&'a Allowed> {
    list.iter()
        .filter(|a| {
            results
                .get(&a.engine)
                .and_then(|verdicts| verdicts.get(&a.case))
                .is_some_and(|v| !matches!(v, Verdict::AllowListed(_) | Verdict::Skipped(_)))
        })
        .collect()
}

fn allow(list: &[Allowed], engine: Engine, id: &str, verdict: Verdict) -> Verdict {
    match verdict {
        Verdict::Differing(d) => match list.iter().find(|a| a.engine == engine && a.case == id) {
            Some(a) => Verdict::AllowListed(a.reason.clone()),
            None => Verdict::Differing(d),
        },
        other => other,
    }
}

type Modules = BTreeMap<String, (PathBuf, Policy)>;

fn verdict(reference: &Answer, engine: &Answer) -> Verdict {
    let found = differences(reference, engine);
    if found.is_empty() {
        Verdict::Identical
    } else {
        Verdict::Differing(found)
    }
}

async fn run_kwctl(
    kwctl: &Kwctl,
    cases: &[Case],
    modules: &Modules,
    work: &Path,
    jobs: usize,
) -> Vec<(String, Verdict)> {
    let runs = cases.iter().map(|case| async move {
        let Some((path, policy)) = modules.get(&policy_of(case)) else {
            return (case.id.clone(), Verdict::Failed("no module".into()));
        };
        // What `kwctl run` configures: id `policy-from-cli`, protect mode,
        // allowed to mutate, the metadata's contextAwareResources.
        let server = ServerOptions {
            policy_id: "policy-from-cli".into(),
            mode: PolicyMode::Protect,
            allowed_to_mutate: true,
            rejection_message: None,
        };
        let granted = policy.context_aware_resources();
        let recorded = Source::Recorded(case.context.clone().into());
        let (mut expected, trace) =
            reference(policy, case, server.clone(), granted.clone(), recorded);
        // kwctl answers from a session, and a session holds only calls that
        // ended: a LIST that policy-server never answers is written as the
        // refusal kube-apiserver gave (`capabilities::Host`), and kwctl is
        // compared with the harness replaying that same session.
        if matches!(expected, Answer::NoAnswer(_)) {
            let session = Source::Session(trace.session.clone());
            expected = reference(policy, case, server, granted, session).0;
        }
        let dir = work.join(case.id.replace('/', "--"));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return (case.id.clone(), Verdict::Failed(e.to_string()));
        }
        let got = kwctl.run(path, case, &trace.session, &dir).await;
        (case.id.clone(), verdict(&expected, &got))
    });
    futures_util::stream::iter(runs)
        .buffer_unordered(jobs.max(1))
        .collect()
        .await
}

/// One policy-server per distinct recorded context (policy-server caches
/// lookups process-wide: `get_resource` for 5 s, lists in reflectors for
/// ever), with every configuration its cases use.
async fn run_policy_server(
    binary: &Path,
    clock: &Path,
    cases: &[Case],
    modules: &Modules,
    work: &Path,
) -> Vec<(String, Verdict)> {
    let mut groups: Vec<(&[Recorded], Vec<&Case>)> = Vec::new();
    for case in cases {
        match groups
            .iter_mut()
            .find(|(c, _)| *c == case.context.as_slice())
        {
            Some((_, members)) => members.push(case),
            None => groups.push((&case.context, vec![case])),
        }
    }
    let mut out = Vec::new();
    for (index, (context, members)) in groups.iter().enumerate() {
        let dir = work.join(format!("context-{index}"));
        match serve_group(binary, clock, context, members, modules, &dir).await {
            Ok(verdicts) => out.extend(verdicts),
            Err(e) => out.extend(
                members
                    .iter()
                    .map(|c| (c.id.clone(), Verdict::Differing(vec![e.clone()]))),
            ),
        }
    }
    out
}

/// A case's configuration as a `policies.yml` entry, without its id.
fn entry_of(case: &Case, module: &Path) -> Result<Entry, String> {
    let policy = host_test::replay::entry_of(case)?;
    let options = case.server_options(policy)?;
    Ok(Entry {
        id: options.policy_id,
        module: module.to_path_buf(),
        settings: case.settings.clone(),
        mode: options.mode,
        allowed_to_mutate: options.allowed_to_mutate,
        context_aware_resources: case.granted_resources(policy)?,
    })
}

async fn serve_group(
    binary: &Path,
    clock: &Path,
    context: &[Recorded],
    cases: &[&Case],
    modules: &Modules,
    dir: &Path,
) -> Result<Vec<(String, Verdict)>, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    // Each distinct configuration gets an entry; the first of a policy keeps
    // the deployed id (`clusterwide-<policy>`), later ones a numbered suffix.
    let mut entries: Vec<Entry> = Vec::new();
    let mut assigned = Vec::new();
    for case in cases {
        let module = &modules
            .get(&policy_of(case))
            .ok_or_else(|| format!("no module for {}", case.id))?
            .0;
        let mut entry = entry_of(case, module)?;
        let same = |e: &Entry| {
            Entry {
                id: e.id.clone(),
                ..entry.clone()
            } == *e
        };
        let id = match entries.iter().find(|e| same(e)) {
            Some(existing) => existing.id.clone(),
            None => {
                let taken = entries
                    .iter()
                    .filter(|e| e.id.starts_with(&entry.id))
                    .count();
                if taken > 0 {
                    entry.id = format!("{}-{}", entry.id, taken + 1);
                }
                entries.push(entry.clone());
                entry.id
            }
        };
        assigned.push(id);
    }
    let granted: Vec<ContextAwareResource> = entries
        .iter()
        .flat_map(|e| e.context_aware_resources.clone())
        .collect();
    let api = ApiServer::start(context.to_vec(), &granted)
        .await
        .map_err(|e| format!("the test API server does not start: {e}"))?;
    let now_file = dir.join("now");
    let first = cases.first().map_or(Timestamp::UNIX_EPOCH, |c| c.now);
    pin_clock(&now_file, first)?;
    let server =
        PolicyServer::start(binary, clock, &now_file, dir, &entries, &api.kubeconfig()).await?;
    let mut out = Vec::new();
    for (case, id) in cases.iter().zip(&assigned) {
        let found = entries
            .iter()
            .find(|e| &e.id == id)
            .zip(modules.get(&policy_of(case)));
        let Some((entry, (_, policy))) = found else {
            let problem = format!("no policies.yml entry or module for {}", case.id);
            out.push((case.id.clone(), Verdict::Differing(vec![problem])));
            continue;
        };
        let server_options = ServerOptions {
            policy_id: entry.id.clone(),
            mode: entry.mode,
            allowed_to_mutate: entry.allowed_to_mutate,
            rejection_message: None,
        };
        let (expected, _) = reference(
            policy,
            case,
            server_options,
            entry.context_aware_resources.clone(),
            Source::Recorded(case.context.clone().into()),
        );
        pin_clock(&now_file, case.now)?;
        let got = server.review(id, &case.admission_request()).await;
        out.push((case.id.clone(), verdict(&expected, &got)));
    }
    server.stop().await;
    drop(api);
    Ok(out)
}

/// Prints the per-engine table and every difference; returns the cases that
/// failed (differing on an engine, or an engine that could not run them). A
/// case no engine compared is counted as skipped, not passed.
pub fn report(results: &Results, cases: &[Case]) -> usize {
    println!(
        "{:<15} {:>6} {:>10} {:>10} {:>13} {:>8}",
        "engine", "cases", "identical", "differing", "allow-listed", "skipped"
    );
    for (engine, verdicts) in results {
        let count = |f: fn(&Verdict) -> bool| verdicts.values().filter(|v| f(v)).count();
        println!(
            "{:<15} {:>6} {:>10} {:>10} {:>13} {:>8}",
            engine.name(),
            verdicts.len(),
            count(|v| matches!(v, Verdict::Identical)),
            count(|v| matches!(v, Verdict::Differing(_) | Verdict::Failed(_))),
            count(|v| matches!(v, Verdict::AllowListed(_))),
            count(|v| matches!(v, Verdict::Skipped(_))),
        );
    }
    let (mut failed, mut skipped) = (0, 0);
    for case in cases {
        let compared = results.values().any(|verdicts| {
            verdicts
                .get(&case.id)
                .is_some_and(|v| !matches!(v, Verdict::Skipped(_)))
        });
        let mut problems = Vec::new();
        for (engine, verdicts) in results {
            match verdicts.get(&case.id) {
                Some(Verdict::Differing(d)) => {
                    problems.extend(d.iter().map(|p| format!("{}: {p}", engine.name())));
                }
                Some(Verdict::Failed(reason)) => {
                    problems.push(format!("{}: could not run: {reason}", engine.name()));
                }
                _ => {}
            }
        }
        if !problems.is_empty() {
            failed += 1;
            println!("\nFAIL {}", case.id);
            for p in problems {
                println!("  {p}");
            }
        } else if !compared {
            skipped += 1;
        }
    }
    for (engine, verdicts) in results {
        if let Some(Verdict::Skipped(reason)) =
            verdicts.values().find(|v| matches!(v, Verdict::Skipped(_)))
        {
            println!("\n{} comparison skipped: {reason}", engine.name());
        }
    }
    let passed = cases.len() - failed - skipped;
    if skipped == 0 {
        println!("\n{passed} passed, {failed} failed");
    } else {
        println!("\n{passed} passed, {failed} failed, {skipped} skipped");
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(case: &str) -> Allowed {
        Allowed {
            case: case.into(),
            engine: Engine::PolicyServer,
            reason: "known".into(),
        }
    }

    #[test]
    fn an_allow_listed_difference_passes_and_a_fixed_one_is_stale() {
        let list = vec![listed("p/hangs"), listed("p/fixed")];
        let differing = Verdict::Differing(vec!["x".into()]);
        let hangs = allow(&list, Engine::PolicyServer, "p/hangs", differing.clone());
        assert!(matches!(hangs, Verdict::AllowListed(_)));
        let elsewhere = allow(&list, Engine::Kwctl, "p/hangs", differing);
        assert!(matches!(elsewhere, Verdict::Differing(_)));
        let mut results = Results::new();
        results.insert(
            Engine::PolicyServer,
            BTreeMap::from([
                ("p/hangs".to_string(), hangs),
                ("p/fixed".to_string(), Verdict::Identical),
            ]),
        );
        let stale: Vec<&str> = stale_entries(&list, &results)
            .iter()
            .map(|a| a.case.as_str())
            .collect();
        assert_eq!(stale, ["p/fixed"]);
    }
}

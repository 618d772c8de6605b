//! `devtools bench`: module size, compile time, fresh-instance and warm
//! evaluation in wasm, and the native evaluation of the same code on the same
//! input, all in one run. A benchmark, not a test: nothing asserts timings.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use conformance::cluster::Recorded;
use conformance::{Case, RecordedCluster};
use guard_core::{Context, Timestamp};
use serde::Serialize;
use serde_json::Value;

use host_test::capabilities::{Exchange, Grants, Host, Source};
use host_test::harness::Policy;
use host_test::host::{thread_cpu_time, CallError, Limits};
use host_test::replay::{median, percentile};

/// One input to time: a request, settings and recorded cluster state.
pub struct Input {
    pub label: String,
    pub request: Value,
    pub settings: Value,
    pub now: Timestamp,
    /// Shared, so that each evaluation's host holds it without a copy.
    pub context: Arc<[Recorded]>,
    /// The kinds the policy may read, when the case says (by default those
    /// the module's metadata lists).
    pub granted: Option<Vec<host_test::capabilities::ContextAwareResource>>,
    /// Also time the official policy on this request ([`floor_fresh_us`]).
    pub with_floor: bool,
}

impl Input {
    pub fn from_case(case: &Case) -> Self {
        Self {
            label: case.id.split('/').nth(1).unwrap_or(&case.id).to_string(),
            request: case.admission_request(),
            settings: case.settings.clone(),
            now: case.now,
            context: case.context.clone().into(),
            granted: case.context_aware_resources.clone(),
            with_floor: false,
        }
    }
}

/// The policy's worst case (`conformance::worst_case`, under `root`): a
/// corpus case holding the worst input its settings and policy-server allow,
/// timed beside the typical object. Written by the policy's
/// `tests/worst_case.rs`, which `make bench` runs first.
pub fn worst_case(root: &Path, policy: &str) -> Result<Option<Input>> {
    let file = conformance::worst_case::path(root, policy);
    if !file.is_file() {
        anyhow::bail!(
            "{} is missing: run `cargo test --profile host -p {policy} --test worst_case` \
             (make bench does) to write it",
            file.display()
        );
    }
    let cases = conformance::load_cases(&file).map_err(anyhow::Error::msg)?;
    Ok(cases.first().map(|case| Input {
        label: format!("worst case: {policy}-worst-case.yaml"),
        with_floor: true,
        ..Input::from_case(case)
    }))
}

/// The budget a worst case is held to: the module's own time on a fresh
/// instance (the host's share of answering lookups taken out) at most this
/// many times the read floor's own time on the same bytes
/// ([`read_floor_us`]), and the instance's linear memory.
pub const BUDGET_READ_FLOOR_MULTIPLE: f64 = 4.0;
pub const BUDGET_MEMORY_BYTES: usize = 64 << 20;

/// Each timing loop stops after this long, having taken at least
/// [`MIN_SAMPLES`]: a worst case may take seconds per evaluation.
pub const TIME_PER_LOOP_SECONDS: f64 = 3.0;
pub const MIN_SAMPLES: usize = 3;

#[derive(Debug, Serialize)]
pub struct Row {
    pub policy: String,
    pub input: String,
    pub module_bytes: usize,
    pub module_gzip_bytes: usize,
    pub compile_ms: f64,
    /// The waPC `validate` payload (request and settings), in bytes.
    pub payload_bytes: usize,
    /// The recorded cluster objects the policy may look up, as JSON.
    pub context_bytes: usize,
    /// What one fresh evaluation answered: `accepted`, `accepted, mutated`,
    /// `rejected`, or why there was no answer (the policy timeout included).
    pub outcome: String,
    pub fresh_median_us: f64,
    pub fresh_p99_us: f64,
    pub fresh_max_us: f64,
    /// Fresh evaluations timed (fewer than `iterations` when they are slow).
    pub fresh_samples: usize,
    /// Of the fresh time, the median spent in the host answering lookups:
    /// the serializing of cluster objects policy-server does too, not the
    /// module's work.
    pub fresh_host_median_us: f64,
    /// Warm and native timings are left out (`None`) when the fresh
    /// evaluation gave no answer: a native run has no timeout to stop it.
    pub warm_median_us: Option<f64>,
    pub warm_p99_us: Option<f64>,
    pub native_median_us: Option<f64>,
    pub native_p99_us: Option<f64>,
    /// warm wasm / native, medians.
    pub ratio_warm_native: Option<f64>,
    /// The instance's linear memory at its largest, after one fresh
    /// evaluation (deterministic: it depends on the input alone).
    pub peak_memory_bytes: usize,
    /// `peak_memory_bytes / (payload_bytes + context_bytes)`.
    pub memory_per_input_byte: f64,
    /// Of the fresh time, the median the module spent itself (each
    /// evaluation's time less its host share).
    pub fresh_own_median_us: f64,
    /// The read floor on the same request, settings and lookup answers
    /// ([`read_floor_us`]): its own fresh median and its host share; worst
    /// cases only.
    pub read_floor_own_median_us: Option<f64>,
    pub read_floor_host_median_us: Option<f64>,
    /// For a policy that mutated, the floor that also writes the object back
    /// whole (the protocol hands back a whole `mutated_object`, never a
    /// patch): its own fresh median. The budget is then held to it.
    pub write_floor_own_median_us: Option<f64>,
    /// The policy's own time over the floor's (the write floor where there
    /// is one, else the read floor), the two timed in turn: the median of
    /// the rounds' ratios ([`Rounds::ratios`]).
    pub own_over_read_floor: Option<f64>,
    /// Those ratios' first and third quartiles, and the rounds timed.
    pub own_over_floor_quartiles: Option<(f64, f64)>,
    pub floor_rounds: Option<usize>,
    /// An answer, peak memory under [`BUDGET_MEMORY_BYTES`] and, where the
    /// read floor was measured, the own time within
    /// [`BUDGET_READ_FLOOR_MULTIPLE`] times it.
    pub within_budget: bool,
    /// Kubewarden's official annotations policy on the same request, fresh
    /// median (see [`floor_fresh_us`]); worst cases only, and only when
    /// that module is at hand.
    pub floor_fresh_median_us: Option<f64>,
    pub iterations: usize,
}

fn gzip_len(bytes: &[u8]) -> usize {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let _ = enc.write_all(bytes);
    enc.finish().map(|v| v.len()).unwrap_or(0)
}

/// Up to `iterations` timings in microseconds, fewer once the loop has run
/// for [`TIME_PER_LOOP_SECONDS`] (never fewer than [`MIN_SAMPLES`]).
fn time<F: FnMut()>(iterations: usize, mut f: F) -> Vec<f64> {
    time_after(iterations, || (), |()| f())
}

/// [`time`], with `setup` run untimed before each timed `f`.
fn time_after<S, T: FnMut() -> S, F: FnMut(S)>(
    iterations: usize,
    mut setup: T,
    mut f: F,
) -> Vec<f64> {
    let loop_start = Instant::now();
    let mut samples = Vec::with_capacity(iterations.min(1 << 16));
    while samples.len() < iterations {
        let prepared = setup();
        let start = Instant::now();
        f(prepared);
        samples.push(start.elapsed().as_secs_f64() * 1e6);
        if samples.len() >= MIN_SAMPLES
            && loop_start.elapsed().as_secs_f64() > TIME_PER_LOOP_SECONDS
        {
            break;
        }
    }
    samples
}

/// Whether the guest's reply carries a `mutated_object`.
fn mutated(reply: &Result<Vec<u8>, CallError>) -> bool {
    reply
        .as_ref()
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(bytes).ok())
        .is_some_and(|v| v.get("mutated_object").is_some_and(|m| !m.is_null()))
}

/// How the guest answered, in a word or two.
fn outcome(reply: &Result<Vec<u8>, CallError>) -> String {
    match reply {
        Ok(bytes) => match serde_json::from_slice::<Value>(bytes) {
            Ok(v) => {
                let accepted = v.get("accepted").and_then(Value::as_bool) == Some(true);
                match (accepted, mutated(reply)) {
                    (true, true) => "accepted, mutated".into(),
                    (true, false) => "accepted".into(),
                    (false, _) => "rejected".into(),
                }
            }
            Err(_) => "unreadable reply".into(),
        },
        Err(CallError::Timeout) => "timeout".into(),
        Err(e) => e.to_string(),
    }
}

/// What one fresh evaluation of an input left: the guest's answer (see
/// [`Row::outcome`]), whether there was one, and the peak linear memory.
#[derive(Debug, Clone)]
pub struct Fresh {
    pub outcome: String,
    pub answered: bool,
    pub peak_memory_bytes: usize,
    pub payload_bytes: usize,
}

/// Evaluates `input` once on a fresh instance of `policy`, as `bench` does
/// before timing it (there with policy-server's timeout and no memory cap).
pub fn evaluate_fresh(policy: &Policy, input: &Input, limits: &Limits) -> Result<Fresh> {
    let request = conformance::as_policy_server_sends(&input.request)
        .map_err(|e| anyhow::anyhow!("{}: {e}", input.label))?;
    let payload = conformance::validate_payload(&request, &input.settings);
    let granted = input
        .granted
        .clone()
        .unwrap_or_else(|| policy.context_aware_resources());
    let (reply, peak_memory_bytes, _) = evaluate_once(
        policy,
        input,
        limits,
        recorded_host(input, &granted),
        &payload,
    );
    Ok(Fresh {
        outcome: outcome(&reply),
        answered: reply.is_ok(),
        peak_memory_bytes,
        payload_bytes: payload.len(),
    })
}

/// A host answering lookups of the `granted` kinds from the input's
/// recorded cluster, as policy-server answers them from its caches.
pub(crate) fn recorded_host(
    input: &Input,
    granted: &[host_test::capabilities::ContextAwareResource],
) -> Box<Host> {
    Box::new(Host::new(
        Grants::all_capabilities(granted.to_vec()),
        Source::Recorded(Arc::clone(&input.context)),
    ))
}

/// One fresh instance, one `validate` call: the reply, the peak memory and
/// the lookups the guest made.
pub(crate) fn evaluate_once(
    policy: &Policy,
    input: &Input,
    limits: &Limits,
    host: Box<Host>,
    payload: &[u8],
) -> (Result<Vec<u8>, CallError>, usize, Vec<Exchange>) {
    match policy.module().instantiate(input.now, limits, host) {
        Ok(mut instance) => {
            let reply = instance.call("validate", payload);
            (reply, instance.peak_memory_bytes(), instance.session())
        }
        Err(e) => (Err(e), 0, Vec::new()),
    }
}

/// Kubewarden's official annotations policy and its settings, compiled once
/// for the floors.
pub struct Official {
    pub policy: Policy,
    pub settings: Value,
}

impl Official {
    /// `None` when the module is not installed (`path` says why): the floors
    /// are left out, and the line saying so is printed.
    pub fn load(path: &Result<PathBuf, String>, settings: &str) -> Result<Option<Self>> {
        let path = match path {
            Ok(path) => path,
            Err(reason) => {
                println!("worst-case floors skipped: {reason}");
                return Ok(None);
            }
        };
        Ok(Some(Self {
            policy: Policy::load(path)?,
            settings: serde_json::from_str(settings).context("--official-settings")?,
        }))
    }
}

/// Benchmarks one policy module on the given inputs, with the read floor
/// (and the official policy, when it is at hand) under those that ask for it.
#[expect(
    clippy::too_many_lines,
    reason = "one module's measurements, taken and printed in the order of its table"
)]
pub fn bench_policy(
    wasm_path: &Path,
    inputs: &[Input],
    iterations: usize,
    read_floor: &Policy,
    official: Option<&Official>,
) -> Result<Vec<Row>> {
    let wasm = std::fs::read(wasm_path).with_context(|| {
        format!(
            "cannot read {}; run `make build` first",
            wasm_path.display()
        )
    })?;
    let name = wasm_path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("policy")
        .to_string();
    let compile_start = Instant::now();
    let policy = Policy::from_bytes(name.clone(), &wasm)?;
    let compile_ms = compile_start.elapsed().as_secs_f64() * 1e3;
    let entry =
        catalog::entry(&name).with_context(|| format!("no native evaluator named {name}"))?;
    let gzip = gzip_len(&wasm);
    let limits = Limits::default();
    let metadata_grants = policy.context_aware_resources();
    let mut rows = Vec::new();
    for input in inputs {
        let allowed = input.granted.as_ref().unwrap_or(&metadata_grants);
        let request = conformance::as_policy_server_sends(&input.request)
            .map_err(|e| anyhow::anyhow!("{}: {e}", input.label))?;
        let payload = conformance::validate_payload(&request, &input.settings);
        let context_bytes: usize = input
            .context
            .iter()
            .filter_map(|r| r.object.as_ref())
            .map(|o| serde_json::to_vec(o).map_or(0, |v| v.len()))
            .sum();
        let host = || recorded_host(input, allowed);
        let (reply, peak_memory_bytes, lookups) =
            evaluate_once(&policy, input, &limits, host(), &payload);
        let answered = reply.is_ok();
        // The recorded cluster is copied into each host untimed:
        // policy-server serves lookups from caches it keeps.
        let (fresh, host_times) = time_fresh(&policy, input, &payload, iterations, host);
        let own = own_times(&fresh, &host_times);
        // The floor, reading only or also writing the object back, timed
        // in turn with the policy ([`read_floor_us`]).
        let floor_of = |write_back: bool| -> Result<Against> {
            let paired = Paired {
                policy: &policy,
                payload: &payload,
                host: &host,
            };
            let rounds = read_floor_us(
                read_floor, input, &lookups, allowed, write_back, iterations, &paired,
            )?;
            Ok(Against::of(&rounds))
        };
        let read_floor = input.with_floor.then(|| floor_of(false)).transpose()?;
        let write_floor = (input.with_floor && mutated(&reply))
            .then(|| floor_of(true))
            .transpose()?;
        // A policy that mutated is held to the floor that writes back too.
        let held_to = write_floor.as_ref().or(read_floor.as_ref());
        let own_over_read_floor = held_to.map(|a| a.ratio).filter(|ratio| *ratio > 0.0);
        let (warm, native) = if answered {
            let mut warm_instance = policy
                .module()
                .instantiate(input.now, &limits, host())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let _ = warm_instance.call("validate", &payload);
            let warm = time(iterations, || {
                let _ = warm_instance.call("validate", &payload);
            });
            let cluster = RecordedCluster::new(&input.context);
            let ctx = Context::new(input.now, &cluster);
            let native = time(iterations, || {
                std::hint::black_box((entry.validate)(std::hint::black_box(&payload), &ctx));
            });
            (Some(warm), Some(native))
        } else {
            (None, None)
        };
        let warm_median = warm.as_deref().map(median);
        let native_median = native.as_deref().map(median);
        let fresh_median = median(&fresh);
        rows.push(Row {
            policy: name.clone(),
            input: input.label.clone(),
            module_bytes: wasm.len(),
            module_gzip_bytes: gzip,
            compile_ms,
            payload_bytes: payload.len(),
            context_bytes,
            outcome: outcome(&reply),
            fresh_median_us: fresh_median,
            fresh_p99_us: percentile(&fresh, 99.0),
            fresh_max_us: fresh.iter().copied().fold(0.0, f64::max),
            fresh_samples: fresh.len(),
            fresh_host_median_us: median(&host_times),
            warm_median_us: warm_median,
            warm_p99_us: warm.as_deref().map(|w| percentile(w, 99.0)),
            native_median_us: native_median,
            native_p99_us: native.as_deref().map(|n| percentile(n, 99.0)),
            ratio_warm_native: match (warm_median, native_median) {
                (Some(w), Some(n)) if n > 0.0 => Some(w / n),
                _ => None,
            },
            peak_memory_bytes,
            memory_per_input_byte: peak_memory_bytes as f64
                / (payload.len() + context_bytes).max(1) as f64,
            fresh_own_median_us: median(&own),
            read_floor_own_median_us: read_floor.as_ref().map(|a| a.own),
            read_floor_host_median_us: read_floor.as_ref().map(|a| a.host),
            write_floor_own_median_us: write_floor.as_ref().map(|a| a.own),
            own_over_read_floor,
            own_over_floor_quartiles: held_to.map(|a| a.quartiles),
            floor_rounds: held_to.map(|a| a.rounds),
            within_budget: answered
                && peak_memory_bytes <= BUDGET_MEMORY_BYTES
                && own_over_read_floor.is_none_or(|x| x <= BUDGET_READ_FLOOR_MULTIPLE),
            floor_fresh_median_us: match official {
                Some(o) if input.with_floor => {
                    Some(floor_fresh_us(&o.policy, &o.settings, input, iterations)?)
                }
                _ => None,
            },
            iterations,
        });
    }
    Ok(rows)
}

/// The floor under an input's fresh time: Kubewarden's official annotations
/// policy (`official`, with its own `settings`) evaluating the same request
/// on a fresh instance, median in microseconds. It decodes the request with
/// Kubewarden's Rust SDK and reads the annotations, so what it costs is what
/// any policy pays to be handed that request.
pub fn floor_fresh_us(
    official: &Policy,
    settings: &Value,
    input: &Input,
    iterations: usize,
) -> Result<f64> {
    let request = conformance::as_policy_server_sends(&input.request)
        .map_err(|e| anyhow::anyhow!("{}: {e}", input.label))?;
    let payload = conformance::validate_payload(&request, settings);
    let limits = Limits::default();
    let host = || {
        Box::new(Host::new(
            Grants::all_capabilities(Vec::new()),
            Source::Recorded(Vec::new().into()),
        ))
    };
    let (reply, _, _) = evaluate_once(official, input, &limits, host(), &payload);
    reply.map_err(|e| anyhow::anyhow!("the official policy on {}: {e}", input.label))?;
    Ok(median(
        &time_fresh(official, input, &payload, iterations, host).0,
    ))
}

/// Fresh evaluations of `payload`, each on a new instance with a new host
/// (made untimed: policy-server serves lookups from caches it keeps): the
/// times and the host's share of each, in microseconds.
pub(crate) fn time_fresh(
    policy: &Policy,
    input: &Input,
    payload: &[u8],
    iterations: usize,
    host: impl FnMut() -> Box<Host>,
) -> (Vec<f64>, Vec<f64>) {
    let limits = Limits::default();
    let mut host_times = Vec::new();
    let fresh = time_after(iterations, host, |host| {
        if let Ok(mut i) = policy.module().instantiate(input.now, &limits, host) {
            let _ = i.call("validate", payload);
            host_times.push(i.host_time().as_secs_f64() * 1e6);
        }
    });
    (fresh, host_times)
}

/// Each evaluation's time less its host share.
pub(crate) fn own_times(fresh: &[f64], host: &[f64]) -> Vec<f64> {
    fresh.iter().zip(host).map(|(f, h)| f - h).collect()
}

/// The policy a floor is timed beside: its module, payload and host.
pub struct Paired<'a> {
    pub policy: &'a Policy,
    pub payload: &'a [u8],
    pub host: &'a dyn Fn() -> Box<Host>,
}

/// A floor timed in turn with a policy, summed up: the floor's own and host
/// medians, the median of the rounds' ratios, their quartiles, the rounds.
struct Against {
    own: f64,
    host: f64,
    ratio: f64,
    quartiles: (f64, f64),
    rounds: usize,
}

impl Against {
    fn of(rounds: &Rounds) -> Self {
        let ratios = rounds.ratios();
        Self {
            own: median(&rounds.floor_own()),
            host: median(&rounds.floor_host),
            ratio: median(&ratios),
            quartiles: (percentile(&ratios, 25.0), percentile(&ratios, 75.0)),
            rounds: ratios.len(),
        }
    }
}

/// The read floor under an input (`host-test/read-floor`): a module that
/// parses the same request and the policy's settings strictly, makes the
/// same lookups (`lookups`, those the policy made) against the same
/// recorded cluster and parses each answer, keeping nothing, then allows;
/// with `write_back` (the policy mutated) it hands the object back whole.
/// Timed in turn with `beside`, one evaluation of each per round, the first
/// of the two alternating, so that the machine's load and any warmth one
/// leaves the other fall on both alike.
pub fn read_floor_us(
    floor: &Policy,
    input: &Input,
    lookups: &[Exchange],
    granted: &[host_test::capabilities::ContextAwareResource],
    write_back: bool,
    iterations: usize,
    beside: &Paired<'_>,
) -> Result<Rounds> {
    let request = conformance::as_policy_server_sends(&input.request)
        .map_err(|e| anyhow::anyhow!("{}: {e}", input.label))?;
    let calls: Vec<Value> = lookups
        .iter()
        .filter_map(Exchange::call)
        .map(|(operation, payload)| serde_json::json!({"operation": operation, "payload": payload}))
        .collect();
    let settings =
        serde_json::json!({"policy": input.settings, "lookups": calls, "writeBack": write_back});
    let payload = conformance::validate_payload(&request, &settings);
    let host = || recorded_host(input, granted);
    let (reply, _, made) = evaluate_once(floor, input, &Limits::default(), host(), &payload);
    reply.map_err(|e| anyhow::anyhow!("the read floor on {}: {e}", input.label))?;
    if made.len() != lookups.len() {
        anyhow::bail!(
            "the read floor on {} made {} lookups, the policy {}",
            input.label,
            made.len(),
            lookups.len()
        );
    }
    let limits = Limits::default();
    // One call on a fresh instance: (time, host share), µs of the thread's
    // CPU time, so that the time the thread waits for a core while the
    // machine's other processes run counts for neither.
    let once = |policy: &Policy, payload: &[u8], host: Box<Host>| -> Option<(f64, f64)> {
        let mut instance = policy.module().instantiate(input.now, &limits, host).ok()?;
        let start = thread_cpu_time();
        let _ = instance.call("validate", payload);
        let took = thread_cpu_time().saturating_sub(start).as_secs_f64() * 1e6;
        Some((took, instance.host_cpu_time().as_secs_f64() * 1e6))
    };
    let mut rounds = Rounds::default();
    let loop_start = Instant::now();
    while rounds.floor.len() < iterations {
        let floor_host = host();
        let policy_host = (beside.host)();
        let floor_run = || once(floor, &payload, floor_host);
        let policy_run = || once(beside.policy, beside.payload, policy_host);
        let (floor_time, policy_time) = if rounds.floor.len() % 2 == 0 {
            let floor_time = floor_run();
            (floor_time, policy_run())
        } else {
            let policy_time = policy_run();
            (floor_run(), policy_time)
        };
        if let (Some(f), Some(p)) = (floor_time, policy_time) {
            rounds.push(f, p);
        }
        if rounds.floor.len() >= MIN_ROUNDS
            && loop_start.elapsed().as_secs_f64() > 2.0 * TIME_PER_LOOP_SECONDS
        {
            break;
        }
    }
    Ok(rounds)
}

/// Worst cases are timed against their floor for at least this many rounds
/// (one evaluation of each), however long they take: the per-round ratio's
/// median needs them to stay put from run to run.
pub const MIN_ROUNDS: usize = 31;

/// A floor and a policy timed in turn: each round's times, µs.
#[derive(Debug, Default)]
pub struct Rounds {
    /// The floor's fresh times and their host shares.
    pub floor: Vec<f64>,
    pub floor_host: Vec<f64>,
    /// The policy's own times (its host share taken out).
    pub policy_own: Vec<f64>,
}

impl Rounds {
    fn push(&mut self, (floor, floor_host): (f64, f64), (policy, policy_host): (f64, f64)) {
        self.floor.push(floor);
        self.floor_host.push(floor_host);
        self.policy_own.push(policy - policy_host);
    }

    /// The floor's own times.
    pub fn floor_own(&self) -> Vec<f64> {
        own_times(&self.floor, &self.floor_host)
    }

    /// The policy's own time over the floor's, round by round: the median
    /// of these is the multiple held to the budget. The two of a round run
    /// within milliseconds of each other, so a load that lasts longer than a
    /// round slows both and leaves their ratio; the median sets aside the
    /// rounds where it hit only one of them.
    pub fn ratios(&self) -> Vec<f64> {
        self.floor_own()
            .iter()
            .zip(&self.policy_own)
            .filter(|(floor, _)| **floor > 0.0)
            .map(|(floor, policy)| policy / floor)
            .collect()
    }
}

/// A policy on an input beside the engine's no-op floor
/// (`host-test/noop-floor`, a module that reads nothing and allows), timed
/// in turn, one evaluation of each per round, so that both see the same
/// load on the machine: fresh and warm medians, µs. A fresh evaluation is
/// also split into its instantiation and its call, so that what a fresh
/// instance costs beyond the no-op is measured, not guessed.
#[derive(Debug, Clone, Serialize)]
pub struct BesideNoop {
    pub policy: String,
    pub fresh_median_us: f64,
    pub noop_fresh_median_us: f64,
    pub instantiate_median_us: f64,
    pub noop_instantiate_median_us: f64,
    pub call_median_us: f64,
    pub noop_call_median_us: f64,
    pub warm_median_us: f64,
    pub noop_warm_median_us: f64,
}

/// Times `policy` and the no-op floor in turn on `input`.
pub fn beside_noop(
    noop: &Policy,
    policy: &Policy,
    name: &str,
    input: &Input,
    iterations: usize,
) -> Result<BesideNoop> {
    let request = conformance::as_policy_server_sends(&input.request)
        .map_err(|e| anyhow::anyhow!("{}: {e}", input.label))?;
    let payload = conformance::validate_payload(&request, &input.settings);
    let limits = Limits::default();
    let granted = policy.context_aware_resources();
    // As the fresh column: a new instance and one call, each timed.
    let fresh = |module: &Policy, host: Box<Host>| -> Result<[f64; 2]> {
        let start = Instant::now();
        let mut instance = module
            .module()
            .instantiate(input.now, &limits, host)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let instantiated = start.elapsed().as_secs_f64() * 1e6;
        instance
            .call("validate", &payload)
            .map_err(|e| anyhow::anyhow!("{} on {}: {e}", input.label, module.name))?;
        Ok([instantiated, start.elapsed().as_secs_f64() * 1e6])
    };
    let mut warm_policy = policy
        .module()
        .instantiate(input.now, &limits, recorded_host(input, &granted))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut warm_noop = noop
        .module()
        .instantiate(input.now, &limits, recorded_host(input, &granted))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    // Per module (the policy, then the no-op): whole fresh evaluation,
    // instantiation, call, warm call.
    let mut policy_t: [Vec<f64>; 4] = Default::default();
    let mut noop_t: [Vec<f64>; 4] = Default::default();
    let loop_start = Instant::now();
    while policy_t[0].len() < iterations {
        for (module, warm, [whole, instantiate, call, warm_t]) in [
            (policy, &mut warm_policy, &mut policy_t),
            (noop, &mut warm_noop, &mut noop_t),
        ] {
            let [instantiated, took] = fresh(module, recorded_host(input, &granted))?;
            whole.push(took);
            instantiate.push(instantiated);
            call.push(took - instantiated);
            let start = Instant::now();
            let _ = warm.call("validate", &payload);
            warm_t.push(start.elapsed().as_secs_f64() * 1e6);
        }
        if policy_t[0].len() >= MIN_SAMPLES
            && loop_start.elapsed().as_secs_f64() > TIME_PER_LOOP_SECONDS
        {
            break;
        }
    }
    let [policy_fresh, policy_instantiate, policy_call, policy_warm] = policy_t;
    let [noop_fresh, noop_instantiate, noop_call, noop_warm] = noop_t;
    Ok(BesideNoop {
        policy: name.to_string(),
        fresh_median_us: median(&policy_fresh),
        noop_fresh_median_us: median(&noop_fresh),
        instantiate_median_us: median(&policy_instantiate),
        noop_instantiate_median_us: median(&noop_instantiate),
        call_median_us: median(&policy_call),
        noop_call_median_us: median(&noop_call),
        warm_median_us: median(&policy_warm),
        noop_warm_median_us: median(&noop_warm),
    })
}

/// Each policy's typical request beside the no-op floor. Printed, never
/// asserted.
pub fn print_beside_noop(rows: &[BesideNoop], typical: &str) {
    println!(
        "\nEach policy on {typical} (settings {{}}) beside the engine's no-op floor \
         (host-test/noop-floor: reads nothing, allows), timed in turn:"
    );
    println!(
        "{:<20} {:>9} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8}",
        "policy",
        "fresh µs",
        "no-op µs",
        "÷ no-op",
        "inst µs",
        "no-op",
        "call µs",
        "no-op",
        "warm µs",
        "no-op µs",
        "÷ no-op"
    );
    for r in rows {
        println!(
            "{:<20} {:>9.1} {:>10.1} {:>8} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9.1} {:>9.1} {:>8}",
            r.policy,
            r.fresh_median_us,
            r.noop_fresh_median_us,
            ratio(r.fresh_median_us, r.noop_fresh_median_us),
            r.instantiate_median_us,
            r.noop_instantiate_median_us,
            r.call_median_us,
            r.noop_call_median_us,
            r.warm_median_us,
            r.noop_warm_median_us,
            ratio(r.warm_median_us, r.noop_warm_median_us),
        );
    }
}

/// `ours ÷ floor` as `1.23x`; `-` when the floor took no measurable time.
pub fn ratio(ours: f64, floor: f64) -> String {
    if floor > 0.0 {
        format!("{:.2}x", ours / floor)
    } else {
        "-".into()
    }
}

fn opt(value: Option<f64>, precision: usize) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.precision$}"))
}

pub fn print_table(rows: &[Row]) {
    println!(
        "{:<20} {:<34} {:>9} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "policy",
        "input",
        "wasm B",
        "gzip B",
        "compile",
        "fresh µs",
        "fresh p99",
        "warm µs",
        "warm p99",
        "native µs",
        "nat. p99",
        "w/n"
    );
    for r in rows {
        println!(
            "{:<20} {:<34} {:>9} {:>8} {:>6.0}ms {:>9.1} {:>9.1} {:>9} {:>9} {:>9} {:>9} {:>7}",
            r.policy,
            truncate(&r.input, 34),
            r.module_bytes,
            r.module_gzip_bytes,
            r.compile_ms,
            r.fresh_median_us,
            r.fresh_p99_us,
            opt(r.warm_median_us, 1),
            opt(r.warm_p99_us, 1),
            opt(r.native_median_us, 2),
            opt(r.native_p99_us, 2),
            r.ratio_warm_native
                .map_or_else(|| "-".to_string(), |x| format!("{x:.1}x")),
        );
    }
}

/// Each input against the budget: its size (payload and the recorded
/// cluster objects), fresh-instance time (median and max, and the median's
/// share spent in the host answering lookups, and the floor: the official
/// annotations policy on the same request), warm and native medians, the
/// instance's peak linear memory and its ratio to the input size. Printed,
/// never asserted: timings vary.
pub fn print_budget(rows: &[Row]) {
    let ms = |us: f64| us / 1e3;
    let mib = |bytes: usize| bytes as f64 / f64::from(1u32 << 20);
    println!(
        "\nAgainst the budget: on a worst case, the module's own fresh-instance time (its host \
         share taken out) at most {BUDGET_READ_FLOOR_MULTIPLE:.0}x the read floor's own time on \
         the same request, settings and lookup answers (w: for a policy that mutated, the floor \
         that also writes the object back whole; bench.json has both); linear memory under {} \
         MiB. official: \
         Kubewarden's annotations policy on the same request (OFFICIAL_POLICY).",
        BUDGET_MEMORY_BYTES >> 20
    );
    println!(
        "{:<20} {:<34} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}  {:<18} budget",
        "policy",
        "input",
        "input KiB",
        "fresh ms",
        "fresh max",
        "own ms",
        "host ms",
        "floor own",
        "floor hst",
        "x floor",
        "official",
        "warm ms",
        "native ms",
        "peak MiB",
        "peak/in",
        "samples",
        "answer",
    );
    for r in rows {
        println!(
            "{:<20} {:<34} {:>9.1} {:>10.2} {:>10.2} {:>9.2} {:>9.2} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9.1} {:>8.1}x {:>8}  {:<18} {}",
            r.policy,
            truncate(&r.input, 34),
            (r.payload_bytes + r.context_bytes) as f64 / 1024.0,
            ms(r.fresh_median_us),
            ms(r.fresh_max_us),
            ms(r.fresh_own_median_us),
            ms(r.fresh_host_median_us),
            match r.write_floor_own_median_us {
                Some(w) => format!("{:.2}w", ms(w)),
                None => opt(r.read_floor_own_median_us.map(ms), 2),
            },
            opt(r.read_floor_host_median_us.map(ms), 2),
            opt(r.own_over_read_floor, 2),
            opt(r.floor_fresh_median_us.map(ms), 2),
            opt(r.warm_median_us.map(ms), 2),
            opt(r.native_median_us.map(ms), 2),
            mib(r.peak_memory_bytes),
            r.memory_per_input_byte,
            r.fresh_samples,
            truncate(&r.outcome, 18),
            if r.within_budget { "within" } else { "OVER" }
        );
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

// ---------------------------------------------------------------------------
// `bench --engine kwctl`: the same typical request through the real
// `kwctl bench`, for each of our modules and for Kubewarden's official
// annotations policy, so the figures can be set side by side.
//
// What kwctl times (kubewarden/kubewarden-controller 3460bb71):
// - crates/kwctl/src/command/bench.rs, pull_and_bench: `validate_settings`,
//   then `validate`, each through tiny-bench's
//   `bench_with_configuration_labeled`, on one evaluator built once;
// - crates/kwctl/src/command/run/evaluator.rs, Evaluator::evaluate: the
//   same rehydrated instance each time, so a warm call; the request file may
//   be an AdmissionReview (build_validate_request unwraps it);
// - crates/policy-evaluator/src/runtimes/wapc/runtime.rs, Runtime::validate:
//   each call serialises the request and settings to JSON and parses the
//   response, so kwctl's figure includes that host share;
// - crates/kwctl/src/cli/bench.rs, create_benchmark_config: warm-up and
//   measurement are whole seconds; `--num-samples` sets `num_resamples`
//   (not the sample count, which stays tiny-bench's 100), so it is not used.

/// Engines `bench` can compare with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    Kwctl,
}

/// One module for `kwctl bench`.
#[derive(Debug, Clone)]
pub struct KwctlTarget {
    pub policy: String,
    pub module: std::path::PathBuf,
    pub settings: Value,
    /// The reference the others are divided by.
    pub official: bool,
}

/// How long kwctl warms up and measures each of its two benchmarks
/// (`validate_settings`, then `validate`); whole seconds, as kwctl parses them.
#[derive(Debug, Clone, Copy)]
pub struct KwctlTiming {
    pub warm_up_seconds: u64,
    pub measurement_seconds: u64,
}

/// One of kwctl bench's result lines, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KwctlStats {
    pub min_us: f64,
    pub mean_us: f64,
    pub max_us: f64,
    pub median_us: f64,
}

#[derive(Debug, Serialize)]
pub struct KwctlRow {
    pub policy: String,
    pub module: String,
    pub official: bool,
    pub settings: Value,
    /// The `validate` benchmark; `None` when kwctl failed (see `error`).
    pub validate: Option<KwctlStats>,
    pub validate_settings: Option<KwctlStats>,
    pub error: Option<String>,
}

/// `bench --engine kwctl`: the official policy, its settings (JSON), kwctl's timing.
pub struct KwctlCompare {
    /// The official policy's module, or why it is not installed.
    pub official: Result<PathBuf, String>,
    pub official_settings: String,
    pub timing: KwctlTiming,
}

/// Runs the comparison for our `policies` (in `dist`, settings `{}`) and the
/// official policy, prints the table (or why it was skipped) and writes
/// `kwctl-bench.json` beside `json_out`. False when a kwctl run failed.
pub fn kwctl_report(
    compare: &KwctlCompare,
    policies: &[&str],
    dist: &Path,
    typical: &Path,
    json_out: &Path,
) -> Result<bool> {
    let official_settings: Value = serde_json::from_str(&compare.official_settings)
        .context("--official-settings is not JSON")?;
    let official = match &compare.official {
        Ok(path) => path,
        Err(reason) => {
            println!("\nkwctl comparison skipped: {reason}");
            return Ok(true);
        }
    };
    let mut targets: Vec<KwctlTarget> = policies
        .iter()
        .map(|name| KwctlTarget {
            policy: (*name).to_string(),
            module: dist.join(format!("{name}.wasm")),
            settings: Value::Object(Default::default()),
            official: false,
        })
        .collect();
    targets.push(KwctlTarget {
        policy: official
            .file_stem()
            .map_or("official".into(), |s| s.to_string_lossy().into_owned()),
        module: official.clone(),
        settings: official_settings,
        official: true,
    });
    println!();
    let work = json_out.with_file_name("kwctl");
    match kwctl_compare(&targets, typical, compare.timing, &work)? {
        KwctlComparison::Skipped(reason) => {
            println!("kwctl comparison skipped: {reason}");
            Ok(true)
        }
        KwctlComparison::Ran(rows) => {
            print_kwctl_table(&rows);
            let report = json_out.with_file_name("kwctl-bench.json");
            std::fs::write(&report, serde_json::to_vec_pretty(&rows)?)?;
            println!(
                "\nkwctl bench on {}, {}s warm-up and {}s measurement per benchmark; mean and \
                 median over 100 samples of each sample's per-iteration average (tiny-bench); \
                 settings µs: the validate_settings benchmark. JSON report: {}",
                typical.display(),
                compare.timing.warm_up_seconds,
                compare.timing.measurement_seconds,
                report.display()
            );
            Ok(rows.iter().all(|r| r.error.is_none()))
        }
    }
}

/// The outcome of the comparison: the rows, or why it was skipped.
pub enum KwctlComparison {
    Skipped(String),
    Ran(Vec<KwctlRow>),
}

/// Runs `kwctl bench` on every target, one after the other (the machine's
/// cores are kwctl's), with kwctl found through `KWCTL`, then `PATH`. Each
/// run's output is kept in `work`.
pub fn kwctl_compare(
    targets: &[KwctlTarget],
    request: &Path,
    timing: KwctlTiming,
    work: &Path,
) -> Result<KwctlComparison> {
    use host_test::locate::{engine, Found};
    let kwctl = match engine("kwctl", "KWCTL").map_err(anyhow::Error::msg)? {
        Found::At(path) => path,
        Found::Absent(reason) => return Ok(KwctlComparison::Skipped(reason)),
    };
    std::fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    let request = std::fs::canonicalize(request)
        .with_context(|| format!("cannot read {}", request.display()))?;
    let mut rows = Vec::new();
    for target in targets {
        eprintln!("kwctl bench {}", target.policy);
        let outcome = match std::fs::canonicalize(&target.module) {
            Ok(module) => run_kwctl_bench(
                &kwctl,
                &module,
                &target.settings,
                &request,
                timing,
                work,
                &target.policy,
            ),
            Err(e) => Err(format!("{}: {e}", target.module.display())),
        };
        let (validate_settings, validate, error) = match outcome {
            Ok((s, v)) => (Some(s), Some(v), None),
            Err(e) => (None, None, Some(e)),
        };
        rows.push(KwctlRow {
            policy: target.policy.clone(),
            module: target.module.display().to_string(),
            official: target.official,
            settings: target.settings.clone(),
            validate,
            validate_settings,
            error,
        });
    }
    Ok(KwctlComparison::Ran(rows))
}

/// One `kwctl bench` run: (validate_settings, validate).
fn run_kwctl_bench(
    kwctl: &Path,
    module: &Path,
    settings: &Value,
    request: &Path,
    timing: KwctlTiming,
    work: &Path,
    label: &str,
) -> Result<(KwctlStats, KwctlStats), String> {
    let file = |ext: &str| {
        let path = work.join(format!("{label}.{ext}"));
        std::fs::File::create(&path)
            .map(|f| (path.clone(), f))
            .map_err(|e| format!("cannot create {}: {e}", path.display()))
    };
    let (out_path, out) = file("stdout")?;
    let (err_path, err) = file("stderr")?;
    let mut command = std::process::Command::new(kwctl);
    let mut child = crate::engines::without_backtrace(&mut command)
        .arg("bench")
        .arg("--request-path")
        .arg(request)
        .arg("--settings-json")
        .arg(settings.to_string())
        .args(["--warm-up-time", &timing.warm_up_seconds.to_string()])
        .args([
            "--measurement-time",
            &timing.measurement_seconds.to_string(),
        ])
        .arg(module)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", kwctl.display()))?;
    // Two benchmarks, each warm-up plus measurement; tiny-bench may overrun
    // the measurement time (it keeps its sample count), hence the margin.
    let deadline = std::time::Duration::from_secs(
        (timing.warm_up_seconds + timing.measurement_seconds) * 2 * 4 + 60,
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("kwctl bench did not finish within {deadline:?}"));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(100)),
            Err(e) => return Err(format!("waiting for kwctl: {e}")),
        }
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    if !status.success() {
        let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
        let last = strip_ansi(&stderr)
            .lines()
            .rfind(|l| l.starts_with("Error"))
            .unwrap_or("")
            .to_string();
        return Err(format!(
            "kwctl bench {status}: {last} (see {})",
            err_path.display()
        ));
    }
    let found = |name: &str| {
        parse_kwctl_bench(&stdout, name).ok_or_else(|| {
            format!(
                "no `{name}` result in kwctl's output ({})",
                out_path.display()
            )
        })
    };
    Ok((found("validate_settings")?, found("validate")?))
}

/// Removes the terminal colours tiny-bench writes whatever `NO_COLOR` says
/// (`\x1b[…m`).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The result of benchmark `name` in kwctl bench's output. kwctl runs
/// tiny-bench's `bench_with_configuration_labeled` for `validate_settings`
/// and then `validate` (kubewarden/kubewarden-controller 3460bb71,
/// crates/kwctl/src/command/bench.rs, pull_and_bench), which prints
///
/// ```text
/// validate [35.4 thousand iterations in 3.20s with 100.0 samples]:
///     elapsed [min mean max]: [88.18µs 91.37µs 152.71µs] (sample data: med = 90.12µs, var = 49.78ms², stddev = 7.06µs)
/// ```
///
/// (the second line indented and separated by tabs), min, mean, max and med
/// being over the 100 samples' per-iteration averages (tiny-bench 0.4,
/// `output::print_elapsed`, `analysis::sample_data::simple_analyze_sampling_data`).
pub fn parse_kwctl_bench(output: &str, name: &str) -> Option<KwctlStats> {
    let clean = strip_ansi(output);
    let header = format!("{name} [");
    let mut lines = clean.lines();
    lines.find(|l| l.trim_start().starts_with(&header))?;
    let line = lines.next()?;
    let (_, values) = line.split_once("]:")?;
    let values = values.trim_start();
    let inner = values.strip_prefix('[')?;
    let (triple, rest) = inner.split_once(']')?;
    let mut parts = triple.split_whitespace().map(parse_time_us);
    let (min_us, mean_us, max_us) = (parts.next()??, parts.next()??, parts.next()??);
    let median = rest.split_once("med = ")?.1;
    let median = median.split(',').next()?;
    Some(KwctlStats {
        min_us,
        mean_us,
        max_us,
        median_us: parse_time_us(median.trim())?,
    })
}

/// tiny-bench's `fmt_time` (`12.34ns`, `µs`, `ms`, `s`) in microseconds.
pub fn parse_time_us(text: &str) -> Option<f64> {
    let units = [
        ("ns", 1e-3),
        ("µs", 1.0),
        ("us", 1.0),
        ("ms", 1e3),
        ("s", 1e6),
    ];
    units.iter().find_map(|(unit, factor)| {
        text.strip_suffix(unit)
            .and_then(|n| n.parse::<f64>().ok())
            .map(|n| n * factor)
    })
}

pub fn print_kwctl_table(rows: &[KwctlRow]) {
    let official = rows.iter().find(|r| r.official).and_then(|r| r.validate);
    println!(
        "{:<30} {:>11} {:>11} {:>11} {:>11} {:>12}",
        "policy (kwctl bench)", "mean µs", "median µs", "÷ official", "÷ official", "settings µs"
    );
    println!(
        "{:<30} {:>11} {:>11} {:>11} {:>11} {:>12}",
        "", "", "", "(mean)", "(median)", "(mean)"
    );
    for r in rows {
        let name = if r.official {
            format!("{} (official)", r.policy)
        } else {
            r.policy.clone()
        };
        match r.validate {
            Some(v) => {
                let ratio = |ours: f64, theirs: Option<f64>| match theirs {
                    Some(t) if t > 0.0 => format!("{:.2}x", ours / t),
                    _ => "-".into(),
                };
                println!(
                    "{:<30} {:>11.1} {:>11.1} {:>11} {:>11} {:>12.1}",
                    truncate(&name, 30),
                    v.mean_us,
                    v.median_us,
                    ratio(v.mean_us, official.map(|o| o.mean_us)),
                    ratio(v.median_us, official.map(|o| o.median_us)),
                    r.validate_settings.map_or(f64::NAN, |s| s.mean_us),
                );
            }
            None => println!(
                "{:<30} failed: {}",
                truncate(&name, 30),
                r.error.as_deref().unwrap_or("unknown")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "\x1b[1;32mvalidate_settings\x1b[0m warming up for \x1b[0;97m1.00s\x1b[0m\n\
\x1b[1;32mvalidate_settings\x1b[0m [1.1M iterations in 3.06s with 100.0 samples]:\n\
\telapsed\t[\x1b[0;37mmin\x1b[0m \x1b[0;97mmean\x1b[0m \x1b[0;37mmax\x1b[0m]:\t[\x1b[0;37m2.71µs\x1b[0m \x1b[0;97m2.90µs\x1b[0m \x1b[0;37m4.55µs\x1b[0m] (sample data: med = 2.82µs, var = 112.06µs², stddev = 334.75ns)\n\
\x1b[1;32mvalidate\x1b[0m warming up for \x1b[0;97m1.00s\x1b[0m\n\
\x1b[1;32mvalidate\x1b[0m mean warm up execution time \x1b[0;97m91.05µs\x1b[0m running \x1b[0;97m35.4 thousand\x1b[0m iterations\n\
\x1b[1;32mvalidate\x1b[0m [35.4 thousand iterations in 3.20s with 100.0 samples]:\n\
\telapsed\t[\x1b[0;37mmin\x1b[0m \x1b[0;97mmean\x1b[0m \x1b[0;37mmax\x1b[0m]:\t[\x1b[0;37m88.18µs\x1b[0m \x1b[0;97m91.37µs\x1b[0m \x1b[0;37m1.52ms\x1b[0m] (sample data: med = 90.12µs, var = 49.78ms², stddev = 7.06µs)\n";

    #[test]
    fn parses_kwctl_bench_output() {
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let v = parse_kwctl_bench(OUTPUT, "validate").unwrap();
        assert!(near(v.min_us, 88.18));
        assert!(near(v.mean_us, 91.37));
        assert!(near(v.max_us, 1520.0));
        assert!(near(v.median_us, 90.12));
        let s = parse_kwctl_bench(OUTPUT, "validate_settings").unwrap();
        assert!(near(s.mean_us, 2.90));
        assert!(near(s.median_us, 2.82));
        assert!(parse_kwctl_bench(OUTPUT, "missing").is_none());
    }

    #[test]
    fn parses_tiny_bench_times() {
        let near = |text: &str, us: f64| (parse_time_us(text).unwrap() - us).abs() < 1e-9;
        assert!(near("500.00ns", 0.5));
        assert!(near("1.50µs", 1.5));
        assert!(near("3.33ms", 3330.0));
        assert!(near("2.00s", 2e6));
        assert_eq!(parse_time_us("fast"), None);
    }
}

//! A fuzzing run of one policy on one engine: worker threads take input
//! indices from a shared counter, so a run is reproducible from (policy,
//! seed, first index, number of inputs) whatever the number of workers.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::engine::{self, EngineKind, Target, Thresholds};
use crate::minimize::{self, Budget, Stats};
use crate::mutate::{Input, Mutator};
use crate::oracle::{Finding, Kind, Operation};
use crate::repro::{self, Origin, Saved};
use crate::seeds::Corpus;

#[derive(Debug, Clone)]
pub struct Config {
    pub engine: EngineKind,
    pub inputs: Option<u64>,
    pub seconds: Option<f64>,
    pub seed: u64,
    pub start: u64,
    pub jobs: usize,
    pub raw: bool,
    pub slow: Duration,
    pub max_message: usize,
    pub out: PathBuf,
    pub budget: Budget,
    /// A call running this long is a hang: the run stops and saves the input.
    pub hang: Duration,
    pub progress_every: Duration,
    /// Print every call (`--trace`).
    pub trace: bool,
}

/// One finding, minimized and saved.
#[derive(Debug, Clone)]
pub struct Report {
    pub finding: Finding,
    pub index: u64,
    pub mutations: String,
    pub saved: Option<Saved>,
    pub minimized: String,
    /// Whether policy-server could have sent the (minimized) input.
    pub reachable: bool,
    pub stats: Stats,
}

#[derive(Debug, Clone)]
pub struct Summary {
    pub policy: String,
    pub engine: EngineKind,
    pub inputs: u64,
    pub structural: u64,
    pub raw: u64,
    pub skipped: u64,
    pub reports: Vec<Report>,
    pub elapsed: Duration,
    /// Worker time spent minimizing findings rather than fuzzing.
    pub minimizing: Duration,
    pub seed: u64,
    pub jobs: usize,
}

impl Summary {
    /// Inputs per second of fuzzing, minimization left out.
    pub fn fuzzing_rate(&self) -> f64 {
        let worker_secs =
            self.elapsed.as_secs_f64() * self.jobs as f64 - self.minimizing.as_secs_f64();
        let wall = worker_secs / self.jobs.max(1) as f64;
        if wall > 0.0 {
            self.inputs as f64 / wall
        } else {
            0.0
        }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.elapsed.as_secs_f64();
        let skipped = if self.skipped > 0 {
            format!(", {} unreachable skipped", self.skipped)
        } else {
            String::new()
        };
        write!(
            f,
            "{} {}: {} inputs ({} structural, {} raw{skipped}), {} findings, seed {}, jobs {}, {:.prec$} s, {:.0}/s",
            self.policy,
            self.engine.name(),
            self.inputs,
            self.structural,
            self.raw,
            self.reports.len(),
            self.seed,
            self.jobs,
            secs,
            if secs > 0.0 { self.inputs as f64 / secs } else { 0.0 },
            prec = if secs < 10.0 { 1 } else { 0 },
        )?;
        if !self.minimizing.is_zero() {
            write!(
                f,
                " ({:.0} s of worker time minimizing; {:.0}/s while fuzzing)",
                self.minimizing.as_secs_f64(),
                self.fuzzing_rate()
            )?;
        }
        Ok(())
    }
}

struct Shared {
    next: AtomicU64,
    stop: AtomicBool,
    structural: AtomicU64,
    raw: AtomicU64,
    skipped: AtomicU64,
    finished: AtomicUsize,
    minimizing_ms: AtomicU64,
    seen: Mutex<HashSet<(Kind, Operation, String)>>,
    reports: Mutex<Vec<Report>>,
    /// Per worker: the input in flight (index + 1, 0 for none) and since when (ms into the run).
    in_flight: Vec<(AtomicU64, AtomicU64)>,
}

#[expect(
    clippy::too_many_lines,
    reason = "the workers and the progress they share, in one thread scope"
)]
pub fn run(config: &Config, corpus: &Corpus, target: &dyn Target) -> Summary {
    engine::install_panic_hook();
    let mutator = Mutator::new(corpus, config.raw);
    let jobs = config.jobs.max(1);
    let shared = Shared {
        next: AtomicU64::new(config.start),
        stop: AtomicBool::new(false),
        structural: AtomicU64::new(0),
        raw: AtomicU64::new(0),
        skipped: AtomicU64::new(0),
        finished: AtomicUsize::new(0),
        minimizing_ms: AtomicU64::new(0),
        seen: Mutex::new(HashSet::new()),
        reports: Mutex::new(Vec::new()),
        in_flight: (0..jobs)
            .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
            .collect(),
    };
    let started = Instant::now();
    let deadline = config
        .seconds
        .map(|s| started + Duration::from_secs_f64(s.max(0.0)));
    let end = config.inputs.map(|n| config.start.saturating_add(n));
    let thresholds = Thresholds {
        slow: config.slow,
        max_message: config.max_message,
    };
    let label = format!("{} {}", corpus.policy, config.engine.name());
    std::thread::scope(|scope| {
        for worker in 0..jobs {
            let (shared, mutator) = (&shared, &mutator);
            let spawned = std::thread::Builder::new()
                .name(format!("fuzz-{worker}"))
                .stack_size(256 << 20)
                .spawn_scoped(scope, move || {
                    work(
                        worker, config, corpus, mutator, target, shared, started, deadline, end,
                        thresholds,
                    );
                    shared.finished.fetch_add(1, Ordering::SeqCst);
                });
            if let Err(e) = spawned {
                eprintln!("guard-fuzz: cannot start worker {worker}: {e}");
                shared.finished.fetch_add(1, Ordering::SeqCst);
            }
        }
        let mut last_progress = Instant::now();
        while shared.finished.load(Ordering::SeqCst) < jobs {
            std::thread::sleep(Duration::from_millis(100));
            if last_progress.elapsed() >= config.progress_every {
                last_progress = Instant::now();
                let (s, r) = (
                    shared.structural.load(Ordering::Relaxed),
                    shared.raw.load(Ordering::Relaxed),
                );
                let secs = started.elapsed().as_secs_f64();
                let findings = shared.reports.lock().map(|r| r.len()).unwrap_or(0);
                eprintln!(
                    "[{label}] {} inputs ({s} structural, {r} raw), {findings} findings, {:.0} s, {:.0}/s",
                    s + r,
                    secs,
                    (s + r) as f64 / secs.max(1e-9)
                );
            }
            watchdog(config, corpus, &mutator, &shared, started);
        }
    });
    let reports = shared.reports.into_inner().unwrap_or_default();
    let (structural, raw) = (shared.structural.into_inner(), shared.raw.into_inner());
    Summary {
        policy: corpus.policy.clone(),
        engine: config.engine,
        inputs: structural + raw,
        structural,
        raw,
        skipped: shared.skipped.into_inner(),
        reports,
        elapsed: started.elapsed(),
        minimizing: Duration::from_millis(shared.minimizing_ms.into_inner()),
        seed: config.seed,
        jobs,
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one worker's whole context, passed once per thread"
)]
fn work(
    worker: usize,
    config: &Config,
    corpus: &Corpus,
    mutator: &Mutator<'_>,
    target: &dyn Target,
    shared: &Shared,
    started: Instant,
    deadline: Option<Instant>,
    end: Option<u64>,
    thresholds: Thresholds,
) {
    let origin = Origin {
        policy: &corpus.policy,
        engine: config.engine,
        seed: config.seed,
    };
    let Some((flight, since)) = shared.in_flight.get(worker) else {
        return;
    };
    let tracing = engine::Tracing(target);
    let target: &dyn Target = if config.trace { &tracing } else { target };
    loop {
        if shared.stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
            return;
        }
        let index = shared.next.fetch_add(1, Ordering::Relaxed);
        if end.is_some_and(|e| index >= e) {
            return;
        }
        let input = mutator.input(config.seed, index);
        let p = engine::payloads(&input);
        if !p.reachable && !config.raw {
            shared.skipped.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        since.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        flight.store(index + 1, Ordering::Relaxed);
        let findings = engine::evaluate_payloads(target, &input, &p, thresholds);
        flight.store(0, Ordering::Relaxed);
        if p.reachable {
            shared.structural.fetch_add(1, Ordering::Relaxed);
        } else {
            shared.raw.fetch_add(1, Ordering::Relaxed);
        }
        for finding in findings {
            let new = shared
                .seen
                .lock()
                .map(|mut seen| seen.insert(finding.key()))
                .unwrap_or(false);
            if !new {
                continue;
            }
            eprintln!(
                "[{} {}] finding: {} in {}: {} (input {index}, {}); minimizing",
                corpus.policy,
                config.engine.name(),
                finding.kind.name(),
                finding.operation.name(),
                finding.signature,
                input.mutations(),
            );
            let minimize_start = Instant::now();
            let report = minimize_and_save(config, &origin, target, &input, &finding, thresholds);
            shared.minimizing_ms.fetch_add(
                minimize_start.elapsed().as_millis() as u64,
                Ordering::Relaxed,
            );
            print_report(&origin, &report);
            if let Ok(mut reports) = shared.reports.lock() {
                reports.push(report);
            }
        }
    }
}

/// The input as one JSON document the minimizer works on.
pub fn input_doc(input: &Input) -> Value {
    json!({
        "request": input.request,
        "settings": input.settings,
        "context": input.context.iter().map(repro::recorded_to_value).collect::<Vec<_>>(),
    })
}

/// The input a minimized document stands for.
pub fn doc_input(original: &Input, doc: &Value) -> Option<Input> {
    let context = serde_json::from_value(doc.get("context")?.clone()).ok()?;
    Some(Input {
        request: doc.get("request")?.clone(),
        settings: doc.get("settings")?.clone(),
        context,
        ..original.clone()
    })
}

/// Minimizes an input while the same finding reproduces (and, for an input
/// policy-server could send, while it still could).
pub fn minimize_input(
    target: &dyn Target,
    input: &Input,
    finding: &Finding,
    budget: Budget,
    thresholds: Thresholds,
) -> (Input, Stats) {
    let reproduces = |candidate: &Input, reachable: bool| {
        let p = engine::payloads(candidate);
        if reachable && !p.reachable {
            return false;
        }
        engine::evaluate_payloads(target, candidate, &p, thresholds)
            .iter()
            .any(|f| f.same_as(finding))
    };
    // A raw-level finding that reproduces without its raw mutation is one a
    // deployed policy can meet: that input is the better reproducer.
    let mut start = input.clone();
    if start.raw.is_some() {
        let without = Input {
            raw: None,
            ..input.clone()
        };
        if reproduces(&without, false) {
            start = without;
        }
    }
    let reachable = engine::payloads(&start).reachable;
    let mut still_fails = |doc: &Value| {
        doc_input(&start, doc).is_some_and(|candidate| reproduces(&candidate, reachable))
    };
    let (doc, stats) = minimize::minimize(&input_doc(&start), budget, &mut still_fails);
    let minimized = doc_input(&start, &doc).unwrap_or_else(|| start.clone());
    (minimized, stats)
}

fn minimize_and_save(
    config: &Config,
    origin: &Origin<'_>,
    target: &dyn Target,
    input: &Input,
    finding: &Finding,
    thresholds: Thresholds,
) -> Report {
    let (minimized, stats) = minimize_input(target, input, finding, config.budget, thresholds);
    // The finding as the minimized input produces it (its detail changes).
    let finding = engine::evaluate(target, &minimized, thresholds)
        .into_iter()
        .find(|f| f.same_as(finding))
        .unwrap_or_else(|| finding.clone());
    let saved = match repro::save(&config.out, origin, &finding, &minimized) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("guard-fuzz: cannot save the reproducer: {e:#}");
            None
        }
    };
    Report {
        minimized: summarize(&minimized),
        reachable: engine::payloads(&minimized).reachable,
        finding,
        index: input.index,
        mutations: input.mutations(),
        saved,
        stats,
    }
}

/// A short description of a (minimized) input.
pub fn summarize(input: &Input) -> String {
    let doc = input_doc(input);
    let text = serde_json::to_string(&doc).unwrap_or_default();
    let mut s = format!("{} bytes: {}", text.len(), crate::oracle::preview(&text));
    if let Some(op) = &input.raw {
        s.push_str(&format!("; raw: {}", op.describe()));
    }
    s.push_str(&format!("; now {}", input.now));
    s
}

pub fn print_report(origin: &Origin<'_>, report: &Report) {
    let f = &report.finding;
    println!(
        "FINDING {} {}: {} in {}: {} [{}]",
        origin.policy,
        origin.engine.name(),
        f.kind.name(),
        f.operation.name(),
        f.signature,
        if report.reachable {
            "structural input"
        } else {
            "raw-level input: policy-server never sends it"
        }
    );
    println!(
        "  detail: {}",
        crate::oracle::preview(&f.detail).replace('\n', " | ")
    );
    println!(
        "  input {} (seed {}, mutations {}), minimized in {} attempts{}: {}",
        report.index,
        origin.seed,
        report.mutations,
        report.stats.attempts,
        if report.stats.exhausted {
            " (budget exhausted)"
        } else {
            ""
        },
        report.minimized
    );
    if let Some(saved) = &report.saved {
        println!("  reproducer: {}", saved.case.display());
        println!(
            "  payload:    {}{}",
            saved.payload.display(),
            if saved.case_exact {
                ""
            } else {
                " (the case file cannot hold this input exactly: use the payload)"
            }
        );
    }
}

/// Stops the process when a call has run far longer than any deadline: a
/// native evaluation cannot be interrupted, so its input is saved unminimized.
fn watchdog(
    config: &Config,
    corpus: &Corpus,
    mutator: &Mutator<'_>,
    shared: &Shared,
    started: Instant,
) {
    let now_ms = started.elapsed().as_millis() as u64;
    for (flight, since) in &shared.in_flight {
        let index = flight.load(Ordering::Relaxed);
        if index == 0 {
            continue;
        }
        let running = now_ms.saturating_sub(since.load(Ordering::Relaxed));
        if running < config.hang.as_millis() as u64 || flight.load(Ordering::Relaxed) != index {
            continue;
        }
        let input = mutator.input(config.seed, index - 1);
        let finding = Finding {
            kind: Kind::Timeout,
            operation: Operation::Validate,
            signature: format!("hang: still running after {} s", running / 1000),
            detail: format!(
                "input {} never returned (the process stops here)",
                index - 1
            ),
        };
        let origin = Origin {
            policy: &corpus.policy,
            engine: config.engine,
            seed: config.seed,
        };
        let saved = repro::save(&config.out, &origin, &finding, &input).ok();
        print_report(
            &origin,
            &Report {
                finding,
                index: index - 1,
                mutations: input.mutations(),
                saved,
                minimized: summarize(&input),
                reachable: engine::payloads(&input).reachable,
                stats: Stats::default(),
            },
        );
        eprintln!(
            "guard-fuzz: {} {}: input {} hangs; stopping",
            corpus.policy,
            config.engine.name(),
            index - 1
        );
        std::process::exit(3);
    }
}

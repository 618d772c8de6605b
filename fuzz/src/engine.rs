//! Running one input: natively in process (panics caught), or through the
//! wasm module on a fresh instance per call, as policy-server does.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::Once;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use conformance::RecordedCluster;
use guard_core::{Context, Entry};
use host_test::capabilities::{ContextAwareResource, Grants, Host, Source};
use host_test::harness::Policy;
use host_test::host::{CallError, Limits};
use serde_json::Value;

use crate::mutate::Input;
use crate::oracle::{self, first_line, Finding, Kind, Operation};
use crate::tree;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineKind {
    Native,
    Wasm,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Native => "native",
            EngineKind::Wasm => "wasm",
        }
    }
}

/// The bytes each operation of one input receives.
#[derive(Debug, Clone)]
pub struct Payloads {
    pub validate: Vec<u8>,
    /// Present when the settings changed or the input is raw-level.
    pub settings: Option<Vec<u8>>,
    /// Whether policy-server could have sent this payload: no raw-level
    /// mutation, a request its typed AdmissionRequest accepts, and an
    /// AdmissionReview no deeper than its JSON parser (serde_json) reads and
    /// no larger than it accepts (2 MiB, `conformance::worst_case::REVIEW_LIMIT`).
    pub reachable: bool,
}

/// The payloads of an input, built as policy-server builds them.
pub fn payloads(input: &Input) -> Payloads {
    let (request, accepted) = match conformance::as_policy_server_sends(&input.request) {
        Ok(r) => (r, true),
        Err(_) => (input.request.clone(), false),
    };
    let mut validate = validate_payload(&request, &input.settings);
    let mut settings = (input.settings_changed || input.raw.is_some())
        .then(|| serde_json::to_vec(&input.settings).unwrap_or_default());
    if let Some(op) = &input.raw {
        validate = op.apply(&validate);
        settings = settings.map(|s| op.apply(&s));
    }
    Payloads {
        validate,
        settings,
        reachable: accepted
            && input.raw.is_none()
            && tree::depth(&input.request) < tree::PARSER_DEPTH_LIMIT
            && tree::depth(&input.settings) < tree::PARSER_DEPTH_LIMIT
            && fits_review(&input.request),
    }
}

/// Whether an AdmissionReview around `request` is within policy-server's
/// body limit. A string takes at most six bytes a character escaped, so
/// most requests need no exact count.
pub fn fits_review(request: &Value) -> bool {
    const ENVELOPE: usize =
        r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":}"#.len();
    let limit = conformance::worst_case::REVIEW_LIMIT;
    if 6 * tree::size(request) + ENVELOPE <= limit {
        return true;
    }
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, request).is_ok() && count.0 + ENVELOPE <= limit
}

/// [`conformance::validate_payload`]'s bytes, written without first copying
/// the request into a new `Value` (which costs more than the policy's own
/// evaluation for large inputs).
pub fn validate_payload(request: &Value, settings: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(b"{\"request\":");
    let ok = serde_json::to_writer(&mut out, request).is_ok();
    out.extend_from_slice(b",\"settings\":");
    if ok && serde_json::to_writer(&mut out, settings).is_ok() {
        out.push(b'}');
        out
    } else {
        conformance::validate_payload(request, settings)
    }
}

/// How slow is too slow.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    pub slow: Duration,
    /// Longest message, warning or audit annotation.
    pub max_message: usize,
}

/// Something that runs a policy's operations.
pub trait Target: Sync {
    fn engine(&self) -> EngineKind;
    /// The reply, or the failure as a finding (its signature not yet final).
    fn call(&self, op: Operation, payload: &[u8], input: &Input) -> Result<Vec<u8>, Finding>;
}

/// Runs an input's operations and checks the replies.
pub fn evaluate(target: &dyn Target, input: &Input, thresholds: Thresholds) -> Vec<Finding> {
    evaluate_payloads(target, input, &payloads(input), thresholds)
}

/// [`evaluate`] with the payloads already built.
pub fn evaluate_payloads(
    target: &dyn Target,
    input: &Input,
    p: &Payloads,
    thresholds: Thresholds,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let shape = || shape_of(input);
    // A mutating policy may carry over what the stored object had (a
    // restored annotation), so both objects bound the mutated one.
    let object_size = || {
        ["object", "oldObject"]
            .iter()
            .filter_map(|k| input.request.get(*k))
            .filter_map(|o| serde_json::to_vec(o).ok())
            .map(|b| b.len())
            .sum()
    };
    if let Some(f) = timed(target, Operation::Validate, &p.validate, input, thresholds)
        .and_then(|reply| {
            oracle::check_validate_reply(&reply, thresholds.max_message, object_size, shape)
                .map_or(Ok(()), Err)
        })
        .err()
    {
        findings.push(f);
    }
    if let Some(settings) = &p.settings {
        let settings_shape = || format!("settings at {}", tree::dominant_path(&input.settings));
        if let Some(f) = timed(
            target,
            Operation::ValidateSettings,
            settings,
            input,
            thresholds,
        )
        .and_then(|reply| {
            oracle::check_settings_reply(&reply, thresholds.max_message, settings_shape)
                .map_or(Ok(()), Err)
        })
        .err()
        {
            findings.push(f);
        }
    }
    findings
}

/// Where the input's bytes are, for signatures.
pub fn shape_of(input: &Input) -> String {
    let doc = serde_json::json!({
        "request": input.request,
        "settings": input.settings,
    });
    tree::dominant_path(&doc)
}

/// A call, with too-slow (confirmed by a second run) as a finding.
fn timed(
    target: &dyn Target,
    op: Operation,
    payload: &[u8],
    input: &Input,
    thresholds: Thresholds,
) -> Result<Vec<u8>, Finding> {
    let start = Instant::now();
    let reply = target.call(op, payload, input)?;
    let first = start.elapsed();
    if first <= thresholds.slow {
        return Ok(reply);
    }
    // A busy machine makes one slow call; a slow input makes two.
    let start = Instant::now();
    let _ = target.call(op, payload, input);
    let second = start.elapsed();
    if second <= thresholds.slow {
        return Ok(reply);
    }
    Err(Finding {
        kind: Kind::Timeout,
        operation: op,
        signature: format!(
            "slower than {} ms with {}",
            thresholds.slow.as_millis(),
            if op == Operation::Validate {
                shape_of(input)
            } else {
                format!("settings at {}", tree::dominant_path(&input.settings))
            }
        ),
        detail: format!(
            "{} took {:.0} ms, then {:.0} ms (threshold {} ms)",
            op.name(),
            first.as_secs_f64() * 1e3,
            second.as_secs_f64() * 1e3,
            thresholds.slow.as_millis()
        ),
    })
}

/// The policy's native entry points, panics caught.
pub struct Native {
    pub entry: &'static Entry,
}

thread_local! {
    static GUARDED: RefCell<bool> = const { RefCell::new(false) };
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs a panic hook that records, instead of printing, panics inside
/// [`catch_panic`] and leaves every other panic to the default hook.
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if GUARDED.with(|g| *g.borrow()) {
                let location = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                    .unwrap_or_else(|| "unknown location".into());
                let payload = info.payload();
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(non-string panic payload)".into());
                LAST_PANIC.with(|p| *p.borrow_mut() = Some((location, message)));
            } else {
                default(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into `(location, message)`.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, (String, String)> {
    GUARDED.with(|g| *g.borrow_mut() = true);
    LAST_PANIC.with(|p| *p.borrow_mut() = None);
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| *g.borrow_mut() = false);
    result.map_err(|_| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| {
                (
                    "unknown location".into(),
                    "(panic hook not installed)".into(),
                )
            })
    })
}

impl Target for Native {
    fn engine(&self) -> EngineKind {
        EngineKind::Native
    }

    fn call(&self, op: Operation, payload: &[u8], input: &Input) -> Result<Vec<u8>, Finding> {
        let result = match op {
            Operation::Validate => {
                let cluster = RecordedCluster::new(&input.context);
                let ctx = Context::new(input.now, &cluster);
                catch_panic(|| (self.entry.validate)(payload, &ctx)).map(|reply| {
                    match cluster.unanswered() {
                        Some(none) => no_answer_reply(none),
                        None => reply,
                    }
                })
            }
            Operation::ValidateSettings => catch_panic(|| (self.entry.validate_settings)(payload)),
        };
        result.map_err(|(location, message)| Finding {
            kind: Kind::Panic,
            operation: op,
            signature: format!("panicked at {location}"),
            detail: format!("panicked at {location}: {message}"),
        })
    }
}

/// The policy's wasm module in the harness.
pub struct Wasm {
    pub policy: Policy,
    pub resources: Vec<ContextAwareResource>,
    pub limits: Limits,
    /// The same policy's native entry points: a trap whose payload also
    /// panics natively is named by the panic's location.
    pub native: Option<&'static Entry>,
}

impl Wasm {
    pub fn load(path: &Path) -> Result<Self> {
        let policy = Policy::load(path)
            .with_context(|| format!("cannot load {}; run `make build` first", path.display()))?;
        let resources = policy.context_aware_resources();
        Ok(Self {
            policy,
            resources,
            limits: Limits {
                timeout_seconds: Some(2),
                memory_bytes: Some(64 << 20),
            },
            native: None,
        })
    }
}

impl Target for Wasm {
    fn engine(&self) -> EngineKind {
        EngineKind::Wasm
    }

    fn call(&self, op: Operation, payload: &[u8], input: &Input) -> Result<Vec<u8>, Finding> {
        let host = Host::new(
            Grants::all_capabilities(self.resources.clone()),
            Source::Recorded(input.context.clone().into()),
        );
        let result = self
            .policy
            .module()
            .instantiate(input.now, &self.limits, Box::new(host))
            .and_then(|mut instance| instance.call(op.name(), payload));
        // A lookup policy-server never answers is no finding: both engines
        // give the same stand-in reply for it.
        let result = match result {
            Err(CallError::NoAnswer(none)) => Ok(no_answer_reply(&none)),
            other => other,
        };
        result.map_err(|e| {
            let mut finding = call_error_finding(op, &e, input);
            if finding.kind == Kind::Trap {
                if let Some(entry) = self.native {
                    let native = Native { entry };
                    if let Err(panic) = native.call(op, payload, input) {
                        finding.signature = format!("{} (natively)", panic.signature);
                        finding.detail = format!("{}\nnatively: {}", finding.detail, panic.detail);
                    }
                }
            }
            finding
        })
    }
}

/// The reply both engines give when policy-server would never answer
/// (`conformance::NoAnswer`): its JSON form, which no policy writes.
fn no_answer_reply(none: &conformance::NoAnswer) -> Vec<u8> {
    conformance::Reply::NoAnswer(none.clone())
        .to_json()
        .to_string()
        .into_bytes()
}

fn call_error_finding(op: Operation, e: &CallError, input: &Input) -> Finding {
    let detail = e.to_string();
    let (kind, signature) = match e {
        CallError::Trap(m) => (Kind::Trap, trap_signature(m)),
        CallError::Timeout => (
            Kind::Timeout,
            format!("cut by the 2 s deadline with {}", shape_of(input)),
        ),
        CallError::MemoryExhausted(_) => (
            Kind::MemoryExhausted,
            format!("over 64 MiB with {}", shape_of(input)),
        ),
        CallError::InitFailed(m) => (Kind::InitFailed, first_line(m)),
        CallError::InitTimeout => (Kind::InitTimeout, "initialization timed out".into()),
        CallError::Guest(m) => (Kind::GuestError, first_line(m)),
        // Answered with `no_answer_reply` before findings are made.
        CallError::NoAnswer(none) => (Kind::GuestError, none.lookup.clone()),
    };
    Finding {
        kind,
        operation: op,
        signature,
        detail,
    }
}

/// A trap without a native panic to name it: the code offsets of its
/// innermost frames (wasmtime's message is the backtrace; the modules are
/// stripped, so offsets are all there is). The frames of the shared
/// panic-and-abort path come first, so enough of them are kept to reach the
/// code that failed.
pub fn trap_signature(message: &str) -> String {
    let frames: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter_map(|l| {
            let (n, rest) = l.split_once(':')?;
            n.trim().parse::<usize>().ok()?;
            rest.split_whitespace().next()
        })
        .take(12)
        .collect();
    let head = first_line(message);
    if frames.is_empty() {
        head
    } else {
        format!("wasm trap at {}", frames.join(" < "))
    }
}

/// Loads a policy's target for an engine.
pub fn target(engine: EngineKind, policy: &str, dist: &Path) -> Result<Box<dyn Target>> {
    match engine {
        EngineKind::Native => {
            let entry = catalog::entry(policy)
                .with_context(|| format!("no native evaluator named {policy}"))?;
            Ok(Box::new(Native { entry }))
        }
        EngineKind::Wasm => {
            let mut wasm = Wasm::load(&dist.join(format!("{policy}.wasm")))?;
            wasm.native = catalog::entry(policy);
            Ok(Box::new(wasm))
        }
    }
}

/// Prints every call's payload and reply (shortened) to stderr: `--trace`.
pub struct Tracing<'t>(pub &'t dyn Target);

impl Target for Tracing<'_> {
    fn engine(&self) -> EngineKind {
        self.0.engine()
    }
    fn call(&self, op: Operation, payload: &[u8], input: &Input) -> Result<Vec<u8>, Finding> {
        let start = Instant::now();
        let result = self.0.call(op, payload, input);
        let reply = match &result {
            Ok(r) => String::from_utf8_lossy(r).into_owned(),
            Err(f) => format!("FAILED {}: {}", f.kind.name(), f.detail),
        };
        eprintln!(
            "input {} ({}) {} in {:.2} ms\n  payload: {}\n  reply:   {}",
            input.index,
            input.mutations(),
            op.name(),
            start.elapsed().as_secs_f64() * 1e3,
            oracle::preview(&String::from_utf8_lossy(payload)),
            oracle::preview(&reply),
        );
        result
    }
}

/// Only for the unit tests: a [`Target`] from closures.
pub struct FnTarget<F: Fn(Operation, &[u8], &Input) -> Result<Vec<u8>, Finding> + Sync>(pub F);

impl<F: Fn(Operation, &[u8], &Input) -> Result<Vec<u8>, Finding> + Sync> Target for FnTarget<F> {
    fn engine(&self) -> EngineKind {
        EngineKind::Native
    }
    fn call(&self, op: Operation, payload: &[u8], input: &Input) -> Result<Vec<u8>, Finding> {
        (self.0)(op, payload, input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn payloads_are_the_bytes_conformance_builds() {
        for (request, settings) in [
            (
                json!({"uid": "1", "object": {"b": [1, 2.5, null], "a": "\u{0}é"}}),
                json!({}),
            ),
            (json!({}), json!(null)),
            (json!("x"), json!({"z": 1, "a": {"y": true}})),
        ] {
            assert_eq!(
                validate_payload(&request, &settings),
                conformance::validate_payload(&request, &settings)
            );
        }
    }

    #[test]
    fn reviews_over_policy_servers_body_limit_are_not_reachable() {
        let limit = conformance::worst_case::REVIEW_LIMIT;
        let request = |n: usize| json!({"uid": "1", "object": {"data": "x".repeat(n)}});
        let envelope = |r: &Value| {
            serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": r}))
                .unwrap()
                .len()
        };
        let small = request(1000);
        assert!(fits_review(&small));
        let at = request(limit - envelope(&request(0)));
        assert_eq!(envelope(&at), limit);
        assert!(fits_review(&at));
        assert!(!fits_review(&request(limit - envelope(&request(0)) + 1)));
        // Escapes count: 400 K control characters are 2.4 MB written.
        assert!(!fits_review(
            &json!({"uid": "1", "object": {"data": "\u{1}".repeat(400_000)}})
        ));
    }

    #[test]
    fn native_panics_are_caught_with_their_location() {
        install_panic_hook();
        let caught = catch_panic(|| {
            let v: Vec<u8> = Vec::new();
            v[3]
        });
        let (location, message) = caught.unwrap_err();
        assert!(location.starts_with("fuzz/src/engine.rs:"), "{location}");
        assert!(message.contains("index out of bounds"), "{message}");
        assert_eq!(catch_panic(|| 7), Ok(7));
    }

    #[test]
    fn trap_signatures_name_the_cause_and_the_place() {
        let a = "error while executing at wasm backtrace:\n    0: 0x1a2b - <unknown>!<wasm function 12>\n    1:  0x3c4d - <unknown>!<wasm function 40>";
        let b = a.replace("0x3c4d", "0x5e6f");
        assert_eq!(trap_signature(a), "wasm trap at 0x1a2b < 0x3c4d");
        assert_ne!(trap_signature(a), trap_signature(&b));
        assert_eq!(
            trap_signature("the module does not export __guest_call"),
            "the module does not export __guest_call"
        );
    }
}

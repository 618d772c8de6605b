//! `host-test bench`: module size, compile time, fresh-instance and warm
//! evaluation in wasm, and the native evaluation of the same code on the same
//! input, all in one run. A benchmark, not a test: nothing asserts timings.

use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result};
use conformance::{Case, RecordedCluster};
use guard_core::{Context, Timestamp};
use serde::Serialize;
use serde_json::Value;

use crate::capabilities::{Grants, Host, Source};
use crate::harness::Policy;
use crate::host::Limits;
use crate::replay::{median, percentile};

/// One input to time: a request, settings and recorded cluster state.
pub struct Input {
    pub label: String,
    pub request: Value,
    pub settings: Value,
    pub now: Timestamp,
    pub context: Vec<conformance::cluster::Recorded>,
}

impl Input {
    pub fn from_case(case: &Case) -> Self {
        Self {
            label: case.id.split('/').nth(1).unwrap_or(&case.id).to_string(),
            request: case.admission_request(),
            settings: case.settings.clone(),
            now: case.now,
            context: case.context.clone(),
        }
    }
}

/// `<bench_dir>/<policy>-worst-case.yaml`, when the policy has one: a corpus
/// case holding the worst case its settings allow, timed beside the typical
/// object (the policy's tests check that it uses the limits it enforces).
pub fn worst_case(bench_dir: &Path, policy: &str) -> Result<Option<Input>> {
    let file = bench_dir.join(format!("{policy}-worst-case.yaml"));
    if !file.is_file() {
        return Ok(None);
    }
    let cases = conformance::load_cases(&file).map_err(anyhow::Error::msg)?;
    Ok(cases.first().map(|case| Input {
        label: format!("worst case: {policy}-worst-case.yaml"),
        ..Input::from_case(case)
    }))
}

#[derive(Debug, Serialize)]
pub struct Row {
    pub policy: String,
    pub input: String,
    pub module_bytes: usize,
    pub module_gzip_bytes: usize,
    pub compile_ms: f64,
    pub fresh_median_us: f64,
    pub fresh_p99_us: f64,
    pub warm_median_us: f64,
    pub warm_p99_us: f64,
    pub native_median_us: f64,
    pub native_p99_us: f64,
    /// warm wasm / native, medians.
    pub ratio_warm_native: f64,
    pub iterations: usize,
}

fn gzip_len(bytes: &[u8]) -> usize {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let _ = enc.write_all(bytes);
    enc.finish().map(|v| v.len()).unwrap_or(0)
}

fn time<F: FnMut()>(iterations: usize, mut f: F) -> Vec<f64> {
    (0..iterations)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect()
}

/// Benchmarks one policy module on the given inputs.
pub fn bench_policy(wasm_path: &Path, inputs: &[Input], iterations: usize) -> Result<Vec<Row>> {
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
        crate::native(&name).with_context(|| format!("no native evaluator named {name}"))?;
    let gzip = gzip_len(&wasm);
    let limits = Limits::default();
    let allowed = policy.context_aware_resources();
    let mut rows = Vec::new();
    for input in inputs {
        let request = conformance::as_policy_server_sends(&input.request)
            .map_err(|e| anyhow::anyhow!("{}: {e}", input.label))?;
        let payload = conformance::validate_payload(&request, &input.settings);
        let host = || {
            Box::new(Host::new(
                Grants::all_capabilities(allowed.clone()),
                Source::Recorded(input.context.clone()),
            ))
        };
        let fresh = time(iterations, || {
            if let Ok(mut i) = policy.module().instantiate(input.now, &limits, host()) {
                let _ = i.call("validate", &payload);
            }
        });
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
        let (warm_median, native_median) = (median(&warm), median(&native));
        rows.push(Row {
            policy: name.clone(),
            input: input.label.clone(),
            module_bytes: wasm.len(),
            module_gzip_bytes: gzip,
            compile_ms,
            fresh_median_us: median(&fresh),
            fresh_p99_us: percentile(&fresh, 99.0),
            warm_median_us: warm_median,
            warm_p99_us: percentile(&warm, 99.0),
            native_median_us: native_median,
            native_p99_us: percentile(&native, 99.0),
            ratio_warm_native: if native_median > 0.0 {
                warm_median / native_median
            } else {
                0.0
            },
            iterations,
        });
    }
    Ok(rows)
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
            "{:<20} {:<34} {:>9} {:>8} {:>6.0}ms {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.2} {:>9.2} {:>6.1}x",
            r.policy,
            truncate(&r.input, 34),
            r.module_bytes,
            r.module_gzip_bytes,
            r.compile_ms,
            r.fresh_median_us,
            r.fresh_p99_us,
            r.warm_median_us,
            r.warm_p99_us,
            r.native_median_us,
            r.native_p99_us,
            r.ratio_warm_native
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

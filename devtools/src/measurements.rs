//! `bench`'s figures as one value: the machine they were taken on, every
//! timed input and the growth table. `bench.json` is this value serialized
//! and `docs/measurements.md` is it rendered, so the two never disagree and
//! no figure is copied by hand.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result};
use serde::Serialize;

use crate::bench::{
    ratio, BesideNoop, Row, BUDGET_MEMORY_BYTES, BUDGET_READ_FLOOR_MULTIPLE, MIN_ROUNDS,
    MIN_SAMPLES, TIME_PER_LOOP_SECONDS,
};
use crate::growth::GrowthRow;

/// What `bench` measured, and where.
#[derive(Debug, Serialize)]
pub struct Measurements {
    pub machine: Machine,
    /// Empty under `--growth-only`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<Row>,
    /// Each policy's typical request beside the no-op floor; empty under
    /// `--growth-only`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub beside_noop: Vec<BesideNoop>,
    pub growth: Vec<GrowthRow>,
}

/// The facts of the machine a reader needs to weigh the figures.
#[derive(Debug, Serialize)]
pub struct Machine {
    /// When the run started, from the host's clock (UTC, to the minute).
    pub date: String,
    /// The cores the process may use.
    pub cores: usize,
    /// `rustc --version` of the toolchain on `PATH` (the one `make` builds with).
    pub rustc: String,
    /// `/proc/loadavg`'s 1, 5 and 15 minute averages at the start and the end
    /// of the run; `None` where the file cannot be read (not Linux).
    pub load_average_start: Option<String>,
    pub load_average_end: Option<String>,
}

impl Machine {
    /// Read at the start of a run; [`Machine::finish`] adds the end's load.
    pub fn read() -> Self {
        Self {
            date: jiff::Timestamp::now()
                .strftime("%Y-%m-%d %H:%M UTC")
                .to_string(),
            cores: std::thread::available_parallelism().map_or(0, usize::from),
            rustc: rustc_version(),
            load_average_start: load_average(),
            load_average_end: None,
        }
    }

    pub fn finish(&mut self) {
        self.load_average_end = load_average();
    }
}

fn rustc_version() -> String {
    std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map_or_else(
            || "unknown (rustc --version failed)".into(),
            |out| String::from_utf8_lossy(&out.stdout).trim().to_string(),
        )
}

fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let averages: Vec<&str> = text.split_whitespace().take(3).collect();
    (averages.len() == 3).then(|| averages.join(" "))
}

/// How the figures are taken; fixed text but for the loop's bounds.
fn method() -> String {
    format!(
        "\
Every module in `dist/` is timed on a typical 5 KB Kustomization update \
(`tests/bench/kustomization-update.json`), on its worst case and on its first corpus cases: \
module size (raw and gzip), compile time, evaluation on a fresh instance as policy-server runs \
each request, on a warm instance, and the native evaluation of the same code on the same input. \
Each timing loop takes up to `--iterations` samples (default 1,000) and stops once it has \
run {TIME_PER_LOOP_SECONDS:.0} s, with at least {MIN_SAMPLES}, so the slow worst cases have few. Each policy's \
worst case (`policies/<policy>/tests/worst_case.rs`, written under `target/bench/worst-case/`) \
holds its settings at every limit they accept and a request at policy-server's 2 MiB limit. \
It is held to its **read floor**: `host-test/read-floor`, a module that parses the same request \
and settings, makes the same lookups against the same recorded cluster and parses every answer, \
then allows; for a policy that mutated, the **write floor**, which also hands the object back \
whole, as the protocol's reply requires. The floor and the policy are timed in turn, one \
evaluation of each per round, which of the two goes first alternating, for at least {MIN_ROUNDS} \
rounds and {floor_seconds:.0} s; x floor is the median of the rounds' ratios (own time over the \
floor's own time), with its quartiles. Own time is a fresh evaluation less the host's share \
of answering lookups (which policy-server pays too). The **growth** table times one typical \
request of each context-aware policy with its recorded cluster padded to 10, 100, 1,000 and \
10,000 objects of the kinds it may look up, each placed where it cannot change the verdict \
(`devtools/src/growth.rs`); handed KiB is deterministic, the times are not. Times are medians \
of one run on the machine above, which may be shared: the load average says how busy it was.",
        floor_seconds = 2.0 * TIME_PER_LOOP_SECONDS
    )
}

impl Measurements {
    /// Writes the JSON report (`bench.json`).
    pub fn write_json(&self, path: &Path) -> Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, serde_json::to_vec_pretty(self)?)
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// The figures as a Markdown page (`docs/measurements.md`).
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let m = &self.machine;
        let _ = write!(
            out,
            "# Measurements\n\n\
             Written by `make bench` on {}. Do not edit: run `make bench` again \
             (the same figures are in `target/bench/bench.json`).\n\n\
             - cores: {}\n- rustc: {}\n- load average (1, 5, 15 min): {} at the start, {} at the end\n\n\
             ## Method\n\n{}\n",
            m.date,
            m.cores,
            m.rustc,
            m.load_average_start.as_deref().unwrap_or("unknown"),
            m.load_average_end.as_deref().unwrap_or("unknown"),
            method(),
        );
        if !self.inputs.is_empty() {
            out.push_str(&self.modules_table());
            out.push_str(&self.worst_case_table());
            out.push_str(&self.typical_table());
        }
        if !self.beside_noop.is_empty() {
            out.push_str(&self.beside_noop_table());
        }
        out.push_str(&self.growth_table());
        out
    }

    fn modules_table(&self) -> String {
        let mut out = String::from(
            "\n## Modules\n\n| policy | bytes | gzip bytes | compile ms |\n|---|---:|---:|---:|\n",
        );
        let mut seen = Vec::new();
        for r in &self.inputs {
            if !seen.contains(&r.policy.as_str()) {
                seen.push(r.policy.as_str());
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {:.0} |",
                    r.policy, r.module_bytes, r.module_gzip_bytes, r.compile_ms
                );
            }
        }
        out
    }

    fn worst_case_table(&self) -> String {
        let mut out = format!(
            "\n## Worst cases against the read floor\n\n\
             Budget: own time at most {BUDGET_READ_FLOOR_MULTIPLE:.0}x the floor's own time \
             (the write floor's, marked w, for a policy that mutated), linear memory under {} MiB. \
             official: Kubewarden's annotations policy on the same request, fresh (- when \
             `OFFICIAL_POLICY` was not set).\n\n\
             | policy | input MiB | answer | fresh ms | own ms | host ms | floor own ms | x floor \
             | quartiles | rounds | official ms | native ms | peak MiB | peak ÷ input | samples | budget |\n\
             |---|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n",
            BUDGET_MEMORY_BYTES >> 20
        );
        // Only worst cases are timed against the read floor.
        for r in self
            .inputs
            .iter()
            .filter(|r| r.read_floor_own_median_us.is_some())
        {
            let floor = match r.write_floor_own_median_us {
                Some(w) => format!("{}w", ms(w)),
                None => opt_ms(r.read_floor_own_median_us),
            };
            let _ = writeln!(
                out,
                "| {} | {:.1} | {} | {} | {} | {} | {floor} | {} | {} | {} | {} | {} | {:.1} | {:.1}x | {} | {} |",
                r.policy,
                mib(r.payload_bytes + r.context_bytes),
                r.outcome,
                ms(r.fresh_median_us),
                ms(r.fresh_own_median_us),
                ms(r.fresh_host_median_us),
                r.own_over_read_floor
                    .map_or_else(|| "-".into(), |x| format!("{x:.2}x")),
                r.own_over_floor_quartiles
                    .map_or_else(|| "-".into(), |(q1, q3)| format!("{q1:.2}–{q3:.2}")),
                r.floor_rounds.map_or_else(|| "-".into(), |n| n.to_string()),
                opt_ms(r.floor_fresh_median_us),
                opt_ms(r.native_median_us),
                mib(r.peak_memory_bytes),
                r.memory_per_input_byte,
                r.fresh_samples,
                if r.within_budget { "within" } else { "over" },
            );
        }
        out
    }

    fn typical_table(&self) -> String {
        let mut out = String::from(
            "\n## Typical object and corpus cases\n\n\
             | policy | input | answer | fresh µs | warm µs | native µs | warm ÷ native | peak MiB |\n\
             |---|---|---|---:|---:|---:|---:|---:|\n",
        );
        let us = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.1}"));
        for r in self
            .inputs
            .iter()
            .filter(|r| r.read_floor_own_median_us.is_none())
        {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} | {} | {} | {} | {:.1} |",
                r.policy,
                r.input,
                r.outcome,
                r.fresh_median_us,
                us(r.warm_median_us),
                us(r.native_median_us),
                r.ratio_warm_native
                    .map_or_else(|| "-".into(), |x| format!("{x:.1}x")),
                mib(r.peak_memory_bytes),
            );
        }
        out
    }

    fn beside_noop_table(&self) -> String {
        let mut out = String::from(
            "\n## Beside the engine's no-op floor\n\n\
             Each policy on the typical object (settings `{}`) and `host-test/noop-floor` \
             (a module that reads nothing and allows), timed in turn in one loop. A fresh \
             evaluation is split into instantiating the module and calling `validate`; \
             instantiate share is the policy's instantiation over its fresh evaluation.\n\n\
             | policy | fresh µs | no-op fresh µs | ÷ no-op | instantiate µs | no-op instantiate µs \
             | instantiate share | call µs | no-op call µs | warm µs | no-op warm µs | ÷ no-op |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for r in &self.beside_noop {
            let _ = writeln!(
                out,
                "| {} | {:.1} | {:.1} | {} | {:.1} | {:.1} | {:.0}% | {:.1} | {:.1} | {:.1} | {:.1} | {} |",
                r.policy,
                r.fresh_median_us,
                r.noop_fresh_median_us,
                ratio(r.fresh_median_us, r.noop_fresh_median_us),
                r.instantiate_median_us,
                r.noop_instantiate_median_us,
                100.0 * r.instantiate_median_us / r.fresh_median_us.max(f64::MIN_POSITIVE),
                r.call_median_us,
                r.noop_call_median_us,
                r.warm_median_us,
                r.noop_warm_median_us,
                ratio(r.warm_median_us, r.noop_warm_median_us),
            );
        }
        out
    }

    fn growth_table(&self) -> String {
        let mut out = String::from(
            "\n## Growth\n\n\
             | policy | scenario | objects | lookups | handed KiB | fresh ms | own ms | host ms | same reply |\n\
             |---|---|---:|---|---:|---:|---:|---:|---|\n",
        );
        for r in &self.growth {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.1} | {:.3} | {:.3} | {:.3} | {} |",
                r.policy,
                r.scenario,
                r.objects,
                r.lookups.join(", "),
                r.handed_bytes as f64 / 1024.0,
                r.fresh_median_us / 1e3,
                r.own_median_us / 1e3,
                r.host_median_us / 1e3,
                if r.differs.is_none() { "yes" } else { "no" },
            );
        }
        for r in &self.growth {
            if let Some(differs) = &r.differs {
                let _ = write!(
                    out,
                    "\nThe reply at {} objects, {} ({}): {differs}\n",
                    r.objects, r.policy, r.scenario
                );
            }
        }
        out
    }
}

fn ms(us: f64) -> String {
    format!("{:.2}", us / 1e3)
}

fn opt_ms(us: Option<f64>) -> String {
    us.map_or_else(|| "-".into(), ms)
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

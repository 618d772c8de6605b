//! `reconcile-guard run`: one request through a module, printing the
//! AdmissionResponse policy-server would send (like `kwctl run`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use clap::ValueEnum;
use conformance::case::unwrap_review;
use conformance::response::{PolicyMode, ServerOptions};
use conformance::Reply;
use guard_core::Timestamp;
use serde_json::Value;

use host_test::capabilities::{load_session, ContextAwareResource, Grants, Source};
use host_test::harness::{Evaluation, Policy};
use host_test::host::Limits;

use host_test::input::{read_context, read_document, read_text};

#[derive(clap::Args)]
pub struct Args {
    /// The request: an AdmissionReview or a bare AdmissionRequest, JSON or YAML; `-` for stdin.
    #[arg(short = 'r', long = "request-path")]
    request: String,
    /// Settings as a JSON string.
    #[arg(long, conflicts_with = "settings_path")]
    settings_json: Option<String>,
    /// Settings from a JSON or YAML file (`-s`, as kwctl run's).
    #[arg(short = 's', long)]
    settings_path: Option<PathBuf>,
    /// The instant the policy sees as "now" (RFC 3339); default: the real clock.
    #[arg(long)]
    now: Option<Timestamp>,
    /// Recorded cluster objects (a YAML or JSON list in the corpus `context` shape).
    #[arg(long, conflicts_with = "replay_host_capabilities_interactions")]
    context: Option<PathBuf>,
    /// A kwctl session recording of host capability exchanges, replayed in order.
    #[arg(long)]
    replay_host_capabilities_interactions: Option<PathBuf>,
    #[command(flatten)]
    server: ServerArgs,
    /// Show the policy's log lines on stderr.
    #[arg(short, long)]
    verbose: bool,
    /// The policy module (a path, or file://path).
    policy: String,
}

#[derive(Clone, Copy, ValueEnum)]
enum Mode {
    Protect,
    Monitor,
}

/// The per-policy options of a policy-server `policies.yml` entry. Defaults
/// are kwctl run's (`crates/kwctl/src/config/policy_definition.rs`,
/// `PolicyDefinition::from_cli`: protect mode, allowed to mutate, all host
/// capabilities); policy-server's own default for `allowedToMutate` is false.
#[derive(clap::Args)]
struct ServerArgs {
    /// policy-server `policyMode`.
    #[arg(long, value_enum, default_value = "protect")]
    policy_mode: Mode,
    /// policy-server `allowedToMutate` (kwctl run: true; a policies.yml entry without it: false).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    allowed_to_mutate: bool,
    /// Grant the Kubernetes kinds the module's metadata lists in
    /// contextAwareResources (kwctl's flag); without it every lookup is refused.
    #[arg(long)]
    allow_context_aware: bool,
    /// Grant exactly this Kubernetes kind (`API_VERSION/KIND`, repeatable), as
    /// a policies.yml entry's contextAwareResources does.
    #[arg(long = "context-aware-resource", value_name = "API_VERSION/KIND")]
    context_aware_resources: Vec<String>,
    /// Whole seconds a call may run (policy-server `--policy-timeout`, default 2;
    /// kwctl run has no deadline). The epoch ticks once a second, so a call is
    /// cut between N-1 and N seconds.
    #[arg(long, default_value_t = 2)]
    policy_timeout: u64,
    /// Cap one instance's linear memory, in MiB. A harness option only:
    /// policy-server sets no memory limit.
    #[arg(long)]
    memory_limit_mib: Option<usize>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let path = PathBuf::from(args.policy.strip_prefix("file://").unwrap_or(&args.policy));
    let policy = Policy::load(&path)?;
    let settings = settings(&args)?;
    // policy-server validates the settings at boot, just before it serves.
    let now = args.now.unwrap_or_else(Timestamp::now);
    policy
        .validate_settings(&settings, now)
        .context("the policy refuses these settings")?;
    let review = read_document(&args.request)?;
    let request = unwrap_review(&review);
    if !request.is_object() {
        bail!("the request is not an AdmissionReview or AdmissionRequest object");
    }
    let eval = Evaluation {
        now,
        source: source(&args)?,
        grants: Grants::all_capabilities(granted(&policy, &args.server)?),
        limits: limits(&args.server)?,
        server: server_options(&args.server),
    };
    let (reply, trace) = policy.evaluate_traced(&request, &settings, &eval);
    if args.verbose {
        for line in trace.logs {
            eprintln!("{line}");
        }
    }
    match reply {
        Ok(Reply::Response(response)) => {
            println!("{response}");
            Ok(ExitCode::SUCCESS)
        }
        // Printed in the corpus's form, so that the reply can be compared;
        // there is no AdmissionResponse, hence the failure.
        Ok(Reply::NoAnswer(none)) => {
            eprintln!("error: {none}");
            println!("{}", Reply::NoAnswer(none).to_json());
            Ok(ExitCode::FAILURE)
        }
        Err(failure) => {
            eprintln!("error: {failure}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `--settings-json` or `--settings-path`; none is `{}`.
fn settings(args: &Args) -> Result<Value> {
    Ok(match (&args.settings_json, &args.settings_path) {
        (Some(json), _) => serde_json::from_str(json).context("--settings-json is not JSON")?,
        (None, Some(p)) => read_document(&p.to_string_lossy())?,
        (None, None) => Value::Object(Default::default()),
    })
}

/// Where lookups are answered from: `--context`, a kwctl session, or an
/// empty cluster.
fn source(args: &Args) -> Result<Source> {
    Ok(
        match (&args.context, &args.replay_host_capabilities_interactions) {
            (Some(p), _) => Source::Recorded(read_context(p)?.into()),
            (None, Some(p)) => {
                Source::Session(load_session(&read_text(p)?).map_err(anyhow::Error::msg)?)
            }
            (None, None) => Source::Recorded(Vec::new().into()),
        },
    )
}

/// The kinds the policy may look up: its metadata's with
/// `--allow-context-aware`, then each `--context-aware-resource`.
fn granted(policy: &Policy, server: &ServerArgs) -> Result<Vec<ContextAwareResource>> {
    let mut granted = if server.allow_context_aware {
        policy.context_aware_resources()
    } else {
        Vec::new()
    };
    for r in &server.context_aware_resources {
        let (api_version, kind) = r
            .rsplit_once('/')
            .with_context(|| format!("--context-aware-resource {r}: expected API_VERSION/KIND"))?;
        granted.push(ContextAwareResource {
            api_version: api_version.into(),
            kind: kind.into(),
        });
    }
    Ok(granted)
}

fn limits(args: &ServerArgs) -> Result<Limits> {
    if args.policy_timeout == 0 {
        bail!("--policy-timeout must be at least one second");
    }
    Ok(Limits {
        timeout_seconds: Some(args.policy_timeout),
        memory_bytes: args.memory_limit_mib.map(|m| m.saturating_mul(1 << 20)),
    })
}

fn server_options(server: &ServerArgs) -> ServerOptions {
    ServerOptions {
        // kwctl run's policy id.
        policy_id: "policy-from-cli".into(),
        mode: match server.policy_mode {
            Mode::Protect => PolicyMode::Protect,
            Mode::Monitor => PolicyMode::Monitor,
        },
        allowed_to_mutate: server.allowed_to_mutate,
        // kwctl run on a module sets none (3460bb71,
        // `crates/kwctl/src/config/policy_definition.rs`, `from_cli`).
        rejection_message: None,
    }
}

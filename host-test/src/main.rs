//! `host-test`: run, replay, benchmark and annotate reconcile-guard policy
//! modules the way Kubewarden's policy-server and kwctl do.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use clap::{Parser, Subcommand, ValueEnum};
use conformance::case::unwrap_review;
use conformance::response::{PolicyMode, ServerOptions};
use conformance::Reply;
use guard_core::Timestamp;
use serde_json::Value;

use host_test::bench::{self, Input};
use host_test::capabilities::{load_session, ContextAwareResource, Grants, Source};
use host_test::check;
use host_test::engines;
use host_test::harness::{Evaluation, Policy};
use host_test::host::Limits;
use host_test::metadata::{self, Metadata};
use host_test::oci;
use host_test::replay::{self, median, Modules};
use host_test::{sbom, signing, sizes};

#[derive(Parser)]
#[command(name = "host-test", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Mode {
    Protect,
    Monitor,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate one request, printing the AdmissionResponse as one JSON line (like `kwctl run`).
    Run {
        /// The request: an AdmissionReview or a bare AdmissionRequest, JSON or YAML; `-` for stdin.
        #[arg(short = 'r', long = "request-path")]
        request: String,
        /// Settings as a JSON string.
        #[arg(long, conflicts_with = "settings_path")]
        settings_json: Option<String>,
        /// Settings from a JSON or YAML file.
        #[arg(long)]
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
    },
    /// Check a GitOps repository's manifests against the policies before they
    /// reach the cluster: every object the policies select, as the request
    /// kube-apiserver sends while Flux applies it, through the modules.
    Check {
        /// Manifest files or folders (their .yaml, .yml and .json files); `-`
        /// for stdin, such as `kustomize build` output.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The previous revision of the same manifests (files or folders): an
        /// object in both is an UPDATE, one only there a DELETE (see --no-prune).
        #[arg(long, conflicts_with = "base_revision")]
        base: Vec<PathBuf>,
        /// The previous revision as a git revision (such as origin/main): the
        /// same paths, read with git.
        #[arg(long)]
        base_revision: Option<String>,
        /// (Cluster)AdmissionPolicy manifests (a file or folder), or a
        /// policy-server policies.yml.
        #[arg(long, default_value = "deploy")]
        policies: PathBuf,
        /// Where the modules are: a registry reference `…/NAME:TAG` is `DIST/NAME.wasm`.
        #[arg(long, default_value = "dist")]
        dist: PathBuf,
        /// Recorded cluster objects (the `run --context` format) for lookups the
        /// manifests cannot answer.
        #[arg(long)]
        context: Option<PathBuf>,
        /// The instant the policies see (RFC 3339); default: the real clock.
        #[arg(long)]
        now: Option<Timestamp>,
        /// Who applies the manifests.
        #[arg(long, default_value = check::request::KUSTOMIZE_CONTROLLER)]
        user: String,
        /// The writer's groups (repeatable); default: a service account's.
        #[arg(long = "group")]
        groups: Vec<String>,
        /// The field manager of the apply.
        #[arg(long, default_value = "kustomize-controller")]
        field_manager: String,
        /// The namespace of namespaced objects that name none.
        #[arg(long, default_value = "default")]
        namespace: String,
        /// The Flux Kustomization that applies the manifests: its owner labels
        /// are added to every object, as kustomize-controller adds them.
        #[arg(long, value_name = "NAMESPACE/NAME")]
        kustomization: Option<String>,
        /// Do not check the deletion of objects the base has and the head has not.
        #[arg(long)]
        no_prune: bool,
        /// Answer a lookup of an object neither the manifests nor --context
        /// hold as "not found" instead of reporting the verdict undecided.
        #[arg(long)]
        missing_means_absent: bool,
        /// Where Kubewarden runs: a ClusterAdmissionPolicy does not see it.
        #[arg(long, default_value = "kubewarden")]
        kubewarden_namespace: String,
        /// The report: a line per finding (text), GitHub Actions workflow
        /// commands, JUnit XML or SARIF 2.1.0.
        #[arg(long, value_enum, default_value = "text")]
        format: check::report::Format,
        /// Write the report here instead of stdout.
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
        /// Fail on warnings too.
        #[arg(long)]
        warnings_as_errors: bool,
        /// Whole seconds an evaluation may run (policy-server's --policy-timeout).
        #[arg(long, default_value_t = 2)]
        policy_timeout: u64,
        /// Also save every evaluation as a corpus case under DIR/<module>/, to
        /// replay (`host-test replay`) or run through kwctl and policy-server
        /// (`host-test conformance`).
        #[arg(long, value_name = "DIR")]
        save_cases: Option<PathBuf>,
    },
    /// Each policy's optimized module against its size budget
    /// (`policies/<policy>/size-budget.yml`); with --breakdown, where the
    /// bytes of the given named builds go.
    Sizes {
        /// The optimized modules, `<policy>.wasm` (default: target/opt).
        #[arg(long, default_value = "target/opt")]
        modules: PathBuf,
        /// Modules built with their function names (`make sizes` builds them)
        /// to break down: sections, data, the largest functions.
        #[arg(long)]
        breakdown: Vec<PathBuf>,
        /// How many of the largest functions to list.
        #[arg(long, default_value_t = 15)]
        top: usize,
    },
    /// Replay corpus cases against the built modules and check their expectations.
    Replay {
        /// Case files or folders (default tests/cases).
        paths: Vec<PathBuf>,
        /// Where the built modules are (`<policy>.wasm`).
        #[arg(long, default_value = "dist")]
        dist: PathBuf,
        /// Print a summary table per policy (cases, verdicts, size, median time).
        #[arg(long)]
        table: bool,
        /// Evaluations per case, for the median time in the table.
        #[arg(long, default_value_t = 1)]
        repeat: usize,
    },
    /// Run stories (`tests/stories`) with every request judged by the built
    /// module and natively; see tests/stories/README.md.
    Stories {
        /// Story files or folders (default tests/stories).
        paths: Vec<PathBuf>,
        #[arg(long, default_value = "dist")]
        dist: PathBuf,
        /// Print every step: the state before it, the request and the reply.
        #[arg(long)]
        verbose: bool,
    },
    /// Run corpus cases through the real kwctl and policy-server and compare
    /// their AdmissionResponses with the harness's, field by field.
    Conformance {
        /// Case files or folders (default tests/cases).
        paths: Vec<PathBuf>,
        #[arg(long, default_value = "dist")]
        dist: PathBuf,
        /// Known differences, each with its reason (a YAML list of case, engine, reason).
        #[arg(long, default_value = "tests/engine-differences.yaml")]
        allow_list: PathBuf,
        /// The engines to compare (default: both).
        #[arg(long, value_enum)]
        engine: Vec<engines::Engine>,
        /// Where the engines' files go (requests, sessions, policies.yml, logs).
        #[arg(long, default_value = "target/conformance")]
        work: PathBuf,
        /// Concurrent kwctl runs.
        #[arg(long, default_value_t = 4)]
        jobs: usize,
    },
    /// Benchmark every module against its native evaluation.
    Bench {
        #[arg(long, default_value = "dist")]
        dist: PathBuf,
        #[arg(long, default_value = "tests/cases")]
        cases: PathBuf,
        /// The typical Flux object every policy is timed on.
        #[arg(long, default_value = "tests/bench/kustomization-update.json")]
        typical: PathBuf,
        /// Corpus cases per policy to time besides the typical object.
        #[arg(long, default_value_t = 3)]
        cases_per_policy: usize,
        #[arg(long, default_value_t = 1000)]
        iterations: usize,
        /// Where to write the JSON report.
        #[arg(long, default_value = "target/bench/bench.json")]
        json: PathBuf,
        /// Also time the typical object through the real engine (`kwctl bench`),
        /// for each module and for Kubewarden's official annotations policy.
        #[arg(long, value_enum)]
        engine: Option<bench::Engine>,
        /// The read floor module (`make build` writes it): timed on each worst
        /// case's request, settings and lookups as the floor of its budget.
        #[arg(long, default_value = "target/opt/read-floor.wasm")]
        read_floor: PathBuf,
        /// Kubewarden's official annotations policy module (default: the file
        /// `OFFICIAL_POLICY` names): timed on each worst case's request as its
        /// floor, and compared with the modules under --engine. Without it
        /// both are skipped, with the reason.
        #[arg(long)]
        official: Option<PathBuf>,
        /// Its settings (it requires a criterion and at least one value).
        #[arg(
            long,
            default_value = r#"{"criteria":"containsAnyOf","values":["event.toolkit.fluxcd.io/team"]}"#
        )]
        official_settings: String,
        /// kwctl bench's --warm-up-time, per benchmark (whole seconds).
        #[arg(long, default_value_t = 1)]
        kwctl_warm_up: u64,
        /// kwctl bench's --measurement-time, per benchmark (whole seconds).
        #[arg(long, default_value_t = 3)]
        kwctl_measurement: u64,
        /// Only the growth table (`make bench` prints it after the others).
        #[arg(long)]
        growth_only: bool,
        /// Only these policies (default: every module in --dist).
        policies: Vec<String>,
    },
    /// Add Kubewarden metadata to a module (like `kwctl annotate`: accepts the
    /// metadata kwctl accepts; `lint-metadata` adds reconcile-guard's own checks).
    Annotate {
        #[arg(short = 'm', long = "metadata-path")]
        metadata: PathBuf,
        #[arg(short = 'u', long = "usage-path")]
        usage: Option<PathBuf>,
        #[arg(short = 'o', long = "output-path")]
        output: PathBuf,
        wasm: PathBuf,
    },
    /// Check metadata.yml files for what a published reconcile-guard policy
    /// needs beyond kwctl's checks (io.kubewarden.policy.* annotations, semver
    /// version, at least one rule, no unknown fields).
    LintMetadata {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Regenerate the Artifact Hub packages, ClusterAdmissionPolicy examples and
    /// policies.yml from each policy's Cargo.toml, metadata.yml, questions-ui.yml and README.
    Scaffold {
        /// The repository root.
        #[arg(long, default_value = ".")]
        root: PathBuf,
    },
    /// Push an annotated module to an OCI registry; prints the immutable reference.
    Push {
        /// The module, e.g. dist/flux-suspend.wasm.
        wasm: PathBuf,
        /// registry://HOST/REPOSITORY:TAG
        uri: String,
    },
    /// Pull a module from an OCI registry, verifying its digest.
    Pull {
        /// registry://HOST/REPOSITORY:TAG or @sha256:...
        uri: String,
        #[arg(short = 'o', long = "output-path")]
        output: PathBuf,
    },
    /// Generate a cosign key pair: cosign.key (encrypted with COSIGN_PASSWORD,
    /// as `cosign generate-key-pair` writes it) and cosign.pub.
    Keygen {
        /// Write PREFIX.key and PREFIX.pub.
        #[arg(long, default_value = "cosign")]
        output_key_prefix: String,
    },
    /// Sign a pushed module with a cosign key (password in COSIGN_PASSWORD),
    /// storing the signature as cosign does; optionally attach its SBOM and sign that too.
    Sign {
        /// The private key (cosign's encrypted PEM).
        #[arg(short = 'k', long = "key")]
        key: PathBuf,
        /// An annotation to sign with the digest (key=value, repeatable), as
        /// `cosign sign -a`; `kwctl verify -a` and verification configs can require it.
        #[arg(short = 'a', long = "annotation", value_parser = key_value)]
        annotations: Vec<(String, String)>,
        /// An SPDX JSON document to attach (`cosign attach sbom` layout) and sign.
        #[arg(long)]
        sbom: Option<PathBuf>,
        /// registry://HOST/REPOSITORY:TAG or @sha256:... (a tag is resolved; its digest is signed)
        uri: String,
    },
    /// Verify a module's signatures as `kwctl verify` does (same flags and
    /// verification config format; key-based signatures only).
    Verify {
        /// A kwctl verification config (YAML, apiVersion v1).
        #[arg(long = "verification-config-path", conflicts_with = "keys")]
        config: Option<PathBuf>,
        /// A public key that must have signed it (repeatable).
        #[arg(short = 'k', long = "verification-key")]
        keys: Vec<PathBuf>,
        /// An annotation every key's signature must carry (key=value, repeatable).
        #[arg(short = 'a', long = "verification-annotation", value_parser = key_value)]
        annotations: Vec<(String, String)>,
        /// Also require an attached SBOM signed the same way, and write it here.
        #[arg(long)]
        sbom_output: Option<PathBuf>,
        /// registry://HOST/REPOSITORY:TAG or @sha256:...
        uri: String,
    },
    /// Write the SPDX 2.3 JSON SBOM of a built module, from the dependency
    /// graph cargo resolves for its build.
    Sbom {
        /// The built module, e.g. dist/flux-suspend.wasm (its digest names it).
        #[arg(long)]
        module: PathBuf,
        /// The other packages built in the same cargo invocation (features are
        /// resolved per invocation), as `make build` builds them.
        #[arg(long = "built-with")]
        built_with: Vec<String>,
        /// Where to write the document (default: stdout).
        #[arg(short = 'o', long = "output-path")]
        output: Option<PathBuf>,
        /// The workspace the module was built in.
        #[arg(long, default_value = ".")]
        workspace: PathBuf,
        /// The policy's package name.
        policy: String,
    },
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

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Recorded cluster objects (`--context`).
fn read_context(path: &Path) -> Result<Vec<conformance::cluster::Recorded>> {
    serde_json::from_value(read_document(&path.to_string_lossy())?).with_context(|| {
        format!(
            "--context {}: expected a list of {{apiVersion, kind, namespace, name, object}}",
            path.display()
        )
    })
}

/// Reads JSON or YAML (YAML is a superset; JSON is tried first for exact numbers).
fn read_document(source: &str) -> Result<Value> {
    let text = if source == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        s
    } else {
        std::fs::read_to_string(source).with_context(|| format!("cannot read {source}"))?
    };
    serde_json::from_str(&text)
        .or_else(|_| serde_norway::from_str(&text))
        .with_context(|| format!("{source} is neither JSON nor YAML"))
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

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run {
            request,
            settings_json,
            settings_path,
            now,
            context,
            replay_host_capabilities_interactions,
            server,
            verbose,
            policy,
        } => {
            let path = PathBuf::from(policy.strip_prefix("file://").unwrap_or(&policy));
            let policy = Policy::load(&path)?;
            let settings = match (settings_json, settings_path) {
                (Some(json), _) => {
                    serde_json::from_str(&json).context("--settings-json is not JSON")?
                }
                (None, Some(p)) => read_document(&p.to_string_lossy())?,
                (None, None) => Value::Object(Default::default()),
            };
            // policy-server validates the settings at boot, just before it serves.
            let now = now.unwrap_or_else(Timestamp::now);
            policy
                .validate_settings(&settings, now)
                .context("the policy refuses these settings")?;
            let review = read_document(&request)?;
            let request = unwrap_review(&review);
            if !request.is_object() {
                bail!("the request is not an AdmissionReview or AdmissionRequest object");
            }
            let source = match (context, replay_host_capabilities_interactions) {
                (Some(p), _) => Source::Recorded(read_context(&p)?.into()),
                (None, Some(p)) => {
                    let text = std::fs::read_to_string(&p)
                        .with_context(|| format!("cannot read {}", p.display()))?;
                    Source::Session(load_session(&text).map_err(anyhow::Error::msg)?)
                }
                (None, None) => Source::Recorded(Vec::new().into()),
            };
            let mut granted = if server.allow_context_aware {
                policy.context_aware_resources()
            } else {
                Vec::new()
            };
            for r in &server.context_aware_resources {
                let (api_version, kind) = r.rsplit_once('/').with_context(|| {
                    format!("--context-aware-resource {r}: expected API_VERSION/KIND")
                })?;
                granted.push(ContextAwareResource {
                    api_version: api_version.into(),
                    kind: kind.into(),
                });
            }
            let eval = Evaluation {
                now,
                limits: limits(&server)?,
                source,
                grants: Grants::all_capabilities(granted),
                server: ServerOptions {
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
                },
            };
            let (reply, trace) = policy.evaluate_traced(&request, &settings, &eval);
            if verbose {
                for line in trace.logs {
                    eprintln!("{line}");
                }
            }
            match reply {
                Ok(Reply::Response(response)) => {
                    println!("{response}");
                    Ok(ExitCode::SUCCESS)
                }
                // Printed in the corpus's form, so that the reply can be
                // compared; there is no AdmissionResponse, hence the failure.
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
        Command::Check {
            paths,
            base,
            base_revision,
            policies,
            dist,
            context,
            now,
            user,
            groups,
            field_manager,
            namespace,
            kustomization,
            no_prune,
            missing_means_absent,
            kubewarden_namespace,
            format,
            output,
            warnings_as_errors,
            policy_timeout,
            save_cases,
        } => {
            let kustomization = kustomization
                .map(|k| {
                    k.split_once('/')
                        .map(|(ns, name)| (ns.to_string(), name.to_string()))
                        .with_context(|| format!("--kustomization {k}: expected NAMESPACE/NAME"))
                })
                .transpose()?;
            if policy_timeout == 0 {
                bail!("--policy-timeout must be at least one second");
            }
            // kustomize-controller labels everything it applies with its
            // Kustomization; another writer (kubectl) adds no owner.
            let owner = kustomization.clone().or_else(|| {
                (user == check::request::KUSTOMIZE_CONTROLLER).then(|| {
                    let (ns, name) = check::flux::BOOTSTRAP;
                    (ns.to_string(), name.to_string())
                })
            });
            let context = context
                .map(|p| read_context(&p))
                .transpose()?
                .unwrap_or_default();
            let options = check::Options {
                now: now.unwrap_or_else(Timestamp::now),
                writer: check::request::Writer::new(&user, groups, &field_manager),
                default_namespace: namespace,
                kustomization: owner.clone(),
                prune: !no_prune,
                missing_means_absent,
                context,
                limits: Limits {
                    timeout_seconds: Some(policy_timeout),
                    memory_bytes: None,
                },
                save_cases,
            };
            let judged = (|| {
                let base = match (&base_revision, base.is_empty()) {
                    (Some(rev), _) => check::input::Base::Revision(rev),
                    (None, false) => check::input::Base::Paths(&base),
                    (None, true) => check::input::Base::None,
                };
                let applier = owner.clone().unwrap_or_else(|| {
                    let (ns, name) = check::flux::BOOTSTRAP;
                    (ns.to_string(), name.to_string())
                });
                let judged = check::input::read(&paths, base, &applier, &options.context)?;
                if judged.is_empty() {
                    bail!("no object read: every folder given is left out of the repository's artifact");
                }
                if let Some(empty) = judged.iter().find(|j| j.head.objects.is_empty()) {
                    bail!(
                        "no object read from {}: an empty input (a failed build upstream?) is not a pass",
                        empty.name
                    );
                }
                let configured = check::policies::load(&policies, &dist, &kubewarden_namespace)?;
                let loaded = check::load(configured, options.now)?;
                let mut report = check::Report::default();
                for j in &judged {
                    report.merge(check::check(&j.head, j.base.as_ref(), &loaded, &options)?);
                }
                Ok(report)
            })();
            let report = match judged {
                Ok(report) => report,
                Err(error) => {
                    // The requested report is still written, saying why
                    // nothing was judged, so that a CI step that uploads it
                    // shows the error instead of failing on a missing file.
                    if let Some(path) = &output {
                        let _ = std::fs::write(
                            path,
                            check::report::error(format, &format!("{error:#}")),
                        );
                    }
                    if format == check::report::Format::Github {
                        let _ = append_step_summary(&format!(
                            "### reconcile-guard check\n\nCould not run:\n\n```text\n{error:#}\n```\n"
                        ));
                    }
                    return Err(error);
                }
            };
            let rendered = check::report::render(&report, format, warnings_as_errors);
            // The report goes to stdout or the file; with a machine format
            // the one-line summary goes to stderr for the person watching.
            match &output {
                Some(path) => std::fs::write(path, rendered)
                    .with_context(|| format!("cannot write {}", path.display()))?,
                None => print!("{rendered}"),
            }
            if format != check::report::Format::Text || output.is_some() {
                eprintln!("{}", check::report::summary(&report));
            }
            if format == check::report::Format::Github {
                append_step_summary(&check::report::step_summary(&report, warnings_as_errors))?;
            }
            Ok(if check::report::fails(&report, warnings_as_errors) {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Sizes {
            modules,
            breakdown,
            top,
        } => sizes_cmd(&modules, &breakdown, top),
        Command::Replay {
            paths,
            dist,
            table,
            repeat,
        } => replay_cmd(paths, &dist, table, repeat),
        Command::Stories {
            paths,
            dist,
            verbose,
        } => stories_cmd(paths, &dist, verbose),
        Command::Conformance {
            paths,
            dist,
            allow_list,
            engine,
            work,
            jobs,
        } => conformance_cmd(paths, dist, &allow_list, engine, work, jobs),
        Command::Bench {
            dist,
            cases,
            typical,
            cases_per_policy,
            iterations,
            json,
            engine,
            read_floor,
            official,
            official_settings,
            kwctl_warm_up,
            kwctl_measurement,
            growth_only,
            policies,
        } => {
            let official = match official {
                Some(path) if path.is_file() => Ok(path),
                Some(path) => bail!("--official {}: no such file", path.display()),
                None => match engines::locate::official_policy().map_err(anyhow::Error::msg)? {
                    engines::locate::Found::At(path) => Ok(path),
                    engines::locate::Found::Absent(reason) => Err(reason),
                },
            };
            bench_cmd(
                &dist,
                &cases,
                &typical,
                cases_per_policy,
                iterations,
                &json,
                policies,
                &read_floor,
                growth_only,
                bench::Official::load(&official, &official_settings)?,
                engine.map(|bench::Engine::Kwctl| bench::KwctlCompare {
                    official,
                    official_settings,
                    timing: bench::KwctlTiming {
                        warm_up_seconds: kwctl_warm_up,
                        measurement_seconds: kwctl_measurement,
                    },
                }),
            )
        }
        Command::Annotate {
            metadata: meta_path,
            usage,
            output,
            wasm,
        } => {
            let meta = Metadata::parse(
                &std::fs::read_to_string(&meta_path)
                    .with_context(|| format!("cannot read {}", meta_path.display()))?,
            )
            .with_context(|| meta_path.display().to_string())?;
            let usage = match usage {
                Some(p) => Some(
                    std::fs::read_to_string(&p)
                        .with_context(|| format!("cannot read {}", p.display()))?,
                ),
                None => None,
            };
            let bytes =
                std::fs::read(&wasm).with_context(|| format!("cannot read {}", wasm.display()))?;
            let version = match meta.backend(&bytes)? {
                metadata::Backend::Wapc => Policy::protocol_version_of(&bytes)?,
                metadata::Backend::Other => "Unknown".into(),
            };
            let annotated = metadata::annotate(&bytes, &meta, &version, usage.as_deref())?;
            std::fs::write(&output, annotated)
                .with_context(|| format!("cannot write {}", output.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::LintMetadata { files } => {
            for path in files {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                Metadata::lint_yaml(&text).with_context(|| path.display().to_string())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Scaffold { root } => {
            let names: Vec<&str> = catalog::names().collect();
            let created_at = Timestamp::now().round(jiff::Unit::Second)?.to_string();
            host_test::distribution::write_all(&root, &names, &created_at)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Push { wasm, uri } => {
            let bytes =
                std::fs::read(&wasm).with_context(|| format!("cannot read {}", wasm.display()))?;
            println!("{}", oci::push(&bytes, &uri)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Pull { uri, output } => {
            let pulled = oci::pull(&uri)?;
            std::fs::write(&output, &pulled.wasm)
                .with_context(|| format!("cannot write {}", output.display()))?;
            println!("{}", pulled.immutable);
            Ok(ExitCode::SUCCESS)
        }
        Command::Keygen { output_key_prefix } => {
            let (private, public) = signing::generate_key_pair(&signing::password()?)?;
            for (path, text) in [
                (format!("{output_key_prefix}.key"), private.as_str()),
                (format!("{output_key_prefix}.pub"), public.as_str()),
            ] {
                if Path::new(&path).exists() {
                    bail!("{path} exists; remove it or choose another --output-key-prefix");
                }
                std::fs::write(&path, text).with_context(|| format!("cannot write {path}"))?;
            }
            eprintln!("Private key written to {output_key_prefix}.key");
            eprintln!("Public key written to {output_key_prefix}.pub");
            Ok(ExitCode::SUCCESS)
        }
        Command::Sign {
            key,
            annotations,
            sbom,
            uri,
        } => {
            let key_pem =
                std::fs::read(&key).with_context(|| format!("cannot read {}", key.display()))?;
            let sbom = sbom
                .map(|p| std::fs::read(&p).with_context(|| format!("cannot read {}", p.display())))
                .transpose()?;
            let signed = signing::sign(
                &uri,
                &key_pem,
                &signing::password()?,
                &annotations.into_iter().collect(),
                sbom.as_deref(),
            )?;
            println!("{} signed: {}", signed.module, signed.signature);
            if let Some((attached, signature)) = signed.sbom {
                println!("{attached} (SBOM) signed: {signature}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify {
            config,
            keys,
            annotations,
            sbom_output,
            uri,
        } => {
            let config = match config {
                Some(path) => signing::VerificationConfig::parse(
                    &std::fs::read_to_string(&path)
                        .with_context(|| format!("cannot read {}", path.display()))?,
                )
                .with_context(|| format!("{}", path.display()))?,
                None => signing::VerificationConfig::from_keys(
                    keys.iter()
                        .map(|k| {
                            std::fs::read_to_string(k)
                                .with_context(|| format!("cannot read {}", k.display()))
                        })
                        .collect::<Result<_>>()?,
                    &annotations.into_iter().collect(),
                )?,
            };
            let verified = signing::verify(&uri, &config, sbom_output.is_some())?;
            if let (Some(path), Some(document)) = (sbom_output, verified.sbom) {
                std::fs::write(&path, document)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            println!("Policy successfully verified: {}", verified.module);
            Ok(ExitCode::SUCCESS)
        }
        Command::Sbom {
            module,
            built_with,
            output,
            workspace,
            policy,
        } => {
            let bytes = std::fs::read(&module)
                .with_context(|| format!("cannot read {}", module.display()))?;
            let graph = sbom::graph(&workspace, &policy, &built_with)?;
            let file_name = module.file_name().map_or_else(
                || format!("{policy}.wasm"),
                |n| n.to_string_lossy().into_owned(),
            );
            let document = sbom::document(&graph, &bytes, &file_name, &sbom_created()?)?;
            let json = serde_json::to_string_pretty(&document)? + "\n";
            match output {
                Some(path) => std::fs::write(&path, json)
                    .with_context(|| format!("cannot write {}", path.display()))?,
                None => print!("{json}"),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `key=value`, as cosign and kwctl take annotations.
fn key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("{text:?} is not key=value")),
    }
}

/// When an SBOM is created: `SOURCE_DATE_EPOCH` (the reproducible-builds
/// convention; `make build` sets the last commit's time), else now.
fn sbom_created() -> Result<String> {
    let at = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(epoch) => jiff::Timestamp::from_second(
            epoch
                .trim()
                .parse()
                .with_context(|| format!("SOURCE_DATE_EPOCH {epoch:?} is not whole seconds"))?,
        )?,
        Err(_) => jiff::Timestamp::now(),
    };
    Ok(at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// The cases under `paths` (default `tests/cases`).
fn load_corpus(paths: Vec<PathBuf>) -> Result<Vec<conformance::Case>> {
    let paths = if paths.is_empty() {
        vec![PathBuf::from("tests/cases")]
    } else {
        paths
    };
    let mut cases = Vec::new();
    for p in &paths {
        cases.extend(conformance::load_cases(p).map_err(anyhow::Error::msg)?);
    }
    if cases.is_empty() {
        bail!("no cases found under {paths:?}");
    }
    Ok(cases)
}

/// Every policy's module within its budget; then the breakdowns asked for.
fn sizes_cmd(modules: &Path, breakdown: &[PathBuf], top: usize) -> Result<ExitCode> {
    let mut over = 0;
    for entry in catalog::POLICIES {
        let budget = sizes::Budget::load(
            &Path::new("policies")
                .join(entry.name)
                .join("size-budget.yml"),
        )?;
        let (line, fits) = sizes::check(&modules.join(format!("{}.wasm", entry.name)), &budget)?;
        println!("{line}");
        if !fits {
            over += 1;
        }
    }
    for path in breakdown {
        let wasm =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        sizes::print(&path.display().to_string(), &sizes::breakdown(&wasm)?, top);
    }
    if over > 0 {
        println!(
            "\n{over} module(s) over budget: make it smaller, or raise bytes in its \
             size-budget.yml, with the reason, in the same commit"
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// An engine that is not installed is skipped, with the reason, and the run
/// passes; where one is installed, every difference not allow-listed fails
/// the run, and so does an allow-list entry whose case no longer differs.
fn conformance_cmd(
    paths: Vec<PathBuf>,
    dist: PathBuf,
    allow_list: &Path,
    engines: Vec<engines::Engine>,
    work: PathBuf,
    jobs: usize,
) -> Result<ExitCode> {
    let cases = load_corpus(paths)?;
    let allow_list = if allow_list.exists() {
        engines::load_allow_list(allow_list).map_err(anyhow::Error::msg)?
    } else {
        Vec::new()
    };
    let options = engines::Options {
        dist,
        work,
        engines: if engines.is_empty() {
            vec![engines::Engine::Kwctl, engines::Engine::PolicyServer]
        } else {
            engines
        },
        allow_list,
        jobs,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let started = std::time::Instant::now();
    let results = runtime
        .block_on(engines::run(&cases, &options))
        .map_err(anyhow::Error::msg)?;
    let failed = engines::report(&results, &cases);
    let stale = engines::stale_entries(&options.allow_list, &results);
    for entry in &stale {
        println!(
            "stale allow-list entry: {} no longer differs on {}",
            entry.case,
            entry.engine.name()
        );
    }
    println!("({:.0} s)", started.elapsed().as_secs_f64());
    Ok(if failed == 0 && stale.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn replay_cmd(paths: Vec<PathBuf>, dist: &Path, table: bool, repeat: usize) -> Result<ExitCode> {
    let cases = load_corpus(paths)?;
    let mut modules = Modules::new(dist);
    let limits = Limits::default();
    let mut outcomes = Vec::new();
    for case in &cases {
        let outcome = replay::run_case(&mut modules, case, repeat, &limits);
        if !table || !outcome.passed() {
            println!(
                "{} {:<64} {}",
                if outcome.passed() { "ok  " } else { "FAIL" },
                outcome.id,
                outcome.verdict()
            );
            for p in &outcome.problems {
                println!("      {p}");
            }
        }
        outcomes.push(outcome);
    }
    if table {
        print_summary(&outcomes, &mut modules);
    }
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    println!("{} passed, {} failed", outcomes.len() - failed, failed);
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn stories_cmd(paths: Vec<PathBuf>, dist: &Path, verbose: bool) -> Result<ExitCode> {
    let paths = if paths.is_empty() {
        vec![PathBuf::from("tests/stories")]
    } else {
        paths
    };
    let (mut passed, mut failed) = (0, 0);
    for path in &paths {
        for (id, run) in host_test::stories::run(path, dist).map_err(anyhow::Error::msg)? {
            let failures = match &run {
                Ok(done) => done.failures(),
                Err(e) => vec![e.clone()],
            };
            if failures.is_empty() {
                passed += 1;
                println!("ok   {id}");
            } else {
                failed += 1;
                println!("FAIL {id}");
                for f in &failures {
                    println!("      {}", f.replace('\n', "\n      "));
                }
            }
            if let (true, Ok(done)) = (verbose, &run) {
                print!("{}", done.narrate());
            }
        }
    }
    println!("{passed} stories passed, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn print_summary(outcomes: &[replay::Outcome], modules: &mut Modules) {
    let mut by_policy: BTreeMap<&str, Vec<&replay::Outcome>> = BTreeMap::new();
    for o in outcomes {
        by_policy.entry(o.policy.as_str()).or_default().push(o);
    }
    println!(
        "\n{:<20} {:>6} {:>8} {:>8} {:>8} {:>7} {:>11} {:>12}",
        "policy", "cases", "allowed", "mutated", "denied", "failed", "module KiB", "µs/request"
    );
    for (policy, list) in by_policy {
        let count = |v: &str| list.iter().filter(|o| o.verdict() == v).count();
        let times: Vec<f64> = list.iter().flat_map(|o| o.micros.iter().copied()).collect();
        let size = modules.get(policy).map(|p| p.module().size()).unwrap_or(0);
        println!(
            "{:<20} {:>6} {:>8} {:>8} {:>8} {:>7} {:>11.1} {:>12.1}",
            policy,
            list.len(),
            count("allowed"),
            count("mutated"),
            count("denied"),
            list.iter().filter(|o| !o.passed()).count(),
            size as f64 / 1024.0,
            median(&times)
        );
    }
    println!(
        "µs/request: median over every case, each on a fresh instance as policy-server runs it, \
         including the host's share (payload, AdmissionResponse, JSONPatch); `make bench` times \
         the module alone, warm and fresh, against native.\n"
    );
}

/// Writes `bench`'s JSON report and says where.
fn write_report(json_out: &Path, report: &Value) -> Result<()> {
    if let Some(parent) = json_out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(json_out, serde_json::to_vec_pretty(report)?)?;
    println!("\nJSON report: {}", json_out.display());
    Ok(())
}

#[expect(clippy::too_many_arguments, reason = "one argument per bench option")]
fn bench_cmd(
    dist: &Path,
    cases_dir: &Path,
    typical: &Path,
    per_policy: usize,
    iterations: usize,
    json_out: &Path,
    only: Vec<String>,
    read_floor: &Path,
    growth_only: bool,
    official: Option<bench::Official>,
    compare: Option<bench::KwctlCompare>,
) -> Result<ExitCode> {
    if growth_only {
        let growth = host_test::growth::run(cases_dir, dist, &only, iterations)?;
        host_test::growth::print_table(&growth);
        return write_report(json_out, &serde_json::json!({ "growth": growth }))
            .map(|()| ExitCode::SUCCESS);
    }
    let read_floor = Policy::load(read_floor)
        .with_context(|| format!("the read floor {}: run `make build`", read_floor.display()))?;
    let typical_request = unwrap_review(&read_document(&typical.to_string_lossy())?);
    let now: Timestamp = "2026-11-20T10:00:00Z".parse()?;
    let mut rows = Vec::new();
    for entry in catalog::POLICIES {
        if !only.is_empty() && !only.iter().any(|p| p == entry.name) {
            continue;
        }
        let wasm = dist.join(format!("{}.wasm", entry.name));
        let mut inputs = vec![Input {
            label: "typical: kustomization-update.json".into(),
            request: typical_request.clone(),
            settings: Value::Object(Default::default()),
            now,
            context: Vec::new().into(),
            granted: None,
            with_floor: false,
        }];
        inputs.extend(bench::worst_case(Path::new("."), entry.name)?);
        let dir = cases_dir.join(entry.name);
        if dir.is_dir() {
            let cases = conformance::load_cases(&dir).map_err(anyhow::Error::msg)?;
            inputs.extend(cases.iter().take(per_policy).map(Input::from_case));
        }
        eprintln!(
            "benchmarking {} ({} inputs x {iterations})",
            entry.name,
            inputs.len()
        );
        rows.extend(bench::bench_policy(
            &wasm,
            &inputs,
            iterations,
            &read_floor,
            official.as_ref(),
        )?);
    }
    let growth = host_test::growth::run(cases_dir, dist, &only, iterations)?;
    bench::print_table(&rows);
    bench::print_budget(&rows);
    host_test::growth::print_table(&growth);
    write_report(
        json_out,
        &serde_json::json!({"inputs": rows, "growth": growth}),
    )?;
    let Some(compare) = compare else {
        return Ok(ExitCode::SUCCESS);
    };
    let benched: Vec<&str> = catalog::POLICIES
        .iter()
        .map(|e| e.name)
        .filter(|name| only.is_empty() || only.iter().any(|p| p == name))
        .collect();
    Ok(
        if bench::kwctl_report(&compare, &benched, dist, typical, json_out)? {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}

/// Appends Markdown to the step summary GitHub Actions shows on the run's
/// page, where `$GITHUB_STEP_SUMMARY` names its file (github/docs,
/// `workflow-commands.md`, "Adding a job summary"); elsewhere nothing.
fn append_step_summary(markdown: &str) -> Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") else {
        return Ok(());
    };
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(markdown.as_bytes()))
        .with_context(|| format!("cannot write the step summary {}", path.to_string_lossy()))
}

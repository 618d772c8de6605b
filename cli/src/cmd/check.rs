//! `reconcile-guard check`: a GitOps repository's manifests through the policies,
//! as the requests kube-apiserver sends while Flux applies them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use guard_core::Timestamp;

use host_test::host::Limits;
use reconcile_guard::check;
use reconcile_guard::check::report::Format;

use host_test::input::{read_context, write};

#[derive(clap::Args)]
pub struct Args {
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
    #[arg(long, default_value_t = check::request::kustomize_controller())]
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
    /// A Flux source whose content is a folder (repeatable): the
    /// Kustomizations that read KIND NAMESPACE/NAME (an OCIRepository, an
    /// ExternalArtifact, another GitRepository) are built from FOLDER, as
    /// from the artifact's root. NAMESPACE `*`: in every namespace.
    #[arg(long = "source", value_name = "KIND/NAMESPACE/NAME=FOLDER")]
    sources: Vec<String>,
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
    format: Format,
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
    /// replay (`devtools replay`) or run through kwctl and policy-server
    /// (`devtools conformance`).
    #[arg(long, value_name = "DIR")]
    save_cases: Option<PathBuf>,
}

/// A Flux Kustomization, `(namespace, name)`.
type Kustomization = (String, String);

/// Flux's bootstrap Kustomization.
fn bootstrap() -> Kustomization {
    let (ns, name) = check::flux::BOOTSTRAP;
    (ns.to_string(), name.to_string())
}

pub fn run(args: Args) -> Result<ExitCode> {
    let kustomization = args
        .kustomization
        .as_ref()
        .map(|k| {
            k.split_once('/')
                .map(|(ns, name)| (ns.to_string(), name.to_string()))
                .with_context(|| format!("--kustomization {k}: expected NAMESPACE/NAME"))
        })
        .transpose()?;
    if args.policy_timeout == 0 {
        bail!("--policy-timeout must be at least one second");
    }
    // kustomize-controller labels everything it applies with its
    // Kustomization; another writer (kubectl) adds no owner.
    let owner = kustomization
        .or_else(|| (args.user == check::request::kustomize_controller()).then(bootstrap));
    let options = options(&args, owner.clone())?;
    let report = match judge(&args, &options, owner) {
        Ok(report) => report,
        Err(error) => {
            report_error(&args, &error);
            return Err(error);
        }
    };
    let rendered = check::report::render(&report, args.format, args.warnings_as_errors);
    // The report goes to stdout or the file; with a machine format the
    // one-line summary goes to stderr for the person watching.
    match &args.output {
        Some(path) => write(path, rendered)?,
        None => print!("{rendered}"),
    }
    if args.format != Format::Text || args.output.is_some() {
        eprintln!("{}", check::report::summary(&report));
    }
    if args.format == Format::Github {
        append_step_summary(&check::report::step_summary(
            &report,
            args.warnings_as_errors,
        ))?;
    }
    Ok(super::exit_code(!check::report::fails(
        &report,
        args.warnings_as_errors,
    )))
}

/// The evaluation options from the arguments.
fn options(args: &Args, owner: Option<Kustomization>) -> Result<check::Options> {
    let context = args
        .context
        .as_ref()
        .map(|p| read_context(p))
        .transpose()?
        .unwrap_or_default();
    Ok(check::Options {
        now: args.now.unwrap_or_else(Timestamp::now),
        writer: check::request::Writer::new(&args.user, args.groups.clone(), &args.field_manager),
        default_namespace: args.namespace.clone(),
        kustomization: owner,
        prune: !args.no_prune,
        missing_means_absent: args.missing_means_absent,
        context,
        limits: Limits {
            timeout_seconds: Some(args.policy_timeout),
            memory_bytes: None,
        },
        save_cases: args.save_cases.clone(),
    })
}

/// Reads the manifests and the policies and judges every object.
fn judge(
    args: &Args,
    options: &check::Options,
    owner: Option<Kustomization>,
) -> Result<check::Report> {
    let base = match (&args.base_revision, args.base.is_empty()) {
        (Some(rev), _) => check::input::Base::Revision(rev),
        (None, false) => check::input::Base::Paths(&args.base),
        (None, true) => check::input::Base::None,
    };
    let applier = owner.unwrap_or_else(bootstrap);
    let artifacts = args
        .sources
        .iter()
        .map(|s| artifact(s))
        .collect::<Result<Vec<_>>>()?;
    let judged = check::input::read(&args.paths, base, &applier, &artifacts, &options.context)?;
    if judged.is_empty() {
        bail!("no object read: every folder given is left out of the repository's artifact");
    }
    // A cluster whose build fails is a finding; one that holds nothing is
    // not a pass.
    let empty = |j: &&check::input::Judged| j.head.objects.is_empty() && j.head.unbuilt.is_empty();
    if let Some(empty) = judged.iter().find(empty) {
        bail!(
            "no object read from {}: an empty input (a failed build upstream?) is not a pass",
            empty.name
        );
    }
    let configured = check::policies::load(&args.policies, &args.dist, &args.kubewarden_namespace)?;
    let loaded = check::load(configured, options.now)?;
    let mut report = check::Report::default();
    for j in &judged {
        let mut one = check::check(&j.head, j.base.as_ref(), &loaded, options)?;
        one.checked.retain(|c| j.reports(&c.origin.file));
        report.merge(one);
    }
    Ok(report)
}

/// `--source KIND/NAMESPACE/NAME=FOLDER`.
fn artifact(text: &str) -> Result<check::flux::Artifact> {
    let parsed = text.split_once('=').and_then(|(source, folder)| {
        let mut parts = source.splitn(3, '/');
        let source = (parts.next()?, parts.next()?, parts.next()?);
        Some((source, folder))
    });
    let Some(((kind, namespace, name), folder)) =
        parsed.filter(|((k, n, m), f)| ![*k, *n, *m, *f].iter().any(|p| p.is_empty()))
    else {
        bail!("--source {text}: expected KIND/NAMESPACE/NAME=FOLDER");
    };
    let folder = Path::new(folder);
    if !folder.is_dir() {
        bail!("--source {text}: {} is not a folder", folder.display());
    }
    Ok(check::flux::Artifact {
        source: (kind.into(), namespace.into(), name.into()),
        workspace: check::flux::Workspace::artifact(folder)?,
    })
}

/// The requested report is still written, saying why nothing was judged, so
/// that a CI step that uploads it shows the error instead of failing on a
/// missing file.
fn report_error(args: &Args, error: &anyhow::Error) {
    if let Some(path) = &args.output {
        let _ = std::fs::write(
            path,
            check::report::error(args.format, &format!("{error:#}")),
        );
    }
    if args.format == Format::Github {
        let _ = append_step_summary(&format!(
            "### reconcile-guard check\n\nCould not run:\n\n```text\n{error:#}\n```\n"
        ));
    }
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

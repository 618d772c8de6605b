//! A cluster's objects as Flux builds them from a repository: the cluster's
//! folder is built, and so is the `spec.path` of every Flux Kustomization it
//! holds that reads from the same repository, each one the way
//! kustomize-controller builds it, with kustomize itself (`kubectl
//! kustomize`, kustomize v5).
//!
//! kustomize-controller, per Kustomization (fluxcd/kustomize-controller
//! 186fb3b2, `internal/controller/kustomization_controller.go`, `generate`
//! and `build`): writes a `kustomization.yaml` into `spec.path` with fluxcd/pkg's
//! generator (fluxcd/pkg e2cfd1a2, `kustomize/kustomize_generator.go`,
//! `GenerateManifest`, `findOrGenerateKustomization`, `scanManifests`): the
//! folder's own file, or one listing its YAML files and the subfolders that
//! have their own; then `spec.targetNamespace`, `namePrefix`, `nameSuffix`,
//! `patches`, `components`, `patchesStrategicMerge`, `patchesJson6902`,
//! `images` and `buildMetadata` are written into it; builds it with
//! `LoadRestrictionsNone` (`SecureBuild`, `Build`); refuses an object without
//! apiVersion, kind or name; substitutes `postBuild` variables
//! ([`super::varsub`]). The apply adds `spec.commonMetadata` and the owner
//! labels (`apply`; fluxcd/pkg `ssa/manager.go`, `SetOwnerLabels`), which
//! `check` adds where it builds the requests.
//!
//! This is done on a copy of the repository, as kustomize-controller works
//! on a copy of the artifact; the repository is never written.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _, Result};
use conformance::cluster::Recorded;
use serde_json::{json, Map, Value};

use super::manifests::{self, Generator, Manifest, Manifests, Origin, Unbuilt, Unrendered};
use super::pushed;
use super::resourceset::{self, NotRendered};
use super::revision::git;
use super::varsub;

pub(super) const KUSTOMIZATION_FILES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];
const FLUX_KUSTOMIZATION: &str = guard_core::model::kinds::KUSTOMIZE;
/// What kustomize writes where `buildMetadata: [originAnnotations]` is set:
/// the file each object comes from, relative to the built folder.
const ORIGIN: &str = "config.kubernetes.io/origin";

/// The Kustomization `flux bootstrap` creates, which applies the cluster's
/// folder from the GitRepository of the same name (fluxcd/flux2, `flux
/// bootstrap`, default `--ks-name`/`--secret-name` `flux-system`).
pub const BOOTSTRAP: (&str, &str) = ("flux-system", "flux-system");

/// Whether `path` is a folder kustomize-controller builds as it is: it has
/// a kustomization file or YAML files of its own holding Kubernetes
/// objects. A folder with neither (such as `clusters/`) holds one cluster
/// per subfolder.
pub fn is_cluster(path: &Path) -> Result<bool> {
    let mut own = false;
    for entry in manifests::entries(path)? {
        if !entry.is_dir() && !hidden(&entry) && is_yaml(&entry) && holds_objects(&entry) {
            own = true;
        }
    }
    Ok(own || KUSTOMIZATION_FILES.iter().any(|f| path.join(f).is_file()))
}

/// A repository revision to build from: the working tree, or a git
/// revision extracted to a scratch folder. Each build runs in a scratch
/// folder that mirrors the repository with symbolic links, where only the
/// built folder's kustomization file is written, as kustomize-controller
/// writes it into its own copy of the artifact; the repository is never
/// written.
pub struct Workspace {
    root: PathBuf,
    /// The folder `root` mirrors without the ignored paths (itself where
    /// none is): kustomize follows the links into it.
    linked: PathBuf,
    /// The scratch folders this workspace removes when dropped.
    _owned: Vec<Scratch>,
    /// The git revision it holds, when not the working tree.
    revision: Option<String>,
    /// kubectl's kustomize version, for messages.
    kubectl: String,
    /// How the origins of its files are written: under the folder a
    /// `--source` names, or (none) relative to the repository's root.
    shown: Option<String>,
}

/// A scratch folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("reconcile-guard-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// kustomize as kubectl embeds it; check needs kustomize v5 (the major
/// version kustomize-controller builds with).
fn kubectl_version() -> Result<String> {
    let out = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .context(
            "building a folder as Flux does needs kubectl (its built-in kustomize v5) on PATH",
        )?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let kustomize = text
        .lines()
        .find_map(|l| l.strip_prefix("Kustomize Version: "))
        .unwrap_or("")
        .trim()
        .to_string();
    if !kustomize.starts_with("v5.") {
        bail!("kubectl's kustomize is {kustomize:?}; check builds with kustomize v5 (kubectl 1.27 or later)");
    }
    Ok(kustomize)
}

impl Workspace {
    /// The working tree; `root` is the repository's root (spec.path is
    /// relative to it).
    pub fn working_tree(root: &Path) -> Result<Self> {
        let root = std::fs::canonicalize(root)
            .with_context(|| format!("cannot read {}", root.display()))?;
        let (mirror, owned) = without_ignored(root.clone())?;
        Ok(Self {
            root: mirror,
            linked: root,
            _owned: owned.into_iter().collect(),
            revision: None,
            kubectl: kubectl_version()?,
            shown: None,
        })
    }

    /// A folder that holds a source's content (`--source`): its root is the
    /// artifact's, and its files are named as the folder's.
    pub fn artifact(folder: &Path) -> Result<Self> {
        let shown = normalize(folder);
        Ok(Self {
            shown: Some(shown),
            ..Self::working_tree(folder)?
        })
    }

    /// The tree of the current directory at git revision `rev`.
    pub fn at_revision(rev: &str) -> Result<Self> {
        let kubectl = kubectl_version()?;
        let dir = Scratch::new()?;
        let prefix = git(&["rev-parse", "--show-prefix"])?;
        let prefix = String::from_utf8_lossy(&prefix).trim().to_string();
        let archive = git(&["archive", "--format=tar", &format!("{rev}:{prefix}")])?;
        let mut tar = Command::new("tar")
            .arg("-x")
            .arg("-C")
            .arg(&dir.0)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .context("cannot run tar")?;
        tar.stdin
            .take()
            .context("tar has no stdin")?
            .write_all(&archive)
            .context("cannot write to tar")?;
        if !tar.wait().context("tar")?.success() {
            bail!("tar could not extract {rev}");
        }
        let (root, owned) = without_ignored(dir.0.clone())?;
        Ok(Self {
            root,
            linked: dir.0.clone(),
            _owned: std::iter::once(dir).chain(owned).collect(),
            revision: Some(rev.to_string()),
            kubectl,
            shown: None,
        })
    }

    /// Whether the revision has this folder.
    pub fn has(&self, path: &Path) -> bool {
        relative(path).is_ok_and(|p| self.root.join(p).is_dir())
    }

    /// A scratch folder where `path` is a real folder holding links to the
    /// repository's entries (but its kustomization files), and every other
    /// entry on the way is a link too.
    fn stage(&self, path: &str) -> Result<Scratch> {
        let stage = Scratch::new()?;
        let mut from = self.root.clone();
        let mut to = stage.0.clone();
        let parts: Vec<&str> = path
            .split('/')
            .filter(|p| *p != "." && !p.is_empty())
            .collect();
        for part in &parts {
            link_entries(&from, &to, |name| name == *part)?;
            from = from.join(part);
            to = to.join(part);
            std::fs::create_dir_all(&to)
                .with_context(|| format!("cannot create {}", to.display()))?;
        }
        link_entries(&from, &to, |name| KUSTOMIZATION_FILES.contains(&name))?;
        Ok(stage)
    }

    /// The objects of the cluster whose folder is `entry` (relative to the
    /// repository's root), each with the Kustomization that applies it.
    /// `owner` applies the entry folder unless a Kustomization built from it
    /// names that folder as its own path. `context` answers `substituteFrom`
    /// lookups the repository cannot. With `notes`, the Kustomizations not
    /// followed are named on stderr.
    #[expect(
        clippy::too_many_lines,
        reason = "the walk from the root Kustomization, step by step as Flux takes it"
    )]
    pub fn build_cluster(
        &self,
        entry: &Path,
        owner: (String, String),
        artifacts: &[Artifact],
        context: &[Recorded],
        notes: bool,
    ) -> Result<Manifests> {
        let entry = relative(entry)?;
        let mut out = Manifests::default();
        let folder = Origin {
            file: entry.clone(),
            revision: self.revision.clone(),
            document: 0,
            line: 0,
            item: None,
        };
        let first = match self.build(&entry, None) {
            Ok(first) => first,
            Err(e) => {
                out.unbuilt.push(self.unbuilt(folder, owner, &entry, &e));
                return Ok(out);
            }
        };
        let (owner, source, first) = match applier(&first, &entry) {
            Applier::Kustomization(m, (ns, name, spec)) => {
                let source = source_of(&ns, spec);
                match self.build_for(&entry, Some(&m.object), &ns, &[], context) {
                    Ok(first) => ((ns, name), source, first),
                    Err(e) => {
                        let origin = m.origin.clone();
                        out.unbuilt
                            .push(self.unbuilt(origin, (ns, name), &entry, &e));
                        return Ok(out);
                    }
                }
            }
            Applier::Instance(source) => ((source.1.clone(), source.2.clone()), source, first),
            Applier::Bootstrap => {
                let (ns, name) = BOOTSTRAP;
                let source = ("GitRepository".into(), ns.into(), name.into());
                (owner, source, first)
            }
        };
        let mut built: BTreeSet<(String, String)> = BTreeSet::new();
        built.insert(owner.clone());
        let mut elsewhere: Vec<Elsewhere> = Vec::new();
        // Each build with the workspace it came from: this repository, or
        // an artifact's folder.
        let mut queue = vec![(owner, first)];
        // Built until nothing more is found: an ArtifactGenerator read late
        // still maps the ExternalArtifacts read before it.
        while !queue.is_empty() {
            while let Some((owner, objects)) = queue.pop() {
                for mut m in objects {
                    m.owner = Some(owner.clone());
                    if let Some((ns, name, spec)) = flux_kustomization(&m.object) {
                        let key = (ns.clone(), name.clone());
                        let from = source_of(&ns, spec);
                        let workspace = if from == source {
                            Some(self)
                        } else {
                            artifacts
                                .iter()
                                .find(|a| a.holds(&from))
                                .map(|a| &a.workspace)
                        };
                        if let Some(workspace) =
                            workspace.filter(|_| spec.get("kubeConfig").is_none())
                        {
                            if built.insert(key.clone()) {
                                let known: Vec<&Value> =
                                    out.objects.iter().map(|m| &m.object).collect();
                                match workspace.build_kustomization(&m.object, &ns, &known, context)
                                {
                                    Ok(objects) => queue.push((key, objects)),
                                    Err(unbuilt) => out.unbuilt.push(Unbuilt {
                                        origin: m.origin.clone(),
                                        kustomization: key,
                                        ..*unbuilt
                                    }),
                                }
                            }
                        } else if workspace.is_some() {
                            // It applies to another cluster, which is judged on
                            // its own.
                            if notes {
                                eprintln!(
                                "note: Kustomization {ns}/{name} applies to another cluster (spec.kubeConfig): check {} on its own",
                                spec.get("path").and_then(Value::as_str).unwrap_or("./"),
                            );
                            }
                        } else {
                            // Named once all objects are read (an
                            // ArtifactGenerator may come later).
                            elsewhere.push((ns, name, m.object.clone(), m.origin.clone()));
                        }
                    }
                    if let Some(generated) = generate(&m, notes, &mut out.unrendered) {
                        queue.push((owner.clone(), generated));
                    }
                    out.objects.push(m);
                }
            }
            elsewhere =
                self.follow_generated(elsewhere, &mut out, &mut queue, &source, context, notes);
        }
        // Said once, for the head, not again for the base.
        if notes {
            for (ns, name, object, _) in &elsewhere {
                let spec = object.get("spec").unwrap_or(&Value::Null);
                eprintln!("{}", not_followed(ns, name, spec, &out, &source));
            }
        }
        out.objects.sort_by(|a, b| {
            (&a.origin.file, a.origin.document).cmp(&(&b.origin.file, b.origin.document))
        });
        Ok(out)
    }

    /// Builds, from this repository, each Kustomization of `elsewhere` that
    /// reads an ExternalArtifact an ArtifactGenerator of the cluster copies
    /// from this repository's folder ([`copied_from`]), queueing its
    /// objects; returns the others.
    fn follow_generated(
        &self,
        elsewhere: Vec<Elsewhere>,
        out: &mut Manifests,
        queue: &mut Vec<((String, String), Vec<Manifest>)>,
        repository: &Source,
        context: &[Recorded],
        notes: bool,
    ) -> Vec<Elsewhere> {
        let mut left = Vec::new();
        for (ns, name, object, origin) in elsewhere {
            let spec = object.get("spec").unwrap_or(&Value::Null);
            let artifact = text_at(spec, "/sourceRef/name").unwrap_or("?");
            let cluster: &Manifests = out;
            let followed = copied_from(&ns, spec, cluster, repository)
                .filter(|(_, folder)| self.root.join(folder).is_dir())
                .map(|(generator, folder)| {
                    let why = format!("ExternalArtifact {artifact}: followed to this repository's {folder}, which ArtifactGenerator {generator} copies into it");
                    (why, folder)
                })
                .or_else(|| self.pushed_to(&ns, spec, cluster));
            let Some((why, folder)) = followed else {
                left.push((ns, name, object, origin));
                continue;
            };
            if notes {
                eprintln!("note: Kustomization {ns}/{name} builds from {why}");
            }
            let mut mapped = object.clone();
            if let Some(spec) = mapped.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("path".into(), json!(folder));
            }
            let known: Vec<&Value> = out.objects.iter().map(|m| &m.object).collect();
            let key = (ns.clone(), name.clone());
            match self.build_kustomization(&mapped, &ns, &known, context) {
                Ok(objects) => queue.push((key, objects)),
                Err(unbuilt) => out.unbuilt.push(Unbuilt {
                    origin,
                    kustomization: key,
                    ..*unbuilt
                }),
            }
        }
        left
    }

    /// Where this repository's CI pushes the OCIRepository the
    /// Kustomization (namespace `ns`, `spec`) reads ([`pushed`]): why, and
    /// the folder its `spec.path` is.
    fn pushed_to(&self, ns: &str, spec: &Value, cluster: &Manifests) -> Option<(String, String)> {
        let (kind, source_ns, name) = source_of(ns, spec);
        if kind != "OCIRepository" {
            return None;
        }
        let url = cluster.objects.iter().find_map(|m| {
            let (o_ns, o_name) =
                of_kind(&m.object, guard_core::model::kinds::SOURCE, "OCIRepository")?;
            (o_ns == source_ns && o_name == name)
                .then(|| text_at(&m.object, "/spec/url"))
                .flatten()
        })?;
        // The workflows are in the repository, not in its artifact, which
        // may leave them out (source-controller's ignore rules).
        let (workflow, root) = pushed::folder_for(&self.linked, url)?;
        let folder = relative(&Path::new(&root).join(spec_path(spec).ok()?)).ok()?;
        let why = format!("OCIRepository {source_ns}/{name}: followed to this repository's {folder}, as {workflow} pushes {root} to {url}");
        Some((why, folder))
    }

    /// What a Flux Kustomization read from this workspace's source applies,
    /// or why kustomize-controller applies nothing of it (the origin and
    /// name left for the caller).
    fn build_kustomization(
        &self,
        kustomization: &Value,
        ns: &str,
        known: &[&Value],
        context: &[Recorded],
    ) -> std::result::Result<Vec<Manifest>, Box<Unbuilt>> {
        let spec = kustomization.get("spec").unwrap_or(&Value::Null);
        let path = spec_path(spec);
        let objects = path
            .as_ref()
            .map_err(|e| anyhow::anyhow!("{e}"))
            .and_then(|path| self.build_for(path, Some(kustomization), ns, known, context));
        objects.map_err(|e| {
            let path = path.unwrap_or_default();
            let nowhere = Origin {
                file: String::new(),
                revision: None,
                document: 0,
                line: 0,
                item: None,
            };
            Box::new(self.unbuilt(nowhere, (String::new(), String::new()), &path, &e))
        })
    }

    /// Why kustomize-controller applies nothing of a Kustomization: its
    /// path is not in the source (reason `ArtifactFailed`, "kustomization
    /// path not found"), or its build fails (`BuildFailed`)
    /// (fluxcd/kustomize-controller 186fb3b2, `internal/controller/
    /// kustomization_controller.go`, `reconcile`: each error is the Ready
    /// condition's message).
    fn unbuilt(
        &self,
        origin: Origin,
        kustomization: (String, String),
        path: &str,
        error: &anyhow::Error,
    ) -> Unbuilt {
        let found = !path.is_empty() && self.root.join(path).is_dir();
        let undecided = error.chain().any(|e| e.downcast_ref::<Unknown>().is_some());
        Unbuilt {
            undecided,
            origin,
            kustomization,
            reason: if found {
                "BuildFailed"
            } else {
                "ArtifactFailed"
            },
            message: format!("{error:#}"),
        }
    }

    /// What the Flux Kustomization `kustomization` (in namespace `ns`)
    /// applies from `path`: the build, its postBuild substitution (variables
    /// from `known` objects, its own build, then `context`) and its
    /// commonMetadata.
    fn build_for(
        &self,
        path: &str,
        kustomization: Option<&Value>,
        ns: &str,
        known: &[&Value],
        context: &[Recorded],
    ) -> Result<Vec<Manifest>> {
        let mut objects = self.build(path, kustomization)?;
        let Some(spec) = kustomization.and_then(|k| k.get("spec")) else {
            return Ok(objects);
        };
        if spec.get("postBuild").is_some() {
            let known: Vec<&Value> = known
                .iter()
                .copied()
                .chain(objects.iter().map(|m| &m.object))
                .collect();
            let vars = variables(ns, spec, &known, context)?;
            let always = spec.pointer("/postBuild/substituteStrategy") == Some(&json!("Always"));
            for o in &mut objects {
                o.object = varsub::substitute(&o.object, &vars, always)
                    .with_context(|| format!("{}: post build", o.origin))?;
            }
        }
        if let Some(common) = spec.get("commonMetadata") {
            for o in &mut objects {
                common_metadata(&mut o.object, common);
            }
        }
        Ok(objects)
    }

    /// One `kustomize build` of `path` (relative to the root), as
    /// kustomize-controller runs it for `kustomization` (none: the folder as
    /// it is, for the cluster's own folder).
    #[expect(
        clippy::too_many_lines,
        reason = "the steps of one kustomize build, in the order kustomize-controller takes them"
    )]
    fn build(&self, path: &str, kustomization: Option<&Value>) -> Result<Vec<Manifest>> {
        let dir = self.root.join(path);
        if !dir.is_dir() {
            bail!("kustomization path not found: {path} (it is relative to the repository's root, here the current directory)");
        }
        let existing = KUSTOMIZATION_FILES
            .iter()
            .map(|f| dir.join(f))
            .find(|f| f.is_file());
        let (file, mut kus) = match &existing {
            Some(file) => {
                let text = std::fs::read_to_string(file)
                    .with_context(|| format!("cannot read {path}/{}", name_of(file)))?;
                let kus: Value = match serde_norway::from_str::<serde_norway::Value>(&text) {
                    Ok(v) => serde_json::to_value(v).unwrap_or(Value::Null),
                    Err(e) => bail!("{path}/{}: {e}", name_of(file)),
                };
                let mut kus = match kus {
                    Value::Object(map) => map,
                    Value::Null => Map::new(),
                    _ => bail!("{path}/{} is not a mapping", name_of(file)),
                };
                // The generator's guard against kustomize's "kustomization.yaml
                // is empty" (`GenerateManifest`).
                let no_resources = kus
                    .get("resources")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty);
                if no_resources {
                    kus.insert("buildMetadata".into(), json!(["originAnnotations"]));
                }
                (name_of(file), kus)
            }
            None => {
                let mut kus = Map::new();
                kus.insert(
                    "apiVersion".into(),
                    json!("kustomize.config.k8s.io/v1beta1"),
                );
                kus.insert("kind".into(), json!("Kustomization"));
                let resources = scan(&dir, &dir)?;
                if resources.is_empty() {
                    kus.insert("namespace".into(), json!("_placeholder"));
                } else {
                    kus.insert("resources".into(), json!(resources));
                }
                ("kustomization.yaml".to_string(), kus)
            }
        };
        if let Some(spec) = kustomization.and_then(|k| k.get("spec")) {
            apply_spec(&mut kus, spec, &dir)?;
        }
        // Where each object comes from, for the report: kustomize's own
        // origin annotation, removed again unless the build asks for it.
        let asked = kus
            .get("buildMetadata")
            .and_then(Value::as_array)
            .is_some_and(|b| b.iter().any(|x| x == "originAnnotations"));
        if !asked {
            let list = kus.entry("buildMetadata").or_insert_with(|| json!([]));
            if let Some(list) = list.as_array_mut() {
                list.push(json!("originAnnotations"));
            }
        }
        let stage = self.stage(path)?;
        let staged = stage.0.join(path);
        let written = serde_json::to_string(&Value::Object(kus)).context("kustomization")?;
        std::fs::write(staged.join(&file), written)
            .with_context(|| format!("cannot write {}", staged.display()))?;
        let out = Command::new("kubectl")
            .args(["kustomize", "--load-restrictor", "LoadRestrictionsNone"])
            .arg(&staged)
            .output()
            .context("cannot run kubectl kustomize")?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let err = err
                .replace(&format!("{}/", stage.0.display()), "")
                .replace(&format!("{}/", self.root.display()), "")
                .replace(&format!("{}/", self.linked.display()), "");
            bail!(
                "kustomize build of {path} failed (kubectl kustomize {}): {}",
                self.kubectl,
                err.trim()
            );
        }
        let text = String::from_utf8(out.stdout).context("kustomize output is not UTF-8")?;
        let built = manifests::parse(&format!("{path} (built)"), None, &text)?;
        let mut lines = Lines::default();
        let mut objects = Vec::new();
        for mut m in built.objects {
            for field in ["apiVersion", "kind"] {
                if m.object
                    .get(field)
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    bail!("{path}: an object without {field}");
                }
            }
            if m.object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                bail!("{path}: failed to decode Kubernetes apiVersion, kind and name from an object without metadata.name");
            }
            let from = take_origin(&mut m.object, !asked);
            m.origin = match from {
                Some(file) => {
                    let file = self.within(&staged, &stage.0, &file);
                    let mut origin =
                        lines.origin(&self.root, &file, &m.object, self.revision.as_deref());
                    if let Some(folder) = &self.shown {
                        origin.file = format!("{folder}/{}", origin.file);
                    }
                    origin
                }
                None => Origin {
                    file: format!("{path} (generated)"),
                    revision: self.revision.clone(),
                    document: 0,
                    line: 0,
                    item: None,
                },
            };
            objects.push(m);
        }
        Ok(objects)
    }
}

impl Workspace {
    /// The repository path of a file kustomize names relative to the built
    /// folder: the links are followed by kustomize for nested folders, so
    /// the path may lead into the repository itself.
    fn within(&self, staged: &Path, stage: &Path, file: &str) -> String {
        let joined = lexical(&staged.join(file));
        let inside = joined
            .strip_prefix(stage)
            .or_else(|_| joined.strip_prefix(&self.root))
            .map(Path::to_path_buf)
            .unwrap_or(joined);
        normalize(&inside)
    }
}

/// What source-controller leaves out of the artifact it makes of a
/// repository (fluxcd/source-controller 39b711b1,
/// `internal/controller/gitrepository_controller.go`, `reconcileArtifact`:
/// `sourceignore.LoadIgnorePatterns`; fluxcd/pkg e2cfd1a2,
/// `artifact/storage/archive.go`, `SourceIgnoreFilter`): the patterns of
/// every `.sourceignore` file (gitignore syntax, each scoped to its folder),
/// or, where the repository has none, the default patterns
/// (`sourceignore/sourceignore.go`, `ExcludeExt`, `ExcludeCI`,
/// `ExcludeExtra`). Matched here by git itself (`git ls-files --ignored`
/// with a scratch git folder); kustomize-controller never sees these paths.
/// Paths relative to `root`, a folder's with a trailing `/`.
fn ignored(root: &Path) -> Result<Vec<String>> {
    let git_dir = Scratch::new()?;
    let git = |args: &[&str]| -> Result<Vec<String>> {
        let out = Command::new("git")
            .arg(format!("--git-dir={}", git_dir.0.display()))
            .arg(format!("--work-tree={}", root.display()))
            .args(args)
            .output()
            .context("reading .sourceignore needs git on PATH")?;
        if !out.status.success() {
            bail!(
                "git ls-files in {}: {}",
                root.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect())
    };
    let init = Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&git_dir.0)
        .status()
        .context("reading .sourceignore needs git on PATH")?;
    if !init.success() {
        bail!("git init of a scratch folder failed");
    }
    let own = git(&["ls-files", "--others", "--", "*.sourceignore"])?
        .iter()
        .any(|f| f == ".sourceignore" || f.ends_with("/.sourceignore"));
    let mut args = vec![
        "ls-files".to_string(),
        "--others".into(),
        "--ignored".into(),
        "--directory".into(),
        "--exclude-per-directory=.sourceignore".into(),
    ];
    if !own {
        args.extend(DEFAULT_IGNORED.iter().map(|p| format!("--exclude={p}")));
    }
    git(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// fluxcd/pkg `sourceignore.go`'s `ExcludeExt`, `ExcludeCI` and `ExcludeExtra`.
const DEFAULT_IGNORED: [&str; 20] = [
    "*.jpg",
    "*.jpeg",
    "*.gif",
    "*.png",
    "*.wmv",
    "*.flv",
    "*.tar.gz",
    "*.zip",
    ".github/",
    ".circleci/",
    ".travis.yml",
    ".gitlab-ci.yml",
    "appveyor.yml",
    ".drone.yml",
    "cloudbuild.yaml",
    "codeship-services.yml",
    "codeship-steps.yml",
    "**/.goreleaser.yml",
    "**/.sops.yaml",
    "**/.flux.yaml",
];

/// `root` as the artifact holds it: itself where nothing is ignored, else a
/// scratch mirror of links without the ignored paths.
fn without_ignored(root: PathBuf) -> Result<(PathBuf, Option<Scratch>)> {
    let ignored = ignored(&root)?;
    if ignored.is_empty() {
        return Ok((root, None));
    }
    let mirror = Scratch::new()?;
    mirror_entries(&root, &mirror.0, "", &ignored)?;
    Ok((mirror.0.clone(), Some(mirror)))
}

/// Links the entries of `from` (at `rel` in the repository) into `to`, but
/// the ignored ones; a folder holding an ignored path is mirrored in turn.
fn mirror_entries(from: &Path, to: &Path, rel: &str, ignored: &[String]) -> Result<()> {
    for entry in manifests::entries(from)? {
        let name = name_of(&entry);
        let path = format!("{rel}{name}");
        let folder = format!("{path}/");
        if ignored.iter().any(|i| *i == path || *i == folder) {
            continue;
        }
        let target = to.join(&name);
        if entry.is_dir() && ignored.iter().any(|i| i.starts_with(&folder)) {
            std::fs::create_dir_all(&target)
                .with_context(|| format!("cannot create {}", target.display()))?;
            mirror_entries(&entry, &target, &folder, ignored)?;
        } else {
            symlink(&entry, &target).with_context(|| format!("cannot link {}", entry.display()))?;
        }
    }
    Ok(())
}

/// `path` with `.` and `..` resolved by name.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Links every entry of `from` into `to` but those `skip` names.
fn link_entries(from: &Path, to: &Path, skip: impl Fn(&str) -> bool) -> Result<()> {
    for entry in manifests::entries(from)? {
        let name = name_of(&entry);
        if skip(&name) {
            continue;
        }
        symlink(&entry, &to.join(&name))
            .with_context(|| format!("cannot link {}", entry.display()))?;
    }
    Ok(())
}

#[cfg(unix)]
fn symlink(from: &Path, to: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(from, to)
}

#[cfg(not(unix))]
fn symlink(from: &Path, to: &Path) -> std::io::Result<()> {
    if from.is_dir() {
        std::os::windows::fs::symlink_dir(from, to)
    } else {
        std::os::windows::fs::symlink_file(from, to)
    }
}

/// Writes the Flux Kustomization's fields into the kustomization, as
/// `GenerateManifest` does.
fn apply_spec(kus: &mut Map<String, Value>, spec: &Value, dir: &Path) -> Result<()> {
    for (from, to) in [
        ("targetNamespace", "namespace"),
        ("namePrefix", "namePrefix"),
        ("nameSuffix", "nameSuffix"),
    ] {
        if let Some(v) = spec.get(from).and_then(Value::as_str) {
            kus.insert(to.into(), json!(v));
        }
    }
    let mut append = |field: &str, items: Vec<Value>| {
        if items.is_empty() {
            return;
        }
        let list = kus.entry(field).or_insert_with(|| json!([]));
        if let Some(list) = list.as_array_mut() {
            list.extend(items);
        }
    };
    let list = |field: &str| -> Vec<Value> {
        spec.get(field)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    append("patches", list("patches"));
    let ignore_missing = spec.get("ignoreMissingComponents") == Some(&json!(true));
    let components = list("components")
        .into_iter()
        .filter(|c| !ignore_missing || c.as_str().is_some_and(|c| dir.join(c).exists()))
        .collect();
    append("components", components);
    append("patchesStrategicMerge", list("patchesStrategicMerge"));
    let json6902 = list("patchesJson6902")
        .into_iter()
        .map(|p| {
            let patch =
                serde_json::to_string(p.get("patch").unwrap_or(&json!([]))).unwrap_or_default();
            json!({"patch": patch, "target": p.get("target").cloned().unwrap_or(json!({}))})
        })
        .collect();
    append("patchesJson6902", json6902);
    // An image the kustomization already names is merged field by field
    // (`checkKustomizeImageExists` and the merge in `GenerateManifest`).
    for image in list("images") {
        let name = image.get("name").cloned().unwrap_or(Value::Null);
        let images = kus.entry("images").or_insert_with(|| json!([]));
        let Some(images) = images.as_array_mut() else {
            bail!("the kustomization's images is not a list");
        };
        let at = images.iter().position(|i| i.get("name") == Some(&name));
        match at.and_then(|i| images.get_mut(i)) {
            Some(Value::Object(existing)) => {
                if let Some(new_name) = image.get("newName").filter(|v| v != &&json!("")) {
                    existing.insert("newName".into(), new_name.clone());
                }
                let tag = image.get("newTag").filter(|v| v != &&json!(""));
                let digest = image.get("digest").filter(|v| v != &&json!(""));
                if tag.is_some() || digest.is_some() {
                    existing.remove("newTag");
                    existing.remove("digest");
                    if let Some(t) = tag {
                        existing.insert("newTag".into(), t.clone());
                    }
                    if let Some(d) = digest {
                        existing.insert("digest".into(), d.clone());
                    }
                }
            }
            _ => images.push(image),
        }
    }
    if let Some(meta) = spec.get("buildMetadata").and_then(Value::as_array) {
        if !meta.is_empty() {
            kus.insert("buildMetadata".into(), json!(meta));
        }
    }
    Ok(())
}

/// The files and folders `scanManifests` lists: YAML files, and folders
/// that have their own kustomization file (not descended into), in walk
/// order; a YAML file that is not Kubernetes objects fails the build, as
/// kustomize's resource factory fails it there.
fn scan(base: &Path, dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in manifests::entries(dir)? {
        let rel = format!(
            "./{}",
            entry
                .strip_prefix(base)
                .unwrap_or(&entry)
                .to_string_lossy()
                .replace(std::path::MAIN_SEPARATOR, "/")
        );
        if entry.is_dir() {
            if KUSTOMIZATION_FILES.iter().any(|f| entry.join(f).is_file()) {
                out.push(rel);
            } else {
                out.extend(scan(base, &entry)?);
            }
        } else if is_yaml(&entry) {
            let text =
                std::fs::read_to_string(&entry).with_context(|| format!("cannot read {rel}"))?;
            let found = manifests::parse(&rel, None, &text)
                .with_context(|| format!("failed to decode Kubernetes YAML from {rel}"))?;
            if let Some(skipped) = found.skipped.first() {
                bail!("failed to decode Kubernetes YAML from {rel}: {skipped} has no apiVersion and kind (kustomize refuses it as a resource; a Helm values or other file belongs in a folder with its own kustomization.yaml that does not list it)");
            }
            out.push(rel);
        }
    }
    Ok(out)
}

/// The note for a Kustomization that builds from another source than the
/// cluster's repository, which neither `--source` nor an ArtifactGenerator
/// maps to a folder of this checkout: the command that adds its `--source`,
/// and where an ArtifactGenerator names a folder this checkout lacks, that
/// folder.
fn not_followed(
    ns: &str,
    name: &str,
    spec: &Value,
    cluster: &Manifests,
    repository: &Source,
) -> String {
    let kind = text_at(spec, "/sourceRef/kind").unwrap_or("?");
    let artifact = text_at(spec, "/sourceRef/name").unwrap_or("?");
    let artifact_ns = text_at(spec, "/sourceRef/namespace").unwrap_or(ns);
    let head = format!(
        "note: Kustomization {ns}/{name} builds from {kind} {artifact_ns}/{artifact}, not from this repository: its objects are not checked; where a folder holds that source's content, check them with `{}`",
        with_source(&format!("{kind}/{artifact_ns}/{artifact}=FOLDER"))
    );
    match copied_from(ns, spec, cluster, repository) {
        // The folder is not in this checkout (an excerpt, a sparse checkout).
        Some((generator, folder)) => format!(
            "{head}; ArtifactGenerator {generator} copies its path from this repository's {folder}: check that with `check --kustomization {ns}/{name} {folder}`"
        ),
        None => head,
    }
}

/// A Kustomization read from another source than this repository that
/// `check` names but does not build: (namespace, name, the object, where).
type Elsewhere = (String, String, Value, Origin);

/// Where the Kustomization (namespace `ns`, `spec`) reads an
/// ExternalArtifact that an ArtifactGenerator of `cluster` makes by copying
/// a folder of `repository` (`@alias/DIR/**` to `@artifact/DEST/`: "dir/**
/// patterns strip the directory prefix", fluxcd/source-watcher 825fa15,
/// `internal/builder/builder.go`, `calculateGlobDestination`): the
/// generator (namespace/name) and the repository's folder its path is
/// (`api/v1beta1/artifactgenerator_types.go`, `CopyOperation`).
fn copied_from(
    ns: &str,
    spec: &Value,
    cluster: &Manifests,
    repository: &Source,
) -> Option<(String, String)> {
    if text_at(spec, "/sourceRef/kind") != Some("ExternalArtifact") {
        return None;
    }
    let artifact = text_at(spec, "/sourceRef/name")?;
    let artifact_ns = text_at(spec, "/sourceRef/namespace").unwrap_or(ns);
    let path = spec_path(spec).unwrap_or_default();
    for generator in cluster.objects.iter().map(|m| &m.object) {
        let group = text_at(generator, "/apiVersion").unwrap_or("");
        let gen_ns = text_at(generator, "/metadata/namespace").unwrap_or("default");
        if !group.starts_with("source.extensions.fluxcd.io/")
            || generator.get("kind") != Some(&json!("ArtifactGenerator"))
            || gen_ns != artifact_ns
        {
            continue;
        }
        // The aliases that name this repository's GitRepository.
        let ours: Vec<&str> = generator
            .pointer("/spec/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|s| {
                s.get("kind") == Some(&json!("GitRepository"))
                    && repository.0 == "GitRepository"
                    && text_at(s, "/name") == Some(repository.2.as_str())
                    && text_at(s, "/namespace").unwrap_or(gen_ns) == repository.1
            })
            .filter_map(|s| text_at(s, "/alias"))
            .collect();
        let outputs = generator
            .pointer("/spec/artifacts")
            .and_then(Value::as_array);
        let Some(output) = outputs
            .into_iter()
            .flatten()
            .find(|a| text_at(a, "/name") == Some(artifact))
        else {
            continue;
        };
        let copies = output
            .get("copy")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        if !one_folder(copies) {
            continue;
        }
        for copy in copies {
            let Some((alias, dir, dest)) = folder_copy(copy) else {
                continue;
            };
            let within = if dest == "." {
                Some(path.as_str())
            } else if path == dest {
                Some(".")
            } else {
                path.strip_prefix(&format!("{dest}/"))
            };
            if let (true, Some(within)) = (ours.contains(&alias), within) {
                let folder = relative(&Path::new(dir).join(within)).ok()?;
                let name = text_at(generator, "/metadata/name").unwrap_or("?");
                return Some((format!("{gen_ns}/{name}"), folder));
            }
        }
    }
    None
}

/// Whether `copies` make a folder of the repository as it is.
fn one_folder(copies: &[Value]) -> bool {
    // The artifact is a folder of the repository as it is when its
    // copies keep their files as they are (no `exclude`, no `Merge` or
    // `Extract`: `CopyOperation`) and, when there are several, all
    // keep the layout of one folder (`apps/base/**` to `base/`,
    // `apps/production/**` to `production/`); otherwise check would
    // judge files the artifact does not hold, so it is not followed.
    let plain = |c: &Value| {
        c.get("exclude")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
            && matches!(text_at(c, "/strategy"), None | Some("" | "Overwrite"))
    };
    let roots: Option<BTreeSet<(&str, String)>> = copies
        .iter()
        .map(|c| {
            let (alias, dir, dest) = folder_copy(c)?;
            let root = if dest == "." {
                dir
            } else if dir == dest {
                ""
            } else {
                dir.strip_suffix(&dest)?.strip_suffix('/')?
            };
            let root = relative(Path::new(root)).ok()?;
            Some((alias, root))
        })
        .collect();
    let one_layout = copies.len() == 1 || roots.is_some_and(|r| r.len() == 1);
    one_layout && copies.iter().all(plain)
}

/// A copy of a whole folder, `@ALIAS/DIR/**` to `@artifact/DEST/`:
/// (alias, DIR, DEST normalized, `.` for the root).
fn folder_copy(copy: &Value) -> Option<(&str, &str, String)> {
    let (from, to) = (text_at(copy, "/from")?, text_at(copy, "/to")?);
    let (alias, dir) = from.strip_prefix('@')?.split_once('/')?;
    let dir = dir.strip_suffix("/**")?;
    let dest = relative(Path::new(to.strip_prefix("@artifact/")?)).ok()?;
    Some((alias, dir, dest))
}

/// This run's command with one more `--source`.
fn with_source(mapping: &str) -> String {
    let mut words: Vec<String> = std::env::args().collect();
    if let Some(program) = words.first_mut() {
        *program = name_of(Path::new(program.as_str()));
    }
    let at = words
        .iter()
        .position(|w| w == "check")
        .map_or(words.len(), |i| i + 1);
    words.insert(at, mapping.to_string());
    words.insert(at, "--source".to_string());
    words
        .iter()
        .map(|w| shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The string at a JSON pointer.
fn text_at<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// `(namespace, name, spec)` when `object` is a Flux Kustomization.
fn flux_kustomization(object: &Value) -> Option<(String, String, &Value)> {
    let (ns, name) = of_kind(object, FLUX_KUSTOMIZATION, "Kustomization")?;
    Some((ns, name, object.get("spec")?))
}

/// `(namespace, name)` when `object` is of `group` and `kind` (the
/// namespace `default` where it names none).
pub(super) fn of_kind(object: &Value, group: &str, kind: &str) -> Option<(String, String)> {
    let of = object.get("apiVersion")?.as_str()?.split_once('/')?.0;
    if of != group || object.get("kind")?.as_str()? != kind {
        return None;
    }
    let name = object.pointer("/metadata/name")?.as_str()?.to_string();
    let ns = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_string();
    Some((ns, name))
}

/// A Flux source: (kind, namespace, name).
pub type Source = (String, String, String);

/// The source a Kustomization reads; the namespace defaults to the
/// Kustomization's own.
fn source_of(ns: &str, spec: &Value) -> Source {
    let field = |f: &str| {
        spec.pointer(&format!("/sourceRef/{f}"))
            .and_then(Value::as_str)
    };
    (
        field("kind").unwrap_or("").to_string(),
        field("namespace").unwrap_or(ns).to_string(),
        field("name").unwrap_or("").to_string(),
    )
}

/// A source whose content is a folder the user named (`--source`): the
/// Kustomizations that read it are built from that folder.
pub struct Artifact {
    /// The source; a namespace `*` names the source of that kind and name
    /// in every namespace (tenants each have their own copy).
    pub source: Source,
    pub workspace: Workspace,
}

impl Artifact {
    /// Whether it holds the content of `source`.
    fn holds(&self, source: &Source) -> bool {
        let (kind, namespace, name) = &self.source;
        (kind, name) == (&source.0, &source.2) && (namespace == "*" || namespace == &source.1)
    }
}

/// What applies a cluster's folder.
enum Applier<'a> {
    /// A Kustomization of the folder whose path is the folder itself, in a
    /// GitRepository (flux bootstrap writes it there): the folder is built
    /// as it says (its patches, its postBuild variables). The same path in
    /// another source (an ExternalArtifact's `./production`) is another
    /// folder.
    Kustomization(&'a Manifest, (String, String, &'a Value)),
    /// A FluxInstance of the folder whose `spec.sync.path` is the folder:
    /// Flux Operator creates the source and the Kustomization, both named
    /// `spec.sync.name` or else the instance's namespace, in that namespace
    /// (controlplaneio-fluxcd/flux-operator 17c6aead,
    /// `internal/controller/fluxinstance_controller.go`, `build`: `syncName`;
    /// `internal/builder/templates.go`, `syncTmpl`). The repository is that
    /// source's content (pushed as it is, where it is an OCI artifact).
    Instance(Source),
    /// Neither: `flux bootstrap`'s own, which the repository need not hold.
    Bootstrap,
}

fn applier<'a>(first: &'a [Manifest], entry: &str) -> Applier<'a> {
    for m in first {
        if let Some((ns, name, spec)) = flux_kustomization(&m.object) {
            if text_at(spec, "/sourceRef/kind") == Some("GitRepository")
                && spec_path(spec).ok().as_deref() == Some(entry)
            {
                return Applier::Kustomization(m, (ns, name, spec));
            }
        }
    }
    for m in first {
        let o = &m.object;
        let group = text_at(o, "/apiVersion")
            .and_then(|v| v.split_once('/'))
            .map(|v| v.0);
        if group != Some(guard_core::model::kinds::OPERATOR)
            || text_at(o, "/kind") != Some(guard_core::model::kinds::FLUX_INSTANCE.kind)
        {
            continue;
        }
        let path = text_at(o, "/spec/sync/path").map(|p| relative(Path::new(p)));
        if path.and_then(Result::ok).as_deref() != Some(entry) {
            continue;
        }
        let ns = text_at(o, "/metadata/namespace").unwrap_or("default");
        let name = text_at(o, "/spec/sync/name")
            .filter(|n| !n.is_empty())
            .unwrap_or(ns);
        let kind = text_at(o, "/spec/sync/kind").unwrap_or("");
        return Applier::Instance((kind.into(), ns.into(), name.into()));
    }
    Applier::Bootstrap
}

/// The objects a ResourceSet generates ([`resourceset`]), each at the
/// ResourceSet's file and line (item: its place among them). When they
/// cannot be rendered, why: a finding in `unrendered`, or with `notes` a
/// note for inputs the cluster provides (`spec.inputsFrom`), which no
/// repository holds.
fn generate(m: &Manifest, notes: bool, unrendered: &mut Vec<Unrendered>) -> Option<Vec<Manifest>> {
    let (ns, name) = resourceset::resource_set(&m.object)?;
    match resourceset::render(&m.object, &ns, &name) {
        Ok(objects) => {
            let service_account = text_at(&m.object, "/spec/serviceAccountName")
                .filter(|s| !s.is_empty())
                .map(String::from);
            let generator = Generator {
                namespace: ns,
                name,
                service_account,
            };
            Some(
                objects
                    .into_iter()
                    .enumerate()
                    .map(|(i, object)| Manifest {
                        origin: Origin {
                            item: Some(i + 1),
                            ..m.origin.clone()
                        },
                        object,
                        owner: None,
                        generator: Some(generator.clone()),
                    })
                    .collect(),
            )
        }
        Err(why @ NotRendered::Providers(_)) => {
            if notes {
                eprintln!(
                    "note: {}: the objects ResourceSet {ns}/{name} generates are not judged (the ResourceSet itself is): {why}",
                    m.origin
                );
            }
            None
        }
        Err(why) => {
            unrendered.push(Unrendered {
                origin: m.origin.clone(),
                resource_set: (ns, name),
                message: why.to_string(),
                fails: matches!(
                    why,
                    NotRendered::Failed(_)
                        | NotRendered::Template(super::gotemplate::Error::Failed(_))
                ),
            });
            None
        }
    }
}

/// `spec.path` within the repository (empty: its root), normalized.
fn spec_path(spec: &Value) -> Result<String> {
    let path = spec.get("path").and_then(Value::as_str).unwrap_or("");
    relative(Path::new(path))
}

/// A path inside the repository, without `.`, `..` or a leading `/`.
pub(super) fn relative(path: &Path) -> Result<String> {
    let mut parts: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            // The guard pops: `..` leaves the last part, or the repository.
            Component::ParentDir if parts.pop().is_none() => {
                bail!("{} leaves the repository", path.display());
            }
            _ => {}
        }
    }
    Ok(if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    })
}

fn normalize(path: &Path) -> String {
    relative(path).unwrap_or_else(|_| path.to_string_lossy().into_owned())
}

/// A build that needs an object the repository does not hold (one the
/// cluster has, made by another controller or by hand): whether it
/// succeeds depends on the cluster.
#[derive(Debug)]
pub struct Unknown(String);

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unknown {}

/// The variables of `postBuild`: `substituteFrom` ConfigMaps and Secrets
/// (from the repository's objects, then `--context`), then `substitute`,
/// which wins (`LoadVariables`, `SubstituteVariables`).
fn variables(
    ns: &str,
    spec: &Value,
    known: &[&Value],
    context: &[Recorded],
) -> Result<BTreeMap<String, String>> {
    let mut vars = BTreeMap::new();
    for reference in spec
        .pointer("/postBuild/substituteFrom")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = reference.get("kind").and_then(Value::as_str).unwrap_or("");
        let name = reference.get("name").and_then(Value::as_str).unwrap_or("");
        let optional = reference.get("optional") == Some(&json!(true));
        let found = known
            .iter()
            .copied()
            .find(|o| {
                o.get("apiVersion") == Some(&json!("v1"))
                    && o.get("kind") == Some(&json!(kind))
                    && o.pointer("/metadata/name") == Some(&json!(name))
                    && o.pointer("/metadata/namespace").and_then(Value::as_str) == Some(ns)
            })
            .or_else(|| {
                context
                    .iter()
                    .find(|r| r.kind == kind && r.name == name && r.namespace == ns)
                    .and_then(|r| r.object.as_ref())
            });
        let Some(object) = found else {
            if optional {
                continue;
            }
            return Err(Unknown(format!(
                "substitute from '{kind}/{name}' error: {kind} {ns}/{name} is neither in the repository nor in --context"
            ))
            .into());
        };
        let data = object.get("data").and_then(Value::as_object);
        for (k, v) in data.into_iter().flatten() {
            let v = v.as_str().unwrap_or("");
            let v = if kind == "Secret" {
                use base64::Engine as _;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(v)
                    .with_context(|| format!("Secret {ns}/{name}: data.{k} is not base64"))?;
                String::from_utf8_lossy(&bytes).into_owned()
            } else {
                v.to_string()
            };
            vars.insert(k.clone(), v.replace('\n', ""));
        }
        if kind == "Secret" {
            // stringData is what the API server turns into data.
            add_strings(&mut vars, object.get("stringData"));
        }
    }
    add_strings(&mut vars, spec.pointer("/postBuild/substitute"));
    Ok(vars)
}

/// Adds the string members of a map, without their line breaks, as
/// `LoadVariables` and `SubstituteVariables` read them.
fn add_strings(vars: &mut BTreeMap<String, String>, map: Option<&Value>) {
    for (k, v) in map.and_then(Value::as_object).into_iter().flatten() {
        vars.insert(k.clone(), v.as_str().unwrap_or("").replace('\n', ""));
    }
}

/// `spec.commonMetadata`: its labels and annotations on every object
/// (fluxcd/pkg `ssa/utils`, `SetCommonMetadata`: set, overriding).
pub(super) fn common_metadata(object: &mut Value, common: &Value) {
    for field in ["labels", "annotations"] {
        let Some(add) = common.get(field).and_then(Value::as_object) else {
            continue;
        };
        let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
            continue;
        };
        if let Some(map) = metadata
            .entry(field)
            .or_insert_with(|| json!({}))
            .as_object_mut()
        {
            for (k, v) in add {
                map.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Removes kustomize's origin annotation (when `remove`) and returns its path.
fn take_origin(object: &mut Value, remove: bool) -> Option<String> {
    let annotations = object
        .get_mut("metadata")?
        .as_object_mut()?
        .get_mut("annotations")?
        .as_object_mut()?;
    let text = annotations.get(ORIGIN)?.as_str()?.to_string();
    if remove {
        annotations.remove(ORIGIN);
        if annotations.is_empty() {
            if let Some(m) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("annotations");
            }
        }
    }
    let origin: Value = serde_norway::from_str(&text).ok()?;
    // An object a generator made names the kustomization it is configured in.
    let path = origin
        .get("path")
        .or_else(|| origin.pointer("/configuredIn"))
        .and_then(Value::as_str)?;
    if origin.get("repo").is_some() {
        return None;
    }
    Some(path.to_string())
}

/// Finds the line of an object in its source file.
#[derive(Default)]
struct Lines {
    files: HashMap<String, Vec<(usize, Value)>>,
}

impl Lines {
    fn origin(
        &mut self,
        root: &Path,
        file: &str,
        object: &Value,
        revision: Option<&str>,
    ) -> Origin {
        let docs = self.files.entry(file.to_string()).or_insert_with(|| {
            std::fs::read_to_string(root.join(file))
                .ok()
                .and_then(|t| manifests::documents(file, &t).ok())
                .unwrap_or_default()
        });
        let same = |d: &Value, name: bool| {
            d.get("kind") == object.get("kind")
                && (!name || d.pointer("/metadata/name") == object.pointer("/metadata/name"))
        };
        let found = docs.iter().position(|(_, d)| same(d, true)).or_else(|| {
            let of_kind: Vec<usize> = (0..docs.len())
                .filter(|&i| docs.get(i).is_some_and(|(_, d)| same(d, false)))
                .collect();
            (of_kind.len() == 1)
                .then(|| of_kind.first().copied())
                .flatten()
        });
        let (document, line) = match found {
            Some(i) => (i + 1, docs.get(i).map_or(1, |(l, _)| *l)),
            None => (1, 1),
        };
        Origin {
            file: file.to_string(),
            revision: revision.map(str::to_string),
            document,
            line,
            item: None,
        }
    }
}

/// Whether a YAML file may hold Kubernetes objects: a repository's root
/// has YAML of its tools (linters, task runners) that is not a cluster's.
/// A file that is not YAML is left for the build to refuse, as Flux's does.
fn holds_objects(file: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return true;
    };
    manifests::documents(&file.to_string_lossy(), &text).map_or(true, |documents| {
        documents
            .iter()
            .any(|(_, d)| d.get("apiVersion").is_some() && d.get("kind").is_some())
    })
}

pub(super) fn hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

pub(super) fn is_yaml(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "yaml" | "yml"))
}

pub(super) fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

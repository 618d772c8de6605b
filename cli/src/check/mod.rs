//! `reconcile-guard check`: the verdicts admission would give a revision of a
//! GitOps repository, before it reaches the cluster. Every object the
//! policies' rules select is turned into the AdmissionRequest kube-apiserver
//! would send while Flux applies it, and evaluated through the policy modules
//! by the same code path as `reconcile-guard run`.

pub mod advice;
pub mod cases;
pub mod discover;
pub mod flux;
pub mod gotemplate;
pub mod identity;
pub mod input;
pub mod manifests;
pub mod policies;
pub mod pushed;
pub mod report;
pub mod request;
pub mod resourceset;
pub mod revision;
pub mod selector;
pub mod unbuilt;
pub mod unrendered;
pub mod varsub;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use anyhow::{bail, Context as _, Result};
use conformance::cluster::Recorded;
use conformance::response::{decoded_patch, ServerOptions};
use conformance::Reply;
use guard_core::Timestamp;
use serde_json::{json, Value};

use guard_core::string_map::StringMap;
use guard_core::Operation;
use host_test::capabilities::{Exchange, Grants, Source};
use host_test::harness::{Evaluation, Policy};
use host_test::host::Limits;
use host_test::metadata::Rule;
use identity::Identity;
use manifests::{Manifests, Origin};
use policies::Configured;
use request::{admission_request, Writer};
use selector::{labels_of, NAMESPACE_NAME};

/// Everything a check depends on besides the manifests and the policies.
pub struct Options {
    pub now: Timestamp,
    pub writer: Writer,
    /// Where a namespaced object without `metadata.namespace` goes.
    pub default_namespace: String,
    /// The Flux Kustomization (namespace, name) that applies the manifests:
    /// its owner labels are added to every object, as kustomize-controller does.
    pub kustomization: Option<(String, String)>,
    /// Evaluate a DELETE for every object of the base that the head no
    /// longer has, as a Kustomization with `prune: true` deletes it.
    pub prune: bool,
    /// Answer a lookup of an object neither the manifests nor the context
    /// hold as "not found" instead of calling the verdict undecided.
    pub missing_means_absent: bool,
    /// Recorded cluster objects, for lookups the manifests cannot answer.
    pub context: Vec<Recorded>,
    pub limits: Limits,
    /// Where to save every evaluation as a corpus case (`--save-cases`).
    pub save_cases: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The policy refuses the request: the apply would fail.
    Refusal,
    /// policy-server answers with an HTTP error: the webhook's
    /// `failurePolicy` decides.
    Failure,
    /// The verdict depends on the cluster: a lookup or a namespace's labels
    /// that neither the manifests nor the context hold.
    Undecided,
    /// A warning the writer would see.
    Warning,
    /// The policy would change the object.
    Mutation,
    /// kustomize-controller cannot build the Kustomization: nothing of it
    /// is applied.
    NotApplied,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Refusal => "refused",
            Level::Failure => "failed",
            Level::Undecided => "undecided",
            Level::Warning => "warning",
            Level::Mutation => "mutated",
            Level::NotApplied => "not applied",
        }
    }

    /// Whether a finding of this level fails the check.
    pub fn fails(self, warnings_as_errors: bool) -> bool {
        match self {
            Level::Refusal | Level::Failure | Level::Undecided | Level::NotApplied => true,
            Level::Warning => warnings_as_errors,
            Level::Mutation => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub level: Level,
    pub message: String,
}

/// One policy's verdict on one object.
#[derive(Debug, Clone)]
pub struct Checked {
    pub origin: Origin,
    pub object: Identity,
    pub operation: Operation,
    pub policy: String,
    pub findings: Vec<Finding>,
    /// An UPDATE of an object the change leaves as it was (with a base):
    /// its findings are the cluster's already, counted but not repeated.
    pub unchanged: bool,
}

#[derive(Debug, Default)]
pub struct Report {
    pub checked: Vec<Checked>,
    /// Objects read (head and base).
    pub objects: usize,
    /// The policies, in the order they ran.
    pub policies: Vec<report::PolicyInfo>,
    /// The groups of each kind read, so that a kind two groups share is
    /// printed with its group.
    pub kinds: BTreeMap<String, BTreeSet<String>>,
}

impl Report {
    /// Adds another cluster's report to this one.
    pub fn merge(&mut self, other: Report) {
        self.checked.extend(other.checked);
        self.objects += other.objects;
        for (kind, groups) in other.kinds {
            self.kinds.entry(kind).or_default().extend(groups);
        }
        for policy in other.policies {
            if !self.policies.iter().any(|p| p.name == policy.name) {
                self.policies.push(policy);
            }
        }
    }
}

/// A policy ready to run.
pub struct Loaded {
    config: Configured,
    module: Policy,
    rules: Vec<Rule>,
}

/// One revision's objects, ready for requests and lookups.
struct Revision {
    objects: Vec<(Origin, Identity, Value)>,
    /// Where each object is in `objects`.
    index: HashMap<identity::Key, usize>,
    /// The values SOPS encrypted in each object that has them, in order.
    ciphertext: HashMap<identity::Key, Vec<String>>,
    /// What lookups see: these objects, then the recorded context.
    known: std::sync::Arc<[Recorded]>,
    namespace_labels: HashMap<String, StringMap>,
    /// Who writes the objects another applier than `Options::writer`
    /// applies: Flux Operator, for what a ResourceSet generates.
    writers: HashMap<identity::Key, Writer>,
}

impl Revision {
    /// The object of this identity, where the revision has it.
    fn get(&self, key: &identity::Key) -> Option<&(Origin, Identity, Value)> {
        self.index.get(key).and_then(|&at| self.objects.get(at))
    }

    /// A Flux object that a finding of check's own is about (a
    /// Kustomization that does not build, a ResourceSet that does not
    /// render), as this head revision has it or else as `named`: a CREATE,
    /// or an UPDATE where the base has it.
    fn reported_on(&self, named: Identity, base: Option<&Revision>) -> (Identity, Operation) {
        let key = named.key();
        let operation = if base.is_some_and(|b| b.get(&key).is_some()) {
            Operation::Update
        } else {
            Operation::Create
        };
        let object = self.get(&key).map_or(named, |(_, id, _)| id.clone());
        (object, operation)
    }
}

/// Compiles the policies and validates their settings, in the order the
/// webhooks run, at `now` (the instant policy-server boots them).
pub fn load(configured: Vec<Configured>, now: Timestamp) -> Result<Vec<Loaded>> {
    let mut loaded = Vec::new();
    for config in configured {
        let module = Policy::load(&config.module)
            .with_context(|| format!("{}: policy {}", config.source, config.name))?;
        module
            .validate_settings(&config.settings, now)
            .with_context(|| {
                format!(
                    "{}: policy {} refuses its settings",
                    config.source, config.name
                )
            })?;
        let rules = match &config.rules {
            Some(rules) => rules.clone(),
            None => module
                .metadata
                .as_ref()
                .map(|m| m.rules.clone())
                .with_context(|| {
                    format!(
                        "{}: no rules given and the module has no metadata",
                        config.source
                    )
                })?,
        };
        loaded.push(Loaded {
            config,
            module,
            rules,
        });
    }
    // Mutating webhooks run first, one after the other, in the order of
    // their configurations' names; validating webhooks then see the result
    // (kubernetes/apiserver 24a394e5, `pkg/admission/configuration/
    // mutating_webhook_manager.go`, `ByName`; kubewarden-controller names a
    // policy's webhook configuration by its unique name, `internal/controller/
    // policy_subreconciler_webhook.go`).
    loaded.sort_by(|a, b| {
        (!a.config.allowed_to_mutate, &a.config.id)
            .cmp(&(!b.config.allowed_to_mutate, &b.config.id))
    });
    Ok(loaded)
}

/// Checks `head` (and, with `base`, the change from `base` to `head`).
#[expect(
    clippy::too_many_lines,
    reason = "every check of a revision, in the order the report lists them"
)]
pub fn check(
    head: &Manifests,
    base: Option<&Manifests>,
    loaded: &[Loaded],
    options: &Options,
) -> Result<Report> {
    let head_revision = revision(head, options)?;
    let base_revision = base.map(|b| revision(b, options)).transpose()?;
    let mut report = Report {
        objects: head.objects.len() + base.map_or(0, |b| b.objects.len()),
        policies: loaded
            .iter()
            .map(|l| report::PolicyInfo {
                name: l.config.name.clone(),
                description: l
                    .module
                    .metadata
                    .as_ref()
                    .and_then(|m| m.annotations.get("io.kubewarden.policy.description"))
                    .cloned()
                    .unwrap_or_else(|| l.config.name.clone()),
            })
            .collect(),
        ..Report::default()
    };
    for revision in std::iter::once(&head_revision).chain(base_revision.as_ref()) {
        for (_, id, _) in &revision.objects {
            let groups = report.kinds.entry(id.kind.clone()).or_default();
            groups.insert(id.group.clone());
        }
    }
    let checker = Checker {
        policies: loaded,
        options,
        save_cases: options.save_cases.as_deref(),
    };
    for (origin, id, object) in &head_revision.objects {
        let before = base_revision.as_ref().and_then(|b| {
            let (_, other, before) = b.get(&id.key())?;
            Some((b, other, before))
        });
        let unchanged = before.is_some_and(|(_, _, before)| same_but_version(before, object));
        let resealed = base_revision
            .as_ref()
            .and_then(|b| b.ciphertext.get(&id.key()));
        if resealed.is_some_and(|b| Some(b) != head_revision.ciphertext.get(&id.key())) {
            eprintln!(
                "note: {id} ({origin}) is SOPS-encrypted and its ciphertext changed: check cannot decrypt it, so its encrypted values are judged as unchanged (a re-key changes nothing the cluster sees; an edited value would)"
            );
        }
        let old = before.map(|(b, other, before)| checker.stored(b, other, before));
        let (operation, old, object) = match old {
            Some(mut old) => {
                // A webhook gets the object and the old object converted to
                // one version (kubernetes/apiserver, `pkg/admission`,
                // `VersionedAttributes`: "VersionedOldObject holds
                // Attributes.OldObject (if non-nil), converted to
                // VersionedKind"; `generic.NewVersionedAttributes` in the
                // webhook dispatchers), so an apiVersion upgrade alone
                // changes nothing a policy sees. Modelled as rewriting
                // apiVersion: the other changes a conversion may make are
                // not reproduced. An apply is merged onto the stored
                // object, which keeps its identity fields.
                if let Some(map) = old.as_object_mut() {
                    map.insert("apiVersion".into(), json!(id.api_version()));
                }
                let mut object = object.clone();
                for field in STORED_FIELDS {
                    if let (Some(value), Some(metadata)) = (
                        old.pointer(&format!("/metadata/{field}")),
                        object.get_mut("metadata").and_then(Value::as_object_mut),
                    ) {
                        metadata.insert(field.into(), value.clone());
                    }
                }
                (Operation::Update, Some(old), object)
            }
            None => (Operation::Create, None, object.clone()),
        };
        let (_, checked) = checker.admit(
            &head_revision,
            origin,
            id,
            operation,
            Some(&object),
            old.as_ref(),
            head_revision
                .writers
                .get(&id.key())
                .unwrap_or(&options.writer),
        )?;
        report.checked.extend(
            checked
                .into_iter()
                .map(|c| Checked { unchanged, ..c })
                .map(for_git),
        );
    }
    if !head.unbuilt.is_empty() {
        report.policies.push(unbuilt::builder());
        report.checked.extend(unbuilt::findings(
            &head.unbuilt,
            &head_revision,
            base_revision.as_ref(),
        ));
    }
    if !head.unrendered.is_empty() {
        report.policies.push(unrendered::renderer());
        report.checked.extend(unrendered::findings(
            &head.unrendered,
            &head_revision,
            base_revision.as_ref(),
        ));
    }
    if let (Some(b), true) = (&base_revision, options.prune) {
        for (origin, id, object) in &b.objects {
            if head_revision.index.contains_key(&id.key())
                || unbuilt::held_back(&head.unbuilt, b, object)
            {
                continue;
            }
            let old = checker.stored(b, id, object);
            let (_, checked) = checker.admit(
                &head_revision,
                origin,
                id,
                Operation::Delete,
                None,
                Some(&old),
                b.writers.get(&id.key()).unwrap_or(&options.writer),
            )?;
            report.checked.extend(checked.into_iter().map(for_git));
        }
    }
    Ok(report)
}

/// The verdict with the policies' kubectl advice turned into the edit of
/// the object's manifest ([`advice`]).
fn for_git(checked: Checked) -> Checked {
    let findings = checked
        .findings
        .iter()
        .map(|f| Finding {
            level: f.level,
            message: advice::for_git(
                &f.message,
                &checked.origin,
                &checked.object,
                checked.operation,
            ),
        })
        .collect();
    Checked {
        findings,
        ..checked
    }
}

/// Flux Operator applying a ResourceSet's objects: its field manager, as
/// the ResourceSet's service account or as itself (the model's
/// `FLUX_OPERATOR`).
fn generated_by(generator: &manifests::Generator) -> Writer {
    let operator = &guard_core::model::controllers::FLUX_OPERATOR;
    let username = match &generator.service_account {
        Some(sa) => format!(
            "{}{}:{sa}",
            guard_core::model::SERVICE_ACCOUNT_PREFIX,
            generator.namespace
        ),
        None => operator.service_account.username(),
    };
    Writer::new(
        &username,
        Vec::new(),
        operator.apply_manager().unwrap_or(operator.name),
    )
}

#[expect(
    clippy::too_many_lines,
    reason = "a revision's objects gathered from each of their origins"
)]
fn revision(manifests: &Manifests, options: &Options) -> Result<Revision> {
    let mut objects: Vec<(Origin, Identity, Value)> = Vec::new();
    let mut index = HashMap::new();
    let mut writers = HashMap::new();
    let mut ciphertext = HashMap::new();
    let scopes = identity::Scopes::of(
        manifests
            .objects
            .iter()
            .map(|m| &m.object)
            .chain(options.context.iter().filter_map(|r| r.object.as_ref())),
    );
    for m in &manifests.objects {
        let id = Identity::of(&m.object, &options.default_namespace, &scopes)
            .with_context(|| m.origin.to_string())?;
        if let Some((first, _, _)) = index.get(&id.key()).and_then(|&i| objects.get(i)) {
            bail!("{}: {id} is already written at {first}", m.origin);
        }
        index.insert(id.key(), objects.len());
        let (mut object, encrypted) = as_the_api_server_reads(&m.object);
        if !encrypted.is_empty() {
            ciphertext.insert(id.key(), encrypted);
        }
        // Identity::of read metadata.name, so metadata is an object.
        if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            if let Some(namespace) = &id.namespace {
                metadata.insert("namespace".into(), json!(namespace));
            }
            if let Some(generator) = &m.generator {
                // Flux Operator's owner labels, not kustomize-controller's.
                let labels = members(metadata, "labels")
                    .with_context(|| format!("{}: metadata.labels is not an object", m.origin))?;
                let owner = guard_core::model::keys::RESOURCE_SET_OWNER;
                labels.insert(owner.name.into(), json!(generator.name));
                labels.insert(owner.namespace.into(), json!(generator.namespace));
                writers.insert(id.key(), generated_by(generator));
            } else if let Some((namespace, name)) =
                m.owner.as_ref().or(options.kustomization.as_ref())
            {
                // fluxcd/pkg e2cfd1a2 `ssa/manager.go`, `SetOwnerLabels`.
                let labels = members(metadata, "labels")
                    .with_context(|| format!("{}: metadata.labels is not an object", m.origin))?;
                let owner = guard_core::model::keys::KUSTOMIZATION_OWNER;
                labels.insert(owner.name.into(), json!(name));
                labels.insert(owner.namespace.into(), json!(namespace));
            }
        }
        objects.push((m.origin.clone(), id, object));
    }
    let mut known: Vec<Recorded> = objects
        .iter()
        .map(|(_, id, object)| Recorded {
            api_version: id.api_version(),
            kind: id.kind.clone(),
            namespace: id.namespace.clone().unwrap_or_default(),
            name: id.name.clone(),
            object: Some(object.clone()),
            error: None,
        })
        .collect();
    // The Kustomization applying an object exists in the cluster while it
    // applies (it is what kustomize-controller reconciles), even where the
    // repository does not hold it (flux bootstrap writes `flux-system`).
    // Known with no annotations: an override written in Git would be
    // refused, so what a lookup of it can find is only what the cluster
    // adds, which `--context` records.
    let owners: std::collections::BTreeSet<&(String, String)> = manifests
        .objects
        .iter()
        .filter_map(|m| m.owner.as_ref().or(options.kustomization.as_ref()))
        .collect();
    for (namespace, name) in owners {
        let recorded = |r: &Recorded| {
            group_of(&r.api_version) == FLUX_KUSTOMIZE_GROUP
                && r.kind == "Kustomization"
                && (&r.namespace, &r.name) == (namespace, name)
        };
        if !known.iter().any(recorded) && !options.context.iter().any(recorded) {
            let api_version = format!("{FLUX_KUSTOMIZE_GROUP}/v1");
            known.push(Recorded {
                api_version: api_version.clone(),
                kind: "Kustomization".into(),
                namespace: namespace.clone(),
                name: name.clone(),
                object: Some(json!({"apiVersion": api_version, "kind": "Kustomization",
                    "metadata": {"name": name, "namespace": namespace}})),
                error: None,
            });
        }
    }
    for r in &options.context {
        let shadowed = known.iter().any(|k| {
            group_of(&k.api_version) == group_of(&r.api_version)
                && (&k.kind, &k.namespace, &k.name) == (&r.kind, &r.namespace, &r.name)
        });
        if !shadowed {
            known.push(r.clone());
        }
    }
    // Every namespace carries its name as a label (kube-apiserver sets
    // `kubernetes.io/metadata.name` on create and update).
    let namespace_labels = known
        .iter()
        .filter(|r| r.kind == "Namespace" && group_of(&r.api_version).is_empty())
        .filter_map(|r| {
            let labels = labels_of(r.object.as_ref()?);
            let labels = labels
                .iter()
                .filter(|(k, _)| *k != NAMESPACE_NAME)
                .chain([(NAMESPACE_NAME, r.name.as_str())])
                .collect();
            Some((r.name.clone(), labels))
        })
        .collect();
    Ok(Revision {
        objects,
        index,
        ciphertext,
        known: known.into(),
        namespace_labels,
        writers,
    })
}

const FLUX_KUSTOMIZE_GROUP: &str = guard_core::model::kinds::KUSTOMIZE;

/// Whether two revisions of an object are the same but for `apiVersion`
/// (which the API server converts away before admission).
fn same_but_version(before: &Value, after: &Value) -> bool {
    let strip = |o: &Value| {
        let mut o = o.clone();
        if let Some(map) = o.as_object_mut() {
            map.remove("apiVersion");
        }
        o
    };
    strip(before) == strip(after)
}

/// The metadata a stored object has and an apply keeps.
const STORED_FIELDS: [&str; 4] = ["uid", "resourceVersion", "generation", "creationTimestamp"];

/// What a value SOPS encrypted is read as: check holds no key to decrypt
/// it, and its ciphertext changes where the plaintext does not (a new data
/// key, `sops rotate`, re-encrypts every value; getsops/sops 0486373c,
/// `aes/cipher.go`, `Cipher.Encrypt`, a random IV unless the same plaintext
/// was decrypted with the same key), so every one is the same.
const ENCRYPTED: &str = "ENC[encrypted]";

/// The object as admission sees it once kustomize-controller and
/// kube-apiserver have read it, and the values SOPS encrypted in it:
/// - a SOPS-encrypted object is decrypted before the apply and its `sops`
///   block never reaches the API server (fluxcd/kustomize-controller
///   186fb3b2, `internal/decryptor/decryptor.go`, `DecryptResource`,
///   `isSOPSEncryptedResource`: a `sops` field with a `mac`). The values
///   stay encrypted here, each read as [`ENCRYPTED`], so re-keying is no
///   change; the caller says where the ciphertext changed.
/// - a label or annotation written without a value (YAML null) is the empty
///   string: kube-apiserver decodes `metadata` into its typed `ObjectMeta`
///   (a `map[string]string`) before admission, so webhooks never see null.
fn as_the_api_server_reads(object: &Value) -> (Value, Vec<String>) {
    let mut object = object.clone();
    let mut encrypted = Vec::new();
    if let Some(map) = object.as_object_mut() {
        if map.get("sops").and_then(|s| s.get("mac")).is_some() {
            map.remove("sops");
            for value in map.values_mut() {
                unseal(value, &mut encrypted);
            }
        }
    }
    for field in ["labels", "annotations"] {
        if let Some(values) = object
            .get_mut("metadata")
            .and_then(|m| m.get_mut(field))
            .and_then(Value::as_object_mut)
        {
            for v in values.values_mut() {
                if v.is_null() {
                    *v = json!("");
                }
            }
        }
    }
    (object, encrypted)
}

/// Replaces every SOPS-encrypted string (`ENC[AES256_GCM,…]`, getsops/sops
/// `aes/cipher.go`) under `value` with [`ENCRYPTED`], collecting them.
fn unseal(value: &mut Value, found: &mut Vec<String>) {
    match value {
        Value::String(s) if s.starts_with("ENC[AES256_GCM,") && s.ends_with(']') => {
            found.push(std::mem::replace(s, ENCRYPTED.to_string()));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| unseal(v, found)),
        Value::Object(map) => map.values_mut().for_each(|v| unseal(v, found)),
        _ => {}
    }
}

/// The object member `key` of `map`, made empty when missing; `None` when
/// it is something else.
fn members<'a>(
    map: &'a mut serde_json::Map<String, Value>,
    key: &str,
) -> Option<&'a mut serde_json::Map<String, Value>> {
    map.entry(key).or_insert_with(|| json!({})).as_object_mut()
}

fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(g, _)| g)
}

/// Whether a webhook is called for a request, or why that cannot be known.
enum Selection {
    Yes,
    No,
    Undecided(String),
}

#[derive(Clone, Copy)]
struct Checker<'a> {
    policies: &'a [Loaded],
    options: &'a Options,
    /// Where evaluations are saved as cases; none while modelling the base.
    save_cases: Option<&'a std::path::Path>,
}

impl Checker<'_> {
    /// The object as the cluster holds it once created from `object` and
    /// reconciled: the manifest with the mutating policies' patches and, for
    /// an ASO resource, the finalizer ASO adds when it first reconciles it
    /// (Azure/azure-service-operator 01fb773a, `v2/internal/reconcilers/
    /// generic/generic_reconciler.go`, `claimResource` adds
    /// `genruntime.ReconcilerFinalizer`; without it `delete` deletes nothing
    /// in Azure).
    fn stored(&self, revision: &Revision, id: &Identity, object: &Value) -> Value {
        let origin = Origin {
            file: String::new(),
            revision: None,
            document: 0,
            line: 0,
            item: None,
        };
        // Only the mutating policies (they run first) can change what is
        // stored; nothing is saved while modelling.
        let mutating = self
            .policies
            .iter()
            .take_while(|p| p.config.allowed_to_mutate)
            .count();
        let modelling = Checker {
            policies: self.policies.get(..mutating).unwrap_or_default(),
            save_cases: None,
            ..*self
        };
        let mut stored = modelling
            .admit(
                revision,
                &origin,
                id,
                Operation::Create,
                Some(object),
                None,
                revision
                    .writers
                    .get(&id.key())
                    .unwrap_or(&self.options.writer),
            )
            .map(|(stored, _)| stored)
            .ok()
            .flatten()
            .unwrap_or_else(|| object.clone());
        // What kube-apiserver set when it created the object (uid and
        // creationTimestamp: kubernetes/apiserver, `pkg/registry/rest/
        // meta.go`, `FillObjectMetaSystemFields`, read without a pinned
        // commit; resourceVersion from storage; generation 1): the stored
        // object an UPDATE or DELETE carries as `oldObject`.
        if let Some(metadata) = stored.get_mut("metadata").and_then(Value::as_object_mut) {
            let key = format!("{}/{}/{id}", id.group, id.kind);
            metadata.insert("uid".into(), json!(request::uid(&key)));
            metadata.insert("resourceVersion".into(), json!("1"));
            metadata.insert("generation".into(), json!(1));
            metadata.insert(
                "creationTimestamp".into(),
                json!(self.options.now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()),
            );
        }
        if id.group.ends_with(".azure.com") {
            let finalizers = stored
                .get_mut("metadata")
                .and_then(Value::as_object_mut)
                .map(|m| m.entry("finalizers").or_insert_with(|| json!([])))
                .and_then(Value::as_array_mut);
            if let Some(list) = finalizers {
                if !list.iter().any(|f| f == aso_reconcile::FINALIZER) {
                    list.push(json!(aso_reconcile::FINALIZER));
                }
            }
        }
        stored
    }

    /// Runs the webhook chain on one request: the object the mutating
    /// policies leave, and every policy's verdict.
    #[expect(
        clippy::too_many_arguments,
        reason = "an admission request's parts, as the webhook chain receives them"
    )]
    fn admit(
        &self,
        revision: &Revision,
        origin: &Origin,
        id: &Identity,
        operation: Operation,
        object: Option<&Value>,
        old: Option<&Value>,
        writer: &Writer,
    ) -> Result<(Option<Value>, Vec<Checked>)> {
        let mut current = object.cloned();
        let mut checked = Vec::new();
        for policy in self.policies {
            let findings =
                match self.selected(policy, revision, id, operation, current.as_ref(), old) {
                    Selection::No => continue,
                    Selection::Undecided(why) => vec![Finding {
                        level: Level::Undecided,
                        message: why,
                    }],
                    Selection::Yes => {
                        let request = admission_request(
                            id,
                            operation,
                            current.as_ref(),
                            old,
                            writer,
                            &policy.config.id,
                        );
                        let (findings, patched, response) =
                            self.evaluate(policy, revision, &request);
                        if let (Some(dir), Some(response)) = (self.save_cases, &response) {
                            let evaluated = cases::Evaluated {
                                origin,
                                id,
                                config: &policy.config,
                                request: &request,
                                known: &revision.known,
                                now: self.options.now,
                                response,
                            };
                            cases::save(dir, &evaluated)?;
                        }
                        if let (Some(patched), Some(current)) = (patched, current.as_mut()) {
                            *current = patched;
                        }
                        findings
                    }
                };
            checked.push(Checked {
                origin: origin.clone(),
                object: id.clone(),
                operation,
                policy: policy.config.name.clone(),
                findings,
                unchanged: false,
            });
        }
        Ok((current, checked))
    }

    fn selected(
        &self,
        policy: &Loaded,
        revision: &Revision,
        id: &Identity,
        operation: Operation,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Selection {
        if !policy.rules.iter().any(|r| rule_matches(r, id, operation)) {
            return Selection::No;
        }
        if let Some(selector) = policy
            .config
            .object_selector
            .as_ref()
            .filter(|s| !selector::is_empty(s))
        {
            // The new or the old object's labels (kubernetes/apiserver 24a394e5,
            // `pkg/admission/plugin/webhook/predicates/object/matcher.go`,
            // `MatchObjectSelector`).
            let matches = |o: Option<&Value>| o.is_some_and(|o| selector.matches(&labels_of(o)));
            if !matches(object) && !matches(old) {
                return Selection::No;
            }
        }
        let Some(selector) = policy
            .config
            .namespace_selector
            .as_ref()
            .filter(|s| !selector::is_empty(s))
        else {
            return Selection::Yes;
        };
        // kubernetes/apiserver 24a394e5, `pkg/admission/plugin/webhook/
        // predicates/namespace/matcher.go`, `MatchNamespaceSelector` and
        // `GetNamespaceLabels`.
        let labels = if id.is_namespace() && operation != Operation::Delete {
            object.map(labels_of).unwrap_or_default()
        } else if let Some(namespace) = id
            .namespace
            .as_deref()
            .or(id.is_namespace().then_some(id.name.as_str()))
        {
            match revision.namespace_labels.get(namespace) {
                Some(labels) => labels.clone(),
                None if selector::reads_only_the_name(selector) => {
                    [(NAMESPACE_NAME, namespace)].into_iter().collect()
                }
                None => {
                    return Selection::Undecided(format!(
                        "whether {} applies depends on the labels of Namespace {namespace}, \
                         which is neither in the manifests nor in --context",
                        policy.config.name
                    ))
                }
            }
        } else {
            return Selection::Yes;
        };
        if selector.matches(&labels) {
            Selection::Yes
        } else {
            Selection::No
        }
    }

    /// One evaluation: the findings, the object the policy's patch leaves,
    /// and the AdmissionResponse (none when policy-server answers with an
    /// HTTP error).
    fn evaluate(
        &self,
        policy: &Loaded,
        revision: &Revision,
        request: &Value,
    ) -> (Vec<Finding>, Option<Value>, Option<Value>) {
        let config = &policy.config;
        let grants = Grants {
            host_capabilities: config.host_capabilities.clone(),
            context_aware_resources: config.context_aware_resources.clone(),
        };
        let eval = Evaluation {
            now: self.options.now,
            limits: self.options.limits.clone(),
            source: Source::Recorded(revision.known.clone()),
            grants,
            server: ServerOptions {
                policy_id: config.id.clone(),
                mode: config.mode,
                allowed_to_mutate: config.allowed_to_mutate,
                rejection_message: config.message.clone(),
            },
        };
        let (response, trace) = policy
            .module
            .evaluate_traced(request, &config.settings, &eval);
        let failure = match response {
            Ok(Reply::Response(r)) => Ok(r),
            Ok(Reply::NoAnswer(none)) => Err(none.to_string()),
            Err(failure) => Err(failure.to_string()),
        };
        let response = match failure {
            Ok(r) => r,
            Err(message) => {
                return (
                    vec![Finding {
                        level: Level::Failure,
                        message,
                    }],
                    None,
                    None,
                )
            }
        };
        let mut findings = verdict(&response);
        let patched = match decoded_patch(&response) {
            Ok(ops) if !ops.is_empty() => apply_patch(request.get("object"), &ops),
            _ => None,
        };
        if !self.options.missing_means_absent {
            let unknown = unanswered_lookups(&trace.session, &revision.known);
            if !unknown.is_empty() {
                let assumed = findings
                    .iter()
                    .map(|f| format!("{}: {}", f.level.name(), f.message))
                    .collect::<Vec<_>>();
                let assumed = if assumed.is_empty() {
                    "allowed".to_string()
                } else {
                    assumed.join("; ")
                };
                findings = vec![Finding {
                    level: Level::Undecided,
                    message: format!(
                        "{} looked up {}, which {} neither in the manifests nor in --context, \
                         so the verdict depends on the cluster (assuming {} not exist: {assumed})",
                        config.name,
                        unknown.join(" and "),
                        if unknown.len() == 1 { "is" } else { "are" },
                        if unknown.len() == 1 {
                            "it does"
                        } else {
                            "they do"
                        },
                    ),
                }];
                return (findings, None, Some(response));
            }
        }
        (findings, patched, Some(response))
    }
}

/// The findings of an AdmissionResponse.
fn verdict(response: &Value) -> Vec<Finding> {
    let mut findings = Vec::new();
    if response.get("allowed").and_then(Value::as_bool) != Some(true) {
        let message = response
            .pointer("/status/message")
            .and_then(Value::as_str)
            .unwrap_or("refused without a message");
        findings.push(Finding {
            level: Level::Refusal,
            message: message.to_string(),
        });
    }
    for w in response
        .get("warnings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        findings.push(Finding {
            level: Level::Warning,
            message: w.to_string(),
        });
    }
    if let Ok(ops) = decoded_patch(response) {
        if !ops.is_empty() {
            let changes: Vec<String> = ops
                .iter()
                .map(|op| {
                    format!(
                        "{} {}",
                        op["op"].as_str().unwrap_or("?"),
                        op["path"].as_str().unwrap_or("?")
                    )
                })
                .collect();
            findings.push(Finding {
                level: Level::Mutation,
                message: format!("the policy changes the object: {}", changes.join(", ")),
            });
        }
    }
    findings
}

fn apply_patch(object: Option<&Value>, ops: &[Value]) -> Option<Value> {
    let mut object = object?.clone();
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops.to_vec())).ok()?;
    json_patch::patch(&mut object, &patch).ok()?;
    Some(object)
}

/// The `get_resource` calls of a session whose object is not known.
fn unanswered_lookups(session: &[Exchange], known: &[Recorded]) -> Vec<String> {
    let mut out = Vec::new();
    for Exchange::Exchange { request, .. } in session {
        let Some(body) = request.trim_start().strip_prefix("!KubernetesGetResource") else {
            continue;
        };
        let Ok(asked) = serde_norway::from_str::<BTreeMap<String, Value>>(body) else {
            continue;
        };
        let field = |k: &str| asked.get(k).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind, name, namespace) = (
            field("api_version"),
            field("kind"),
            field("name"),
            field("namespace"),
        );
        let found = known.iter().any(|r| {
            group_of(&r.api_version) == group_of(api_version)
                && r.kind == kind
                && r.name == name
                && r.namespace == namespace
        });
        if !found {
            let at = if namespace.is_empty() {
                name.to_string()
            } else {
                format!("{namespace}/{name}")
            };
            let text = format!("{api_version} {kind} {at}");
            if !out.contains(&text) {
                out.push(text);
            }
        }
    }
    out
}

/// kube-apiserver's rule match (kubernetes/apiserver 24a394e5,
/// `pkg/admission/plugin/webhook/predicates/rules/rules.go`, `Matcher.Matches`):
/// operation, group, version and resource each exact or `*`.
fn rule_matches(rule: &Rule, id: &Identity, operation: Operation) -> bool {
    let any = |items: &[String], wanted: &str| items.iter().any(|i| i == "*" || i == wanted);
    let resource = id.resource();
    any(&rule.operations, operation.as_str())
        && any(&rule.api_groups, &id.group)
        && any(&rule.api_versions, &id.version)
        && rule.resources.iter().any(|r| {
            let (res, sub) = r.split_once('/').unwrap_or((r, ""));
            (res == "*" || res == resource) && (sub == "*" || sub.is_empty())
        })
}

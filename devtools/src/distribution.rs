//! Generated distribution files: Artifact Hub packages (kwctl's
//! `scaffold artifacthub` field set), example ClusterAdmissionPolicy
//! manifests (`kwctl scaffold manifest`) and a standalone policy-server
//! `policies.yml`. All derive from each policy's Cargo.toml version,
//! metadata.yml, questions-ui.yml and README, so they cannot drift apart;
//! a test regenerates them and compares with what is committed.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context as _, Result};
use serde::Serialize;
use serde_json::Value;

use host_test::metadata::{ContextAwareResourceSpec, Metadata, Rule};

/// The registry (host and path) the committed metadata.yml, deploy/ and
/// artifacthub/ name: a placeholder for the one a release publishes to
/// (`devtools scaffold --registry`, the release workflow's `OCI_REGISTRY`).
pub const PLACEHOLDER_REGISTRY: &str = "registry.example.com/reconcile-guard/policies";

/// Everything a policy's distribution files are made from.
pub struct Sources {
    pub name: String,
    /// Where the module is published: `<registry>/<name>:v<version>`. From
    /// the metadata's `io.kubewarden.policy.ociUrl` unless given
    /// ([`Sources::with_registry`]).
    pub registry: String,
    /// From Cargo.toml: the one place a policy's version is set.
    pub version: String,
    pub metadata: Metadata,
    pub readme: String,
    pub questions: String,
}

impl Sources {
    pub fn load(root: &Path, policy: &str) -> Result<Self> {
        let dir = root.join("policies").join(policy);
        let read = |f: &str| {
            std::fs::read_to_string(dir.join(f))
                .with_context(|| format!("cannot read policies/{policy}/{f}"))
        };
        let metadata = Metadata::from_yaml(&read("metadata.yml")?)
            .with_context(|| format!("policies/{policy}/metadata.yml"))?;
        let version = cargo_version(&read("Cargo.toml")?)
            .with_context(|| format!("policies/{policy}/Cargo.toml has no package version"))?;
        if metadata.version() != Some(version.as_str()) {
            bail!(
                "policies/{policy}: metadata.yml says version {:?}, Cargo.toml says {version:?}",
                metadata.version()
            );
        }
        let oci_url = metadata
            .annotations
            .get("io.kubewarden.policy.ociUrl")
            .cloned()
            .unwrap_or_default();
        let Some(registry) = oci_url.strip_suffix(&format!("/{policy}")) else {
            bail!(
                "policies/{policy}/metadata.yml: io.kubewarden.policy.ociUrl is {oci_url:?}, \
                 not <registry>/{policy}"
            );
        };
        Ok(Self {
            name: policy.to_string(),
            registry: registry.to_string(),
            version,
            metadata,
            readme: read("README.md")?,
            questions: read("questions-ui.yml")?,
        })
    }

    fn annotation(&self, key: &str) -> String {
        self.metadata
            .annotations
            .get(key)
            .cloned()
            .unwrap_or_default()
    }

    /// The same sources, published to `registry` (HOST[/PATH], no scheme).
    pub fn with_registry(self, registry: &str) -> Result<Self> {
        let registry = registry.trim_end_matches('/');
        if registry.is_empty() || registry.contains("://") {
            bail!("the registry is HOST[/PATH] without a scheme, not {registry:?}");
        }
        Ok(Self {
            registry: registry.to_string(),
            ..self
        })
    }

    /// The OCI reference users pull, tagged `v<version>` as Kubewarden's policies are.
    pub fn image(&self) -> String {
        format!("{}/{}:v{}", self.registry, self.name, self.version)
    }
}

/// `version = "..."` of the `[package]` table.
pub fn cargo_version(manifest: &str) -> Option<String> {
    let package = manifest
        .split("\n[")
        .find(|t| t.trim_start().starts_with("package]") || t.starts_with("[package]"))?;
    package.lines().find_map(|l| {
        let value = l
            .trim()
            .strip_prefix("version")?
            .trim_start()
            .strip_prefix('=')?
            .trim();
        Some(value.strip_prefix('"')?.strip_suffix('"')?.to_string())
    })
}

/// A release asset: one release (tag `v<version>`) carries every policy,
/// as `.github/workflows/release.yml` publishes them (the policies are
/// versioned together; the workflow refuses a tag another version).
fn release_asset(source: &str, version: &str, file: &str) -> String {
    format!("{source}/releases/download/v{version}/{file}")
}

/// `https://github.com/OWNER/REPO` as (OWNER, REPO): the identity keyless
/// signatures from that repository's workflows carry.
fn github_owner_repo(source: &str) -> (&str, &str) {
    let path = source
        .strip_prefix("https://github.com/")
        .unwrap_or(source)
        .trim_end_matches('/');
    path.split_once('/').unwrap_or((path, ""))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Package {
    version: String,
    name: String,
    display_name: String,
    created_at: String,
    description: String,
    license: String,
    #[serde(rename = "homeURL")]
    home_url: String,
    containers_images: Vec<Image>,
    keywords: Vec<String>,
    links: Vec<Link>,
    install: String,
    readme: String,
    maintainers: Vec<Maintainer>,
    provider: Provider,
    recommendations: Vec<Recommendation>,
    annotations: BTreeMap<String, String>,
}

#[derive(Serialize)]
struct Image {
    name: String,
    image: String,
}

#[derive(Serialize)]
struct Link {
    name: String,
    url: String,
}

#[derive(Serialize)]
struct Maintainer {
    name: String,
    email: String,
}

#[derive(Serialize)]
struct Provider {
    name: String,
}

#[derive(Serialize)]
struct Recommendation {
    url: String,
}

fn yaml<T: Serialize>(value: &T) -> Result<String> {
    serde_norway::to_string(value).context("cannot write YAML")
}

/// `artifacthub/<policy>/artifacthub-pkg.yml`.
#[expect(
    clippy::too_many_lines,
    reason = "the package written field by field, in the order of Artifact Hub's schema"
)]
pub fn artifacthub_package(s: &Sources, created_at: &str) -> Result<String> {
    let source = s.annotation("io.kubewarden.policy.source");
    let mut annotations = BTreeMap::new();
    annotations.insert(
        "kubewarden/mutation".to_string(),
        s.metadata.mutating.unwrap_or(false).to_string(),
    );
    annotations.insert("kubewarden/questions-ui".into(), s.questions.clone());
    annotations.insert(
        "kubewarden/resources".into(),
        s.annotation("io.artifacthub.resources"),
    );
    annotations.insert("kubewarden/rules".into(), yaml(&s.metadata.rules)?);
    if !s.metadata.context_aware_resources.is_empty() {
        annotations.insert(
            "kubewarden/contextAwareResources".into(),
            yaml(&s.metadata.context_aware_resources)?,
        );
    }
    let image = s.image();
    let package = Package {
        version: s.version.clone(),
        name: s.name.clone(),
        display_name: s.annotation("io.artifacthub.displayName"),
        created_at: created_at.to_string(),
        description: s.annotation("io.kubewarden.policy.description"),
        license: s.annotation("io.kubewarden.policy.license"),
        home_url: s.annotation("io.kubewarden.policy.url"),
        containers_images: vec![Image {
            name: "policy".into(),
            image: image.clone(),
        }],
        keywords: s
            .annotation("io.artifacthub.keywords")
            .split(',')
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .collect(),
        links: vec![
            Link {
                name: "policy".into(),
                url: release_asset(&source, &s.version, &format!("{}.wasm", s.name)),
            },
            Link {
                name: "SBOM (SPDX)".into(),
                url: release_asset(&source, &s.version, &format!("{}.spdx.json", s.name)),
            },
            Link {
                name: "SBOM signature (Sigstore bundle)".into(),
                url: release_asset(
                    &source,
                    &s.version,
                    &format!("{}.spdx.jsonl.bundle.sigstore", s.name),
                ),
            },
            Link {
                name: "source".into(),
                url: format!("{source}/tree/main/policies/{}", s.name),
            },
        ],
        install: format!(
            "The policy can be obtained using [`kwctl`](https://github.com/kubewarden/kwctl):\n\
             ```console\nkwctl pull {image}\n```\n\
             Release modules are signed keylessly by the release workflow; check the signature \
             with:\n\
             ```console\nkwctl verify --github-owner {owner} --github-repo {repo} registry://{image}\n```\n\
             Its SPDX SBOM is a release asset, signed with a Sigstore bundle beside it \
             (`cosign verify-blob --bundle`).\n\
             The repository's `install/` folder installs it with Flux (a kustomize base, \
             monitor mode first); or generate the policy manifest and tune it to your liking:\n\
             ```console\nkwctl scaffold manifest -t ClusterAdmissionPolicy registry://{image}\n```\n",
            owner = github_owner_repo(&source).0,
            repo = github_owner_repo(&source).1,
        ),
        readme: s.readme.clone(),
        maintainers: vec![Maintainer {
            name: s.annotation("io.kubewarden.policy.author"),
            email: "maintainers@reconcile-guard.dev".into(),
        }],
        provider: Provider {
            name: "kubewarden".into(),
        },
        recommendations: vec![Recommendation {
            url: // Kubewarden 1.37 installs with one chart, `admission-controller`
            // (kubewarden/helm-charts 148b1a90, charts/README.md).
            "https://artifacthub.io/packages/helm/kubewarden/admission-controller".into(),
        }],
        annotations,
    };
    yaml(&package)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    api_version: &'static str,
    kind: &'static str,
    metadata: ManifestMeta,
    spec: Spec,
}

#[derive(Serialize)]
struct ManifestMeta {
    name: String,
    annotations: BTreeMap<String, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    module: String,
    settings: Value,
    rules: Vec<Rule>,
    mutating: bool,
    background_audit: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    context_aware_resources: Vec<ContextAwareResourceSpec>,
}

/// `deploy/<policy>.yaml`: a ClusterAdmissionPolicy as `kwctl scaffold manifest` writes it.
pub fn cluster_admission_policy(s: &Sources) -> Result<String> {
    let (context_aware_resources, _) = lookups(s)?;
    let annotations = [
        "io.kubewarden.policy.category",
        "io.kubewarden.policy.severity",
    ]
    .into_iter()
    .filter_map(|k| {
        s.metadata
            .annotations
            .get(k)
            .map(|v| (k.to_string(), v.clone()))
    })
    .collect();
    yaml(&Manifest {
        api_version: "policies.kubewarden.io/v1",
        kind: "ClusterAdmissionPolicy",
        metadata: ManifestMeta {
            name: s.name.clone(),
            annotations,
        },
        spec: Spec {
            module: format!("registry://{}", s.image()),
            settings: Value::Object(Default::default()),
            rules: s.metadata.rules.clone(),
            mutating: s.metadata.mutating.unwrap_or(false),
            background_audit: s.metadata.background_audit,
            context_aware_resources,
        },
    })
}

/// One entry of policy-server's `policies.yml` (3460bb71,
/// `crates/policy-server/src/config.rs`, `PolicyOrPolicyGroup::Policy`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerPolicy {
    pub module: String,
    pub policy_mode: &'static str,
    pub allowed_to_mutate: bool,
    pub settings: Value,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_aware_resources: Vec<ContextAwareResourceSpec>,
    /// policy-server denies every host capability but logging unless granted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub host_capabilities: Vec<&'static str>,
}

/// The kinds and host capabilities a policy reads with the manifests'
/// settings (`{}`), as its catalog entry deploys it (the corpus runs it so).
pub fn lookups(s: &Sources) -> Result<(Vec<ContextAwareResourceSpec>, Vec<&'static str>)> {
    let entry = catalog::entry(&s.name).with_context(|| {
        format!(
            "no policy named {:?} in the catalog (policies/catalog/src/lib.rs)",
            s.name
        )
    })?;
    let deployed = conformance::deployment::of(entry).map_err(anyhow::Error::msg)?;
    let resources = deployed
        .context_aware_resources
        .into_iter()
        .map(|r| ContextAwareResourceSpec {
            api_version: r.api_version,
            kind: r.kind,
        })
        .collect();
    Ok((resources, deployed.host_capabilities))
}

/// `deploy/policies.yml`: every policy for a standalone policy-server.
pub fn policies_yml(all: &[Sources]) -> Result<String> {
    let mut map = BTreeMap::new();
    for s in all {
        let (context_aware_resources, host_capabilities) = lookups(s)?;
        map.insert(
            s.name.clone(),
            ServerPolicy {
                module: format!("registry://{}", s.image()),
                policy_mode: "protect",
                allowed_to_mutate: s.metadata.mutating.unwrap_or(false),
                settings: Value::Object(Default::default()),
                context_aware_resources,
                host_capabilities,
            },
        );
    }
    yaml(&map)
}

/// The policy-server the chart deploys and the account it runs as:
/// `admission-controller` chart values `policyServer.serviceAccountName:
/// policy-server`, installed in `kubewarden` as Kubewarden's 1.37 quick start
/// does (kubewarden/helm-charts 148b1a90, charts/admission-controller/values.yaml;
/// kubewarden/docs beb867dc, shared/modules/en/partials/kubewarden-variables-1.36-forward.adoc).
pub const POLICY_SERVER_ACCOUNT: (&str, &str) = ("kubewarden", "policy-server");

/// The name of the ClusterRole (and its binding) granting the lookups.
pub const CONTEXT_ROLE: &str = "reconcile-guard-context-watcher";

/// A kind's resource name as the API serves it: lower case, `y` to `ies`,
/// else an `s` (true of every kind the policies read; the distribution test
/// checks each against the policies' webhook rules).
pub fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    match lower.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None => format!("{lower}s"),
    }
}

/// `deploy/policy-server-rbac.yaml`: what the policies' lookups read
/// (`contextAwareResources`), granted to the chart's policy-server as its
/// own `kubewarden-context-watcher` ClusterRole grants (get, list, watch;
/// charts/admission-controller/templates/defaults/policy-server-rbac.yaml at
/// kubewarden/helm-charts 148b1a90), which covers only core and
/// networking kinds.
pub fn policy_server_rbac(all: &[Sources]) -> Result<String> {
    let mut groups: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for s in all {
        for r in lookups(s)?.0 {
            let group = r.api_version.rsplit_once('/').map_or("", |(g, _)| g);
            groups
                .entry(group.to_string())
                .or_default()
                .insert(plural(&r.kind));
        }
    }
    let rules: Vec<Value> = groups
        .into_iter()
        .map(|(group, resources)| {
            serde_json::json!({
                "apiGroups": [group],
                "resources": resources,
                "verbs": ["get", "list", "watch"],
            })
        })
        .collect();
    let labels = serde_json::json!({"app.kubernetes.io/part-of": "reconcile-guard"});
    let role = serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": CONTEXT_ROLE, "labels": labels},
        "rules": rules,
    });
    let binding = serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": CONTEXT_ROLE, "labels": labels},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": CONTEXT_ROLE,
        },
        "subjects": [{
            "kind": "ServiceAccount",
            "namespace": POLICY_SERVER_ACCOUNT.0,
            "name": POLICY_SERVER_ACCOUNT.1,
        }],
    });
    Ok(format!("{}---\n{}", yaml(&role)?, yaml(&binding)?))
}

/// `deploy/kustomization.yaml`: `deploy/` as a kustomize base, the one
/// `install/`'s overlays and Flux Kustomizations build on.
pub fn kustomization(all: &[Sources]) -> Result<String> {
    let mut resources: Vec<String> = all.iter().map(|s| format!("{}.yaml", s.name)).collect();
    resources.push("policy-server-rbac.yaml".into());
    let body = yaml(&serde_json::json!({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": resources,
    }))?;
    Ok(format!(
        "# Generated by `make scaffold` (devtools/src/distribution.rs): the policies as a\n\
         # kustomize base; install/ holds the overlays (monitor, then protect).\n{body}"
    ))
}

/// Writes every generated file under `root`; `created_at` only for new
/// packages; the modules published to `registry` where given, else where
/// each metadata.yml's ociUrl says.
pub fn write_all(
    root: &Path,
    policies: &[&str],
    created_at: &str,
    registry: Option<&str>,
) -> Result<()> {
    let mut all = Vec::new();
    std::fs::create_dir_all(root.join("deploy"))?;
    for p in policies {
        let mut s = Sources::load(root, p)?;
        if let Some(registry) = registry {
            s = s.with_registry(registry)?;
        }
        let pkg_path = root.join("artifacthub").join(p).join("artifacthub-pkg.yml");
        // Keep the committed createdAt so regeneration is a no-op unless content changed.
        let created = std::fs::read_to_string(&pkg_path)
            .ok()
            .and_then(|t| {
                t.lines().find_map(|l| {
                    l.strip_prefix("createdAt: ")
                        .map(|v| v.trim().trim_matches('\'').to_string())
                })
            })
            .unwrap_or_else(|| created_at.to_string());
        std::fs::create_dir_all(root.join("artifacthub").join(p))?;
        std::fs::write(&pkg_path, artifacthub_package(&s, &created)?)?;
        std::fs::write(
            root.join("deploy").join(format!("{p}.yaml")),
            cluster_admission_policy(&s)?,
        )?;
        all.push(s);
    }
    std::fs::write(root.join("deploy/policies.yml"), policies_yml(&all)?)?;
    std::fs::write(
        root.join("deploy/policy-server-rbac.yaml"),
        policy_server_rbac(&all)?,
    )?;
    std::fs::write(root.join("deploy/kustomization.yaml"), kustomization(&all)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed files name the placeholder; a release's registry
    /// replaces it everywhere a module is named.
    #[test]
    fn the_registry_is_an_input() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let committed = Sources::load(&root, "flux-suspend").unwrap();
        assert_eq!(committed.registry, PLACEHOLDER_REGISTRY);
        let released = committed
            .with_registry("registry.test/acme/policies/")
            .unwrap();
        let image = format!(
            "registry.test/acme/policies/flux-suspend:v{}",
            released.version
        );
        assert_eq!(released.image(), image);
        let package = artifacthub_package(&released, "2026-01-01T00:00:00Z").unwrap();
        assert!(package.contains(&format!("image: {image}\n")), "{package}");
        assert!(!package.contains("registry.example.com"), "{package}");
        let manifest = cluster_admission_policy(&released).unwrap();
        assert!(
            manifest.contains(&format!("module: registry://{image}\n")),
            "{manifest}"
        );
        for refused in ["", "oci://registry.test/acme"] {
            let s = Sources::load(&root, "flux-suspend").unwrap();
            assert!(s.with_registry(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn version_comes_from_the_package_table() {
        let manifest = "[package]\nname = \"x\"\nversion = \"1.2.3\"\n\n[dependencies]\nfoo = { version = \"9\" }\n";
        assert_eq!(cargo_version(manifest).as_deref(), Some("1.2.3"));
        assert_eq!(cargo_version("[dependencies]\nversion = \"1\"\n"), None);
    }

    /// The corpus runs each policy deployed as its catalog entry says, which
    /// must be what the committed `deploy/<policy>.yaml` says.
    #[test]
    fn every_policy_is_deployed_as_its_manifest_says() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for entry in catalog::POLICIES {
            let name = entry.name;
            let text = std::fs::read_to_string(root.join(format!("deploy/{name}.yaml"))).unwrap();
            let manifest: Value = serde_norway::from_str(&text).unwrap();
            let deployed = conformance::deployment::of(entry).unwrap();
            assert_eq!(
                deployed.policy_id,
                format!(
                    "clusterwide-{}",
                    manifest["metadata"]["name"].as_str().unwrap()
                )
            );
            assert_eq!(
                Value::Bool(deployed.allowed_to_mutate),
                manifest["spec"]["mutating"],
                "{name}"
            );
            let kinds: Vec<Value> = deployed
                .context_aware_resources
                .iter()
                .map(|r| serde_json::json!({"apiVersion": r.api_version, "kind": r.kind}))
                .collect();
            let in_manifest = manifest["spec"].get("contextAwareResources").cloned();
            assert_eq!(
                in_manifest.unwrap_or(Value::Array(Vec::new())),
                Value::Array(kinds),
                "{name}"
            );
        }
    }

    /// aso-reconcile's settings decide what it reads: with the defaults, only
    /// Namespaces, with `get` alone.
    #[test]
    fn aso_reconcile_is_granted_exactly_what_its_settings_read() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let (resources, capabilities) =
            lookups(&Sources::load(&root, "aso-reconcile").unwrap()).unwrap();
        assert_eq!(resources.len(), 1);
        assert_eq!(
            (
                resources[0].api_version.as_str(),
                resources[0].kind.as_str()
            ),
            ("v1", "Namespace")
        );
        assert_eq!(capabilities, ["kubernetes/get_resource"]);
    }
}

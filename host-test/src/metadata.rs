//! Kubewarden policy metadata: `metadata.yml`, its checks, and the wasm
//! custom section `io.kubewarden.metadata` that `kwctl annotate` writes and
//! policy-server reads (it refuses a module without one).
//!
//! Two levels of checks, kept apart:
//! - [`Metadata::parse`] accepts exactly what `kwctl annotate` accepts
//!   (kubewarden/kubewarden-controller at 3460bb71, crates/kwctl/src/annotate.rs
//!   `prepare_metadata`: serde_yaml into policy-evaluator's `Metadata`, then its
//!   `validator` checks, crates/policy-evaluator/src/policy_metadata.rs `Metadata`,
//!   `Rule`, `validate_resources`, `validate_asterisk_usage`, `validate_metadata`).
//!   `reconcile-guard annotate` uses only this.
//! - [`Metadata::lint`] adds what a published reconcile-guard policy needs
//!   (the io.kubewarden.policy.* annotations, a semver version, at least one
//!   rule, no unknown fields); `make build` runs it as `devtools lint-metadata`.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use anyhow::{bail, Context as _, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::capabilities::ContextAwareResource;

pub const SECTION: &str = "io.kubewarden.metadata";

/// kwctl annotate writes its own version here (annotate.rs `prepare_metadata`
/// inserts `CARGO_PKG_VERSION` under `KUBEWARDEN_ANNOTATION_KWCTL_VERSION`,
/// overwriting any value from metadata.yml). We are not kwctl, so `annotate`
/// leaves this annotation out, and removes one that metadata.yml carries so
/// the module never claims a kwctl version. Nothing reads it: at 3460bb71 the
/// constant is used only by annotate.rs (policy-server, policy-evaluator and
/// `kwctl inspect` never look at it), so leaving it out changes no behaviour.
pub const KWCTL_VERSION_ANNOTATION: &str = "io.kubewarden.kwctl";
pub const USAGE_ANNOTATION: &str = "io.kubewarden.policy.usage";

/// A `metadata.yml`, with kwctl's field names. Like policy-evaluator's
/// `Metadata`, unknown fields are ignored (the old `contextAware` flag among
/// them); [`Metadata::lint`] reports them.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// Overwritten by annotate: asked of the module for kubewarden-wapc,
    /// `Unknown` for the other execution modes (kwctl/src/backend.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Required (kwctl: `rules: Vec<Rule>` without a default), may be empty.
    pub rules: Vec<Rule>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Required: kwctl's `mutating: bool` has no default.
    #[serde(default)]
    pub mutating: Option<bool>,
    #[serde(default = "yes")]
    pub background_audit: bool,
    #[serde(default = "wapc")]
    pub execution_mode: String,
    #[serde(default = "kubernetes")]
    pub policy_type: String,
    #[serde(default)]
    pub context_aware_resources: Vec<ContextAwareResourceSpec>,
    /// The host capabilities the policy uses (`namespace/operation` strings);
    /// kwctl carries them as `Option<BTreeSet<String>>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_capabilities: Option<BTreeSet<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_kubewarden_version: Option<String>,
}

fn yes() -> bool {
    true
}
fn wapc() -> String {
    "kubewarden-wapc".into()
}
fn kubernetes() -> String {
    "kubernetes".into()
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub operations: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub struct ContextAwareResourceSpec {
    pub api_version: String,
    pub kind: String,
}

/// policy-evaluator's `PolicyExecutionMode` (policy_evaluator.rs) serde names.
const EXECUTION_MODES: [&str; 4] = ["kubewarden-wapc", "opa", "gatekeeper", "wasi"];
/// policy_metadata.rs `PolicyType`.
const POLICY_TYPES: [&str; 2] = ["kubernetes", "raw"];
/// policy_metadata.rs `Operation`.
const OPERATIONS: [&str; 5] = ["CREATE", "UPDATE", "DELETE", "CONNECT", "*"];
/// kubewarden-policy-sdk `ProtocolVersion`.
const PROTOCOL_VERSIONS: [&str; 2] = ["v1", "Unknown"];

/// The fields policy-evaluator's `Metadata` knows, plus `contextAware`,
/// which it ignores (policy_metadata.rs test `metadata_backwards_compatibility`).
const KNOWN_FIELDS: [&str; 11] = [
    "protocolVersion",
    "rules",
    "annotations",
    "mutating",
    "backgroundAudit",
    "executionMode",
    "policyType",
    "contextAwareResources",
    "hostCapabilities",
    "minimumKubewardenVersion",
    "contextAware",
];

/// Annotations every published reconcile-guard policy carries (our lint;
/// kwctl requires none).
const REQUIRED_ANNOTATIONS: [&str; 5] = [
    "io.kubewarden.policy.title",
    "io.kubewarden.policy.version",
    "io.kubewarden.policy.description",
    "io.kubewarden.policy.author",
    "io.kubewarden.policy.license",
];

/// How kwctl runs a module, from its metadata and its exports
/// (kwctl/src/backend.rs `BackendDetector::detect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// kubewarden-wapc: the protocol version is asked of the module.
    Wapc,
    /// opa, gatekeeper or wasi: annotate writes `protocolVersion: Unknown`.
    Other,
}

impl Metadata {
    /// A publishable policy's metadata.yml: what kwctl accepts and our lint.
    pub fn from_yaml(text: &str) -> Result<Self> {
        Self::lint_yaml(text)?;
        Self::parse(text)
    }

    /// A metadata.yml as `kwctl annotate` reads it: accepted exactly when kwctl
    /// accepts it.
    pub fn parse(text: &str) -> Result<Self> {
        let m: Metadata = serde_norway::from_str(text).context("metadata.yml is not valid")?;
        m.validate()?;
        Ok(m)
    }

    /// kwctl's checks (policy_metadata.rs, `#[validate]` attributes and the
    /// functions they name; serde enum names for the fields that are enums).
    pub fn validate(&self) -> Result<()> {
        if self.mutating.is_none() {
            bail!("metadata: missing field `mutating` (true or false)");
        }
        if !EXECUTION_MODES.contains(&self.execution_mode.as_str()) {
            bail!(
                "metadata: executionMode {:?} is not one of {}",
                self.execution_mode,
                EXECUTION_MODES.join(", ")
            );
        }
        if !POLICY_TYPES.contains(&self.policy_type.as_str()) {
            bail!(
                "metadata: policyType {:?} is not one of {}",
                self.policy_type,
                POLICY_TYPES.join(", ")
            );
        }
        if let Some(v) = &self.protocol_version {
            if !PROTOCOL_VERSIONS.contains(&v.as_str()) {
                bail!("metadata: protocolVersion {v:?} is not one of v1, Unknown");
            }
        }
        for (i, r) in self.rules.iter().enumerate() {
            for (field, list) in [
                ("apiGroups", &r.api_groups),
                ("apiVersions", &r.api_versions),
                ("resources", &r.resources),
                ("operations", &r.operations),
            ] {
                if list.is_empty() {
                    bail!("metadata: rules[{i}].{field} must not be empty");
                }
                // validate_asterisk_usage (and _inside_of_operations); for
                // resources validate_resources covers it.
                if field != "resources" && list.len() > 1 && list.iter().any(|x| x == "*") {
                    bail!(
                        "metadata: rules[{i}].{field}: No other elements can be defined when '*' is used"
                    );
                }
            }
            if let Some(op) = r
                .operations
                .iter()
                .find(|o| !OPERATIONS.contains(&o.as_str()))
            {
                bail!(
                    "metadata: rules[{i}].operations: {op:?} is not one of {}",
                    OPERATIONS.join(", ")
                );
            }
            check_resources(&r.resources)
                .map_err(|e| anyhow::anyhow!("metadata: rules[{i}].resources: {e}"))?;
        }
        for (i, c) in self.context_aware_resources.iter().enumerate() {
            if c.api_version.is_empty() || c.kind.is_empty() {
                bail!("metadata: contextAwareResources[{i}] needs a non-empty apiVersion and kind");
            }
        }
        if let Some(v) = &self.minimum_kubewarden_version {
            // kwctl deserializes it as a semver::Version: strict, no `v`.
            semver::Version::parse(v).with_context(|| {
                format!("metadata: minimumKubewardenVersion {v:?} is not a semver version")
            })?;
        }
        Ok(())
    }

    /// Our own checks for a published policy, on top of kwctl's.
    pub fn lint_yaml(text: &str) -> Result<()> {
        let raw: Value = serde_norway::from_str(text).context("metadata.yml is not valid")?;
        if let Some(map) = raw.as_object() {
            if let Some(k) = map.keys().find(|k| !KNOWN_FIELDS.contains(&k.as_str())) {
                bail!("metadata: unknown field `{k}` (kwctl ignores it)");
            }
        }
        Self::parse(text)?.lint()
    }

    /// Our own checks on parsed metadata (see [`Metadata::lint_yaml`]).
    pub fn lint(&self) -> Result<()> {
        if self.execution_mode != "kubewarden-wapc" {
            bail!(
                "metadata: executionMode {:?}: reconcile-guard policies are kubewarden-wapc",
                self.execution_mode
            );
        }
        if self.rules.is_empty() {
            bail!("metadata: `rules` must list at least one rule");
        }
        for (i, r) in self.rules.iter().enumerate() {
            if r.resources
                .iter()
                .any(|x| x.chars().any(char::is_uppercase))
            {
                bail!("metadata: rules[{i}].resources must be lower-case plural resource names");
            }
        }
        for key in REQUIRED_ANNOTATIONS {
            if self
                .annotations
                .get(key)
                .is_none_or(|v| v.trim().is_empty())
            {
                bail!("metadata: annotation {key} is required");
            }
        }
        let version = self.version().unwrap_or_default();
        semver::Version::parse(version.trim_start_matches('v')).with_context(|| {
            format!("metadata: io.kubewarden.policy.version {version:?} is not semver")
        })?;
        Ok(())
    }

    pub fn version(&self) -> Option<&str> {
        self.annotations
            .get("io.kubewarden.policy.version")
            .map(String::as_str)
    }

    pub fn context_aware_resources(&self) -> Vec<ContextAwareResource> {
        self.context_aware_resources
            .iter()
            .map(|r| ContextAwareResource {
                api_version: r.api_version.clone(),
                kind: r.kind.clone(),
            })
            .collect()
    }

    /// kwctl's backend detection: a module is Rego when it exports a symbol
    /// starting with `opa_` (backend.rs `rego_policy_detector`); opa and
    /// gatekeeper need a Rego module, kubewarden-wapc a non-Rego one, wasi
    /// either. The error texts are backend.rs's.
    pub fn backend(&self, wasm: &[u8]) -> Result<Backend> {
        let rego = is_rego(wasm)?;
        match (self.execution_mode.as_str(), rego) {
            ("wasi", _) | ("opa" | "gatekeeper", true) => Ok(Backend::Other),
            ("opa" | "gatekeeper", false) => bail!(
                "Wrong value inside of policy's metadata for 'executionMode'. The policy has not been created using Rego"
            ),
            (_, true) => bail!(
                "Wrong value inside of policy's metadata for 'executionMode'. This policy has been created using Rego"
            ),
            (_, false) => Ok(Backend::Wapc),
        }
    }
}

fn is_rego(wasm: &[u8]) -> Result<bool> {
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        if let wasmparser::Payload::ExportSection(exports) = payload? {
            for export in exports {
                if export?.name.starts_with("opa_") {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}

/// The resource list checks of policy_metadata.rs `validate_resources`, which
/// transposes Kubernetes' admissionregistration validation: no empty name;
/// `*/*` alone; `*` with no other resource that lacks a subresource; `x/*`
/// excludes `x/y`; `*/y` excludes `x/y`.
fn check_resources(resources: &[String]) -> Result<(), String> {
    let mut wildcard_sub: HashSet<&str> = HashSet::new(); // x of `x/*`
    let mut wildcard_res: HashSet<&str> = HashSet::new(); // y of `*/y`
    let mut has_star = false;
    let mut has_plain = false;
    for resource in resources {
        if resource.is_empty() {
            return Err("empty resource is not allowed".into());
        }
        if resource == "*" {
            has_star = true;
        }
        let Some((res, sub)) = resource.split_once('/') else {
            // Upstream records whether the last plain entry was not `*`.
            has_plain = resource != "*";
            continue;
        };
        if wildcard_sub.contains(res) {
            return Err(format!(
                "if '{resource}/*' is present, must not specify {res}"
            ));
        }
        if wildcard_res.contains(sub) {
            return Err(format!(
                "if '*/{sub}' is present, must not specify {resource}"
            ));
        }
        if sub == "*" {
            wildcard_sub.insert(res);
        }
        if res == "*" {
            wildcard_res.insert(sub);
        }
    }
    if resources.len() > 1 && resources.iter().any(|r| r == "*/*") {
        return Err("if '*/*' is present, must not specify other resources".into());
    }
    if has_star && has_plain {
        return Err(
            "if '*' is present, must not specify other resources without subresources".into(),
        );
    }
    Ok(())
}

/// The metadata stored in a module's `io.kubewarden.metadata` section, if any.
pub fn read(wasm: &[u8]) -> Result<Option<Metadata>> {
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        if let wasmparser::Payload::CustomSection(section) = payload? {
            if section.name() == SECTION {
                let m = serde_json::from_slice(section.data())
                    .context("the io.kubewarden.metadata section is not valid metadata")?;
                return Ok(Some(m));
            }
        }
    }
    Ok(None)
}

/// Writes what `kwctl annotate` writes (annotate.rs `prepare_metadata` and
/// `write_annotated_wasm_file`): the module with its metadata in the custom
/// section, `protocolVersion` set (asked of the module itself for
/// kubewarden-wapc, `Unknown` otherwise, see [`Metadata::backend`]), the README
/// as `io.kubewarden.policy.usage`, and `contextAwareResources` sorted and
/// deduplicated as kwctl's `BTreeSet` serializes them. Unlike kwctl it writes no
/// `io.kubewarden.kwctl` version (see [`KWCTL_VERSION_ANNOTATION`]). An
/// existing section is replaced.
pub fn annotate(
    wasm: &[u8],
    metadata: &Metadata,
    protocol_version: &str,
    usage: Option<&str>,
) -> Result<Vec<u8>> {
    let mut m = metadata.clone();
    m.protocol_version = Some(protocol_version.to_string());
    m.annotations.remove(KWCTL_VERSION_ANNOTATION);
    if let Some(readme) = usage {
        m.annotations
            .insert(USAGE_ANNOTATION.into(), readme.to_string());
    }
    m.context_aware_resources.sort();
    m.context_aware_resources.dedup();
    let json = serde_json::to_vec(&m)?;
    let mut out = strip_section(wasm, SECTION)?;
    use wasm_encoder::{Encode as _, Section as _};
    let section = wasm_encoder::CustomSection {
        name: SECTION.into(),
        data: json.into(),
    };
    out.push(section.id());
    section.encode(&mut out);
    Ok(out)
}

/// The module without custom sections named `name`: every other section
/// copied as it is (wasmparser's `Payload::as_section`, wasm-encoder's
/// `RawSection`).
fn strip_section(wasm: &[u8], name: &str) -> Result<Vec<u8>> {
    let mut module = wasm_encoder::Module::new();
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let payload = payload?;
        match &payload {
            wasmparser::Payload::Version { encoding, .. }
                if *encoding != wasmparser::Encoding::Module =>
            {
                bail!("not a core wasm module (a component?): policies are modules")
            }
            wasmparser::Payload::CustomSection(section) if section.name() == name => continue,
            _ => {}
        }
        if let Some((id, range)) = payload.as_section() {
            let data = wasm
                .get(range)
                .context("a section extends past the module's end")?;
            module.section(&wasm_encoder::RawSection { id, data });
        }
    }
    Ok(module.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn custom(module: &mut wasm_encoder::Module, name: &str, data: &[u8]) {
        module.section(&wasm_encoder::CustomSection {
            name: name.into(),
            data: data.into(),
        });
    }

    fn custom_sections(wasm: &[u8]) -> Vec<(String, Vec<u8>)> {
        wasmparser::Parser::new(0)
            .parse_all(wasm)
            .filter_map(|p| match p.ok()? {
                wasmparser::Payload::CustomSection(c) => {
                    Some((c.name().to_string(), c.data().to_vec()))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn only_the_named_custom_sections_go_and_the_rest_stays_valid() {
        let mut module = wasm_encoder::Module::new();
        custom(&mut module, SECTION, b"old");
        module.section(&wasm_encoder::TypeSection::new());
        custom(&mut module, "producers", b"kept");
        // A section larger than one LEB128 byte can size.
        custom(&mut module, SECTION, &[7; 300]);
        let stripped = strip_section(&module.finish(), SECTION).unwrap();
        wasmparser::Validator::new()
            .validate_all(&stripped)
            .unwrap();
        assert_eq!(
            custom_sections(&stripped),
            [("producers".to_string(), b"kept".to_vec())]
        );
    }

    #[test]
    fn a_component_is_refused() {
        let component = wasm_encoder::Component::new().finish();
        assert!(strip_section(&component, SECTION).is_err());
    }
}

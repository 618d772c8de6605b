//! Kubewarden policy metadata: `metadata.yml`, its checks, and the wasm
//! custom section `io.kubewarden.metadata` that `kwctl annotate` writes and
//! policy-server reads (it refuses a module without one).

use std::collections::BTreeMap;

use anyhow::{bail, Context as _, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::capabilities::ContextAwareResource;

pub const SECTION: &str = "io.kubewarden.metadata";
/// The kwctl release whose annotate output we reproduce.
pub const KWCTL_COMPAT_VERSION: &str = "1.30.0";

/// A `metadata.yml`, with kwctl's field names.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Metadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    #[serde(default)]
    pub rules: Vec<Rule>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// Required: kwctl refuses metadata that does not say.
    #[serde(default)]
    pub mutating: Option<bool>,
    #[serde(default = "yes")]
    pub background_audit: bool,
    #[serde(default)]
    pub context_aware_resources: Vec<ContextAwareResourceSpec>,
    #[serde(default = "wapc")]
    pub execution_mode: String,
    #[serde(default = "kubernetes")]
    pub policy_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_kubewarden_version: Option<String>,
    /// Ignored by the Kubewarden tools (only `contextAwareResources` counts); accepted for compatibility.
    #[serde(default, skip_serializing)]
    pub context_aware: Option<Value>,
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
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Rule {
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub operations: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContextAwareResourceSpec {
    pub api_version: String,
    pub kind: String,
}

/// Annotations every published policy carries.
const REQUIRED_ANNOTATIONS: [&str; 5] = [
    "io.kubewarden.policy.title",
    "io.kubewarden.policy.version",
    "io.kubewarden.policy.description",
    "io.kubewarden.policy.author",
    "io.kubewarden.policy.license",
];

impl Metadata {
    pub fn from_yaml(text: &str) -> Result<Self> {
        let m: Metadata = serde_norway::from_str(text).context("metadata.yml is not valid")?;
        m.validate()?;
        Ok(m)
    }

    /// The checks `kwctl annotate` makes, and the ones a publishable policy needs.
    pub fn validate(&self) -> Result<()> {
        if self.mutating.is_none() {
            bail!("metadata: `mutating` is required (true or false)");
        }
        if self.execution_mode != "kubewarden-wapc" {
            bail!(
                "metadata: executionMode {:?} is not supported; these are kubewarden-wapc policies",
                self.execution_mode
            );
        }
        if self.rules.is_empty() {
            bail!("metadata: `rules` must list at least one rule");
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
            }
            if let Some(op) = r
                .operations
                .iter()
                .find(|o| !matches!(o.as_str(), "CREATE" | "UPDATE" | "DELETE" | "CONNECT" | "*"))
            {
                bail!("metadata: rules[{i}].operations: {op:?} is not one of CREATE, UPDATE, DELETE, CONNECT, *");
            }
            if r.resources
                .iter()
                .any(|x| x.is_empty() || x.chars().any(char::is_uppercase))
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

/// Writes what `kwctl annotate` writes: the module with its metadata, plus
/// `protocolVersion` (asked of the module itself), the kwctl annotation and
/// the README as `io.kubewarden.policy.usage`, in the custom section. An
/// existing section is replaced.
pub fn annotate(
    wasm: &[u8],
    metadata: &Metadata,
    protocol_version: &str,
    usage: Option<&str>,
) -> Result<Vec<u8>> {
    let mut m = metadata.clone();
    m.protocol_version = Some(protocol_version.to_string());
    m.annotations
        .insert("io.kubewarden.kwctl".into(), KWCTL_COMPAT_VERSION.into());
    if let Some(readme) = usage {
        m.annotations
            .insert("io.kubewarden.policy.usage".into(), readme.to_string());
    }
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

/// The module without custom sections named `name`.
fn strip_section(wasm: &[u8], name: &str) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(wasm.len());
    let mut last = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let payload = payload?;
        if let wasmparser::Payload::CustomSection(section) = &payload {
            if section.name() == name {
                // The range covers the section's name and data; its header
                // (id byte and LEB128 size) precedes it.
                let range = section.range();
                let header = section_header_start(wasm, range.start, range.len())?;
                out.extend_from_slice(wasm.get(last..header).unwrap_or_default());
                last = range.end;
            }
        }
    }
    out.extend_from_slice(wasm.get(last..).unwrap_or_default());
    Ok(out)
}

/// Finds the id byte of the custom section whose contents (`len` bytes)
/// start at `contents`: a 0 followed by the LEB128 of `len`, possibly padded.
fn section_header_start(wasm: &[u8], contents: usize, len: usize) -> Result<usize> {
    for leb_len in 1..=5 {
        let Some(start) = contents.checked_sub(leb_len + 1) else {
            break;
        };
        if wasm.get(start) != Some(&0) {
            continue;
        }
        let mut reader =
            wasmparser::BinaryReader::new(wasm.get(start + 1..contents).unwrap_or_default(), 0);
        if reader.read_var_u32().is_ok_and(|n| n as usize == len) && reader.eof() {
            return Ok(start);
        }
    }
    bail!("cannot locate the header of the custom section at offset {contents}")
}

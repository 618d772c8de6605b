//! `host-test push` and `pull`: policy modules as OCI artifacts, laid out as
//! kwctl lays them out, so policy-server and kwctl can pull what we push.

use std::collections::BTreeMap;

use anyhow::{bail, Context as _, Result};
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::{Digest as _, Sha256};

use crate::metadata;

pub const WASM_LAYER_MEDIA_TYPE: &str = "application/vnd.wasm.content.layer.v1+wasm";
pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v1+json";

/// A `registry://HOST/REPO:TAG` reference, parsed.
pub fn parse_reference(uri: &str) -> Result<Reference> {
    let Some(rest) = uri.strip_prefix("registry://") else {
        bail!("{uri:?} is not a registry:// reference (write registry://HOST/REPOSITORY:TAG)");
    };
    rest.parse()
        .with_context(|| format!("{uri:?} is not a valid OCI reference"))
}

/// Plain HTTP is allowed only for registries on this machine.
fn is_loopback(registry: &str) -> bool {
    let host = registry
        .rsplit_once(':')
        .filter(|(h, port)| !h.ends_with(']') || port.chars().all(|c| c.is_ascii_digit()))
        .map_or(registry, |(h, _)| h);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn client_for(reference: &Reference) -> Client {
    let registry = reference.resolve_registry().to_string();
    let protocol = if is_loopback(&registry) {
        ClientProtocol::HttpsExcept(vec![registry])
    } else {
        ClientProtocol::Https
    };
    Client::new(ClientConfig {
        protocol,
        ..ClientConfig::default()
    })
}

/// Credentials for a registry from the Docker config file
/// (`$DOCKER_CONFIG/config.json` or `~/.docker/config.json`), as kwctl reads them.
pub fn docker_auth(registry: &str) -> RegistryAuth {
    use base64::Engine as _;
    let dir = std::env::var_os("DOCKER_CONFIG")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".docker")));
    let Some(text) = dir.and_then(|d| std::fs::read_to_string(d.join("config.json")).ok()) else {
        return RegistryAuth::Anonymous;
    };
    let Ok(config) = serde_json::from_str::<serde_json::Value>(&text) else {
        return RegistryAuth::Anonymous;
    };
    let auths = config.get("auths").and_then(|a| a.as_object());
    let entry = auths.and_then(|a| {
        a.iter()
            .find(|(k, _)| {
                let k = k
                    .trim_start_matches("https://")
                    .trim_start_matches("http://");
                k.trim_end_matches('/') == registry
            })
            .map(|(_, v)| v)
    });
    let decoded = entry
        .and_then(|e| e.get("auth"))
        .and_then(|a| a.as_str())
        .and_then(|a| base64::engine::general_purpose::STANDARD.decode(a).ok())
        .and_then(|b| String::from_utf8(b).ok());
    match decoded.as_deref().and_then(|d| d.split_once(':')) {
        Some((user, pass)) => RegistryAuth::Basic(user.to_string(), pass.to_string()),
        None => RegistryAuth::Anonymous,
    }
}

/// The manifest annotations kwctl writes: the metadata annotations that fit
/// on one line, plus `org.opencontainers.image.source`.
pub fn manifest_annotations(wasm: &[u8]) -> Result<BTreeMap<String, String>> {
    let meta = metadata::read(wasm)?
        .context("the module is not annotated: run `host-test annotate` (or `make build`) first")?;
    let mut annotations: BTreeMap<String, String> = meta
        .annotations
        .into_iter()
        .filter(|(_, v)| !v.contains('\n'))
        .collect();
    if let Some(source) = annotations.get("io.kubewarden.policy.source").cloned() {
        annotations.insert("org.opencontainers.image.source".into(), source);
    }
    Ok(annotations)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Pushes an annotated module; returns the immutable reference
/// `registry://HOST/REPO@sha256:...`.
pub fn push(wasm: &[u8], uri: &str) -> Result<String> {
    let reference = parse_reference(uri)?;
    let annotations = manifest_annotations(wasm)?;
    let client = client_for(&reference);
    let auth = docker_auth(reference.resolve_registry());
    let layers = vec![ImageLayer::new(
        wasm.to_vec(),
        WASM_LAYER_MEDIA_TYPE.into(),
        None,
    )];
    let config = Config::new(b"{}".to_vec(), WASM_CONFIG_MEDIA_TYPE.into(), None);
    let manifest = OciImageManifest::build(&layers, &config, Some(annotations));
    runtime()?.block_on(async {
        client
            .push(&reference, &layers, config, &auth, Some(manifest))
            .await
            .with_context(|| format!("push to {uri} failed"))?;
        let (_, digest) = client
            .pull_image_manifest(&reference, &auth)
            .await
            .with_context(|| format!("cannot read back the manifest of {uri}"))?;
        Ok(immutable(&reference, &digest))
    })
}

fn immutable(reference: &Reference, digest: &str) -> String {
    format!(
        "registry://{}/{}@{digest}",
        reference.resolve_registry(),
        reference.repository()
    )
}

/// What a pull brings back.
pub struct Pulled {
    pub wasm: Vec<u8>,
    pub manifest: OciImageManifest,
    /// `registry://HOST/REPO@sha256:...`
    pub immutable: String,
}

/// Pulls a policy module, verifying the layer against its manifest digest.
pub fn pull(uri: &str) -> Result<Pulled> {
    let reference = parse_reference(uri)?;
    let client = client_for(&reference);
    let auth = docker_auth(reference.resolve_registry());
    runtime()?.block_on(async {
        let (manifest, digest) = client
            .pull_image_manifest(&reference, &auth)
            .await
            .with_context(|| format!("cannot pull the manifest of {uri}"))?;
        if manifest.config.media_type != WASM_CONFIG_MEDIA_TYPE {
            bail!(
                "{uri} is not a Kubewarden policy: config media type {}",
                manifest.config.media_type
            );
        }
        let [layer] = manifest.layers.as_slice() else {
            bail!(
                "{uri} has {} layers; a policy has exactly one",
                manifest.layers.len()
            );
        };
        if layer.media_type != WASM_LAYER_MEDIA_TYPE {
            bail!(
                "{uri}: layer media type {} is not {WASM_LAYER_MEDIA_TYPE}",
                layer.media_type
            );
        }
        let mut wasm = Vec::new();
        client
            .pull_blob(&reference, layer, &mut wasm)
            .await
            .with_context(|| format!("cannot pull the layer of {uri}"))?;
        let actual = format!("sha256:{:x}", Sha256::digest(&wasm));
        if actual != layer.digest {
            bail!(
                "{uri}: the layer's digest is {actual}, the manifest says {}",
                layer.digest
            );
        }
        Ok(Pulled {
            wasm,
            immutable: immutable(&reference, &digest),
            manifest,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_on_loopback() {
        assert!(is_loopback("127.0.0.1:5000"));
        assert!(is_loopback("localhost:5000"));
        assert!(is_loopback("[::1]:5000"));
        assert!(is_loopback("localhost"));
        assert!(!is_loopback("registry.example.com:5000"));
        assert!(!is_loopback("10.0.0.1:5000"));
    }

    #[test]
    fn references_need_the_registry_scheme() {
        assert!(parse_reference("127.0.0.1:5000/policies/flux-suspend:v0.1.0").is_err());
        let r = parse_reference("registry://127.0.0.1:5000/policies/flux-suspend:v0.1.0").unwrap();
        assert_eq!(r.resolve_registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "policies/flux-suspend");
        assert_eq!(r.tag(), Some("v0.1.0"));
    }
}

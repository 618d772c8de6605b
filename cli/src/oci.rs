//! `reconcile-guard push` and `pull`: policy modules as OCI artifacts, laid out as
//! kwctl lays them out, so policy-server and kwctl can pull what we push.

use std::collections::BTreeMap;

use anyhow::{bail, Context as _, Result};
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::{Digest as _, Sha256};

use host_test::metadata;

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
pub(crate) fn is_loopback(registry: &str) -> bool {
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

pub(crate) fn client_for(reference: &Reference) -> Client {
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

/// Credentials for a registry, as kwctl finds them: kubewarden/kubewarden-controller
/// at 3460bb71, crates/policy-fetcher/src/registry/mod.rs `Registry::auth`, which
/// asks the `docker_credential` crate (`get_credential(registry)`, with the
/// registry's `host[:port]` as written in the reference) and maps a
/// username/password to basic auth, an identity token to anonymous (with a
/// warning) and any error (no config file, no entry, a failing helper) to
/// anonymous. The crate reads `$DOCKER_CONFIG/config.json` or
/// `~/.docker/config.json` and looks, in order, at `credHelpers[registry]`
/// (runs `docker-credential-<name> get` with the registry on stdin), the
/// `auths` entry's `identitytoken`, its base64 `auth`, its `username` and
/// `password`, then `credsStore`. policy-fetcher pins a fork of the crate
/// (branch fix-handle-config-without-auth-field) so that an `auths` entry
/// without `auth` (Docker writes `{}` entries next to `credsStore`) falls
/// through to the store; the crates.io release we use, 1.4, does the same.
pub fn docker_auth(registry: &str) -> RegistryAuth {
    use docker_credential::DockerCredential;
    match docker_credential::get_credential(registry) {
        Ok(DockerCredential::UsernamePassword(user, password)) => {
            RegistryAuth::Basic(user, password)
        }
        Ok(DockerCredential::IdentityToken(_)) => {
            eprintln!(
                "warning: {registry}: IdentityToken credential not supported. Using anonymous instead"
            );
            RegistryAuth::Anonymous
        }
        Err(_) => RegistryAuth::Anonymous,
    }
}

/// The manifest annotations kwctl writes, from the module's metadata
/// annotations: kwctl/src/push.rs `build_oci_annotations` (3460bb71) keeps a
/// value only when `str::lines` finds at most one line in it (so a single
/// trailing `\n` or `\r\n` is fine, a bare `\r` is not a line break, and any
/// other newline drops the annotation with a warning), trims every kept value,
/// and sets `org.opencontainers.image.source` to the (trimmed)
/// `io.kubewarden.policy.source` unless the metadata already sets it.
/// Metadata without annotations gives a manifest without annotations (`None`).
pub fn manifest_annotations(wasm: &[u8]) -> Result<Option<BTreeMap<String, String>>> {
    let meta = metadata::read(wasm)?.context(
        "Cannot push a policy that is not annotated: run `reconcile-guard annotate` (or `make build`) first",
    )?;
    if meta.annotations.is_empty() {
        return Ok(None);
    }
    Ok(Some(oci_annotations(meta.annotations)))
}

/// kwctl's `build_oci_annotations`, on a metadata annotation map.
pub fn oci_annotations(annotations: BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = annotations
        .into_iter()
        .filter(|(k, v)| {
            let keep = v.lines().count() <= 1;
            if !keep {
                eprintln!(
                    "warning: annotation {k} is a multi-line string, it will be removed from the OCI manifest"
                );
            }
            keep
        })
        .map(|(k, v)| (k, v.trim().to_string()))
        .collect();
    if let Some(source) = out.get(SOURCE_ANNOTATION).cloned() {
        out.entry(OCI_SOURCE_ANNOTATION.into()).or_insert(source);
    }
    out
}

pub const SOURCE_ANNOTATION: &str = "io.kubewarden.policy.source";
pub const OCI_SOURCE_ANNOTATION: &str = "org.opencontainers.image.source";

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
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
    let auth = docker_auth(reference.registry());
    let layers = vec![ImageLayer::new(
        wasm.to_vec(),
        WASM_LAYER_MEDIA_TYPE.into(),
        None,
    )];
    let config = Config::new(b"{}".to_vec(), WASM_CONFIG_MEDIA_TYPE.into(), None);
    let manifest = OciImageManifest::build(&layers, &config, annotations);
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

/// A layer's bytes, refused unless they have the digest the manifest gives.
pub(crate) async fn pull_blob_checked(
    client: &Client,
    reference: &Reference,
    layer: &oci_client::manifest::OciDescriptor,
    uri: &str,
) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    client
        .pull_blob(reference, layer, &mut bytes)
        .await
        .with_context(|| format!("cannot pull the layer of {uri}"))?;
    let actual = format!("sha256:{:x}", Sha256::digest(&bytes));
    if actual != layer.digest {
        bail!(
            "{uri}: the layer's digest is {actual}, the manifest says {}",
            layer.digest
        );
    }
    Ok(bytes)
}

fn immutable(reference: &Reference, digest: &str) -> String {
    digest_uri(reference.resolve_registry(), reference.repository(), digest)
}

/// `registry://HOST/REPO@sha256:...`: the immutable reference to `digest`.
pub(crate) fn digest_uri(registry: &str, repository: &str, digest: &str) -> String {
    format!("registry://{registry}/{repository}@{digest}")
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
    let auth = docker_auth(reference.registry());
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
        let wasm = pull_blob_checked(&client, &reference, layer, uri).await?;
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

//! `reconcile-guard keygen`, `sign` and `verify`: key-based cosign signatures on
//! policy artifacts, stored and checked as kwctl and policy-server check them.
//!
//! The layout is cosign's, through the sigstore crate kwctl uses
//! (kubewarden/kubewarden-controller 3460bb71, crates/policy-fetcher/src/verify/mod.rs
//! `Verifier::verify`: `triangulate`, `trusted_signature_layers`, then
//! `cosign::verify_constraints` for each signature of the verification
//! config): a simple-signing payload naming the manifest digest, signed with
//! the key, pushed as the image `<repo>:sha256-<hex>.sig`. An SBOM is attached
//! as `cosign attach sbom` attaches one (sigstore/cosign
//! cmd/cosign/cli/attach/sbom.go `SBOMCmd`, v3.1.2): an OCI image at
//! `<repo>:sha256-<hex>.sbom` whose one layer is the document, media type
//! `text/spdx+json`; that image is signed like the module.

use std::collections::{BTreeMap, HashMap};

use anyhow::{bail, Context as _, Result};
use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use serde::Deserialize;
use sha2::{Digest as _, Sha256};
use sigstore::cosign::constraint::{AnnotationMarker, PrivateKeySigner};
use sigstore::cosign::verification_constraint::{
    AnnotationVerifier, PublicKeyVerifier, VerificationConstraint,
};
use sigstore::cosign::{ClientBuilder, Constraint as _, CosignCapabilities as _, SignatureLayer};
use sigstore::crypto::signing_key::SigStoreKeyPair;
use sigstore::crypto::SigningScheme;
use sigstore::registry::oci_reference::OciReference;
use sigstore::registry::{Auth, ClientConfig, ClientProtocol};
use zeroize::Zeroizing;

use crate::oci;

/// cosign's key password variable (`cosign generate-key-pair`, `cosign sign --key`).
pub const PASSWORD_VARIABLE: &str = "COSIGN_PASSWORD";

/// cosign's SBOM tag suffix and the media type of an SPDX JSON document.
pub const SBOM_TAG_SUFFIX: &str = "sbom";
pub const SPDX_JSON_MEDIA_TYPE: &str = "text/spdx+json";
const OCI_IMAGE_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";

/// The key password, as cosign takes it without a terminal: from `COSIGN_PASSWORD`
/// (empty is a valid password, unset is not).
pub fn password() -> Result<Zeroizing<Vec<u8>>> {
    match std::env::var_os(PASSWORD_VARIABLE) {
        Some(p) => Ok(Zeroizing::new(p.into_encoded_bytes())),
        None => bail!(
            "set {PASSWORD_VARIABLE} to the key's password (cosign's variable; it may be empty)"
        ),
    }
}

/// A new ECDSA P-256 key pair (cosign's default scheme): the private key
/// encrypted with `password` as cosign encrypts it (scrypt and NaCl secretbox,
/// PEM), and the public key as PEM.
pub fn generate_key_pair(password: &[u8]) -> Result<(Zeroizing<String>, String)> {
    let signer = SigningScheme::ECDSA_P256_SHA256_ASN1
        .create_signer()
        .context("cannot generate a key pair")?;
    let pair = signer.to_sigstore_keypair()?;
    Ok((
        pair.private_key_to_encrypted_pem(password)?,
        pair.public_key_to_pem()?,
    ))
}

/// A `registry://` reference as the sigstore crate takes it.
fn sigstore_reference(uri: &str) -> Result<OciReference> {
    let reference = oci::parse_reference(uri)?;
    reference
        .whole()
        .parse()
        .with_context(|| format!("{uri:?} is not a valid OCI reference"))
}

fn cosign_client(reference: &OciReference) -> Result<sigstore::cosign::Client> {
    let registry = reference.resolve_registry().to_string();
    let protocol = if oci::is_loopback(&registry) {
        ClientProtocol::HttpsExcept(vec![registry])
    } else {
        ClientProtocol::Https
    };
    Ok(ClientBuilder::default()
        .with_oci_client_config(ClientConfig {
            protocol,
            ..ClientConfig::default()
        })
        .build()?)
}

fn auth_for(reference: &OciReference) -> Auth {
    Auth::from(&oci::docker_auth(reference.registry()))
}

/// What `sign` did: the digests signed and where the signatures went.
#[derive(Debug)]
pub struct Signed {
    /// `registry://HOST/REPO@sha256:...` of the module.
    pub module: String,
    pub signature: String,
    /// The SBOM attachment and its signature, when one was attached.
    pub sbom: Option<(String, String)>,
}

/// Signs the manifest `uri` names (a tag is resolved to its digest first, and
/// the digest is what is signed), with `annotations` in the signed payload;
/// attaches `sbom` (SPDX JSON) as cosign does and signs it too.
pub fn sign(
    uri: &str,
    key_pem: &[u8],
    password: &[u8],
    annotations: &BTreeMap<String, String>,
    sbom: Option<&[u8]>,
) -> Result<Signed> {
    let pair = SigStoreKeyPair::from_encrypted_pem(key_pem, password)
        .context("cannot open the signing key (a cosign key and its password)")?;
    let reference = sigstore_reference(uri)?;
    let auth = auth_for(&reference);
    oci::runtime()?.block_on(async {
        let mut client = cosign_client(&reference)?;
        let signer = Signer {
            pair: &pair,
            annotations,
            auth: &auth,
        };
        let (digest, signature) = signer.sign(&mut client, &reference).await?;
        let sbom = match sbom {
            None => None,
            Some(document) => {
                let attached =
                    sigstore_reference(&attach_sbom(&reference, &digest, document).await?)?;
                let (sbom_digest, sbom_signature) = signer.sign(&mut client, &attached).await?;
                Some((digest_uri(&reference, &sbom_digest), sbom_signature))
            }
        };
        Ok(Signed {
            module: digest_uri(&reference, &digest),
            signature,
            sbom,
        })
    })
}

/// cosign's tag for an SBOM of `digest`: `sha256:<hex>` becomes `sha256-<hex>.sbom`.
fn sbom_tag(digest: &str) -> String {
    format!("{}.{SBOM_TAG_SUFFIX}", digest.replacen(':', "-", 1))
}

/// `digest` in `reference`'s repository.
fn pinned(reference: &OciReference, digest: &str) -> OciReference {
    OciReference::with_digest(
        reference.resolve_registry().to_string(),
        reference.repository().to_string(),
        digest.to_string(),
    )
}

fn digest_uri(reference: &OciReference, digest: &str) -> String {
    oci::digest_uri(reference.resolve_registry(), reference.repository(), digest)
}

struct Signer<'a> {
    pair: &'a SigStoreKeyPair,
    annotations: &'a BTreeMap<String, String>,
    auth: &'a Auth,
}

impl Signer<'_> {
    /// Resolves `signed` to its digest, signs that digest with the
    /// annotations and pushes the signature where cosign puts it. Returns the
    /// digest and the signature's reference.
    async fn sign(
        &self,
        client: &mut sigstore::cosign::Client,
        signed: &OciReference,
    ) -> Result<(String, String)> {
        let (signature_ref, digest) = client
            .triangulate(signed, self.auth)
            .await
            .with_context(|| format!("cannot resolve {} to a digest", signed.whole()))?;
        let mut layer = SignatureLayer::new_unsigned(signed, &digest)?;
        if !self.annotations.is_empty() {
            let marker = AnnotationMarker::new(
                self.annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<HashMap<_, _>>(),
            );
            marker.add_constraint(&mut layer)?;
        }
        let signer = PrivateKeySigner::new_with_signer(
            self.pair
                .to_sigstore_signer(&SigningScheme::ECDSA_P256_SHA256_ASN1)
                .context("the key is not an ECDSA P-256 key, cosign's default")?,
        );
        signer.add_constraint(&mut layer)?;
        client
            .push_signature(None, self.auth, &signature_ref, vec![layer])
            .await
            .with_context(|| format!("cannot push the signature to {}", signature_ref.whole()))?;
        Ok((digest, format!("registry://{}", signature_ref.whole())))
    }
}

/// `cosign attach sbom`: the document as the one layer of an OCI image
/// tagged `sha256-<hex>.sbom` beside the module. Returns its tag reference.
async fn attach_sbom(module: &OciReference, digest: &str, document: &[u8]) -> Result<String> {
    let uri = format!(
        "registry://{}/{}:{}",
        module.resolve_registry(),
        module.repository(),
        sbom_tag(digest)
    );
    let reference = oci::parse_reference(&uri)?;
    let layer_digest = format!("sha256:{:x}", Sha256::digest(document));
    let layers = vec![ImageLayer::new(
        document.to_vec(),
        SPDX_JSON_MEDIA_TYPE.into(),
        None,
    )];
    // A minimal image config, as go-containerregistry's empty image with one
    // uncompressed layer appended.
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "", "os": "", "config": {},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }))?;
    let config = Config::new(config, OCI_IMAGE_CONFIG_MEDIA_TYPE.into(), None);
    let manifest = OciImageManifest::build(&layers, &config, None);
    let client = oci::client_for(&reference);
    let auth = oci::docker_auth(reference.registry());
    client
        .push(&reference, &layers, config, &auth, Some(manifest))
        .await
        .with_context(|| format!("cannot attach the SBOM at {uri}"))?;
    Ok(uri)
}

/// kwctl's verification config (`--verification-config-path`), version v1:
/// crates/policy-fetcher/src/verify/config.rs `VerificationConfigV1` at 3460bb71.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerificationConfig {
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    #[serde(default)]
    pub all_of: Option<Vec<Signature>>,
    #[serde(default)]
    pub any_of: Option<AnyOf>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnyOf {
    #[serde(default = "one")]
    pub minimum_matches: u8,
    pub signatures: Vec<Signature>,
}

fn one() -> u8 {
    1
}

/// A signature the config requires. Only `pubKey` can be checked without
/// Fulcio and Rekor; the keyless kinds are read so that the refusal names them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind", deny_unknown_fields)]
pub enum Signature {
    PubKey {
        #[serde(default)]
        owner: Option<String>,
        key: String,
        #[serde(default)]
        annotations: Option<BTreeMap<String, String>>,
    },
    GenericIssuer {
        issuer: String,
        subject: serde_json::Value,
        #[serde(default)]
        annotations: Option<BTreeMap<String, String>>,
    },
    GithubAction {
        owner: String,
        #[serde(default)]
        repo: Option<String>,
        #[serde(default)]
        annotations: Option<BTreeMap<String, String>>,
    },
}

impl VerificationConfig {
    /// Reads a config file as kwctl does (`build_latest_verification_config`):
    /// `apiVersion: v1`, and at least one of `allOf` and `anyOf`.
    pub fn parse(text: &str) -> Result<Self> {
        let config: Self =
            serde_norway::from_str(text).context("not a valid verification config")?;
        if config.api_version != "v1" {
            bail!(
                "not a supported verification config version: {:?} (kwctl reads v1)",
                config.api_version
            );
        }
        if config.all_of.is_none() && config.any_of.is_none() {
            bail!("the verification config requires no signature: give allOf or anyOf");
        }
        Ok(config)
    }

    /// kwctl's `-k KEY -a KEY=VALUE`: every key must have signed, with every annotation.
    pub fn from_keys(keys: Vec<String>, annotations: &BTreeMap<String, String>) -> Result<Self> {
        if keys.is_empty() {
            bail!("give a verification config or at least one public key (-k)");
        }
        let annotations = (!annotations.is_empty()).then(|| annotations.clone());
        Ok(Self {
            api_version: "v1".into(),
            all_of: Some(
                keys.into_iter()
                    .map(|key| Signature::PubKey {
                        owner: None,
                        key,
                        annotations: annotations.clone(),
                    })
                    .collect(),
            ),
            any_of: None,
        })
    }
}

impl Signature {
    fn verifier(&self) -> Result<Vec<Box<dyn VerificationConstraint>>> {
        match self {
            Signature::PubKey {
                key, annotations, ..
            } => {
                let mut constraints: Vec<Box<dyn VerificationConstraint>> = vec![Box::new(
                    PublicKeyVerifier::try_from(key.as_bytes())
                        .context("cannot read a public key of the verification config")?,
                )];
                if let Some(annotations) = annotations {
                    constraints.push(Box::new(AnnotationVerifier {
                        annotations: annotations.clone(),
                    }));
                }
                Ok(constraints)
            }
            Signature::GenericIssuer { .. } | Signature::GithubAction { .. } => bail!(
                "keyless signatures (genericIssuer, githubAction) need Fulcio and Rekor; \
                 reconcile-guard verifies key-based signatures only (use kwctl verify for keyless ones)"
            ),
        }
    }

    fn describe(&self) -> String {
        match self {
            Signature::PubKey {
                owner, annotations, ..
            } => format!(
                "pubKey{}{}",
                owner.as_ref().map_or(String::new(), |o| format!(" of {o}")),
                annotations
                    .as_ref()
                    .map_or(String::new(), |a| format!(" with annotations {a:?}"))
            ),
            Signature::GenericIssuer { issuer, .. } => format!("genericIssuer {issuer}"),
            Signature::GithubAction { owner, .. } => format!("githubAction of {owner}"),
        }
    }
}

/// What `verify` checked.
#[derive(Debug)]
pub struct Verified {
    /// `registry://HOST/REPO@sha256:...` of the verified manifest.
    pub module: String,
    /// The SBOM attachment, verified with the same config, when asked for.
    pub sbom: Option<Vec<u8>>,
}

/// Verifies the signatures on the manifest `uri` names against `config`, as
/// kwctl's `Verifier::verify` does; with `sbom`, also that an SBOM is attached
/// and signed as the config requires, and returns it.
pub fn verify(uri: &str, config: &VerificationConfig, sbom: bool) -> Result<Verified> {
    let reference = sigstore_reference(uri)?;
    let auth = auth_for(&reference);
    oci::runtime()?.block_on(async {
        let mut client = cosign_client(&reference)?;
        let (_, digest) = client
            .triangulate(&reference, &auth)
            .await
            .with_context(|| format!("cannot resolve {uri} to a digest"))?;
        check(&mut client, &auth, &pinned(&reference, &digest), config)
            .await
            .with_context(|| format!("{uri} ({digest}) is not signed as required"))?;
        let sbom = if sbom {
            let attached = OciReference::with_tag(
                reference.resolve_registry().to_string(),
                reference.repository().to_string(),
                sbom_tag(&digest),
            );
            let (_, sbom_digest) = client
                .triangulate(&attached, &auth)
                .await
                .with_context(|| format!("{uri} has no SBOM attached ({})", attached.whole()))?;
            check(
                &mut client,
                &auth,
                &pinned(&reference, &sbom_digest),
                config,
            )
            .await
            .with_context(|| {
                format!("the SBOM of {uri} ({sbom_digest}) is not signed as required")
            })?;
            Some(pull_sbom(&digest_uri(&reference, &sbom_digest)).await?)
        } else {
            None
        };
        Ok(Verified {
            module: digest_uri(&reference, &digest),
            sbom,
        })
    })
}

/// kwctl's `verify_signatures_against_config`: every `allOf` signature and at
/// least `minimumMatches` of `anyOf` must be satisfied by a signature layer.
async fn check(
    client: &mut sigstore::cosign::Client,
    auth: &Auth,
    pinned: &OciReference,
    config: &VerificationConfig,
) -> Result<()> {
    let layers = client
        .trusted_signature_layers(auth, pinned)
        .await
        .context("cannot read its signatures")?;
    if layers.is_empty() {
        bail!("no signature found");
    }
    let satisfied = |signature: &Signature| -> Result<bool> {
        let constraints = signature.verifier()?;
        Ok(layers
            .iter()
            .any(|layer| constraints.iter().all(|c| c.verify(layer).unwrap_or(false))))
    };
    let mut missing = Vec::new();
    for signature in config.all_of.iter().flatten() {
        if !satisfied(signature)? {
            missing.push(signature.describe());
        }
    }
    if !missing.is_empty() {
        bail!(
            "missing signatures: the following constraints were not satisfied: {}",
            missing.join("; ")
        );
    }
    if let Some(any_of) = &config.any_of {
        let mut matches = 0usize;
        for signature in &any_of.signatures {
            if satisfied(signature)? {
                matches = matches.saturating_add(1);
            }
        }
        if matches < usize::from(any_of.minimum_matches) {
            bail!(
                "{matches} of the anyOf signatures are satisfied, {} required",
                any_of.minimum_matches
            );
        }
    }
    Ok(())
}

async fn pull_sbom(uri: &str) -> Result<Vec<u8>> {
    let reference = oci::parse_reference(uri)?;
    let client = oci::client_for(&reference);
    let auth = oci::docker_auth(reference.registry());
    let (manifest, _) = client
        .pull_image_manifest(&reference, &auth)
        .await
        .with_context(|| format!("cannot pull the SBOM manifest {uri}"))?;
    let Some(layer) = manifest
        .layers
        .iter()
        .find(|l| l.media_type == SPDX_JSON_MEDIA_TYPE)
    else {
        bail!("{uri} has no {SPDX_JSON_MEDIA_TYPE} layer");
    };
    let document = oci::pull_blob_checked(&client, &reference, layer, uri).await?;
    Ok(document)
}

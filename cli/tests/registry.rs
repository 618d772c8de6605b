//! A round trip through a real OCI registry (Debian's docker-registry, on
//! 127.0.0.1 and a free port, storage in a temporary folder): push every
//! policy in dist/, pull it back byte-identical, check the manifest as kwctl
//! writes it, and evaluate a corpus case with each pulled module. Signed
//! modules and SBOMs checked by our verify, the real kwctl and policy-server.
//! And, ignored unless `make release-dry-run` asks for it, the release
//! workflow's publishing steps against the same registry.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

#[path = "../../host-test/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use conformance::expect;
use devtools::distribution::Sources;
use host_test::capabilities::{Grants, Source};
use host_test::harness::{Evaluation, Policy};
use host_test::host::Limits;
use reconcile_guard::oci::{self, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE};
use reconcile_guard::signing::{self, VerificationConfig};

use common::{root, Registry};

/// The annotation every signature here carries, as `kwctl verify -a` requires it.
const RELEASE: &[&str] = &["release=v0.1.0"];

#[test]
fn policies_round_trip_through_a_real_registry() {
    let registry = Registry::start("round-trip", None);
    let root = common::root();
    for entry in catalog::POLICIES {
        let wasm = std::fs::read(root.join("dist").join(format!("{}.wasm", entry.name)))
            .expect("run `make build` first");
        let uri = format!(
            "registry://{}/reconcile-guard/{}:v0.1.0",
            registry.addr, entry.name
        );
        let pushed = oci::push(&wasm, &uri).unwrap();
        assert!(
            pushed.starts_with(&format!(
                "registry://{}/reconcile-guard/{}@sha256:",
                registry.addr, entry.name
            )),
            "{pushed}"
        );

        let pulled = oci::pull(&uri).unwrap();
        assert_eq!(pulled.wasm, wasm, "{}: pulled module differs", entry.name);
        assert_eq!(pulled.immutable, pushed);
        assert_eq!(oci::pull(&pushed).unwrap().wasm, wasm, "pull by digest");
        let m = &pulled.manifest;
        assert_eq!(m.config.media_type, WASM_CONFIG_MEDIA_TYPE);
        assert_eq!(m.layers.len(), 1);
        assert_eq!(m.layers[0].media_type, WASM_LAYER_MEDIA_TYPE);
        let annotations = m.annotations.clone().unwrap_or_default();
        assert!(
            annotations.contains_key("io.kubewarden.policy.title"),
            "{annotations:?}"
        );
        assert_eq!(annotations["io.kubewarden.policy.version"], "0.1.0");
        assert_eq!(
            annotations["org.opencontainers.image.source"],
            annotations["io.kubewarden.policy.source"]
        );
        assert!(
            !annotations.contains_key("io.kubewarden.policy.usage"),
            "multi-line values stay out"
        );

        // The pulled module evaluates a corpus case exactly as expected.
        let policy = Policy::from_bytes(entry.name.to_string(), &pulled.wasm).unwrap();
        let cases = conformance::load_cases(&root.join("tests/cases").join(entry.name)).unwrap();
        let case = cases.first().expect("corpus cases");
        let eval = Evaluation {
            now: case.now,
            limits: Limits::default(),
            source: Source::Recorded(case.context.clone().into()),
            grants: Grants::all_capabilities(case.granted_resources(entry).unwrap()),
            server: case.server_options(entry).unwrap(),
        };
        let (response, _) = policy.evaluate(&case.admission_request(), &case.settings, &eval);
        let response = response.unwrap();
        let problems = expect::check(&case.expect, &response);
        assert!(problems.is_empty(), "{}: {problems:?}", case.id);
    }
}

/// Boots the real policy-server on `uri` requiring `verification`: Ok once
/// it is ready, Err with its log when it exits first.
fn policy_server_boots(
    server: &std::path::Path,
    dir: &std::path::Path,
    uri: &str,
    verification: &std::path::Path,
) -> Result<(), String> {
    let work = dir.join(format!("policy-server-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let policies = work.join("policies.yml");
    std::fs::write(
        &policies,
        format!("flux-suspend:\n  module: {uri}\n  policyMode: protect\n  allowedToMutate: true\n  settings: {{}}\n"),
    )
    .unwrap();
    let free = || {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let (port, readiness) = (free(), free());
    let log = work.join("policy-server.log");
    let mut child = Command::new(server)
        .current_dir(&work)
        .env("RUST_BACKTRACE", "0")
        .arg("--policies")
        .arg(&policies)
        .arg("--policies-download-dir")
        .arg(&work)
        .args(["--addr", "127.0.0.1", "--port", &port.to_string()])
        .args(["--readiness-probe-port", &readiness.to_string()])
        .args(["--ignore-kubernetes-connection-failure", "--log-no-color"])
        .arg("--verification-path")
        .arg(verification)
        .arg("--sources-path")
        .arg(common::insecure_sources(dir, uri))
        .arg("--sigstore-trust-config")
        .arg(common::offline_trust_config(dir))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let outcome = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Err(format!(
                "exited ({status}): {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            ));
        }
        if Instant::now() > deadline {
            break Err("not ready after 120 s".into());
        }
        if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", readiness)) {
            use std::io::{Read as _, Write as _};
            let _ = stream.write_all(b"GET /readiness HTTP/1.0\r\n\r\n");
            let mut answer = String::new();
            let _ = stream.read_to_string(&mut answer);
            if answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200") {
                break Ok(());
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = child.kill();
    let _ = child.wait();
    outcome
}

#[expect(
    clippy::too_many_lines,
    reason = "one scenario against one registry: each step uses what the one before pushed"
)]
#[test]
fn signed_modules_and_their_sboms_verify_and_tampering_does_not() {
    use devtools::sbom;
    use reconcile_guard::signing;
    let registry = Registry::start("signing", None);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = registry.dir.join("keys");
    std::fs::create_dir_all(&dir).unwrap();
    let write_pair = |name: &str| {
        let (private, public) = signing::generate_key_pair(b"correct horse").unwrap();
        std::fs::write(dir.join(format!("{name}.key")), private.as_bytes()).unwrap();
        std::fs::write(dir.join(format!("{name}.pub")), &public).unwrap();
        (private, public)
    };
    let (private, public) = write_pair("cosign");
    let (_, other_public) = write_pair("other");

    let wasm = std::fs::read(root.join("dist/flux-suspend.wasm")).expect("run `make build` first");
    let uri = format!(
        "registry://{}/reconcile-guard/flux-suspend:v0.1.0",
        registry.addr
    );
    let pushed = oci::push(&wasm, &uri).unwrap();
    let graph = sbom::graph(&root, "flux-suspend", &[]).unwrap();
    let document =
        sbom::document(&graph, &wasm, "flux-suspend.wasm", "2026-11-22T00:00:00Z").unwrap();
    let document = serde_json::to_vec_pretty(&document).unwrap();
    let annotations = [("release".to_string(), "v0.1.0".to_string())].into();

    // A wrong password opens nothing.
    assert!(signing::sign(&uri, private.as_bytes(), b"wrong", &annotations, None).is_err());
    let signed = signing::sign(
        &uri,
        private.as_bytes(),
        b"correct horse",
        &annotations,
        Some(&document),
    )
    .unwrap();
    assert_eq!(signed.module, pushed);
    let digest = pushed.rsplit_once('@').unwrap().1;
    assert!(signed
        .signature
        .ends_with(&format!(":{}.sig", digest.replace(':', "-"))));

    // Ours: the right key and annotation verify, and give back the SBOM.
    let config =
        signing::VerificationConfig::from_keys(vec![public.clone()], &annotations).unwrap();
    let verified = signing::verify(&uri, &config, true).unwrap();
    assert_eq!(verified.module, pushed);
    assert_eq!(verified.sbom.as_deref(), Some(document.as_slice()));
    let attached: serde_json::Value = serde_json::from_slice(&document).unwrap();
    let module_digest = attached["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "flux-suspend")
        .unwrap()["checksums"][0]["checksumValue"]
        .clone();
    let pulled = oci::pull(&uri).unwrap();
    assert_eq!(
        format!("sha256:{}", module_digest.as_str().unwrap()),
        pulled.manifest.layers[0].digest,
        "the SBOM names the pushed module"
    );

    // A wrong key, or a missing annotation, is refused with what is missing.
    let wrong = signing::VerificationConfig::from_keys(vec![other_public], &annotations).unwrap();
    let err = format!("{:#}", signing::verify(&uri, &wrong, false).unwrap_err());
    assert!(err.contains("missing signatures"), "{err}");
    let other_annotation = [("release".to_string(), "v9".to_string())].into();
    let wrong =
        signing::VerificationConfig::from_keys(vec![public.clone()], &other_annotation).unwrap();
    assert!(signing::verify(&uri, &wrong, false).is_err());

    let keyless = signing::VerificationConfig::parse(
        "apiVersion: v1\nallOf:\n  - kind: githubAction\n    owner: reconcile-guard\n",
    )
    .unwrap();
    let err = format!("{:#}", signing::verify(&uri, &keyless, false).unwrap_err());
    assert!(err.contains("keyless"), "{err}");

    // A verification config as policy-server and kwctl read it.
    let verification = dir.join("verification.yml");
    std::fs::write(
        &verification,
        format!(
            "apiVersion: v1\nallOf:\n  - kind: pubKey\n    owner: release team\n    key: |\n{}    annotations:\n      release: v0.1.0\n",
            public.lines().map(|l| format!("      {l}\n")).collect::<String>()
        ),
    )
    .unwrap();
    let config =
        signing::VerificationConfig::parse(&std::fs::read_to_string(&verification).unwrap())
            .unwrap();
    signing::verify(&uri, &config, true).unwrap();
    let server = common::engine(
        "policy-server",
        "POLICY_SERVER",
        "policy-server --verification-path on the signed module",
    );
    if let Some(server) = &server {
        policy_server_boots(server, &dir, &uri, &verification)
            .expect("the real policy-server refuses our signed module");
    }

    let kwctl = common::engine("kwctl", "KWCTL", "kwctl verify on the signed module");
    if let Some(kwctl) = &kwctl {
        let (ok, out) = common::kwctl_verify(kwctl, &dir, &dir.join("cosign.pub"), RELEASE, &uri);
        assert!(ok, "the real kwctl refuses our signature: {out}");
        assert!(out.contains("Policy successfully verified"), "{out}");
        let (ok, out) = common::kwctl_verify(kwctl, &dir, &dir.join("other.pub"), RELEASE, &uri);
        assert!(
            !ok && out.contains("Image verification failed: missing signatures"),
            "{out}"
        );
    }

    // Tampering: a changed module pushed under the same tag has no signature.
    let mut tampered = wasm.clone();
    tampered.extend_from_slice(&[0, 7, 6, b't', b'a', b'm', b'p', b'e', b'r']);
    let tampered_ref = oci::push(&tampered, &uri).unwrap();
    assert_ne!(tampered_ref, pushed);
    let config = signing::VerificationConfig::from_keys(vec![public], &annotations).unwrap();
    let err = format!("{:#}", signing::verify(&uri, &config, false).unwrap_err());
    assert!(err.contains("no signature found"), "{err}");
    // The signed digest still verifies: the signature names it, not the tag.
    signing::verify(&pushed, &config, false).unwrap();
    if let Some(kwctl) = &kwctl {
        let (ok, out) = common::kwctl_verify(kwctl, &dir, &dir.join("cosign.pub"), RELEASE, &uri);
        assert!(!ok, "the real kwctl accepts a tampered module: {out}");
    }
    if let Some(server) = &server {
        let err = policy_server_boots(server, &dir, &uri, &verification).unwrap_err();
        assert!(err.contains("cannot be verified"), "{err}");
    }

    // The SBOM is valid SPDX, as the SPDX project's own validator reads it.
    let sbom_file = dir.join("flux-suspend.spdx.json");
    std::fs::write(&sbom_file, &document).unwrap();
    let out = Command::new("pyspdxtools")
        .arg("-i")
        .arg(&sbom_file)
        .output()
        .expect("pyspdxtools is not installed: `make test-setup` installs spdx-tools");
    assert!(
        out.status.success(),
        "invalid SPDX: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The throwaway key's password in the release dry run.
const PASSWORD: &str = "release-dry-run";

/// `make release-dry-run`: the release workflow's publishing steps
/// (`.github/release/publish.sh`, the script `.github/workflows/release.yml`
/// runs) against a local docker-registry, signing with a cosign key instead
/// of keylessly; then what was published is checked as a user checks it:
/// each module pulled back byte-identical, its signature verified by
/// `reconcile-guard verify` and, where installed, the real `kwctl verify`, and a
/// signature by another key refused. Ignored by `cargo test` (it pushes
/// every module and writes the release assets under target/); the make
/// target runs it.
#[expect(
    clippy::too_many_lines,
    reason = "the release's steps in order against one registry"
)]
#[test]
#[ignore = "`make release-dry-run` runs it"]
fn release_dry_run() {
    let registry = Registry::start("release-dry-run", None);
    let dir = common::scratch("release-dry-run", "work");
    let assets = dir.join("assets");
    for (prefix, password) in [("cosign", PASSWORD), ("other", "other")] {
        let (private, public) = signing::generate_key_pair(password.as_bytes()).unwrap();
        std::fs::write(dir.join(format!("{prefix}.key")), private.as_bytes()).unwrap();
        std::fs::write(dir.join(format!("{prefix}.pub")), public).unwrap();
    }
    let names: Vec<&str> = catalog::names().collect();
    let version = Sources::load(&root(), names[0]).unwrap().version;
    let repository = format!("{}/reconcile-guard/policies", registry.addr);

    let status = Command::new("bash")
        .current_dir(root())
        .arg(".github/release/publish.sh")
        .args(&names)
        .env("REGISTRY", &repository)
        .env("VERSION", &version)
        .env("ASSETS", &assets)
        .env("SIGNING", "key")
        .env("COSIGN_KEY", dir.join("cosign.key"))
        .env("COSIGN_PASSWORD", PASSWORD)
        .env("CLI", env!("CARGO_BIN_EXE_reconcile-guard"))
        .status()
        .unwrap();
    assert!(status.success(), "publish.sh failed");

    let published = std::fs::read_to_string(assets.join("modules.txt")).unwrap();
    assert_eq!(published.lines().count(), names.len(), "{published}");
    let annotation = format!("release=v{version}");
    let required: BTreeMap<String, String> =
        [("release".to_string(), format!("v{version}"))].into();
    let config = |key: &str| {
        let public = std::fs::read_to_string(dir.join(key)).unwrap();
        VerificationConfig::from_keys(vec![public], &required).unwrap()
    };
    let kwctl = common::engine("kwctl", "KWCTL", "kwctl verify on the released modules");
    for name in &names {
        let uri = format!("registry://{repository}/{name}:v{version}");
        let wasm = std::fs::read(root().join("dist").join(format!("{name}.wasm"))).unwrap();
        let pulled = oci::pull(&uri).unwrap();
        assert_eq!(
            pulled.wasm, wasm,
            "{name}: the registry holds another module"
        );
        assert!(
            published.contains(&format!("{name} {}", pulled.immutable)),
            "{name}: {published}"
        );
        let verified = signing::verify(&uri, &config("cosign.pub"), false).unwrap();
        assert_eq!(verified.module, pulled.immutable);
        assert!(
            signing::verify(&uri, &config("other.pub"), false).is_err(),
            "{name}: accepted for a key that did not sign it"
        );
        if let Some(kwctl) = &kwctl {
            let (ok, out) =
                common::kwctl_verify(kwctl, &dir, &dir.join("cosign.pub"), &[&annotation], &uri);
            assert!(ok, "{name}: the real kwctl refuses the release: {out}");
            let (ok, out) =
                common::kwctl_verify(kwctl, &dir, &dir.join("other.pub"), &[&annotation], &uri);
            assert!(!ok, "{name}: the real kwctl accepts another key: {out}");
        }
        for asset in [format!("{name}.wasm"), format!("{name}.spdx.json")] {
            assert_eq!(
                std::fs::read(assets.join(&asset)).unwrap(),
                std::fs::read(root().join("dist").join(&asset)).unwrap(),
                "{asset}"
            );
        }
    }

    // Every asset is in SHA256SUMS, with the digest sha256sum checks.
    let sums = std::fs::read_to_string(assets.join("SHA256SUMS")).unwrap();
    let listed = sums.lines().count();
    let files = std::fs::read_dir(&assets).unwrap().count() - 1;
    assert_eq!(listed, files, "{sums}");
    assert!(sums.contains("reconcile-guard-linux-"), "{sums}");
    let check = Command::new("sha256sum")
        .current_dir(&assets)
        .args(["--check", "--quiet", "SHA256SUMS"])
        .status()
        .unwrap();
    assert!(check.success());
    eprintln!(
        "release v{version}: {} modules published, signed and verified on {}; assets in {}",
        names.len(),
        registry.addr,
        assets.display()
    );
}

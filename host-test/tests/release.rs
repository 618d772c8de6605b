//! `make release-dry-run`: the release workflow's publishing steps
//! (`.github/release/publish.sh`, the script `.github/workflows/release.yml`
//! runs) against a local docker-registry, signing with a cosign key instead
//! of keylessly; then what was published is checked as a user checks it:
//! each module pulled back byte-identical, its signature verified by
//! `host-test verify` and, where installed, the real `kwctl verify`, and a
//! signature by another key refused. Ignored by `cargo test` (it pushes
//! every module and writes the release assets under target/); the make
//! target runs it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

mod common;

use std::collections::BTreeMap;
use std::process::Command;

use host_test::distribution::Sources;
use host_test::oci;
use host_test::signing::{self, VerificationConfig};

use common::{root, Registry};

const PASSWORD: &str = "release-dry-run";

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
        .env("HOST_TEST", env!("CARGO_BIN_EXE_host-test"))
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
    assert!(sums.contains("host-test-linux-"), "{sums}");
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

//! A round trip through a real OCI registry (Debian's docker-registry, on
//! 127.0.0.1 and a free port, storage in a temporary folder): push every
//! policy in dist/, pull it back byte-identical, check the manifest as kwctl
//! writes it, and evaluate a corpus case with each pulled module.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use conformance::expect;
use host_test::capabilities::{Grants, Source};
use host_test::harness::{Evaluation, Policy};
use host_test::host::Limits;
use host_test::oci::{self, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE};

struct Registry {
    child: Child,
    dir: PathBuf,
    addr: String,
}

impl Registry {
    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let dir = std::env::temp_dir().join(format!(
            "reconcile-guard-registry-{}-{port}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n",
                dir.join("data").display()
            ),
        )
        .unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry is not installed: `make test` installs it");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "the registry did not start on {addr}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, dir, addr }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn policies_round_trip_through_a_real_registry() {
    let registry = Registry::start();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    for entry in host_test::POLICIES {
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
            source: Source::Recorded(case.context.clone()),
            grants: Grants::all_capabilities(case.granted_resources(entry.name).unwrap()),
            server: case.server_options(entry.name).unwrap(),
        };
        let (response, _) = policy.evaluate(&case.admission_request(), &case.settings, &eval);
        let response = response.unwrap();
        let problems = expect::check(&case.expect, &response);
        assert!(problems.is_empty(), "{}: {problems:?}", case.id);
    }
}

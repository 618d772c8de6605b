//! What the test binaries of host-test, reconcile-guard (cli/), devtools and
//! guard-fuzz need: the repository's places, the test module, a scratch
//! folder, the real engines, a real OCI registry. The other crates include
//! this file by its path; each binary uses part of it.

#![allow(dead_code, reason = "each test binary uses a different part")]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// cargo's target folder (`CARGO_TARGET_DIR`, else `target/`).
pub fn target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// An empty folder of its own under the target folder.
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let dir = target().join(group).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The raw test policy module, built (`make build` builds it; a test that
/// needs it fails with that advice where it is not).
pub fn test_module_path() -> PathBuf {
    let path = target().join("wasm32-wasip1/release/test_policy.wasm");
    assert!(path.exists(), "{}: run `make build` first", path.display());
    path
}

/// The raw test policy module's bytes.
pub fn test_module() -> Vec<u8> {
    let path = test_module_path();
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A real Kubewarden engine, where one is installed (`KWCTL` /
/// `POLICY_SERVER`, then PATH); where none is, the check named `what` is
/// skipped with a line saying so.
pub fn engine(tool: &str, variable: &str, what: &str) -> Option<PathBuf> {
    use host_test::locate::{self, Found};
    // A variable naming no file is a mistake to report, not a reason to skip.
    match locate::engine(tool, variable).unwrap_or_else(|e| panic!("{e}")) {
        Found::At(path) => Some(path),
        Found::Absent(reason) => {
            skipped(what, &reason);
            None
        }
    }
}

/// Runs the command (spawned, not yet started) with `stdin` written to it:
/// its exit code, stdout and stderr.
pub fn run_with_stdin(command: &mut Command, stdin: &str) -> (i32, String, String) {
    use std::io::Write as _;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Says that a check was skipped and why, on the test process' own stderr:
/// libtest captures `println!` and `eprintln!` of passing tests, and a skip
/// must show in `make test`'s output.
pub fn skipped(what: &str, reason: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "skipped: {what}: {reason}");
}

/// Debian's docker-registry on 127.0.0.1 and a free port, storage in a
/// temporary folder, optionally behind htpasswd authentication; stopped
/// and removed when dropped.
///
/// The port is found by binding port 0 and letting it go, so a registry
/// started by a test running beside this one may be handed the same port;
/// the later one then exits ("bind: address already in use", Debian's
/// docker-registry 2.8.2), and an open port proves nothing. So the registry
/// is ready only when it answers `GET /v2/` with its own `X-Registry-Token`
/// header: `App.dispatcher` adds the configured `http.headers` to every
/// response, before authentication (distribution/distribution,
/// registry/handlers/app.go, at 01c6f40b). A registry that exits is started
/// again on another port.
pub struct Registry {
    child: Child,
    /// Its configuration and storage; removed with it.
    pub dir: PathBuf,
    pub addr: String,
}

impl Registry {
    pub fn start(name: &str, htpasswd: Option<&str>) -> Self {
        const ATTEMPTS: usize = 5;
        for _ in 0..ATTEMPTS {
            if let Some(registry) = Self::try_start(name, htpasswd) {
                return registry;
            }
        }
        panic!("docker-registry exited {ATTEMPTS} times on start (ports taken?)")
    }

    /// One start on a fresh port: `None` when the registry exits before
    /// answering as itself.
    fn try_start(name: &str, htpasswd: Option<&str>) -> Option<Self> {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let token = format!("{name}-{}-{port}", std::process::id());
        let dir = std::env::temp_dir().join(format!("reconcile-guard-registry-{token}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
             http:\n  addr: {addr}\n  headers:\n    X-Registry-Token: [\"{token}\"]\n",
            dir.join("data").display()
        );
        if let Some(htpasswd) = htpasswd {
            std::fs::write(dir.join("htpasswd"), htpasswd).unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: test\n    path: {}\n",
                dir.join("htpasswd").display()
            ));
        }
        let config_path = dir.join("config.yml");
        std::fs::write(&config_path, config).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry is not installed: `make test` installs it");
        // Dropped on every way out, so an exited or stray child is reaped.
        let mut registry = Self { child, dir, addr };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if registry.child.try_wait().unwrap().is_some() {
                return None;
            }
            if answers_as(&registry.addr, &token) {
                return Some(registry);
            }
            assert!(
                Instant::now() < deadline,
                "the registry did not start on {}",
                registry.addr
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Whether the server on `addr` answers `GET /v2/` with `X-Registry-Token: token`.
fn answers_as(addr: &str, token: &str) -> bool {
    use std::io::{Read as _, Write as _};
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET /v2/ HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response);
    let head = response.split("\r\n\r\n").next().unwrap_or_default();
    head.lines().any(|line| {
        line.split_once(':').is_some_and(|(name, value)| {
            name.eq_ignore_ascii_case("x-registry-token") && value.trim() == token
        })
    })
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A kwctl sources file that lets it reach `uri`'s registry over plain HTTP.
pub fn insecure_sources(dir: &std::path::Path, uri: &str) -> PathBuf {
    let sources = dir.join("sources.yml");
    let registry = uri
        .trim_start_matches("registry://")
        .split('/')
        .next()
        .unwrap();
    std::fs::write(&sources, format!("insecure_sources: [\"{registry}\"]\n")).unwrap();
    sources
}

/// A Sigstore trust config for kwctl without the internet: no Rekor, no CT
/// log, and a throwaway CA as the Fulcio root (kwctl's sigstore 0.13 refuses
/// a trust root without one, "Fulcio certificates not found"). Key-based
/// verification uses none of them.
pub fn offline_trust_config(dir: &std::path::Path) -> PathBuf {
    let der = dir.join("placeholder-ca.der");
    let status = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
        ])
        .arg("-keyout")
        .arg(dir.join("placeholder-ca.key"))
        .args([
            "-subj",
            "/CN=placeholder",
            "-days",
            "3650",
            "-outform",
            "DER",
            "-out",
        ])
        .arg(&der)
        .stderr(Stdio::null())
        .status()
        .expect("openssl is not installed: `make test-setup` installs it");
    assert!(status.success());
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::STANDARD.encode(std::fs::read(&der).unwrap());
    let config = serde_json::json!({
        "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
        "trustedRoot": {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [], "ctlogs": [], "timestampAuthorities": [],
            "certificateAuthorities": [{
                "subject": {"organization": "placeholder", "commonName": "placeholder"},
                "uri": "https://fulcio.invalid",
                "certChain": {"certificates": [{"rawBytes": raw}]},
                "validFor": {"start": "2020-01-01T00:00:00Z"},
            }],
        },
    });
    let path = dir.join("trust-config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// `kwctl verify -k KEY [-a K=V].. URI` against a local registry: (success, output).
pub fn kwctl_verify(
    kwctl: &std::path::Path,
    dir: &std::path::Path,
    key: &std::path::Path,
    annotations: &[&str],
    uri: &str,
) -> (bool, String) {
    let sources = insecure_sources(dir, uri);
    let out = Command::new(kwctl)
        .env("HOME", dir.join("home"))
        .env("RUST_BACKTRACE", "0")
        .env("NO_COLOR", "1")
        .arg("verify")
        .arg("--sources-path")
        .arg(&sources)
        .arg("--sigstore-trust-config")
        .arg(offline_trust_config(dir))
        .arg("-k")
        .arg(key)
        .args(annotations.iter().flat_map(|a| ["-a", a]))
        .arg(uri)
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

//! What several of host-test's test binaries need: the repository's places,
//! a scratch folder, the real engines, a real OCI registry. Each binary uses
//! part of it.

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

/// The raw test policy module (`make build` builds it).
pub fn test_module_path() -> PathBuf {
    target().join("wasm32-wasip1/release/test_policy.wasm")
}

/// A real Kubewarden engine, where one is installed (`KWCTL` /
/// `POLICY_SERVER`, then PATH); where none is, the check named `what` is
/// skipped with a line saying so.
pub fn engine(tool: &str, variable: &str, what: &str) -> Option<PathBuf> {
    use host_test::engines::locate::{self, Found};
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
pub struct Registry {
    child: Child,
    /// Its configuration and storage; removed with it.
    pub dir: PathBuf,
    pub addr: String,
}

impl Registry {
    pub fn start(name: &str, htpasswd: Option<&str>) -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let dir = std::env::temp_dir().join(format!(
            "reconcile-guard-registry-{name}-{}-{port}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n",
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

//! The `reconcile-guard` command line, as users and `make` call it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

#[path = "../../host-test/tests/common/mod.rs"]
mod common;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

/// The test module, annotated as policy-server requires (it refuses modules
/// without a protocol version), through the CLI's own `annotate`.
fn annotated_test_module() -> PathBuf {
    let raw = common::test_module_path();
    let dir = common::target().join("cli-tests");
    std::fs::create_dir_all(&dir).unwrap();
    // Files of their own per test thread, so that parallel tests never read
    // a half-written metadata file or module.
    let thread = format!("{:?}", std::thread::current().id()).replace(['(', ')'], "");
    let metadata = dir.join(format!("metadata-{thread}.yml"));
    std::fs::write(&metadata, "rules: []\nmutating: true\n").unwrap();
    let out = dir
        .join(format!("test_policy-{thread}.wasm"))
        .to_string_lossy()
        .into_owned();
    let status = Command::new(env!("CARGO_BIN_EXE_reconcile-guard"))
        .args([
            "annotate",
            "-m",
            metadata.to_str().unwrap(),
            "-o",
            &out,
            raw.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success(), "annotate {}", raw.display());
    PathBuf::from(out)
}

fn cli(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_reconcile-guard"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The command may exit before it reads stdin (invalid settings): a
    // closed pipe is then expected, not a failure.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const REVIEW_YAML: &str = r#"
apiVersion: admission.k8s.io/v1
kind: AdmissionReview
request:
  uid: abc
  kind: {group: "", version: v1, kind: ConfigMap}
  resource: {group: "", version: v1, resource: configmaps}
  operation: CREATE
  userInfo: {username: alice}
  object: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}
"#;

#[test]
fn run_prints_one_admission_response_line_and_exits_zero_when_refused() {
    let module = annotated_test_module();
    let (code, out, err) = cli(
        &[
            "run",
            "-r",
            "-",
            "--settings-json",
            r#"{"behaviour":"deny"}"#,
            module.to_str().unwrap(),
        ],
        REVIEW_YAML,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    let response: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(response["uid"], "abc");
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 403);
}

#[test]
fn run_pins_the_clock_with_now() {
    let module = annotated_test_module();
    let (code, out, err) = cli(
        &[
            "run",
            "-r",
            "-",
            "--now",
            "2026-11-20T10:00:00Z",
            "--settings-json",
            r#"{"behaviour":"clock"}"#,
            module.to_str().unwrap(),
        ],
        REVIEW_YAML,
    );
    assert_eq!(code, 0, "{err}");
    let response: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(response["status"]["message"], "1795168800");
}

#[test]
fn run_fails_clearly_on_invalid_settings_malformed_requests_and_bad_modules() {
    let module = annotated_test_module();
    let module = module.to_str().unwrap();
    let (code, out, err) = cli(
        &[
            "run",
            "-r",
            "-",
            "--settings-json",
            r#"{"behaviour":"invalid-settings"}"#,
            module,
        ],
        REVIEW_YAML,
    );
    assert_ne!(code, 0);
    assert!(out.is_empty());
    assert!(
        err.contains("behaviour: invalid-settings is refused"),
        "{err}"
    );

    let (code, _, err) = cli(&["run", "-r", "-", module], "[1, 2");
    assert_ne!(code, 0);
    assert!(err.contains("neither JSON nor YAML"), "{err}");

    let (code, _, err) = cli(&["run", "-r", "-", "Cargo.toml"], REVIEW_YAML);
    assert_ne!(code, 0);
    assert!(err.contains("not a loadable WebAssembly module"), "{err}");
}

/// `--help` lists the user commands, each with its one-line description, and
/// none of the developer tools' (they are `devtools`').
#[test]
fn help_lists_the_user_commands_only() {
    let (code, out, err) = cli(&["--help"], "");
    assert_eq!(code, 0, "{err}");
    let listed: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        listed,
        ["check", "run", "annotate", "push", "pull", "keygen", "sign", "verify", "help"],
        "{out}"
    );
    for line in out.lines().skip_while(|l| *l != "Commands:").skip(1) {
        assert!(line.len() <= 100, "not one line: {line:?}");
    }
    for developer in [
        "replay",
        "stories",
        "conformance",
        "bench",
        "sizes",
        "scaffold",
        "sbom",
    ] {
        assert!(
            !out.lines().any(|l| l.trim_start().starts_with(developer)),
            "{developer} is a developer command: {out}"
        );
        let (code, _, err) = cli(&[developer], "");
        assert_eq!(code, 2, "{developer}: {err}");
        assert!(
            err.contains("unrecognized subcommand"),
            "{developer}: {err}"
        );
    }
}

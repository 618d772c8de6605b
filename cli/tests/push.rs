//! `reconcile-guard push` as kwctl pushes (kubewarden/kubewarden-controller 3460bb71):
//! the manifest annotations of crates/kwctl/src/push.rs `build_oci_annotations`
//! (multi-line values dropped, values trimmed, `org.opencontainers.image.source`
//! from `io.kubewarden.policy.source` unless set), and the credentials of
//! crates/policy-fetcher/src/registry/mod.rs `Registry::auth` (the
//! `docker_credential` crate: `auths`, `credHelpers`, `credsStore`), proved
//! against Debian's docker-registry with htpasswd authentication and a
//! credential helper script on PATH.

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
use std::path::Path;
use std::process::Command;

use host_test::metadata::{self, Metadata};
use reconcile_guard::oci;

use common::{test_module, Registry};

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

#[test]
fn multi_line_values_are_dropped_and_the_rest_trimmed_as_kwctl_does() {
    let out = oci::oci_annotations(map(&[
        ("io.kubewarden.policy.usage", "# Title\n\nBody\n"),
        ("leading-newline", "\nvalue"),
        ("two-trailing-newlines", "value\n\n"),
        ("crlf-inside", "a\r\nb"),
        ("one-trailing-newline", "value\n"),
        ("one-trailing-crlf", "value\r\n"),
        ("bare-cr", "a\rb"),
        ("padded", "  value \t"),
        ("empty", ""),
    ]));
    assert_eq!(
        out,
        map(&[
            ("one-trailing-newline", "value"),
            ("one-trailing-crlf", "value"),
            ("bare-cr", "a\rb"),
            ("padded", "value"),
            ("empty", ""),
        ])
    );
}

#[test]
fn image_source_comes_from_the_policy_source_unless_set() {
    let out = oci::oci_annotations(map(&[(
        "io.kubewarden.policy.source",
        " https://example.org/src \n",
    )]));
    assert_eq!(
        out["org.opencontainers.image.source"],
        "https://example.org/src"
    );
    let kept = oci::oci_annotations(map(&[
        ("io.kubewarden.policy.source", "https://example.org/a"),
        ("org.opencontainers.image.source", "https://example.org/b"),
    ]));
    assert_eq!(
        kept["org.opencontainers.image.source"],
        "https://example.org/b"
    );
    let multi = oci::oci_annotations(map(&[("io.kubewarden.policy.source", "a\nb")]));
    assert!(multi.is_empty(), "{multi:?}");
}

/// `user` / `helper-secret`, bcrypt (cost 4), as docker-registry's htpasswd wants.
const HTPASSWD: &str = "user:$2b$04$8MVimZ/AjpF7zsrbdcs98OrfqBiuYEc8TYTClgWuhPllJJovmshri\n";

fn annotated(annotations: &str) -> Vec<u8> {
    let meta = Metadata::parse(&format!(
        "rules: []\nmutating: false\nannotations:\n{annotations}"
    ))
    .unwrap();
    metadata::annotate(&test_module(), &meta, "v1", Some("# Usage\n\nmore\n")).unwrap()
}

#[test]
fn pushed_manifest_carries_kwctls_annotations() {
    let registry = Registry::start("annotations", None);
    let wasm = annotated(
        "  io.kubewarden.policy.source: \"https://example.org/src \"\n  \
         io.kubewarden.policy.title: \"title\\n\"\n  io.kubewarden.policy.description: \"two\\nlines\"\n",
    );
    let uri = format!("registry://{}/rg/annotations:v1", registry.addr);
    oci::push(&wasm, &uri).unwrap();
    let pulled = oci::pull(&uri).unwrap();
    assert_eq!(pulled.wasm, wasm);
    assert_eq!(
        pulled.manifest.annotations.unwrap(),
        map(&[
            ("io.kubewarden.policy.source", "https://example.org/src"),
            ("io.kubewarden.policy.title", "title"),
            ("org.opencontainers.image.source", "https://example.org/src"),
        ]),
        "usage and description are multi-line, so left out"
    );
}

/// Runs `reconcile-guard ARGS` with only this Docker config and PATH prefix.
fn cli(args: &[&str], docker_config: &Path, path_prefix: &Path) -> (bool, String) {
    let path = std::env::join_paths(std::iter::once(path_prefix.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_reconcile-guard"))
        .args(args)
        .env("DOCKER_CONFIG", docker_config)
        .env("PATH", path)
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

/// A `docker-credential-NAME` script that answers `get` for `registry` with
/// the registry's credentials, and fails for anything else.
fn helper(bin: &Path, name: &str, registry: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let script = bin.join(format!("docker-credential-{name}"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n[ \"$1\" = get ] || exit 1\nread server\n[ \"$server\" = \"{registry}\" ] || {{ echo \"credentials not found in native keychain\"; exit 1; }}\n\
             echo '{{\"ServerURL\":\"{registry}\",\"Username\":\"user\",\"Secret\":\"helper-secret\"}}'\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn credentials_come_from_docker_credential_helpers_and_stores() {
    let registry = Registry::start("auth", Some(HTPASSWD));
    let work = registry.dir.join("client");
    let bin = work.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    helper(&bin, "rgtest", &registry.addr);
    let wasm_path = work.join("policy.wasm");
    std::fs::write(&wasm_path, annotated("  io.kubewarden.policy.title: t\n")).unwrap();
    let wasm = wasm_path.to_str().unwrap();
    let uri = format!("registry://{}/rg/auth:v1", registry.addr);
    let pulled = work.join("pulled.wasm");
    let pulled = pulled.to_str().unwrap();

    let configs = [
        ("no credentials", r#"{"auths": {}}"#.to_string(), false),
        (
            "credHelpers for this registry",
            format!(r#"{{"credHelpers": {{"{}": "rgtest"}}}}"#, registry.addr),
            true,
        ),
        (
            "credsStore, with the empty auths entry Docker writes beside it",
            format!(
                r#"{{"auths": {{"{}": {{}}}}, "credsStore": "rgtest"}}"#,
                registry.addr
            ),
            true,
        ),
        (
            "credHelpers win over a wrong password in auths",
            format!(
                r#"{{"auths": {{"{0}": {{"auth": "dXNlcjp3cm9uZw=="}}}}, "credHelpers": {{"{0}": "rgtest"}}}}"#,
                registry.addr
            ),
            true,
        ),
        (
            "a helper that fails means anonymous",
            format!(r#"{{"credHelpers": {{"{}": "missing"}}}}"#, registry.addr),
            false,
        ),
        (
            "base64 auth in auths",
            format!(
                r#"{{"auths": {{"http://{}": {{"auth": "dXNlcjpoZWxwZXItc2VjcmV0"}}}}}}"#,
                registry.addr
            ),
            true,
        ),
    ];
    for (i, (what, config, works)) in configs.iter().enumerate() {
        let dir = work.join(format!("docker-{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), config).unwrap();
        let (ok, out) = cli(&["push", wasm, &uri], &dir, &bin);
        assert_eq!(ok, *works, "push, {what}: {out}");
        if *works {
            let (ok, out) = cli(&["pull", &uri, "-o", pulled], &dir, &bin);
            assert!(ok, "pull, {what}: {out}");
            assert_eq!(std::fs::read(pulled).unwrap(), std::fs::read(wasm).unwrap());
        }
    }
}

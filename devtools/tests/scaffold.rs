//! CONTRIBUTING.md's recipe for a fifth policy, followed to the letter: in a
//! copy of the repository under `target/scaffold-test/`, every block of the
//! recipe that names a file is written there, the catalog lines are added,
//! `make scaffold` builds everything and writes the deploy manifest, and the
//! new policy's corpus is replayed through its compiled module (and natively,
//! which must agree). The copy builds in its own target folder, seeded with
//! hard links to this one's compiled dependencies (and copies of their
//! fingerprints) so that only what the new policy changes is compiled.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

#[path = "../../host-test/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A block of CONTRIBUTING.md: the file it names, and how it goes there.
struct Block {
    path: String,
    insert: bool,
    text: String,
}

/// The fenced blocks whose info string names `file=` (a new file) or
/// `insert=` (lines added to an existing file).
fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(String, Block)> = None;
    for line in markdown.lines() {
        if let Some((fence, block)) = &mut open {
            if line == fence.as_str() {
                let (_, block) = open.take().unwrap();
                out.push(block);
            } else {
                block.text.push_str(line);
                block.text.push('\n');
            }
            continue;
        }
        let ticks = line.chars().take_while(|c| *c == '`').count();
        if ticks < 3 {
            continue;
        }
        for word in line[ticks..].split_whitespace() {
            let (insert, path) = match word.split_once('=') {
                Some(("file", p)) => (false, p),
                Some(("insert", p)) => (true, p),
                _ => continue,
            };
            let block = Block {
                path: path.to_string(),
                insert,
                text: String::new(),
            };
            open = Some(("`".repeat(ticks), block));
        }
    }
    assert!(open.is_none(), "CONTRIBUTING.md has an unclosed block");
    out
}

/// Adds `lines` to the catalog's dependencies (first in the table) or to
/// the end of its list of policies.
fn insert(file: &Path, lines: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    let anchor = if file.ends_with("Cargo.toml") {
        text.find("[dependencies]\n")
            .expect("a [dependencies] table")
            + "[dependencies]\n".len()
    } else {
        let list = text.find("pub const POLICIES").expect("POLICIES");
        list + text[list..].find("\n];").expect("the end of POLICIES") + 1
    };
    let (head, tail) = text.split_at(anchor);
    std::fs::write(file, format!("{head}{lines}{tail}")).unwrap();
}

/// Runs `program` in `dir` with a clean build environment: nothing of the
/// outer `make`/`cargo test` (jobserver, target folder) leaks in.
fn run(dir: &Path, program: &str, args: &[&str]) -> String {
    let mut command = Command::new(program);
    command.args(args).current_dir(dir);
    for var in [
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
        "MAKEFLAGS",
        "MFLAGS",
        "MAKELEVEL",
        "CARGO_MAKEFLAGS",
    ] {
        command.env_remove(var);
    }
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{program} {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The repository's sources, copied with their times (so that cargo finds
/// what it built from them fresh), and this build's outputs, linked.
fn copy_repository(root: &Path, target: &Path) -> PathBuf {
    let copy = common::scratch("scaffold-test", "repo");
    let skip = ["target", "node_modules", "dist", ".git"];
    let mut sources: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|name| !skip.contains(&name.as_str()))
        .map(|name| root.join(name).display().to_string())
        .collect();
    sources.sort();
    let mut args = vec!["-a".to_string()];
    args.extend(sources);
    args.push(copy.display().to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(root, "cp", &args);
    std::os::unix::fs::symlink(root.join("node_modules"), copy.join("node_modules")).unwrap();
    // The harness, the CLI and the tools are compiled again in the copy (its catalog changed);
    // without optimizations that takes a third of the time, and they run two cases.
    std::fs::create_dir_all(copy.join(".cargo")).unwrap();
    let unoptimized: String = ["host-test", "reconcile-guard", "devtools"]
        .iter()
        .map(|package| format!("[profile.host.package.{package}]\nopt-level = 0\n"))
        .collect();
    std::fs::write(copy.join(".cargo/config.toml"), unoptimized).unwrap();
    for profile in ["host", "wasm32-wasip1/release"] {
        let to = copy.join("target").join(profile);
        std::fs::create_dir_all(&to).unwrap();
        // Compiled crates are linked (rustc replaces an output it rebuilds); the fingerprints
        // and build-script outputs, which cargo rewrites in place, are copied, so that a
        // rebuild in the copy cannot mark this build's crates stale through a shared inode.
        for (part, how) in [("deps", "-al"), ("build", "-a"), (".fingerprint", "-a")] {
            let from = target.join(profile).join(part);
            if from.is_dir() {
                let (from, to) = (from.display().to_string(), to.display().to_string());
                run(root, "cp", &[how, &from, &to]);
            }
        }
    }
    copy
}

#[test]
fn a_fifth_policy_made_by_the_recipe_replays() {
    let root = common::root();
    let recipe = std::fs::read_to_string(root.join("CONTRIBUTING.md")).unwrap();
    let blocks = blocks(&recipe);
    let policy = blocks
        .iter()
        .find_map(|b| {
            b.path
                .strip_prefix("policies/")?
                .strip_suffix("/Cargo.toml")
                .filter(|p| !p.contains('/'))
        })
        .expect("the recipe's crate")
        .to_string();
    assert!(
        catalog::entry(&policy).is_none(),
        "the recipe's example {policy} must be new"
    );
    assert!(blocks.iter().filter(|b| b.insert).count() == 2);

    let copy = copy_repository(&root, &common::target());
    for block in &blocks {
        let file = copy.join(&block.path);
        if block.insert {
            insert(&file, &block.text);
        } else {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &block.text).unwrap();
        }
    }

    // The Makefile finds the new policy as the catalog lists it.
    let mut found: Vec<String> = run(&copy, "make", &["-s", "list-policies"])
        .split_whitespace()
        .map(str::to_string)
        .collect();
    found.sort();
    let mut listed: Vec<String> = catalog::names().map(str::to_string).collect();
    listed.push(policy.clone());
    listed.sort();
    assert_eq!(found, listed);

    // Step 5: the build and the generated manifests, for the new policy only
    // (the others are this repository's, built and checked elsewhere).
    let only = format!("POLICIES={policy}");
    run(&copy, "make", &["-s", "scaffold", &only]);
    let manifest = std::fs::read_to_string(copy.join(format!("deploy/{policy}.yaml"))).unwrap();
    assert!(
        manifest.contains(&format!("name: {policy}\n")),
        "{manifest}"
    );
    assert!(copy.join(format!("dist/{policy}.wasm")).is_file());

    // Step 6: the corpus through the compiled module and natively.
    let cases = format!("tests/cases/{policy}");
    let replayed = run(&copy, "target/host/devtools", &["replay", &cases]);
    let count = std::fs::read_dir(copy.join(&cases)).unwrap().count();
    assert!(count >= 2, "{count} cases");
    assert!(
        replayed.contains(&format!("{count} passed, 0 failed")),
        "{replayed}"
    );
}

//! The layout rules of CONTRIBUTING.md that no tool checks, on the source:
//! within a crate no two modules import each other, directly or through
//! others, so each can be read from the ones it uses. (A function's length is
//! clippy's `too_many_lines`, with its threshold in `clippy.toml`.)
//!
//! Read lexically, not parsed: a module's imports are its `crate::name`
//! paths (in `use` lines, groups and full paths). Test code (from a file's
//! first top-level `#[cfg(test)]` on, and modules declared `#[cfg(test)]`)
//! is left out.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates whose module graph must have no cycle.
const ACYCLIC: &[&str] = &[
    "policies/catalog",
    "policies/guard-core",
    "policies/flux-suspend",
    "policies/flux-gate",
    "policies/aso-reconcile",
    "policies/flux-event-metadata",
    "conformance",
    "host-test",
    "cli",
    "devtools",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's text up to its first top-level `#[cfg(test)]`.
fn non_test(text: &str) -> &str {
    text.find("\n#[cfg(test)]").map_or(text, |at| &text[..at])
}

/// Blanks string and char literals and comments, keeping line breaks, so
/// that braces and paths are read only from code.
fn code_only(text: &str) -> String {
    split_code(text).0
}

/// The code with string and char literals and comments blanked (line
/// breaks kept), and the string literals' contents.
#[expect(
    clippy::too_many_lines,
    reason = "one lexer whose states share the cursor"
)]
fn split_code(text: &str) -> (String, Vec<String>) {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut literals = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
        } else if c == b'r'
            && matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
            && !ident_before(b, i)
        {
            // Raw string: r#…#"…"#…#
            let mut j = i + 1;
            while b.get(j) == Some(&b'#') {
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            j += 1;
            let start = j;
            let mut end = b.len();
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'\n' {
                    out.push('\n');
                }
                if b[j] == b'"'
                    && b[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == b'#')
                        .count()
                        == hashes
                {
                    end = j;
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            literals.push(String::from_utf8_lossy(&b[start..end]).into_owned());
            out.push_str("\"\"");
            i = j;
        } else if c == b'"' {
            i += 1;
            let start = i;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                if b.get(i) == Some(&b'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            literals.push(String::from_utf8_lossy(&b[start..i.min(b.len())]).into_owned());
            out.push_str("\"\"");
            i += 1;
        } else if c == b'\'' && char_literal_end(b, i).is_some() {
            i = char_literal_end(b, i).unwrap();
            out.push_str("' '");
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    (out, literals)
}

fn ident_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// The end of a char literal starting at `i` (`'a'`, `'\n'`, `'\u{..}'`),
/// or `None` for a lifetime.
fn char_literal_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i + 1) == Some(&b'\\') {
        let close = b[i + 2..].iter().position(|&c| c == b'\'')?;
        return Some(i + 2 + close + 1);
    }
    let rest = std::str::from_utf8(&b[i + 1..]).ok()?;
    let ch = rest.chars().next()?;
    let after = i + 1 + ch.len_utf8();
    (b.get(after) == Some(&b'\'')).then_some(after + 1)
}

/// The crate's top-level modules and the files of each, without those
/// declared `#[cfg(test)]` in the crate root.
fn modules(krate: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let src = krate.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|p| p.exists())
        .unwrap();
    let root_text = std::fs::read_to_string(&root).unwrap();
    let mut test_only = BTreeSet::new();
    let lines: Vec<&str> = root_text.lines().collect();
    for pair in lines.windows(2) {
        if pair[0].trim() == "#[cfg(test)]" {
            if let Some(name) = pair[1].trim().strip_prefix("mod ") {
                test_only.insert(name.trim_end_matches(';').to_string());
            }
        }
    }
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let name = first.trim_end_matches(".rs").to_string();
        if file == root || test_only.contains(&name) || name == "bin" {
            continue;
        }
        out.entry(name).or_default().push(file);
    }
    out
}

/// The names a text reaches through `crate::`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let close = group.find('}').unwrap_or(group.len());
            // Only the first segment of each item of a `crate::{a, b::c}` group.
            let mut depth = 0;
            let mut item_start = true;
            let mut word = String::new();
            for ch in group[..close].chars() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if c.is_alphanumeric() || c == '_' => {
                        if item_start {
                            word.push(c);
                        }
                    }
                    _ => {
                        if !word.is_empty() {
                            out.insert(std::mem::take(&mut word));
                        }
                        if !ch.is_whitespace() {
                            item_start = false;
                        }
                    }
                }
            }
            if !word.is_empty() {
                out.insert(word);
            }
        } else {
            let word: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(word);
        }
        rest = after;
    }
    out
}

/// A cycle in `graph`, if it has one, as the modules on it.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in &graph[node] {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

fn module_graph(krate: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules(krate);
    modules
        .iter()
        .map(|(name, files)| {
            let used = files
                .iter()
                .flat_map(|f| {
                    crate_paths(&code_only(non_test(&std::fs::read_to_string(f).unwrap())))
                })
                .filter(|m| m != name && modules.contains_key(m))
                .collect();
            (name.clone(), used)
        })
        .collect()
}

#[test]
fn no_module_imports_itself_through_others() {
    let mut failures = Vec::new();
    for krate in ACYCLIC {
        let graph = module_graph(&root().join(krate));
        if let Some(found) = cycle(&graph) {
            failures.push(format!("{krate}: {}", found.join(" -> ")));
        }
    }
    assert!(
        failures.is_empty(),
        "module cycles:\n{}",
        failures.join("\n")
    );
}

/// The checkers themselves, on the cases they must tell apart.
#[test]
fn the_checkers_see_cycles_and_groups() {
    let used = crate_paths("use crate::{a::X, b, c::{d, e}};\nlet x = crate::f::g();");
    assert_eq!(used, ["a", "b", "c", "f"].map(String::from).into());
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    assert_eq!(
        code_only("let c = '{'; let r = r#\"}\"#; // {"),
        "let c = ' '; let r = \"\"; "
    );
}

/// The policy crates that must ask guard-core's model about the ecosystem.
const ASKS_THE_MODEL: &[&str] = &[
    "policies/flux-suspend",
    "policies/flux-gate",
    "policies/aso-reconcile",
    "policies/flux-event-metadata",
];

/// What only the model may name: the domains of Flux's, Flux Operator's
/// and ASO's groups and annotations, and every controller's name, field
/// managers and identity (as whole words).
fn model_words() -> (Vec<&'static str>, BTreeSet<String>) {
    use guard_core::model::controllers;
    let domains = vec![
        "fluxcd.io",
        "fluxcd.controlplane.io",
        "serviceoperator.azure.com",
    ];
    let mut words = BTreeSet::new();
    for c in controllers::FLUX {
        words.insert(c.name.to_string());
        words.insert(c.service_account.username());
        words.extend(c.field_managers.iter().map(|m| m.name.to_string()));
    }
    // Flux Operator's own clients (Web UI, CLI, MCP server) are its writers too.
    words.extend(
        guard_core::model::clients::CLIENTS
            .iter()
            .filter(|c| c.program.starts_with("flux-operator"))
            .filter_map(|c| c.field_manager)
            .map(str::to_string),
    );
    words.extend(controllers::KUBE_CONTROLLERS.iter().map(|c| c.to_string()));
    words.insert(controllers::KUBE_CONTROLLER_MANAGER.to_string());
    words.insert(controllers::ASO.username());
    words.insert(controllers::ASO.name.to_string());
    // A controller that names no field manager has an empty one.
    words.remove("");
    (domains, words)
}

/// Does `text` hold `word` bounded by characters a name cannot continue with?
fn holds_word(text: &str, word: &str) -> bool {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == ':';
    text.match_indices(word).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(name_char)
            && !text[at + word.len()..]
                .chars()
                .next()
                .is_some_and(name_char)
    })
}

/// The string literals of a policy's non-test code that name what only the
/// model may name.
fn ecosystem_literals(krate: &Path) -> Vec<String> {
    let (domains, words) = model_words();
    let mut found = Vec::new();
    for files in modules(krate).values() {
        for file in files {
            let text = std::fs::read_to_string(file).unwrap();
            for literal in split_code(non_test(&text)).1 {
                let named = domains
                    .iter()
                    .find(|d| literal.contains(**d))
                    .map(|d| d.to_string())
                    .or_else(|| words.iter().find(|w| holds_word(&literal, w)).cloned());
                if let Some(what) = named {
                    let rel = file.strip_prefix(root()).unwrap_or(file);
                    found.push(format!("{}: {literal:?} names {what}", rel.display()));
                }
            }
        }
    }
    found
}

#[test]
fn policies_ask_the_model_about_the_ecosystem() {
    let mut found = Vec::new();
    for krate in ASKS_THE_MODEL {
        found.extend(ecosystem_literals(&root().join(krate)));
    }
    assert!(
        found.is_empty(),
        "groups, controllers, field managers and identities belong in guard-core's model \
         (policies/guard-core/src/model):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_model_check_sees_names_in_literals_only() {
    let (code, literals) = split_code(
        "// kustomize-controller in a comment\nlet a = \"kustomize-controller\"; let b = r#\"x.fluxcd.io\"#;",
    );
    assert!(!code.contains("kustomize"));
    assert_eq!(literals, ["kustomize-controller", "x.fluxcd.io"]);
    assert!(holds_word("by helm-controller.", "helm-controller"));
    assert!(!holds_word("gotk-helm-controller", "helm-controller"));
    assert!(!holds_word(
        "system:serviceaccount:x:helm-controller",
        "helm-controller"
    ));
}

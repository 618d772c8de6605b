//! Errors are typed (what failed, where, why), with their words written in
//! one place (`Display` or `render`): no `Result<_, String>` in the
//! non-test code of any crate under `policies/`.
//!
//! Read lexically: comments and literals are blanked, then every
//! `Result<…>` whose error type is `String` (or a `type` alias of it) is
//! counted, whatever the spacing; a `type` alias of such a `Result` counts
//! where it is written. Test code is left out: items under `#[cfg(test)]`,
//! files of modules declared `#[cfg(test)]`, and `tests/` folders.
//!
//! `REMAINING` is what is left to convert; it may only go down.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The `Result<_, String>` left in policy code, to be typed.
const REMAINING: usize = 39;

#[test]
fn policy_code_returns_typed_errors() {
    let policies = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(&policies)
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    crates.sort();
    for src in crates {
        for file in non_test_files(&src) {
            let text = std::fs::read_to_string(&file).unwrap();
            for line in string_results(&text) {
                let rel = file.strip_prefix(&policies).unwrap_or(&file);
                found.push(format!("policies/{}:{line}", rel.display()));
            }
        }
    }
    assert!(
        found.len() <= REMAINING,
        "{} `Result<_, String>` in policy code, more than the {REMAINING} left to convert; \
         return a typed error instead:\n{}",
        found.len(),
        found.join("\n")
    );
    if found.len() < REMAINING {
        panic!(
            "{} `Result<_, String>` left in policy code: lower REMAINING to it",
            found.len()
        );
    }
}

/// The `.rs` files under `src`, without those of modules declared `#[cfg(test)]`.
fn non_test_files(src: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    walk(src, &mut all);
    let mut test_modules = BTreeSet::new();
    for file in &all {
        let text = std::fs::read_to_string(file).unwrap();
        let dir = module_dir(file);
        let tokens = tokens(&blank(&text));
        for (i, _) in tokens.iter().enumerate() {
            if is_cfg_test(&tokens, i) {
                let mut j = i + 7;
                while tokens.get(j).is_some_and(|t| t == "#") {
                    j = skip_attribute(&tokens, j);
                }
                while tokens.get(j).is_some_and(|t| t == "pub") {
                    j += if tokens.get(j + 1).is_some_and(|t| t == "(") {
                        4
                    } else {
                        1
                    };
                }
                if tokens.get(j).is_some_and(|t| t == "mod")
                    && tokens.get(j + 2).is_some_and(|t| t == ";")
                {
                    let name = &tokens[j + 1];
                    test_modules.insert(dir.join(format!("{name}.rs")));
                    test_modules.insert(dir.join(name));
                }
            }
        }
    }
    all.into_iter()
        .filter(|f| !test_modules.iter().any(|t| f.starts_with(t)))
        .collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "tests") {
                walk(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Where the submodules of `file` live.
fn module_dir(file: &Path) -> PathBuf {
    let parent = file.parent().unwrap().to_path_buf();
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("lib" | "main" | "mod") => parent,
        Some(stem) => parent.join(stem),
        None => parent,
    }
}

/// Comments and the contents of string and char literals blanked.
#[expect(
    clippy::too_many_lines,
    reason = "one lexer whose states share the cursor"
)]
fn blank(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r'
            && matches!(next, Some('"' | '#'))
            && !b
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (1..=hashes).all(|k| b.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('a', '\n', '\u{..}') or a lifetime.
            let end = if next == Some('\\') {
                (i + 2..b.len()).find(|&k| b[k] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.push_str("' '");
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Identifiers, `->`, `::` and single punctuation, with their line numbers
/// dropped: the line of each token is kept alongside by [`string_results`].
fn tokens(code: &str) -> Vec<String> {
    spanned(code).into_iter().map(|(t, _)| t).collect()
}

fn spanned(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let c: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < c.len() {
            if c[i].is_whitespace() {
                i += 1;
            } else if c[i].is_alphanumeric() || c[i] == '_' {
                let start = i;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
                out.push((c[start..i].iter().collect(), n + 1));
            } else if c[i] == '-' && c.get(i + 1) == Some(&'>') {
                out.push(("->".to_string(), n + 1));
                i += 2;
            } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
                out.push(("::".to_string(), n + 1));
                i += 2;
            } else {
                out.push((c[i].to_string(), n + 1));
                i += 1;
            }
        }
    }
    out
}

/// `#[cfg(test)]` at token `i`.
fn is_cfg_test(t: &[String], i: usize) -> bool {
    let want = ["#", "[", "cfg", "(", "test", ")", "]"];
    want.iter()
        .enumerate()
        .all(|(k, w)| t.get(i + k).is_some_and(|x| x == w))
}

/// The token after the attribute starting at `i` (`#`, `[`, …, `]`).
fn skip_attribute(t: &[String], i: usize) -> usize {
    let mut depth = 0;
    let mut j = i + 1;
    while j < t.len() {
        match t[j].as_str() {
            "[" => depth += 1,
            "]" => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    j
}

/// The lines of `text`'s non-test code where a `Result` has `String` (or an
/// alias of it) for its error type.
fn string_results(text: &str) -> Vec<usize> {
    let all = spanned(&blank(text));
    // Test items (`#[cfg(test)] mod tests { … }`, `#[cfg(test)] fn …`) left out.
    let names: Vec<String> = all.iter().map(|(t, _)| t.clone()).collect();
    let mut t: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while i < all.len() {
        if is_cfg_test(&names, i) {
            let mut j = i + 7;
            let mut depth = 0;
            while j < all.len() {
                match names[j].as_str() {
                    "{" => depth += 1,
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ";" if depth == 0 => break,
                    _ => {}
                }
                j += 1;
            }
            i = j + 1;
            continue;
        }
        t.push(all[i].clone());
        i += 1;
    }
    let word = |k: usize| t.get(k).map_or("", |(w, _)| w.as_str());
    // `type E = String;` (with or without its path).
    let mut strings: BTreeSet<String> = ["String".to_string()].into();
    for k in 0..t.len() {
        if word(k) == "type" && word(k + 2) == "=" {
            let mut m = k + 3;
            while word(m + 1) == "::" {
                m += 2;
            }
            if word(m) == "String" && word(m + 1) == ";" {
                strings.insert(word(k + 1).to_string());
            }
        }
    }
    let mut lines = Vec::new();
    for k in 0..t.len() {
        if word(k) != "Result" || word(k + 1) != "<" {
            continue;
        }
        // The generic arguments, split at top-level commas.
        let mut depth = 0;
        let mut args: Vec<Vec<&str>> = vec![Vec::new()];
        let mut m = k + 1;
        while m < t.len() {
            let w = word(m);
            match w {
                "<" | "(" | "[" => depth += 1,
                ">" | ")" | "]" => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                break;
            }
            if w == "," && depth == 1 {
                args.push(Vec::new());
            } else if m > k + 1 {
                if let Some(last) = args.last_mut() {
                    last.push(w);
                }
            }
            m += 1;
        }
        let error = args.get(1).map(|a| a.last().copied().unwrap_or(""));
        let path_only = args.get(1).is_some_and(|a| {
            a.iter()
                .enumerate()
                .all(|(n, w)| (n % 2 == 1) == (*w == "::"))
        });
        if args.len() == 2 && path_only && error.is_some_and(|e| strings.contains(e)) {
            lines.push(t[k].1);
        }
    }
    lines
}

/// The counter itself, on the shapes it must tell apart.
#[test]
fn the_counter_sees_spacing_aliases_and_test_code() {
    let text = r#"
fn a() -> Result<(), String> { todo!() }
fn b() -> Result < Vec<u8> ,
    std::string::String > { todo!() }
type R<T> = Result<T, String>;
type E = String;
fn c() -> Result<u8, E> { todo!() }
fn d() -> Result<String, Error> { todo!() }
fn e() -> io::Result<String> { todo!() }
fn f(g: impl Fn(&str) -> Result<u8, String>) {}
// fn h() -> Result<(), String>
const S: &str = "Result<(), String>";
#[cfg(test)]
mod tests {
    fn i() -> Result<(), String> { todo!() }
}
#[cfg(test)]
fn j() -> Result<(), String> { todo!() }
fn k() -> Result<BTreeMap<String, String>, Error> { todo!() }
"#;
    assert_eq!(string_results(text), vec![2, 3, 5, 7, 10]);
}

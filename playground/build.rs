//! Generates the playground's catalogue at build time: for each policy, its
//! description, context-aware resources, settings documentation (from
//! `metadata.yml`, `questions-ui.yml` and the README's "Settings" section),
//! default settings, and the example gallery, which is the recorded corpus
//! `tests/cases/<policy>/*.yaml` itself. The catalogue is one JSON document in
//! `$OUT_DIR/catalogue.json`, embedded into the wasm module.
//!
//! Every source is optional: a policy whose files are still being written
//! simply has fewer docs or examples. The one refusal: a
//! `policies/<policy>/playground.yml` naming a case the corpus does not have.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    let root = manifest
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| manifest.clone());
    println!("cargo:rerun-if-changed=build.rs");
    println!(
        "cargo:rerun-if-changed={}",
        root.join("tests/cases").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        root.join("tests/stories").display()
    );

    // The policies are the folders with a metadata.yml, as the Makefile finds
    // them (the catalog's test holds them equal to the catalog);
    // `catalogue()` puts them in the catalog crate's order.
    let mut names: Vec<String> = fs::read_dir(root.join("policies"))
        .map(|dir| {
            dir.filter_map(|e| {
                let path = e.ok()?.path();
                path.join("metadata.yml")
                    .is_file()
                    .then(|| path.file_name()?.to_str().map(str::to_string))?
            })
            .collect()
        })
        .unwrap_or_default();
    names.sort();
    println!("cargo:rerun-if-changed={}", root.join("policies").display());
    let mut policies = Vec::new();
    for name in &names {
        match policy(&root, name) {
            Ok(p) => policies.push(p),
            Err(e) => {
                eprintln!("playground catalogue: {e}");
                std::process::exit(1);
            }
        }
    }
    let catalogue = json!({"policies": policies});
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into()));
    let text = serde_json::to_string(&catalogue).unwrap_or_else(|_| "{}".into());
    if let Err(e) = fs::write(out.join("catalogue.json"), text) {
        println!("cargo:warning=cannot write the catalogue: {e}");
    }
}

/// Reads a source file, watching it; a missing one is watched through its
/// folder (a file added there changes the folder), so it never forces a rerun.
fn read(path: &Path) -> Option<String> {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    } else if let Some(dir) = path.parent().filter(|d| d.exists()) {
        println!("cargo:rerun-if-changed={}", dir.display());
    }
    fs::read_to_string(path).ok()
}

fn yaml(text: &str) -> Option<Value> {
    serde_norway::from_str(text).ok()
}

fn to_yaml(value: &Value) -> String {
    serde_norway::to_string(value).unwrap_or_else(|_| value.to_string())
}

fn policy(root: &Path, name: &str) -> Result<Value, String> {
    let dir = root.join("policies").join(name);
    let metadata = read(&dir.join("metadata.yml"))
        .and_then(|t| yaml(&t))
        .unwrap_or(Value::Null);
    let description = metadata
        .pointer("/annotations/io.kubewarden.policy.description")
        .cloned()
        .unwrap_or(Value::Null);
    let title = metadata
        .pointer("/annotations/io.artifacthub.displayName")
        .cloned()
        .unwrap_or_else(|| json!(name));
    let context_aware = metadata
        .get("contextAwareResources")
        .cloned()
        .unwrap_or(json!([]));
    let mutating = metadata.get("mutating").cloned().unwrap_or(Value::Null);

    let questions = read(&dir.join("questions-ui.yml"))
        .and_then(|t| yaml(&t))
        .and_then(|q| q.get("questions").cloned())
        .and_then(|q| q.as_array().cloned())
        .unwrap_or_default();
    let settings_doc: Vec<Value> = questions
        .iter()
        .filter_map(|q| {
            let variable = q.get("variable")?.as_str()?;
            Some(json!({
                "variable": variable,
                "label": q.get("label").cloned().unwrap_or(Value::Null),
                "type": q.get("type").cloned().unwrap_or(Value::Null),
                "options": q.get("options").cloned().unwrap_or(Value::Null),
                "default": q.get("default").cloned().unwrap_or(Value::Null),
                "group": q.get("group").cloned().unwrap_or(Value::Null),
                "description": q.get("tooltip").or_else(|| q.get("description")).cloned().unwrap_or(Value::Null),
            }))
        })
        .collect();
    let default_settings = default_settings(&questions);

    let readme = read(&dir.join("README.md")).unwrap_or_default();
    let readme_settings = section(&readme, "Settings");

    let examples = examples(&root.join("tests/cases").join(name));
    let default_example = default_example(&dir, name, &examples)?;
    let stories = stories(&root.join("tests/stories").join(name));

    Ok(json!({
        "name": name,
        "title": title,
        "description": description,
        "mutating": mutating,
        "contextAwareResources": context_aware,
        "settingsDoc": settings_doc,
        "settingsReadme": readme_settings,
        "defaultSettings": default_settings,
        "defaultExample": default_example,
        "examples": examples,
        "stories": stories,
    }))
}

/// The policy's stories, as their text (the page runs them with `story()`).
fn stories(dir: &Path) -> Vec<Value> {
    yaml_files(dir)
        .iter()
        .filter_map(|file| {
            let text = read(file)?;
            let description = yaml(&text)
                .and_then(|s| s.get("description").cloned())
                .unwrap_or(Value::Null);
            let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("story");
            Some(json!({"id": stem, "description": description, "text": text}))
        })
        .collect()
}

/// The settings every question's default gives, as YAML with the question
/// labels as comments; `{}` (every default) when there are no questions.
fn default_settings(questions: &[Value]) -> String {
    let mut settings = Map::new();
    for q in questions {
        let (Some(variable), Some(default)) =
            (q.get("variable").and_then(Value::as_str), q.get("default"))
        else {
            continue;
        };
        if default.is_null() {
            continue;
        }
        let parts: Vec<&str> = variable.split('.').collect();
        insert(&mut settings, &parts, default.clone());
    }
    if settings.is_empty() {
        return "# Every setting left out takes its default.\n{}\n".into();
    }
    format!(
        "# The defaults, written out; every setting left out takes its default.\n{}",
        to_yaml(&Value::Object(settings))
    )
}

/// Sets `value` at the dotted path `parts`, creating mappings on the way.
fn insert(map: &mut Map<String, Value>, parts: &[&str], value: Value) {
    match parts {
        [] => {}
        [last] => {
            map.insert((*last).to_string(), value);
        }
        [first, rest @ ..] => {
            let entry = map.entry((*first).to_string()).or_insert_with(|| json!({}));
            if !entry.is_object() {
                *entry = json!({});
            }
            if let Some(inner) = entry.as_object_mut() {
                insert(inner, rest, value);
            }
        }
    }
}

/// The text of the Markdown section whose heading is `title`, up to the next
/// heading of the same or a higher level.
fn section(markdown: &str, title: &str) -> Value {
    let mut level = 0;
    let mut lines = Vec::new();
    let mut fence = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        }
        let hashes = line.chars().take_while(|c| *c == '#').count();
        let is_heading = !fence && hashes > 0 && line.chars().nth(hashes) == Some(' ');
        if level > 0 {
            if is_heading && hashes <= level {
                break;
            }
            lines.push(line);
        } else if is_heading
            && line
                .get(hashes..)
                .is_some_and(|t| t.trim().eq_ignore_ascii_case(title))
        {
            level = hashes;
        }
    }
    if lines.is_empty() {
        Value::Null
    } else {
        json!(lines.join("\n").trim())
    }
}

/// Every case of the policy's corpus, as the page loads it: the request,
/// settings and context as YAML text, the rest as data.
/// The YAML files of a folder, sorted; none when it does not exist.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    files
}

fn examples(dir: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    for file in yaml_files(dir) {
        let Some(text) = read(&file) else { continue };
        let Some(case) = yaml(&text) else {
            println!("cargo:warning=unreadable corpus case {}", file.display());
            continue;
        };
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("case");
        let field = |k: &str| case.get(k).cloned().unwrap_or(Value::Null);
        let settings = field("settings");
        let context = field("context");
        out.push(json!({
            "id": stem,
            "description": field("description"),
            "now": field("now"),
            "settings": if settings.is_null() { "{}\n".to_string() } else { to_yaml(&settings) },
            "request": to_yaml(&field("request")),
            "context": if context.is_null() { String::new() } else { to_yaml(&context) },
            "policyMode": case.get("policyMode").cloned().unwrap_or(json!("protect")),
            "allowedToMutate": case.get("allowedToMutate").cloned().unwrap_or(json!(true)),
            "contextAwareResources": case.get("contextAwareResources").cloned().unwrap_or(Value::Null),
            "expect": field("expect"),
        }));
    }
    out
}

/// The case the page opens on: the one `policies/<policy>/playground.yml`
/// names (`example: <case>`), which must be in the corpus; without that
/// file, the first refused case of the corpus, else its first case.
fn default_example(dir: &Path, policy: &str, examples: &[Value]) -> Result<Value, String> {
    let id = |e: &Value| e.get("id").and_then(Value::as_str).map(str::to_string);
    if let Some(text) = read(&dir.join("playground.yml")) {
        let chosen = yaml(&text)
            .and_then(|p| p.get("example")?.as_str().map(str::to_string))
            .ok_or_else(|| format!("policies/{policy}/playground.yml: no `example: <case>`"))?;
        if !examples
            .iter()
            .any(|e| id(e).as_deref() == Some(chosen.as_str()))
        {
            return Err(format!(
                "policies/{policy}/playground.yml: no case tests/cases/{policy}/{chosen}.yaml"
            ));
        }
        return Ok(json!(chosen));
    }
    let refused = examples
        .iter()
        .find(|e| e.pointer("/expect/allowed") == Some(&json!(false)));
    Ok(refused
        .or_else(|| examples.first())
        .and_then(id)
        .map(Value::String)
        .unwrap_or(Value::Null))
}

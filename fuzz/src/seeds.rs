//! What the mutator starts from: the policy's corpus cases (request, old
//! object, settings, recorded context, `now`), a dictionary of the strings and
//! subtrees they contain, and the shape of the policy's settings (from its
//! `questions-ui.yml` and the settings its cases use).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context as _, Result};
use conformance::cluster::Recorded;
use guard_core::Timestamp;
use serde_json::Value;

/// One corpus case, as the mutator uses it.
#[derive(Debug, Clone)]
pub struct Seed {
    pub id: String,
    pub now: Timestamp,
    pub settings: Value,
    /// The AdmissionRequest (unwrapped from its review).
    pub request: Value,
    pub context: Vec<Recorded>,
}

/// Everything the mutator knows about one policy.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub policy: String,
    pub seeds: Vec<Seed>,
    pub dict: Dictionary,
    pub schema: Vec<Field>,
}

/// Strings, keys and subtrees seen anywhere in the corpus and the policy's
/// metadata, to put values the policy gives meaning to in unexpected places.
#[derive(Debug, Clone, Default)]
pub struct Dictionary {
    pub strings: Vec<String>,
    pub keys: Vec<String>,
    pub annotation_keys: Vec<String>,
    pub label_keys: Vec<String>,
    pub kinds: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub groups: Vec<String>,
    pub usernames: Vec<String>,
    pub user_groups: Vec<String>,
    /// Subtrees (up to a few KiB) seen under each member name.
    pub by_key: BTreeMap<String, Vec<Value>>,
    /// Settings values seen under each dotted settings path (array indices left out).
    pub settings_values: BTreeMap<String, Vec<Value>>,
    /// Every instant written in the corpus (RFC 3339 strings and `now`).
    pub instants: Vec<Timestamp>,
}

/// The shape a settings field should have.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    String,
    Int,
    Bool,
    Enum(Vec<String>),
    /// `array[`: a list of strings.
    List,
    /// `sequence[`: a list of objects with these fields.
    Sequence(Vec<Field>),
    /// `map[`: string keys to string values.
    Map,
    /// Seen in the corpus only: any of the values seen there.
    Any,
}

/// One settings field: where it lives, its shape, and the dotted key under
/// which corpus values for it are collected.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub path: Vec<String>,
    pub shape: Shape,
    pub default: Option<Value>,
    pub sample_key: String,
}

const MAX_SUBTREE_BYTES: usize = 4096;

pub fn load(policy: &str, cases_dir: &Path, policies_dir: &Path) -> Result<Corpus> {
    let dir = cases_dir.join(policy);
    let cases = conformance::load_cases(&dir).map_err(|e| anyhow::anyhow!(e))?;
    anyhow::ensure!(!cases.is_empty(), "no corpus cases in {}", dir.display());
    let seeds: Vec<Seed> = cases
        .iter()
        .map(|case| Seed {
            id: case.id.clone(),
            now: case.now,
            settings: case.settings.clone(),
            request: case.admission_request(),
            context: case.context.clone(),
        })
        .collect();
    let read = |name: &str| -> Result<Option<Value>> {
        let file = policies_dir.join(policy).join(name);
        match std::fs::read_to_string(&file) {
            Ok(text) => {
                Ok(Some(serde_norway::from_str(&text).with_context(|| {
                    format!("cannot parse {}", file.display())
                })?))
            }
            Err(_) => Ok(None),
        }
    };
    let questions = read("questions-ui.yml")?;
    let metadata = read("metadata.yml")?;
    Ok(build(policy, seeds, questions.as_ref(), metadata.as_ref()))
}

/// The corpus from seeds already in memory (also what the unit tests use).
#[expect(
    clippy::too_many_lines,
    reason = "every source of a policy's seeds, gathered in one place"
)]
pub fn build(
    policy: &str,
    seeds: Vec<Seed>,
    questions: Option<&Value>,
    metadata: Option<&Value>,
) -> Corpus {
    let mut acc = Accumulator::default();
    for seed in &seeds {
        acc.instants.insert(seed.now);
        acc.walk(&seed.request, None);
        acc.walk(&seed.settings, None);
        acc.settings(&seed.settings, "");
        for r in &seed.context {
            for s in [&r.api_version, &r.kind, &r.namespace, &r.name] {
                acc.strings.insert(s.clone());
            }
            acc.kinds.insert(r.kind.clone());
            acc.api_versions.insert(r.api_version.clone());
            if let Some(object) = &r.object {
                acc.walk(object, None);
            }
            if let Some(error) = &r.error {
                acc.strings.insert(error.clone());
            }
        }
        if let Some(user) = seed.request.get("userInfo") {
            if let Some(name) = user.get("username").and_then(Value::as_str) {
                acc.usernames.insert(name.to_string());
            }
            for g in user
                .get("groups")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                acc.user_groups.insert(g.to_string());
            }
        }
    }
    if let Some(metadata) = metadata {
        for rule in metadata
            .get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for (field, set) in [
                ("apiGroups", &mut acc.groups),
                ("resources", &mut acc.resources),
            ] {
                for s in rule
                    .get(field)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    set.insert(s.to_string());
                }
            }
        }
        for r in metadata
            .get("contextAwareResources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(k) = r.get("kind").and_then(Value::as_str) {
                acc.kinds.insert(k.to_string());
            }
            if let Some(a) = r.get("apiVersion").and_then(Value::as_str) {
                acc.api_versions.insert(a.to_string());
            }
        }
    }
    let mut schema = questions.map(schema_of).unwrap_or_default();
    // Settings keys the corpus uses that the questions do not describe.
    let described: BTreeSet<String> = schema
        .iter()
        .filter_map(|f| f.path.first().cloned())
        .collect();
    for seed in &seeds {
        if let Value::Object(map) = &seed.settings {
            for key in map.keys() {
                if !described.contains(key) && !schema.iter().any(|f| f.sample_key == *key) {
                    schema.push(Field {
                        path: vec![key.clone()],
                        shape: Shape::Any,
                        default: None,
                        sample_key: key.clone(),
                    });
                }
            }
        }
    }
    let dict = acc.finish();
    Corpus {
        policy: policy.to_string(),
        seeds,
        dict,
        schema,
    }
}

#[derive(Default)]
struct Accumulator {
    strings: BTreeSet<String>,
    keys: BTreeSet<String>,
    annotation_keys: BTreeSet<String>,
    label_keys: BTreeSet<String>,
    kinds: BTreeSet<String>,
    api_versions: BTreeSet<String>,
    resources: BTreeSet<String>,
    groups: BTreeSet<String>,
    usernames: BTreeSet<String>,
    user_groups: BTreeSet<String>,
    by_key: BTreeMap<String, BTreeSet<String>>,
    settings_values: BTreeMap<String, BTreeSet<String>>,
    instants: BTreeSet<Timestamp>,
}

impl Accumulator {
    fn walk(&mut self, value: &Value, parent_key: Option<&str>) {
        match value {
            Value::String(s) => {
                self.strings.insert(s.clone());
                if let Ok(t) = s.parse::<Timestamp>() {
                    self.instants.insert(t);
                }
                // `until=<instant>` and the like: any instant inside a string.
                for t in instants_in(s) {
                    self.instants.insert(t);
                }
                match parent_key {
                    Some("kind") => {
                        self.kinds.insert(s.clone());
                    }
                    Some("apiVersion") => {
                        self.api_versions.insert(s.clone());
                    }
                    Some("resource") => {
                        self.resources.insert(s.clone());
                    }
                    Some("group") => {
                        self.groups.insert(s.clone());
                    }
                    _ => {}
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.walk(item, parent_key);
                }
            }
            Value::Object(map) => {
                for (k, v) in map {
                    self.keys.insert(k.clone());
                    match parent_key {
                        Some("annotations") => {
                            self.annotation_keys.insert(k.clone());
                        }
                        Some("labels" | "matchLabels") => {
                            self.label_keys.insert(k.clone());
                        }
                        _ => {}
                    }
                    if let Ok(text) = serde_json::to_string(v) {
                        if text.len() <= MAX_SUBTREE_BYTES {
                            self.by_key.entry(k.clone()).or_default().insert(text);
                        }
                    }
                    self.walk(v, Some(k));
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// Values under each dotted settings path, array indices left out.
    fn settings(&mut self, value: &Value, prefix: &str) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    if let Ok(text) = serde_json::to_string(v) {
                        if text.len() <= MAX_SUBTREE_BYTES {
                            self.settings_values
                                .entry(key.clone())
                                .or_default()
                                .insert(text);
                        }
                    }
                    self.settings(v, &key);
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.settings(item, prefix);
                }
            }
            _ => {}
        }
    }

    fn finish(self) -> Dictionary {
        let parse_all = |m: BTreeMap<String, BTreeSet<String>>| {
            m.into_iter()
                .map(|(k, texts)| {
                    let values = texts
                        .iter()
                        .filter_map(|t| serde_json::from_str(t).ok())
                        .collect();
                    (k, values)
                })
                .collect()
        };
        Dictionary {
            strings: self.strings.into_iter().collect(),
            keys: self.keys.into_iter().collect(),
            annotation_keys: self.annotation_keys.into_iter().collect(),
            label_keys: self.label_keys.into_iter().collect(),
            kinds: self.kinds.into_iter().collect(),
            api_versions: self.api_versions.into_iter().collect(),
            resources: self.resources.into_iter().collect(),
            groups: self.groups.into_iter().collect(),
            usernames: self.usernames.into_iter().collect(),
            user_groups: self.user_groups.into_iter().collect(),
            by_key: parse_all(self.by_key),
            settings_values: parse_all(self.settings_values),
            instants: self.instants.into_iter().collect(),
        }
    }
}

/// The byte ranges of RFC 3339-looking instants (`dddd-dd-ddT...`) in a string.
pub fn instant_spans(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let is = |i: usize, c: u8| b.get(i) == Some(&c);
    let mut spans = Vec::new();
    let mut i = 0;
    while i + 10 < b.len() {
        if (0..4).all(|k| digit(i + k))
            && is(i + 4, b'-')
            && digit(i + 5)
            && digit(i + 6)
            && is(i + 7, b'-')
            && digit(i + 8)
            && digit(i + 9)
            && (is(i + 10, b'T') || is(i + 10, b't'))
        {
            let mut end = i + 11;
            while b
                .get(end)
                .is_some_and(|c| c.is_ascii_digit() || b":.+-Zz".contains(c))
            {
                end += 1;
            }
            spans.push((i, end));
            i = end;
        } else {
            i += 1;
        }
    }
    spans
}

fn instants_in(s: &str) -> Vec<Timestamp> {
    instant_spans(s)
        .into_iter()
        .filter_map(|(a, b)| s.get(a..b)?.parse().ok())
        .collect()
}

/// The settings fields a `questions-ui.yml` describes.
pub fn schema_of(questions: &Value) -> Vec<Field> {
    let items = questions
        .get("questions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    fields_of(items, &[], "")
}

fn fields_of(items: &[Value], base: &[String], sample_prefix: &str) -> Vec<Field> {
    let mut fields = Vec::new();
    for q in items {
        let Some(variable) = q.get("variable").and_then(Value::as_str) else {
            continue;
        };
        let mut path: Vec<String> = base.to_vec();
        path.extend(variable.split('.').map(str::to_string));
        let sample_key = if sample_prefix.is_empty() {
            variable.to_string()
        } else {
            format!("{sample_prefix}.{variable}")
        };
        let kind = q.get("type").and_then(Value::as_str).unwrap_or("string");
        let shape = match kind {
            "int" | "integer" => Shape::Int,
            "boolean" | "bool" => Shape::Bool,
            "enum" => Shape::Enum(
                q.get("options")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|o| match o {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect(),
            ),
            "array[" => Shape::List,
            "map[" => Shape::Map,
            "sequence[" => {
                let children = q
                    .get("sequence_questions")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                Shape::Sequence(fields_of(children, &[], &sample_key))
            }
            _ => Shape::String,
        };
        fields.push(Field {
            path,
            shape,
            default: q.get("default").cloned(),
            sample_key: sample_key.clone(),
        });
        if let Some(sub) = q.get("subquestions").and_then(Value::as_array) {
            fields.extend(fields_of(sub, base, sample_prefix));
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_inside_strings_are_found() {
        let s = "maintenance until=2026-11-22T18:00:00Z then 2027-01-01T00:00:00+01:00";
        let spans = instant_spans(s);
        assert_eq!(spans.len(), 2);
        assert_eq!(&s[spans[0].0..spans[0].1], "2026-11-22T18:00:00Z");
        assert_eq!(instants_in(s).len(), 2);
        assert!(instant_spans("no 2026-11-22 date-time").is_empty());
    }

    #[test]
    fn questions_become_nested_fields() {
        let q: Value = serde_norway::from_str(
            "questions:\n\
             - variable: mode\n  type: enum\n  options: [a, b]\n\
             - variable: suspenders.users\n  type: array[\n\
             - variable: requireReason\n  type: boolean\n  subquestions:\n  - variable: minReasonLength\n    type: int\n\
             - variable: gates\n  type: sequence[\n  sequence_questions:\n  - variable: name\n    type: string\n",
        )
        .unwrap();
        let fields = schema_of(&q);
        let paths: Vec<String> = fields.iter().map(|f| f.path.join(".")).collect();
        assert_eq!(
            paths,
            [
                "mode",
                "suspenders.users",
                "requireReason",
                "minReasonLength",
                "gates"
            ]
        );
        assert_eq!(fields[0].shape, Shape::Enum(vec!["a".into(), "b".into()]));
        let Shape::Sequence(children) = &fields[4].shape else {
            panic!("gates is a sequence");
        };
        assert_eq!(children[0].sample_key, "gates.name");
    }
}

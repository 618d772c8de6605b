//! The objects a Flux Operator ResourceSet generates, rendered as Flux
//! Operator renders them when its inputs are written in it (controlplaneio-
//! fluxcd/flux-operator 17c6aead):
//!
//! - inputs: `spec.inputs`, each decoded from JSON (numbers are float64,
//!   `api/v1/resourceset_types.go` `GetInputs`), given a `provider` field
//!   naming the ResourceSet (`internal/inputs/provider.go`
//!   `getFromProvider`); `Flatten` (the default) keeps them as they are,
//!   `Permute` scopes each under the ResourceSet's normalized name and adds
//!   `id`, the Adler-32 of `NAME=INDEX` (`internal/inputs/permuter.go`
//!   `AddProvider`, `collectPermutation`; `keys.go`; `id.go`); with no input
//!   the templates render once with none;
//! - `resources`: each template, per input, rendered and decoded as one
//!   object; `resourcesTemplate`: per input, rendered and decoded as
//!   multi-document YAML, `List`s expanded, documents without apiVersion,
//!   kind or name and kustomize configurations dropped (fluxcd/pkg e2cfd1a2
//!   `ssa/utils/object.go` `ReadObjects`); objects annotated
//!   `fluxcd.controlplane.io/reconcile: disabled` left out; duplicates (group,
//!   kind, namespace, name) kept once, the first (`internal/builder/
//!   resourceset.go` `BuildResourceSet`); `steps` each built so, an object in
//!   two steps refused (`BuildResourceSetSteps`);
//! - `spec.commonMetadata` set on every object (`internal/controller/
//!   resourceset_controller.go` `apply`, fluxcd/pkg `SetCommonMetadata`).
//!
//! `spec.inputsFrom` reads ResourceSetInputProviders, whose inputs come
//! from outside the repository (pull requests, OCI tags): such a ResourceSet
//! is not rendered, and the note says so.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::gotemplate::{self, Error};

const DISABLED: (&str, &str) = ("fluxcd.controlplane.io/reconcile", "disabled");

/// Why a ResourceSet's objects are not rendered.
#[derive(Debug)]
pub enum NotRendered {
    /// It reads inputs from providers (`spec.inputsFrom`).
    Providers(Vec<String>),
    /// Its templates use what check does not render.
    Template(Error),
    /// Flux Operator's build fails too: it applies nothing.
    Failed(String),
}

impl std::fmt::Display for NotRendered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotRendered::Providers(p) => write!(
                f,
                "its inputs come from {} (spec.inputsFrom), which the repository does not hold",
                p.join(", ")
            ),
            NotRendered::Template(e @ Error::Unsupported(_)) => write!(f, "{e}"),
            NotRendered::Template(Error::Failed(e)) | NotRendered::Failed(e) => {
                write!(f, "Flux Operator's build fails: {e}")
            }
        }
    }
}

impl From<Error> for NotRendered {
    fn from(e: Error) -> Self {
        match e {
            Error::Failed(why) => NotRendered::Failed(why),
            e @ Error::Unsupported(_) => NotRendered::Template(e),
        }
    }
}

/// Whether `object` is a ResourceSet: (namespace, name).
pub fn resource_set(object: &Value) -> Option<(String, String)> {
    super::flux::of_kind(
        object,
        guard_core::model::kinds::OPERATOR,
        guard_core::model::kinds::RESOURCE_SET.kind,
    )
}

/// The objects the ResourceSet `object` (namespace `ns`, name `name`)
/// generates, in Flux Operator's order.
pub fn render(object: &Value, ns: &str, name: &str) -> Result<Vec<Value>, NotRendered> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let providers: Vec<String> = array(spec, "inputsFrom")
        .iter()
        .map(|p| {
            let field = |f: &str| p.get(f).and_then(Value::as_str).unwrap_or("");
            match field("name") {
                "" => format!("the {} selected by labels", field("kind")),
                n => format!("{} {ns}/{n}", field("kind")),
            }
        })
        .collect();
    if !providers.is_empty() {
        return Err(NotRendered::Providers(providers));
    }
    let inputs = combine(spec, ns, name)?;
    let steps = array(spec, "steps");
    let mut objects = Vec::new();
    if steps.is_empty() {
        objects = build(spec, &inputs)?;
    } else {
        if !array(spec, "resources").is_empty() || spec.get("resourcesTemplate").is_some() {
            return Err(NotRendered::Failed(
                "spec.steps is mutually exclusive with spec.resources and spec.resourcesTemplate"
                    .into(),
            ));
        }
        let mut seen: Vec<(String, String)> = Vec::new();
        for step in steps {
            let step_name = step.get("name").and_then(Value::as_str).unwrap_or("");
            for o in build(step, &inputs)? {
                let k = key(&o);
                match seen.iter().find(|(key, _)| *key == k) {
                    Some((_, other)) if other != step_name => {
                        return Err(NotRendered::Failed(format!(
                            "duplicate resource {k} in step \"{step_name}\", already defined in step \"{other}\""
                        )))
                    }
                    Some(_) => {}
                    None => seen.push((k, step_name.to_string())),
                }
                objects.push(o);
            }
        }
    }
    if let Some(common) = spec.get("commonMetadata") {
        for o in &mut objects {
            super::flux::common_metadata(o, common);
        }
    }
    Ok(objects)
}

fn array<'a>(value: &'a Value, field: &str) -> &'a [Value] {
    value
        .get(field)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The input sets, as `inputs.Combine` makes them from the ResourceSet's
/// own inputs.
fn combine(spec: &Value, ns: &str, name: &str) -> Result<Vec<Value>, NotRendered> {
    let provider = json!({"apiVersion": "fluxcd.controlplane.io/v1", "kind": "ResourceSet",
        "name": name, "namespace": ns});
    let mut sets = Vec::new();
    for (i, input) in array(spec, "inputs").iter().enumerate() {
        let Value::Object(map) = gotemplate::as_go(input) else {
            return Err(NotRendered::Failed(format!(
                "failed to get inputs from ResourceSet/{name}: inputs[{i}] is not an object"
            )));
        };
        let mut map = map;
        map.insert("provider".into(), provider.clone());
        sets.push(Value::Object(map));
    }
    let strategy = spec
        .pointer("/inputStrategy/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    match strategy {
        "" | "Flatten" => Ok(sets),
        "Permute" => {
            let key = normalize(name);
            if key.is_empty() {
                return Err(NotRendered::Failed(format!(
                    "normalized provider name is empty: '{name}'"
                )));
            }
            Ok(sets
                .into_iter()
                .enumerate()
                .map(|(i, set)| {
                    let mut perm = Map::new();
                    perm.insert(key.clone(), set);
                    perm.insert(
                        "id".into(),
                        Value::String(adler32(format!("{key}={i}").as_bytes()).to_string()),
                    );
                    Value::Object(perm)
                })
                .collect())
        }
        other => Err(NotRendered::Failed(format!(
            "unknown input strategy: '{other}'"
        ))),
    }
}

/// `NormalizeKeyForTemplate`: lower case, spaces and punctuation to `_`,
/// other characters dropped, runs of `_` collapsed and trimmed. Go's
/// `unicode.IsPunct` is taken as ASCII punctuation: a non-ASCII name is
/// refused by Kubernetes anyway.
fn normalize(name: &str) -> String {
    let mapped: String = name
        .to_lowercase()
        .chars()
        .filter_map(|c| {
            if c.is_whitespace() || c.is_ascii_punctuation() {
                Some('_')
            } else if c.is_ascii_lowercase() || c.is_ascii_digit() {
                Some(c)
            } else {
                None
            }
        })
        .collect();
    mapped
        .split('_')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// Go's `hash/adler32` `Checksum`.
fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % MOD;
        b = (b + a) % MOD;
    }
    (b << 16) | a
}

/// `BuildResourceSet`: the objects of `resources` then of
/// `resourcesTemplate`, for every input set.
fn build(spec: &Value, inputs: &[Value]) -> Result<Vec<Value>, NotRendered> {
    let mut objects: Vec<Value> = Vec::new();
    let mut keys: BTreeSet<String> = BTreeSet::new();
    let mut add = |object: Value, dedup: bool, objects: &mut Vec<Value>| {
        let k = key(&object);
        if dedup && keys.contains(&k) {
            return;
        }
        keys.insert(k);
        objects.push(object);
    };
    let none = [Value::Null];
    let sets: &[Value] = if inputs.is_empty() { &none } else { inputs };
    for (i, template) in array(spec, "resources").iter().enumerate() {
        for set in sets {
            let object = render_json(template, set).map_err(|e| match e {
                Error::Failed(why) => {
                    NotRendered::Failed(format!("failed to build resources[{i}]: {why}"))
                }
                e => NotRendered::Template(e),
            })?;
            if !inputs.is_empty() && disabled(&object) {
                continue;
            }
            add(object, !inputs.is_empty(), &mut objects);
        }
    }
    if let Some(text) = spec.get("resourcesTemplate").and_then(Value::as_str) {
        for set in sets {
            let rendered = gotemplate::render(text, set)?;
            for object in decode(&rendered)? {
                if !disabled(&object) {
                    add(object, true, &mut objects);
                }
            }
        }
    }
    Ok(objects)
}

fn disabled(object: &Value) -> bool {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(DISABLED.0))
        .and_then(Value::as_str)
        == Some(DISABLED.1)
}

/// `objectKey`: group, kind, namespace, name.
fn key(object: &Value) -> String {
    let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or("");
    let group = text("/apiVersion").rsplit_once('/').map_or("", |g| g.0);
    format!(
        "{group}/{}/{}/{}",
        text("/kind"),
        text("/metadata/namespace"),
        text("/metadata/name")
    )
}

/// A `resources` item rendered: Flux Operator writes the item as YAML
/// (`yaml.JSONToYAML`), renders that text and decodes it (`BuildResource`).
/// Here each string (key or value) holding an action is rendered on its
/// own and decoded as the YAML scalar it becomes in that text: plain where
/// the template text is a plain scalar, so `<< inputs.replicas >>` becomes
/// a number, quoted otherwise. Output that would change the document's
/// structure (a new line, a `: `, a leading indicator) or that YAML 1.1 and
/// 1.2 read differently (`yes`, `on`) is refused.
fn render_json(template: &Value, inputs: &Value) -> Result<Value, Error> {
    Ok(match template {
        Value::String(s) if s.contains("<<") => scalar(s, &gotemplate::render(s, inputs)?)?,
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|v| render_json(v, inputs))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let k = if k.contains("<<") {
                    match scalar(k, &gotemplate::render(k, inputs)?)? {
                        Value::String(s) => s,
                        other => other.to_string(),
                    }
                } else {
                    k.clone()
                };
                out.insert(k, render_json(v, inputs)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

/// How the rendered text of a template string reads back.
fn scalar(template: &str, rendered: &str) -> Result<Value, Error> {
    let refuse = |why: &str| {
        Err(Error::Unsupported(format!(
            "a template whose output {why} (`{template}` gives `{rendered}`)"
        )))
    };
    if rendered.contains('\n') {
        return refuse("spans lines inside a field");
    }
    if !plain(template) {
        // Quoted: the output stays a string, unless it breaks the quotes.
        if rendered.contains('\'') {
            return refuse("holds a quote inside a quoted field");
        }
        return Ok(Value::String(rendered.to_string()));
    }
    if rendered.is_empty() {
        return Ok(Value::Null);
    }
    if !plain(rendered) {
        return refuse("is not a plain YAML scalar");
    }
    const YAML11_BOOLS: [&str; 16] = [
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
        "OFF",
    ];
    if YAML11_BOOLS.contains(&rendered) {
        return refuse("is a YAML 1.1 boolean");
    }
    serde_norway::from_str::<Value>(rendered)
        .map_err(|e| Error::Failed(format!("failed to read object: {e}")))
}

/// Whether `s` can be written as a plain YAML scalar: no leading
/// indicator, no leading or trailing space, no `: ` or ` #`, no trailing
/// `:`, one line.
fn plain(s: &str) -> bool {
    let first = s.chars().next().unwrap_or(' ');
    !s.is_empty()
        && !"-?:,[]{}#&*!|>'\"%@`".contains(first)
        && s.trim() == s
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && !s.contains('\n')
        && !s.contains('\t')
}

/// `ReadObjects` on a rendered multi-document template.
fn decode(text: &str) -> Result<Vec<Value>, NotRendered> {
    let mut objects = Vec::new();
    for document in serde_norway::Deserializer::from_str(text) {
        let value = serde::Deserialize::deserialize(document).map_err(|e| {
            NotRendered::Failed(format!("failed to read objects from multi-doc YAML: {e}"))
        })?;
        let value: Value = value;
        let items = match value.get("items").and_then(Value::as_array) {
            Some(items)
                if value
                    .get("kind")
                    .and_then(Value::as_str)
                    .is_some_and(|k| k.ends_with("List")) =>
            {
                items.clone()
            }
            _ => vec![value],
        };
        for o in items {
            let text = |p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or("");
            let kustomize = text("/kind").eq_ignore_ascii_case("kustomization")
                && text("/apiVersion").starts_with("kustomize.config.k8s.io/");
            if !text("/metadata/name").is_empty()
                && !text("/kind").is_empty()
                && !text("/apiVersion").is_empty()
                && !kustomize
            {
                objects.push(o);
            }
        }
    }
    Ok(objects)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler32_matches_go() {
        // Go: fmt.Println(adler32.Checksum([]byte("Wikipedia"))) = 300286872.
        assert_eq!(adler32(b"Wikipedia"), 300_286_872);
    }

    #[test]
    fn normalized_names() {
        assert_eq!(normalize("My App-Set.v2"), "my_app_set_v2");
        assert_eq!(normalize("--"), "");
    }
}

#[cfg(test)]
mod rendering {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]
    use super::*;

    fn rset(spec: Value) -> Value {
        json!({"apiVersion": "fluxcd.controlplane.io/v1", "kind": "ResourceSet",
            "metadata": {"name": "apps", "namespace": "flux-system"}, "spec": spec})
    }

    /// d2-fleet's `tenants/apps.yaml` shape: a tenant per inline input.
    #[test]
    fn flatten_renders_each_resource_per_input() {
        let objects = render(
            &rset(json!({
                "inputs": [{"tenant": "frontend", "replicas": 2}, {"tenant": "backend", "replicas": 3}],
                "resources": [
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "<< inputs.tenant >>"}},
                    {"apiVersion": "apps/v1", "kind": "Deployment",
                     "metadata": {"name": "web", "namespace": "<< inputs.tenant >>"},
                     "spec": {"replicas": "<< inputs.replicas >>",
                              "label": "team: << inputs.tenant >>",
                              "from": "<< inputs.provider.kind >>/<< inputs.provider.name >>"}}
                ]
            })),
            "flux-system",
            "apps",
        )
        .unwrap();
        let names: Vec<String> = objects.iter().map(key).collect();
        assert_eq!(
            names,
            [
                "/Namespace//frontend",
                "/Namespace//backend",
                "apps/Deployment/frontend/web",
                "apps/Deployment/backend/web"
            ]
        );
        // A plain template scalar is read back as YAML: a number here.
        assert_eq!(objects[3]["spec"]["replicas"], json!(3));
        assert_eq!(objects[3]["spec"]["from"], json!("ResourceSet/apps"));
        // A quoted one stays a string.
        assert_eq!(objects[3]["spec"]["label"], json!("team: backend"));
    }

    /// d1-fleet's `flux-operator.yaml` shape: no inputs, templates once.
    #[test]
    fn no_inputs_render_once() {
        let objects = render(
            &rset(
                json!({"resources": [{"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "a", "namespace": "flux-system"}}]}),
            ),
            "flux-system",
            "apps",
        )
        .unwrap();
        assert_eq!(objects.len(), 1);
    }

    #[test]
    fn permute_scopes_inputs_under_the_name_and_adds_an_id() {
        let objects = render(
            &rset(json!({
                "inputStrategy": {"name": "Permute"},
                "inputs": [{"env": "dev"}, {"env": "prod"}],
                "resourcesTemplate": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: << inputs.apps.env >>-<< inputs.id >>\n  namespace: default\n"
            })),
            "flux-system",
            "apps",
        )
        .unwrap();
        let names: Vec<&str> = objects
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        // Go: adler32.Checksum([]byte("apps=0")) = 138347042, "apps=1" = 138412579.
        assert_eq!(names, ["dev-138347042", "prod-138412579"]);
    }

    #[test]
    fn disabled_and_duplicate_objects_are_left_out() {
        let objects = render(
            &rset(json!({
                "inputs": [{"n": "a", "off": "disabled"}, {"n": "a", "off": "enabled"}],
                "resources": [{"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "x-<< inputs.n >>", "namespace": "d",
                        "annotations": {"fluxcd.controlplane.io/reconcile": "<< inputs.off >>"}}}]
            })),
            "flux-system",
            "apps",
        )
        .unwrap();
        assert_eq!(objects.len(), 1);
        assert_eq!(
            objects[0]["metadata"]["annotations"]["fluxcd.controlplane.io/reconcile"],
            json!("enabled")
        );
    }

    #[test]
    fn providers_and_unsupported_templates_are_not_rendered() {
        let from = render(
            &rset(
                json!({"inputsFrom": [{"kind": "ResourceSetInputProvider", "name": "prs"}],
                "resources": []}),
            ),
            "flux-system",
            "apps",
        );
        assert_eq!(
            from.unwrap_err().to_string(),
            "its inputs come from ResourceSetInputProvider flux-system/prs (spec.inputsFrom), which the repository does not hold"
        );
        let unsupported = render(
            &rset(
                json!({"inputs": [{"a": "b"}], "resourcesTemplate": "<< inputs.a | sha256sum >>"}),
            ),
            "flux-system",
            "apps",
        );
        assert_eq!(
            unsupported.unwrap_err().to_string(),
            "template uses the function sha256sum, which check does not render"
        );
    }
}

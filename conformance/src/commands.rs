//! Every command a policy suggests must be admitted when the person runs it.
//!
//! A refusal or warning may suggest `kubectl annotate`, `kubectl patch
//! --type merge` or `flux suspend|resume`. [`check_suggested`] finds each one
//! in a case's response, applies it to the stored object exactly as the
//! client would, builds the request kube-apiserver then sends, judges it with
//! the same policy and settings, and reports it unless it is admitted
//! without suggesting the same command again.
//!
//! What the clients send, read in their source:
//! - `kubectl annotate` sets and removes keys on its copy of the object and
//!   sends the JSON merge patch between the two, always, under field manager
//!   `kubectl-annotate` (kubernetes/kubectl `pkg/cmd/annotate/annotate.go`,
//!   `AnnotateOptions.RunAnnotate` and `updateAnnotations`, commit dee3483a);
//!   without `--overwrite` an existing key is an error.
//! - `kubectl patch --type merge` sends its patch as given (RFC 7386) under
//!   field manager `kubectl-patch`.
//! - `flux suspend` / `flux resume` set `spec.suspend` to true / false on the
//!   typed object and send controller-runtime's `client.MergeFrom` diff;
//!   `suspend` is `omitempty`, so the patch is `{"spec":{"suspend":true}}`,
//!   `{"spec":{"suspend":null}}` or `{}` (fluxcd/flux2 `cmd/flux/suspend.go`
//!   `suspendCommand.patch`, `cmd/flux/resume.go` `resumeCommand.patch`,
//!   commit da2d22d3). Its client names no field manager, so kube-apiserver
//!   records the user agent's first word, `flux`.
//! - kube-apiserver hands a PATCH to admission as an UPDATE whose options are
//!   `UpdateOptions` carrying the client's `fieldManager`
//!   (k8s.io/apiserver `pkg/endpoints/handlers/patch.go`
//!   `patchToUpdateOptions`, `managerOrUserAgent`, commit 24a394e5). Mutating
//!   admission runs before the registry's `PrepareForUpdate`, so the object
//!   it sees keeps the stored `resourceVersion` and `generation`.
//!
//! Placeholders a person fills in are filled with realistic values:
//! `<ticket>`, `<why>`, `<value>`, and `<RFC 3339 time>` (one hour after the
//! case's `now`); any other `<...>` is reported. The shell substitution
//! `$(date -u +%Y-%m-%dT%H:%M:%SZ)` reads the case's `now`; any other `$`
//! expansion is reported.

use std::path::Path;

use guard_core::{Entry, Timestamp};
use serde_json::{json, Map, Value};

use crate::case::{load_cases, Case};
use crate::response::{decoded_patch, PolicyMode};

/// Runs every case, then every command its response suggests. Returns how
/// many commands were checked and one line per failing command.
pub fn check_suggested(entry: &Entry, dir: &Path) -> Result<(usize, Vec<String>), String> {
    let cases = load_cases(dir)?;
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in &cases {
        let response =
            crate::evaluate_native(entry, case).map_err(|e| format!("{}: {e}", case.id))?;
        for command in suggested(&response) {
            checked += 1;
            if let Err(e) = follow_up(entry, case, &response, &command) {
                failures.push(format!("{}: `{command}`: {e}", case.id));
            }
        }
    }
    Ok((checked, failures))
}

/// The texts of a response a person reads: status message and warnings.
fn texts(response: &Value) -> Vec<&str> {
    let mut texts: Vec<&str> = response
        .pointer("/status/message")
        .and_then(Value::as_str)
        .into_iter()
        .collect();
    if let Some(warnings) = response.get("warnings").and_then(Value::as_array) {
        texts.extend(warnings.iter().filter_map(Value::as_str));
    }
    texts
}

/// The commands suggested in a response, each as written.
pub fn suggested(response: &Value) -> Vec<String> {
    texts(response).into_iter().flat_map(commands_in).collect()
}

const STARTS: [&str; 3] = ["kubectl ", "flux suspend ", "flux resume "];

/// Commands in one text. A command starts with `kubectl` or `flux
/// suspend|resume` at a word boundary and ends at its closing backtick when
/// it opens with one, otherwise at the end of the line.
pub fn commands_in(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some((at, _)) = STARTS
        .iter()
        .filter_map(|s| rest.find(s).map(|i| (i, *s)))
        .min_by_key(|(i, _)| *i)
    {
        let before = rest.get(..at).and_then(|b| b.chars().last());
        let after = rest.get(at..).unwrap_or("");
        let boundary = before.is_none_or(|c| c.is_whitespace() || "`(:".contains(c));
        let end = if before == Some('`') {
            after.find('`')
        } else {
            after.find('\n')
        }
        .unwrap_or(after.len());
        if boundary {
            let command = after.get(..end).unwrap_or("").trim_end();
            found.push(command.strip_suffix('.').unwrap_or(command).to_string());
        }
        rest = after.get(end.max(1)..).unwrap_or("");
    }
    found
}

/// What a command does to one object.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The resource word as typed (`kustomizations.kustomize.toolkit.fluxcd.io`, `gate`).
    pub resource: String,
    pub name: String,
    pub namespace: Option<String>,
    pub action: Action,
    /// `--field-manager` when given; otherwise the client's default.
    pub field_manager: Option<String>,
}

impl Command {
    /// The field manager the client names (none for the flux CLI).
    fn field_manager(&self) -> Option<&str> {
        self.field_manager
            .as_deref()
            .or_else(|| self.action.default_field_manager())
    }

    /// The manager kube-apiserver records in managedFields: the client's
    /// field manager, or the first word of its user agent, `flux`.
    fn manager(&self) -> &str {
        self.field_manager().unwrap_or("flux")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Annotate {
        set: Vec<(String, String)>,
        remove: Vec<String>,
        overwrite: bool,
    },
    MergePatch(Value),
    FluxSuspend,
    FluxResume,
}

impl Action {
    /// The field manager kubectl names by default (`--field-manager`'s
    /// default, kubernetes/kubectl `pkg/cmd/annotate/annotate.go` and
    /// `pkg/cmd/patch/patch.go`, commit dee3483a); none for the flux CLI.
    fn default_field_manager(&self) -> Option<&'static str> {
        match self {
            Action::Annotate { .. } => Some("kubectl-annotate"),
            Action::MergePatch(_) => Some("kubectl-patch"),
            Action::FluxSuspend | Action::FluxResume => None,
        }
    }
}

/// Fills placeholders and the one shell substitution the policies use.
fn fill(word: &str, now: Timestamp) -> Result<String, String> {
    let later = Timestamp::from_second(now.as_second().saturating_add(3600))
        .map_err(|e| format!("cannot compute a time after now: {e}"))?;
    let mut out = word
        .replace(
            "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
            &guard_core::rfc3339::format(now),
        )
        .replace("<ticket>", "INC-4711")
        .replace("<why>", "database migration")
        .replace("<value>", "example")
        .replace("<RFC 3339 time>", &guard_core::rfc3339::format(later));
    if let Some(i) = out.find('<') {
        if out.get(i..).is_some_and(|r| r.contains('>')) {
            return Err(format!("unknown placeholder in {out:?}"));
        }
    }
    if out.contains('$') {
        return Err(format!("unsupported shell expansion in {word:?}"));
    }
    out.shrink_to_fit();
    Ok(out)
}

/// Parses a command with POSIX shell quoting.
pub fn parse(command: &str, now: Timestamp) -> Result<Command, String> {
    let words = shlex::split(command).ok_or("unbalanced quotes")?;
    let words = words
        .iter()
        .map(|w| fill(w, now))
        .collect::<Result<Vec<_>, _>>()?;
    match words.split_first() {
        Some((tool, rest)) if tool == "kubectl" => kubectl(rest),
        Some((tool, rest)) if tool == "flux" => flux(rest),
        _ => Err("not a kubectl or flux command".to_string()),
    }
}

fn kubectl(words: &[String]) -> Result<Command, String> {
    let mut namespace = None;
    let mut overwrite = false;
    let mut patch_type = None;
    let mut patch = None;
    let mut field_manager = None;
    let mut positional = Vec::new();
    let mut it = words.iter();
    while let Some(word) = it.next() {
        let mut value = |flag: &str| -> Result<String, String> {
            match word.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                Some(v) => Ok(v.to_string()),
                None => it.next().cloned().ok_or(format!("{flag} needs a value")),
            }
        };
        match word.as_str() {
            w if w == "-n" || w.starts_with("--namespace") => {
                namespace = Some(value(if w == "-n" { "-n" } else { "--namespace" })?)
            }
            "--overwrite" | "--overwrite=true" => overwrite = true,
            w if w.starts_with("--type") => patch_type = Some(value("--type")?),
            w if w == "-p" || w.starts_with("--patch") => {
                patch = Some(value(if w == "-p" { "-p" } else { "--patch" })?)
            }
            w if w.starts_with("--field-manager") => {
                field_manager = Some(value("--field-manager")?)
            }
            w if w.starts_with('-') => return Err(format!("unsupported flag {w}")),
            _ => positional.push(word.clone()),
        }
    }
    let Some((verb, args)) = positional.split_first() else {
        return Err("no kubectl verb".to_string());
    };
    let (action, targets): (Action, Vec<&String>) = match verb.as_str() {
        "annotate" => {
            let (mut set, mut remove, mut targets) = (Vec::new(), Vec::new(), Vec::new());
            for a in args {
                if let Some((k, v)) = a.split_once('=') {
                    set.push((k.to_string(), v.to_string()));
                } else if let Some(k) = a.strip_suffix('-') {
                    remove.push(k.to_string());
                } else {
                    targets.push(a);
                }
            }
            if set.is_empty() && remove.is_empty() {
                return Err("kubectl annotate needs at least one annotation".to_string());
            }
            let action = Action::Annotate {
                set,
                remove,
                overwrite,
            };
            (action, targets)
        }
        "patch" => {
            if !matches!(patch_type.as_deref(), Some("merge")) {
                return Err(format!("only --type merge is applied, not {patch_type:?}"));
            }
            let text = patch.ok_or("kubectl patch needs -p")?;
            let body =
                serde_json::from_str(&text).map_err(|e| format!("patch is not JSON: {e}"))?;
            (Action::MergePatch(body), args.iter().collect())
        }
        other => return Err(format!("unsupported kubectl verb {other}")),
    };
    let (resource, name) = resource_and_name(&targets)?;
    Ok(Command {
        resource,
        name,
        namespace,
        action,
        field_manager,
    })
}

/// `TYPE NAME` or `TYPE/NAME`.
fn resource_and_name(words: &[&String]) -> Result<(String, String), String> {
    match words {
        [one] => one
            .split_once('/')
            .map(|(t, n)| (t.to_string(), n.to_string()))
            .ok_or(format!("{one} names no object")),
        [kind, name] => Ok((kind.to_string(), name.to_string())),
        _ => Err(format!("expected one object, found words {words:?}")),
    }
}

/// `flux suspend|resume <kind> [<source kind>] NAME [-n NS]`. The flux CLI's
/// namespace defaults to `flux-system`.
fn flux(words: &[String]) -> Result<Command, String> {
    let mut namespace = "flux-system".to_string();
    let mut positional = Vec::new();
    let mut it = words.iter();
    while let Some(word) = it.next() {
        match word.as_str() {
            "-n" | "--namespace" => {
                namespace = it.next().cloned().ok_or("-n needs a value")?;
            }
            w if w.starts_with("--namespace=") => {
                namespace = w.trim_start_matches("--namespace=").to_string();
            }
            w if w.starts_with('-') => return Err(format!("unsupported flag {w}")),
            _ => positional.push(word.as_str()),
        }
    }
    let (action, rest) = match positional.split_first() {
        Some((&"suspend", rest)) => (Action::FluxSuspend, rest),
        Some((&"resume", rest)) => (Action::FluxResume, rest),
        _ => return Err("only flux suspend and flux resume are applied".to_string()),
    };
    let (kind, name) = match rest {
        ["source", sub, name] => (format!("source {sub}"), name),
        ["image", sub, name] => (format!("image {sub}"), name),
        [kind, name] => (kind.to_string(), name),
        _ => return Err(format!("expected a kind and a name, found {rest:?}")),
    };
    let kind = match kind.as_str() {
        "kustomization" | "ks" => "Kustomization",
        "helmrelease" | "hr" => "HelmRelease",
        "source git" => "GitRepository",
        "source oci" => "OCIRepository",
        "source bucket" => "Bucket",
        "source helm" => "HelmRepository",
        "source chart" => "HelmChart",
        "image repository" => "ImageRepository",
        "image policy" => "ImagePolicy",
        "image update" => "ImageUpdateAutomation",
        "alert" => "Alert",
        "alert-provider" => "Provider",
        "receiver" => "Receiver",
        other => return Err(format!("flux has no {other} kind")),
    };
    Ok(Command {
        resource: kind.to_lowercase(),
        name: name.to_string(),
        namespace: Some(namespace),
        action,
        field_manager: None,
    })
}

/// The merge patch the client sends for `action` against `stored`.
pub fn patch_for(action: &Action, stored: &Value) -> Result<Value, String> {
    match action {
        Action::Annotate {
            set,
            remove,
            overwrite,
        } => {
            let current = stored.pointer("/metadata/annotations");
            let mut annotations = Map::new();
            for (k, v) in set {
                let existing = current.and_then(|a| a.get(k)).and_then(Value::as_str);
                if existing.is_some() && !overwrite {
                    return Err(format!(
                        "kubectl refuses: --overwrite is false but {k} is set"
                    ));
                }
                if existing != Some(v.as_str()) {
                    annotations.insert(k.clone(), json!(v));
                }
            }
            for k in remove {
                if current.and_then(|a| a.get(k)).is_some() {
                    annotations.insert(k.clone(), Value::Null);
                }
            }
            // kubectl's typed copy omits an emptied map: the patch nulls it.
            let left = current.and_then(Value::as_object).map_or(0, |a| {
                a.keys()
                    .filter(|k| !matches!(annotations.get(*k), Some(Value::Null)))
                    .count()
            });
            let added = set
                .iter()
                .filter(|(k, _)| current.and_then(|a| a.get(k)).is_none())
                .count();
            Ok(if annotations.is_empty() {
                json!({})
            } else if left + added == 0 {
                json!({"metadata": {"annotations": null}})
            } else {
                json!({"metadata": {"annotations": annotations}})
            })
        }
        Action::MergePatch(body) => Ok(body.clone()),
        Action::FluxSuspend | Action::FluxResume => {
            let suspended = stored.pointer("/spec/suspend") == Some(&Value::Bool(true));
            Ok(match (action, suspended) {
                (Action::FluxSuspend, false) => json!({"spec": {"suspend": true}}),
                (Action::FluxResume, true) => json!({"spec": {"suspend": null}}),
                _ => json!({}),
            })
        }
    }
}

/// `fieldsV1` of the fields a merge patch sets (nulls remove, not set).
fn fields_set(patch: &Value) -> Option<Value> {
    let map = patch.as_object()?;
    let mut fields = Map::new();
    for (k, v) in map {
        match v {
            Value::Null => {}
            Value::Object(_) => {
                if let Some(inner) = fields_set(v) {
                    fields.insert(format!("f:{k}"), inner);
                }
            }
            _ => {
                fields.insert(format!("f:{k}"), json!({}));
            }
        }
    }
    (!fields.is_empty()).then_some(Value::Object(fields))
}

/// Removes from a `fieldsV1` set the fields a merge patch removes.
fn drop_removed(fields: &mut Value, patch: &Value) {
    let (Some(fields), Some(patch)) = (fields.as_object_mut(), patch.as_object()) else {
        return;
    };
    for (k, v) in patch {
        let key = format!("f:{k}");
        match v {
            Value::Null => {
                fields.remove(&key);
            }
            Value::Object(_) => {
                if let Some(inner) = fields.get_mut(&key) {
                    drop_removed(inner, v);
                }
            }
            _ => {}
        }
    }
}

fn merge_fields(into: &mut Value, from: &Value) {
    if let (Some(into), Some(from)) = (into.as_object_mut(), from.as_object()) {
        for (k, v) in from {
            match into.get_mut(k) {
                Some(existing) => merge_fields(existing, v),
                None => {
                    into.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// managedFields after an Update by `manager`: its entry gains the fields
/// set, every entry loses the fields removed.
fn record_manager(object: &mut Value, manager: &str, patch: &Value, now: Timestamp) {
    let api_version = object.get("apiVersion").cloned().unwrap_or(Value::Null);
    let Some(entries) = object
        .pointer_mut("/metadata/managedFields")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for entry in entries.iter_mut() {
        if let Some(fields) = entry.get_mut("fieldsV1") {
            drop_removed(fields, patch);
        }
    }
    let Some(set) = fields_set(patch) else {
        return;
    };
    let time = json!(guard_core::rfc3339::format(now));
    let mine = entries.iter_mut().find(|e| {
        e.get("manager").and_then(Value::as_str) == Some(manager)
            && e.get("operation").and_then(Value::as_str) == Some("Update")
            && e.get("subresource").is_none()
    });
    match mine {
        Some(entry) => {
            if let Some(fields) = entry.get_mut("fieldsV1") {
                merge_fields(fields, &set);
            }
            if let Some(t) = entry.get_mut("time") {
                *t = time;
            }
        }
        None => entries.push(json!({
            "manager": manager, "operation": "Update", "apiVersion": api_version,
            "time": time, "fieldsType": "FieldsV1", "fieldsV1": set,
        })),
    }
}

/// The object stored after the case's request: the request's object with the
/// policy's patch when admitted; the old object when an UPDATE or DELETE was
/// refused; the object the person tried to create when a CREATE was refused.
fn stored(request: &Value, response: &Value) -> Result<Value, String> {
    let allowed = response.get("allowed") == Some(&Value::Bool(true));
    let operation = request
        .get("operation")
        .and_then(Value::as_str)
        .unwrap_or("");
    let pick = |key: &str| {
        request
            .get(key)
            .filter(|o| o.is_object())
            .cloned()
            .ok_or(format!("the request has no {key} to apply the command to"))
    };
    match (allowed, operation) {
        (true, "DELETE") => Err("the object was deleted".to_string()),
        (true, _) => with_patch(pick("object")?, response),
        (false, "CREATE") => pick("object"),
        (false, _) => pick("oldObject"),
    }
}

/// Does the command's resource word name this object's kind?
fn names_kind(word: &str, kind: &str, plural: &str) -> bool {
    let word = word.split('.').next().unwrap_or(word).to_ascii_lowercase();
    let kind = kind.to_ascii_lowercase();
    word == kind || word == plural || word == format!("{kind}s")
}

/// The object a command acts on: the case's own object, or one the case
/// records in its cluster context.
fn target(
    case: &Case,
    request: &Value,
    response: &Value,
    command: &Command,
) -> Result<(Value, bool), String> {
    let own = stored(request, response);
    let matches = |object: &Value, plural: &str| {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let ns = object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("");
        names_kind(&command.resource, kind, plural)
            && name == command.name
            && command.namespace.as_deref().unwrap_or("") == ns
    };
    let plural = request
        .pointer("/resource/resource")
        .and_then(Value::as_str)
        .unwrap_or("");
    if let Ok(object) = &own {
        if matches(object, plural) {
            return Ok((object.clone(), true));
        }
    }
    for recorded in &case.context {
        if let Some(object) = &recorded.object {
            if matches(object, "") {
                return Ok((object.clone(), false));
            }
        }
    }
    match own {
        Err(e) => Err(e),
        Ok(_) => Err(format!(
            "it targets {} {} in namespace {:?}, neither the request's object nor one the case records",
            command.resource, command.name, command.namespace.as_deref().unwrap_or("")
        )),
    }
}

/// A person runs the command: userInfo of the case's request unless that was
/// a controller or the audit scanner.
fn person(request: &Value) -> Value {
    let user = request.get("userInfo").cloned().unwrap_or(Value::Null);
    let name = user.get("username").and_then(Value::as_str).unwrap_or("");
    if name.is_empty() || name.starts_with("system:") {
        json!({"username": "alice@example.com", "groups": ["system:authenticated"]})
    } else {
        user
    }
}

fn follow_up(entry: &Entry, case: &Case, response: &Value, text: &str) -> Result<(), String> {
    let command = parse(text, case.now)?;
    let request = case.admission_request();
    let (object, own) = target(case, &request, response, &command)?;
    let patch = patch_for(&command.action, &object)?;
    let mut patched = object.clone();
    json_patch::merge(&mut patched, &patch);
    record_manager(&mut patched, command.manager(), &patch, case.now);

    // The audit scanner replays stored objects as CREATEs without userInfo:
    // the object exists, so the person's command is an UPDATE of it.
    let replay = request
        .pointer("/userInfo/username")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty();
    let refused_create = request.get("operation").and_then(Value::as_str) == Some("CREATE")
        && response.get("allowed") != Some(&Value::Bool(true))
        && own
        && !replay;
    let resource = if own {
        request.get("resource").cloned().unwrap_or(Value::Null)
    } else {
        let resource = command.resource.split('.').next().unwrap_or("");
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        json!({"group": group, "version": version, "resource": resource})
    };
    let write = Write {
        name: &command.name,
        resource,
        user: person(&request),
        field_manager: command.field_manager(),
    };
    let old = if refused_create {
        Value::Null
    } else {
        object.clone()
    };
    let answer = judge_write(entry, case, &write, patched.clone(), old)?;
    if answer.get("allowed") != Some(&Value::Bool(true)) {
        let message = answer
            .pointer("/status/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        let operation = if refused_create { "CREATE" } else { "UPDATE" };
        return Err(format!("the follow-up {operation} is refused: {message}"));
    }
    if suggested(&answer).iter().any(|c| c == text) {
        return Err("the follow-up suggests the same command again".to_string());
    }
    if refused_create {
        return Ok(());
    }
    let stored = with_patch(patched, &answer)?;
    // The values the owners set: the case's object as its writer sent it,
    // before the policy's patch, which belongs to no manager.
    let sent = request.get("object").filter(|o| o.is_object());
    let owners_values = match sent {
        Some(sent) if own && response.get("allowed") == Some(&Value::Bool(true)) => sent,
        _ => &object,
    };
    owner_apply::survives(entry, case, &write, &object, owners_values, stored)
}

/// One write to judge: who sends it, for which object, under which manager.
struct Write<'a> {
    name: &'a str,
    /// The request's `resource`.
    resource: Value,
    user: Value,
    field_manager: Option<&'a str>,
}

/// Judges the request kube-apiserver sends for a write of `object` over
/// `old` (a CREATE when `old` is null), with the case's policy and settings.
fn judge_write(
    entry: &Entry,
    case: &Case,
    write: &Write<'_>,
    object: Value,
    old: Value,
) -> Result<Value, String> {
    let (operation, options) = if old.is_null() {
        ("CREATE", "CreateOptions")
    } else {
        ("UPDATE", "UpdateOptions")
    };
    let mut opts = json!({"kind": options, "apiVersion": "meta.k8s.io/v1"});
    if let (Some(manager), Some(map)) = (write.field_manager, opts.as_object_mut()) {
        map.insert("fieldManager".into(), json!(manager));
    }
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = json!({"group": group, "version": version, "kind": object.get("kind").cloned().unwrap_or(Value::Null)});
    let request = case.admission_request();
    let uid = request.get("uid").and_then(Value::as_str).unwrap_or("");
    let follow = json!({
        "uid": format!("{uid}-follow-up"),
        "kind": gvk, "resource": write.resource, "requestKind": gvk,
        "requestResource": write.resource,
        "name": write.name,
        "namespace": object.pointer("/metadata/namespace").cloned().unwrap_or(json!("")),
        "operation": operation,
        "userInfo": write.user,
        "object": object,
        "oldObject": old,
        "dryRun": false,
        "options": opts,
    });
    let mut next = case.clone();
    next.request = follow;
    next.policy_mode = PolicyMode::Protect;
    crate::evaluate_native(entry, &next)
}

/// `object` with the policy's patch from `answer` applied: what is stored.
fn with_patch(mut object: Value, answer: &Value) -> Result<Value, String> {
    let ops: json_patch::Patch = serde_json::from_value(Value::Array(decoded_patch(answer)?))
        .map_err(|e| format!("unreadable patch: {e}"))?;
    json_patch::patch(&mut object, &ops).map_err(|e| format!("patch does not apply: {e}"))?;
    Ok(object)
}

/// The next apply of the Kustomization that owns an object, simulated on the
/// object a suggested command left: the command's effect must survive it.
///
/// What kustomize-controller does, read in its source:
/// - it labels every object it applies `kustomize.toolkit.fluxcd.io/name`
///   (fluxcd/pkg `ssa/manager.go` `SetOwnerLabels`, commit e2cfd1a2);
/// - before applying, unless the object is annotated
///   `kustomize.toolkit.fluxcd.io/ssa: Merge` (any case, `utils.AnyInMetadata`),
///   it renames the managedFields entries of managers starting with
///   `kubectl` (Apply and Update), `before-first-apply` (Update) and its own
///   `Update` entries into its `Apply` entry (fluxcd/kustomize-controller
///   `internal/controller/kustomization_controller.go` `apply`,
///   `ApplyCleanupOptions.FieldManagers`, commit 186fb3b2; fluxcd/pkg
///   `ssa/patch.go` `PatchReplaceFieldsManagers` and `matchFieldManager`,
///   `ssa/manager_apply.go` `cleanupMetadata`, a JSON patch under field
///   manager `kustomize-controller`);
/// - its server-side apply then sets the fields of the manifest and removes
///   the fields its `Apply` entry owned that the manifest no longer states,
///   unless another manager owns them too.
///
/// The manifest in Git is taken to be what the owner's `Apply` entry owned
/// before the command, with the values they had then.
mod owner_apply {
    use super::{judge_write, merge_fields, with_patch, Write};
    use crate::case::Case;
    use guard_core::Entry;
    use serde_json::{json, Map, Value};

    const OWNER_LABEL: &str = "kustomize.toolkit.fluxcd.io/name";
    const SSA_ANNOTATION: &str = "kustomize.toolkit.fluxcd.io/ssa";
    const APPLIER: &str = "kustomize-controller";
    const APPLIER_USER: &str = "system:serviceaccount:flux-system:kustomize-controller";

    /// Does the object's owner apply it (and the command need survive that)?
    fn owned(object: &Value) -> bool {
        object
            .pointer("/metadata/labels")
            .and_then(|l| l.get(OWNER_LABEL))
            .is_some()
    }

    /// Objects annotated `ssa: Merge` skip the managedFields cleanup.
    fn merge_only(object: &Value) -> bool {
        ["labels", "annotations"].iter().any(|map| {
            object
                .pointer(&format!("/metadata/{map}"))
                .and_then(|m| m.get(SSA_ANNOTATION))
                .and_then(Value::as_str)
                .is_some_and(|v| v.eq_ignore_ascii_case("merge"))
        })
    }

    fn text<'a>(entry: &'a Value, key: &str) -> &'a str {
        entry.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// An entry whose fields the cleanup hands to the owner's apply.
    fn taken_over(entry: &Value) -> bool {
        let manager = text(entry, "manager");
        text(entry, "subresource").is_empty()
            && match text(entry, "operation") {
                "Apply" => manager.starts_with("kubectl"),
                "Update" => {
                    manager.starts_with("kubectl")
                        || manager.starts_with("before-first-apply")
                        || manager.starts_with(APPLIER)
                }
                _ => false,
            }
    }

    fn is_applier(entry: &Value) -> bool {
        text(entry, "manager") == APPLIER
            && text(entry, "operation") == "Apply"
            && text(entry, "subresource").is_empty()
    }

    fn entries(object: &Value) -> Vec<Value> {
        object
            .pointer("/metadata/managedFields")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    /// The fields the owner's apply entry holds (`{}` when it has none).
    fn applier_fields(object: &Value) -> Value {
        entries(object)
            .iter()
            .find(|e| is_applier(e))
            .and_then(|e| e.get("fieldsV1").cloned())
            .unwrap_or_else(|| json!({}))
    }

    /// Replaces the managedFields entries.
    fn set_entries(object: &mut Value, list: Vec<Value>) {
        if let Some(slot) = object.pointer_mut("/metadata/managedFields") {
            *slot = Value::Array(list);
        }
    }

    /// The cleanup: entries taken over merge into the owner's apply entry.
    fn take_over(object: &mut Value) -> bool {
        let all = entries(object);
        if !all.iter().any(taken_over) {
            return false;
        }
        let mut fields = applier_fields(object);
        let mut kept = Vec::new();
        let mut applier = None;
        for entry in all {
            if taken_over(&entry) {
                if let Some(f) = entry.get("fieldsV1") {
                    merge_fields(&mut fields, f);
                }
                if applier.is_none() {
                    applier = Some(entry);
                }
            } else if is_applier(&entry) {
                applier = Some(entry);
            } else {
                kept.push(entry);
            }
        }
        let mut applier = applier.unwrap_or_else(|| json!({}));
        if let Some(map) = applier.as_object_mut() {
            map.insert("manager".into(), json!(APPLIER));
            map.insert("operation".into(), json!("Apply"));
            map.insert("fieldsV1".into(), fields);
        }
        kept.push(applier);
        set_entries(object, kept);
        true
    }

    /// The field paths a `fieldsV1` set holds, by member name. A member
    /// keyed by list item or value (`k:`, `v:`, `i:`) is taken whole.
    fn leaves(fields: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        let children: Vec<(&String, &Value)> = fields
            .as_object()
            .map(|m| m.iter().filter(|(k, _)| k.as_str() != ".").collect())
            .unwrap_or_default();
        let named = children.iter().all(|(k, _)| k.starts_with("f:"));
        if children.is_empty() || !named {
            if !prefix.is_empty() {
                out.push(prefix.clone());
            }
            return;
        }
        for (k, v) in children {
            prefix.push(k.trim_start_matches("f:").to_string());
            leaves(v, prefix, out);
            prefix.pop();
        }
    }

    fn paths(fields: &Value) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        leaves(fields, &mut Vec::new(), &mut out);
        out
    }

    fn get<'a>(object: &'a Value, path: &[String]) -> Option<&'a Value> {
        path.iter().try_fold(object, |v, k| v.get(k))
    }

    fn remove(object: &mut Value, path: &[String]) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let mut at = object;
        for k in parents {
            match at.get_mut(k) {
                Some(next) => at = next,
                None => return,
            }
        }
        if let Some(map) = at.as_object_mut() {
            map.remove(last);
        }
    }

    fn set(object: &mut Value, path: &[String], value: Value) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let mut at = object;
        for k in parents {
            let Some(map) = at.as_object_mut() else {
                return;
            };
            at = map
                .entry(k.clone())
                .or_insert_with(|| Value::Object(Map::new()));
        }
        if let Some(map) = at.as_object_mut() {
            map.insert(last.clone(), value);
        }
    }

    /// The owner's server-side apply of `git` (its manifest: `manifest`
    /// fields with their values in `git`) over `current`.
    fn apply(current: &Value, git: &Value, manifest: &Value) -> Value {
        let mut object = current.clone();
        let wanted = paths(manifest);
        let mut others = json!({});
        for entry in entries(current) {
            if !is_applier(&entry) && text(&entry, "subresource").is_empty() {
                if let Some(f) = entry.get("fieldsV1") {
                    merge_fields(&mut others, f);
                }
            }
        }
        let other_paths = paths(&others);
        for path in paths(&applier_fields(current)) {
            let stated = wanted
                .iter()
                .any(|w| path.starts_with(w) || w.starts_with(&path));
            let shared = other_paths
                .iter()
                .any(|o| path.starts_with(o) || o.starts_with(&path));
            if !stated && !shared {
                remove(&mut object, &path);
            }
        }
        for path in &wanted {
            if let Some(value) = get(git, path) {
                set(&mut object, path, value.clone());
            }
        }
        let mut list: Vec<Value> = entries(current)
            .into_iter()
            .filter(|e| !is_applier(e))
            .collect();
        list.push(
            json!({"manager": APPLIER, "operation": "Apply", "fieldsType": "FieldsV1",
                         "apiVersion": current.get("apiVersion").cloned().unwrap_or(Value::Null),
                         "fieldsV1": manifest}),
        );
        set_entries(&mut object, list);
        object
    }

    fn refused(answer: &Value, what: &str) -> Result<(), String> {
        if answer.get("allowed") == Some(&Value::Bool(true)) {
            return Ok(());
        }
        let message = answer
            .pointer("/status/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        Err(format!("{what} is refused: {message}"))
    }

    /// Runs the owner's next reconcile over `stored` (what the command left
    /// of `before`; `git` holds the values the owners last set) through the
    /// policy; `Err` says what it undoes or refuses.
    pub(super) fn survives(
        entry: &Entry,
        case: &Case,
        write: &Write<'_>,
        before: &Value,
        git: &Value,
        stored: Value,
    ) -> Result<(), String> {
        if !owned(before) {
            return Ok(());
        }
        let applier = Write {
            name: write.name,
            resource: write.resource.clone(),
            user: json!({"username": APPLIER_USER, "groups": [
                "system:serviceaccounts", "system:serviceaccounts:flux-system",
                "system:authenticated"]}),
            field_manager: Some(APPLIER),
        };
        let mut current = stored.clone();
        let mut cleaned = stored.clone();
        if !merge_only(before) && !merge_only(&stored) && take_over(&mut cleaned) {
            let answer = judge_write(entry, case, &applier, cleaned.clone(), stored.clone())?;
            refused(&answer, "the owner's managedFields cleanup")?;
            current = with_patch(cleaned, &answer)?;
        }
        let applied = apply(&current, git, &applier_fields(before));
        let answer = judge_write(entry, case, &applier, applied.clone(), current)?;
        refused(&answer, "the owner's next apply")?;
        let after = with_patch(applied, &answer)?;
        for path in ["/metadata/annotations", "/metadata/labels", "/spec"] {
            let (was, is) = (stored.pointer(path), after.pointer(path));
            if was != is {
                return Err(format!(
                    "the owner's next apply undoes it: {path} is {} after the command and {} after \
                     the apply",
                    was.map_or("absent".to_string(), Value::to_string),
                    is.map_or("absent".to_string(), Value::to_string)
                ));
            }
        }
        Ok(())
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn object(managed: Value) -> Value {
            json!({"apiVersion": "v1", "metadata": {
                "labels": {OWNER_LABEL: "apps"},
                "annotations": {"a": "git", "b": "kubectl", "c": "mine"},
                "managedFields": managed}, "spec": {"x": 1}})
        }

        #[test]
        fn kubectl_fields_are_taken_over_and_dropped_others_stay() {
            let managed = json!([
                {"manager": APPLIER, "operation": "Apply",
                 "fieldsV1": {"f:metadata": {"f:annotations": {"f:a": {}}}, "f:spec": {"f:x": {}}}},
                {"manager": "kubectl-annotate", "operation": "Update",
                 "fieldsV1": {"f:metadata": {"f:annotations": {"f:b": {}}}}},
                {"manager": "flux-suspend", "operation": "Update",
                 "fieldsV1": {"f:metadata": {"f:annotations": {"f:c": {}}}}}
            ]);
            let before = object(managed);
            let mut cleaned = before.clone();
            assert!(take_over(&mut cleaned));
            let applied = apply(&cleaned, &before, &applier_fields(&before));
            assert_eq!(
                applied.pointer("/metadata/annotations").unwrap(),
                &json!({"a": "git", "c": "mine"})
            );
            assert_eq!(applied.pointer("/spec").unwrap(), &json!({"x": 1}));
            assert_eq!(entries(&applied).len(), 2);
        }

        #[test]
        fn the_manifest_restores_its_values_and_merge_objects_are_left_alone() {
            let managed = json!([
                {"manager": APPLIER, "operation": "Apply",
                 "fieldsV1": {"f:spec": {"f:x": {}}}}
            ]);
            let before = object(managed);
            let mut changed = before.clone();
            changed["spec"]["x"] = json!(2);
            let applied = apply(&changed, &before, &applier_fields(&before));
            assert_eq!(applied.pointer("/spec/x"), Some(&json!(1)));
            let mut merge = before.clone();
            merge["metadata"]["annotations"][SSA_ANNOTATION] = json!("merge");
            assert!(merge_only(&merge));
            assert!(!merge_only(&before));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-11-20T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn commands_end_at_backticks_or_line_ends() {
        let text = "Suspend it:\n  kubectl annotate ks apps -n x k='a b'\nor run `flux resume kustomization apps` now.";
        assert_eq!(
            commands_in(text),
            vec![
                "kubectl annotate ks apps -n x k='a b'".to_string(),
                "flux resume kustomization apps".to_string()
            ]
        );
        assert!(commands_in("no commands; the kubectlish word").is_empty());
    }

    #[test]
    fn kubectl_words_follow_posix_quoting() {
        let c = parse(
            r#"kubectl patch kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --type=merge -p '{"metadata":{"annotations":{"r":"Bob'\''s <ticket>"}}}'"#,
            now(),
        )
        .unwrap();
        assert_eq!(c.name, "apps");
        assert_eq!(c.namespace.as_deref(), Some("flux-system"));
        assert_eq!(
            c.action,
            Action::MergePatch(json!({"metadata": {"annotations": {"r": "Bob's INC-4711"}}}))
        );
        let c = parse(
            r#"kubectl -n ops annotate --overwrite gate/g open="$(date -u +%Y-%m-%dT%H:%M:%SZ)" old-"#,
            now(),
        )
        .unwrap();
        assert_eq!((c.resource.as_str(), c.name.as_str()), ("gate", "g"));
        assert_eq!(
            c.action,
            Action::Annotate {
                set: vec![("open".into(), "2026-11-20T10:00:00Z".into())],
                remove: vec!["old".into()],
                overwrite: true
            }
        );
        assert!(parse("kubectl annotate ks apps k=v and more words", now()).is_err());
        assert!(parse("kubectl patch ks apps --type json -p '[]'", now()).is_err());
        assert!(parse("kubectl annotate ks apps k=<who>", now()).is_err());
        assert!(parse("kubectl annotate ks apps k=$HOME", now()).is_err());
    }

    #[test]
    fn flux_patches_only_what_changes() {
        let c = parse("flux resume kustomization apps", now()).unwrap();
        assert_eq!(c.namespace.as_deref(), Some("flux-system"));
        let on = json!({"spec": {"suspend": true}});
        assert_eq!(
            patch_for(&c.action, &on).unwrap(),
            json!({"spec": {"suspend": null}})
        );
        assert_eq!(
            patch_for(&c.action, &json!({"spec": {}})).unwrap(),
            json!({})
        );
        let s = parse("flux suspend source git repo -n apps", now()).unwrap();
        assert_eq!(s.resource, "gitrepository");
        assert_eq!(patch_for(&s.action, &json!({})).unwrap(), on);
    }

    #[test]
    fn annotate_sends_the_merge_patch_of_its_edit() {
        let stored = json!({"metadata": {"annotations": {"a": "1", "b": "2"}}});
        let c = parse("kubectl annotate x/y --overwrite a=1 b- c=3 d-", now()).unwrap();
        assert_eq!(
            patch_for(&c.action, &stored).unwrap(),
            json!({"metadata": {"annotations": {"b": null, "c": "3"}}})
        );
        let c = parse("kubectl annotate x/y a=9", now()).unwrap();
        assert!(patch_for(&c.action, &stored).is_err());
    }

    #[test]
    fn managed_fields_follow_the_patch() {
        let mut o = json!({"apiVersion": "v1", "metadata": {"managedFields": [
            {"manager": "kubectl-annotate", "operation": "Update", "time": "t",
             "fieldsV1": {"f:metadata": {"f:annotations": {"f:a": {}}}, "f:spec": {"f:suspend": {}}}}
        ]}});
        let patch = json!({"metadata": {"annotations": {"b": "x"}}, "spec": {"suspend": null}});
        record_manager(&mut o, "kubectl-annotate", &patch, now());
        assert_eq!(
            o.pointer("/metadata/managedFields/0/fieldsV1").unwrap(),
            &json!({"f:metadata": {"f:annotations": {"f:a": {}, "f:b": {}}}, "f:spec": {}})
        );
        record_manager(&mut o, "flux", &json!({"spec": {"suspend": true}}), now());
        assert_eq!(
            o.pointer("/metadata/managedFields/1/manager").unwrap(),
            "flux"
        );
    }
}

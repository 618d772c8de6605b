//! Every command a policy suggests must be admitted when the person runs it.
//!
//! A refusal or warning may suggest `kubectl annotate`, `kubectl patch
//! --type merge` or `flux suspend|resume`. [`check_suggested`] finds each one
//! in a case's response, applies it to the stored object exactly as the
//! client would, builds the request kube-apiserver then sends, judges it with
//! the same policy and settings, and reports it unless it is admitted
//! without suggesting the same command again, does what it says (a suspend
//! leaves the object stopped and a resume leaves it reconciled, as its
//! controller reads the stored object: the model's `Honours`) and survives
//! the owner's next apply.
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
use serde_json::{json, Value};

use crate::case::{load_cases, Case};
use crate::response::PolicyMode;
use crate::story::cli::{self, Action, Command};
use crate::story::managed_fields::record_manager;
use crate::story::owner_apply::{self, applier, applier_user};
use crate::story::request::{options, with_patch, Sent};

/// Runs every case, then every command its response suggests. Returns how
/// many commands were checked and one line per failing command.
pub fn check_suggested(entry: &Entry, dir: &Path) -> Result<(usize, Vec<String>), String> {
    check_all(entry, dir, Owners::AsRecorded)
}

/// [`check_suggested`], and each command whose object the case records as
/// applied by nobody is run again on that object as if kustomize-controller
/// applied it from Git ([`applied_from_git`]): what the command writes must
/// outlast that apply too. For a policy whose commands target objects that
/// are often kept in Git (flux-gate's Gates and Flux objects).
pub fn check_suggested_applied_from_git(
    entry: &Entry,
    dir: &Path,
) -> Result<(usize, Vec<String>), String> {
    check_all(entry, dir, Owners::AlsoFromGit)
}

/// Which owners a command's object is tried with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owners {
    /// The object as the case records it.
    AsRecorded,
    /// Also as applied from Git, when the case records no applier.
    AlsoFromGit,
}

fn check_all(entry: &Entry, dir: &Path, owners: Owners) -> Result<(usize, Vec<String>), String> {
    let cases = load_cases(dir)?;
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in &cases {
        let response =
            crate::evaluate_native(entry, case).map_err(|e| format!("{}: {e}", case.id))?;
        for command in suggested(&response) {
            checked += 1;
            if let Err(e) = follow_up(entry, case, &response, &command, None, owners) {
                failures.push(format!("{}: `{command}`: {e}", case.id));
            }
        }
    }
    Ok((checked, failures))
}

/// A command a policy ships (in an example, a README) rather than suggests,
/// run by `user` on the object the case stores, and on that object as if
/// applied from Git when the case records no applier: admitted, and what it
/// writes outlasts the owner's next apply.
pub fn check_shipped(entry: &Entry, case: &Case, command: &str, user: Value) -> Result<(), String> {
    let response = crate::evaluate_native(entry, case).map_err(|e| format!("{}: {e}", case.id))?;
    follow_up(
        entry,
        case,
        &response,
        command,
        Some(user),
        Owners::AlsoFromGit,
    )
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

/// Parses a suggested command with POSIX shell quoting, its placeholders filled.
pub fn parse(command: &str, now: Timestamp) -> Result<Command, String> {
    let words = shlex::split(command).ok_or("unbalanced quotes")?;
    let words = words
        .iter()
        .map(|w| fill(w, now))
        .collect::<Result<Vec<_>, _>>()?;
    cli::parse_words(&words)
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

fn follow_up(
    entry: &Entry,
    case: &Case,
    response: &Value,
    text: &str,
    user: Option<Value>,
    owners: Owners,
) -> Result<(), String> {
    let command = parse(text, case.now)?;
    let request = case.admission_request();
    let (object, own) = target(case, &request, response, &command)?;
    let user = user.unwrap_or_else(|| person(&request));
    let mut tried = vec![(object.clone(), "")];
    if owners == Owners::AlsoFromGit && !owner_apply::owned(&object) {
        let patch = cli::patch_for(&command.action, &object)?;
        tried.push((applied_from_git(&object, &patch), " (as applied from Git)"));
    }
    for (object, how) in tried {
        let run = Run {
            case,
            request: &request,
            response,
            command: &command,
            text,
            own,
            user: user.clone(),
        };
        run_on(entry, &run, object).map_err(|e| format!("{e}{how}"))?;
    }
    Ok(())
}

/// The object as kustomize-controller would hold it had it applied it from
/// Git: its owner labels (Kustomization `flux-system/flux-system`, which
/// applies a cluster's own configuration) and an `Apply` entry owning every
/// field of it but those the command writes, which no manifest of the
/// object states (a Gate's requests, an override: people's, not Git's).
pub fn applied_from_git(object: &Value, patch: &Value) -> Value {
    let mut owned = object.clone();
    if let Some(meta) = owned.get_mut("metadata").and_then(Value::as_object_mut) {
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(owner_apply::OWNER_LABEL.into(), json!("flux-system"));
            labels.insert(
                owner_apply::OWNER_NAMESPACE_LABEL.into(),
                json!("flux-system"),
            );
        }
    }
    let mut stated = owned.clone();
    json_patch::merge(&mut stated, &removal_of(patch));
    let entry = json!({"manager": applier(), "operation": "Apply",
                       "apiVersion": owned.get("apiVersion").cloned().unwrap_or(Value::Null),
                       "fieldsType": "FieldsV1",
                       "fieldsV1": owner_apply::manifest_fields(&stated)});
    if let Some(meta) = owned.get_mut("metadata").and_then(Value::as_object_mut) {
        let list = meta.entry("managedFields").or_insert_with(|| json!([]));
        if let Some(list) = list.as_array_mut() {
            list.push(entry);
        }
    }
    owned
}

/// The merge patch that removes every member `patch` sets or removes.
fn removal_of(patch: &Value) -> Value {
    match patch.as_object() {
        Some(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let inner = if v.is_object() {
                        removal_of(v)
                    } else {
                        Value::Null
                    };
                    (k.clone(), inner)
                })
                .collect(),
        ),
        None => Value::Null,
    }
}

/// One command run by a person after a case.
struct Run<'a> {
    case: &'a Case,
    request: &'a Value,
    response: &'a Value,
    command: &'a Command,
    text: &'a str,
    /// The command acts on the case's own object.
    own: bool,
    user: Value,
}

fn run_on(entry: &Entry, run: &Run<'_>, object: Value) -> Result<(), String> {
    let (case, request, response, command, own) =
        (run.case, run.request, run.response, run.command, run.own);
    let patch = cli::patch_for(&command.action, &object)?;
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
        user: run.user.clone(),
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
    if suggested(&answer).iter().any(|c| c == run.text) {
        return Err("the follow-up suggests the same command again".to_string());
    }
    if refused_create {
        return Ok(());
    }
    let stored = with_patch(patched, &answer)?;
    does_what_it_says(case, &command.action, &stored)?;
    // The values the owners set: the case's object as its writer sent it,
    // before the policy's patch, which belongs to no manager.
    let sent = request.get("object").filter(|o| o.is_object());
    let owners_values = match sent {
        Some(sent) if own && response.get("allowed") == Some(&Value::Bool(true)) => sent,
        _ => &object,
    };
    survives(entry, case, &write, &object, owners_values, stored)
}

/// What a command says it does to reconciliation, read from the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    Suspend,
    Resume,
}

/// A suspend or resume: `flux suspend|resume`; `kubectl annotate` setting
/// RFC-0006's `reconcile.fluxcd.io/suspended` to a reason (or a
/// `<group>/reconcile` annotation to `disabled`), or removing it; a merge
/// patch of `spec.suspend`.
fn claim(action: &Action) -> Option<Claim> {
    use guard_core::model::keys::SUSPENDED;
    let reconcile = |key: &str| key == SUSPENDED || key.ends_with("/reconcile");
    match action {
        Action::FluxSuspend => Some(Claim::Suspend),
        Action::FluxResume => Some(Claim::Resume),
        Action::Annotate { set, remove, .. } => {
            if let Some((key, value)) = set.iter().find(|(k, _)| reconcile(k)) {
                // RFC-0006: the annotation's value is the reason; set, it suspends.
                let stops = if key == SUSPENDED {
                    !value.is_empty()
                } else {
                    guard_core::model::kinds::is_disabled(value)
                };
                Some(if stops { Claim::Suspend } else { Claim::Resume })
            } else {
                remove.iter().any(|k| reconcile(k)).then_some(Claim::Resume)
            }
        }
        Action::MergePatch(patch) => match patch.pointer("/spec/suspend") {
            Some(Value::Bool(true)) => Some(Claim::Suspend),
            Some(Value::Bool(false) | Value::Null) => Some(Claim::Resume),
            _ => None,
        },
        // A Deployment's pause is not a Flux suspension; kinds outside the
        // model's are not checked for it.
        Action::Delete { .. } | Action::Rollout { .. } => None,
    }
}

/// Is `object` stopped, as its controller reads it (the model's
/// `Honours`), or, where the case's flux-suspend settings say the
/// controllers honour RFC-0006 (`mode: annotation-only`), by the annotation?
fn stopped(case: &Case, object: &Value) -> Option<bool> {
    use guard_core::model::keys::SUSPENDED;
    use guard_core::model::kinds::{find, is_disabled, Honours};
    let api_version = object.get("apiVersion").and_then(Value::as_str)?;
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = find(group, object.get("kind").and_then(Value::as_str)?)?;
    let annotation =
        |key: &str| object.pointer(&format!("/metadata/annotations/{}", key.replace('/', "~1")));
    let honoured = match kind.honours? {
        Honours::SpecSuspend => object.pointer("/spec/suspend") == Some(&Value::Bool(true)),
        Honours::DisableAnnotation(key) => annotation(key)
            .and_then(Value::as_str)
            .is_some_and(is_disabled),
    };
    let by_annotation = case.settings.get("mode").and_then(Value::as_str)
        == Some("annotation-only")
        && annotation(SUSPENDED)
            .and_then(Value::as_str)
            .is_some_and(|reason| !reason.is_empty());
    Some(honoured || by_annotation)
}

/// A suspend must leave the object stopped and a resume must leave it
/// reconciled, as the controller reads the stored object after the policy's
/// own patch: a resume that removes an annotation nothing honours while
/// `spec.suspend` stays true resumes nothing.
fn does_what_it_says(case: &Case, action: &Action, stored: &Value) -> Result<(), String> {
    let (Some(claim), Some(stopped)) = (claim(action), stopped(case, stored)) else {
        return Ok(());
    };
    match (claim, stopped) {
        (Claim::Suspend, false) => {
            Err("it says it suspends, but the object is still reconciled".into())
        }
        (Claim::Resume, true) => Err("it says it resumes, but the object stays suspended".into()),
        _ => Ok(()),
    }
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
    let (operation, kind) = if old.is_null() {
        ("CREATE", "CreateOptions")
    } else {
        ("UPDATE", "UpdateOptions")
    };
    let request = case.admission_request();
    let uid = request.get("uid").and_then(Value::as_str).unwrap_or("");
    let follow = Sent {
        uid: format!("{uid}-follow-up"),
        operation,
        resource: write.resource.clone(),
        name: write.name.to_string(),
        namespace: object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        sub_resource: None,
        user: write.user.clone(),
        object,
        old,
        options: options(kind, write.field_manager),
        dry_run: false,
    };
    let mut next = case.clone();
    next.request = follow.admission_request();
    next.policy_mode = PolicyMode::Protect;
    crate::evaluate_native(entry, &next)
}

/// `Ok` when the answer admits; otherwise what was refused, and why.
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
fn survives(
    entry: &Entry,
    case: &Case,
    write: &Write<'_>,
    before: &Value,
    git: &Value,
    stored: Value,
) -> Result<(), String> {
    if !owner_apply::owned(before) {
        return Ok(());
    }
    let applier = Write {
        name: write.name,
        resource: write.resource.clone(),
        user: json!({"username": applier_user(), "groups": [
            "system:serviceaccounts", "system:serviceaccounts:flux-system",
            "system:authenticated"]}),
        field_manager: Some(applier()),
    };
    let mut current = stored.clone();
    let cleanup = if owner_apply::merge_only(before) {
        None
    } else {
        owner_apply::cleanup(&stored)
    };
    if let Some(cleaned) = cleanup {
        let answer = judge_write(entry, case, &applier, cleaned.clone(), stored.clone())?;
        refused(&answer, "the owner's managedFields cleanup")?;
        current = with_patch(cleaned, &answer)?;
    }
    let time = guard_core::rfc3339::format(case.now);
    let applied = owner_apply::apply(&current, git, &owner_apply::applier_fields(before), &time);
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
    use crate::story::cli::{patch_for, Action};

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

    fn case(settings: Value) -> Case {
        serde_json::from_value(json!({
            "description": "d", "now": "2026-11-20T10:00:00Z", "settings": settings,
            "request": {}, "expect": {"allowed": true}
        }))
        .unwrap()
    }

    fn release(suspend: bool, reason: Option<&str>) -> Value {
        let mut o = json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "podinfo", "annotations": {}}, "spec": {"suspend": suspend}});
        if let Some(r) = reason {
            o["metadata"]["annotations"]["reconcile.fluxcd.io/suspended"] = json!(r);
        }
        o
    }

    #[test]
    fn a_suggested_resume_or_suspend_must_do_what_it_says() {
        let words = |c: &str| parse(c, now()).unwrap().action;
        let remove = words("kubectl annotate hr podinfo reconcile.fluxcd.io/suspended-");
        let reason = words(
            "kubectl annotate hr podinfo reconcile.fluxcd.io/suspended='INC-1 why' --overwrite",
        );
        let mirror = case(json!({}));
        // spec.suspend stays true: removing the annotation resumes nothing.
        assert!(does_what_it_says(&mirror, &remove, &release(true, None)).is_err());
        assert!(does_what_it_says(&mirror, &remove, &release(false, None)).is_ok());
        assert!(does_what_it_says(
            &mirror,
            &words("flux resume hr podinfo"),
            &release(false, None)
        )
        .is_ok());
        // The annotation alone stops nothing on today's Flux, unless the
        // settings say the controllers honour it.
        assert!(does_what_it_says(&mirror, &reason, &release(false, Some("INC-1 why"))).is_err());
        assert!(does_what_it_says(&mirror, &reason, &release(true, Some("INC-1 why"))).is_ok());
        let honoured = case(json!({"mode": "annotation-only"}));
        assert!(does_what_it_says(&honoured, &reason, &release(false, Some("INC-1 why"))).is_ok());
        // Flux Operator's kinds stop on `fluxcd.controlplane.io/reconcile: disabled`.
        let rset = json!({"apiVersion": "fluxcd.controlplane.io/v1", "kind": "ResourceSet",
            "metadata": {"name": "t", "annotations": {"fluxcd.controlplane.io/reconcile": "Disabled"}}});
        let enable = words("kubectl annotate resourcesets t fluxcd.controlplane.io/reconcile-");
        assert!(does_what_it_says(&mirror, &enable, &rset).is_err());
    }
}

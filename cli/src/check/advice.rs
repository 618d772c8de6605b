//! Advice for Git: a policy tells the person it refuses to run `kubectl
//! annotate` or `kubectl patch` on the object, which is the fix at
//! admission. For an object `check` read from a manifest the same command
//! would leave the manifest unchanged, the check failing, and be undone by
//! Flux's next apply (kustomize-controller removes what Git does not hold);
//! the fix is the same change written into the manifest. Each command that
//! names the judged object is replaced with that edit, naming the file and
//! the line; the policies' own words are left as they are otherwise.

use guard_core::Operation;
use serde_json::Value;

use super::identity::Identity;
use super::manifests::Origin;

/// The message with every kubectl command on `object` turned into the
/// edit of its manifest at `origin`. Objects not read from a file (stdin,
/// an object a generator made) keep the commands.
pub fn for_git(message: &str, origin: &Origin, object: &Identity, operation: Operation) -> String {
    if origin.file == "-" || origin.line == 0 {
        return message.to_string();
    }
    let edit = |command: &str| {
        let changes = changes(command, object)?;
        Some(written(&changes, origin, operation))
    };
    let mut out = String::new();
    let mut rest = message;
    while let Some(start) = rest.find("kubectl ") {
        let (before, from) = rest.split_at(start);
        // A command is quoted in backticks, or is the rest of its line.
        let quoted = before.ends_with('`');
        let end = if quoted {
            from.find('`')
        } else {
            from.find('\n')
        }
        .unwrap_or(from.len());
        let (command, after) = from.split_at(end);
        match edit(command) {
            Some(text) if quoted => {
                out.push_str(before.strip_suffix('`').unwrap_or(before));
                out.push_str(&text);
                rest = after.strip_prefix('`').unwrap_or(after);
            }
            Some(text) => {
                out.push_str(before);
                out.push_str(&text);
                rest = after;
            }
            None => {
                out.push_str(before);
                out.push_str(command);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// One change of a manifest: a field set to a value, or removed.
#[derive(Debug, PartialEq)]
enum Change {
    Set(Vec<String>, Value),
    Remove(Vec<String>),
}

/// The changes a `kubectl annotate` or `kubectl patch --type=merge` command
/// makes to `object`; none for any other command or another object.
fn changes(command: &str, object: &Identity) -> Option<Vec<Change>> {
    let words = shlex::split(command)?;
    let mut words = words.iter().map(String::as_str);
    if words.next()? != "kubectl" {
        return None;
    }
    let verb = words.next()?;
    let mut positional = Vec::new();
    let mut namespace = None;
    let mut patch = None;
    let mut merge = false;
    while let Some(word) = words.next() {
        match word {
            "-n" | "--namespace" => namespace = Some(words.next()?),
            "-p" | "--patch" => patch = Some(words.next()?),
            "--type=merge" => merge = true,
            "--type" => merge = words.next()? == "merge",
            w if w.starts_with("--namespace=") => namespace = w.strip_prefix("--namespace="),
            w if w.starts_with("--patch=") => patch = w.strip_prefix("--patch="),
            w if w.starts_with('-') => {}
            w => positional.push(w),
        }
    }
    // The resource, then the object's name: the command must be about the
    // judged object.
    let (_, rest) = positional.split_first()?;
    let (name, pairs) = rest.split_first()?;
    if *name != object.name || namespace.is_some_and(|n| Some(n) != object.namespace.as_deref()) {
        return None;
    }
    match verb {
        "annotate" => pairs
            .iter()
            .map(|pair| {
                let path = |key: &str| vec!["metadata".into(), "annotations".into(), key.into()];
                match pair.split_once('=') {
                    Some((key, value)) => Some(Change::Set(path(key), Value::from(value))),
                    None => Some(Change::Remove(path(pair.strip_suffix('-')?))),
                }
            })
            .collect(),
        "patch" if merge && pairs.is_empty() => {
            let patch: Value = serde_json::from_str(patch?).ok()?;
            let mut out = Vec::new();
            flatten(&patch, &mut Vec::new(), &mut out);
            Some(out)
        }
        _ => None,
    }
}

/// A JSON merge patch (RFC 7396) as changes: `null` removes, an object
/// recurses, anything else is set.
fn flatten(patch: &Value, path: &mut Vec<String>, out: &mut Vec<Change>) {
    match patch {
        Value::Null => out.push(Change::Remove(path.clone())),
        Value::Object(map) => {
            for (key, value) in map {
                path.push(key.clone());
                flatten(value, path, out);
                path.pop();
            }
        }
        value => out.push(Change::Set(path.clone(), value.clone())),
    }
}

/// The edit, in words: where, and each field as YAML writes it.
fn written(changes: &[Change], origin: &Origin, operation: Operation) -> String {
    let fields: Vec<String> = changes
        .iter()
        .map(|c| match c {
            Change::Set(path, value) => format!("set {}: {value}", path.join(".")),
            Change::Remove(path) => format!("remove {}", path.join(".")),
        })
        .collect();
    let at = match &origin.revision {
        Some(rev) => format!("{rev}:{}:{}", origin.file, origin.line),
        None => format!("{}:{}", origin.file, origin.line),
    };
    let fields = fields.join(", ");
    if operation == Operation::Delete {
        // Flux deletes what the head no longer has: the change must reach
        // the cluster first, from the manifest kept one more revision.
        format!("keep the manifest (it was at {at}) and in it {fields}; once Flux has applied that, remove the manifest in a later commit")
    } else {
        format!(
            "in the manifest at {at}, {fields} (a change in Git, not kubectl: Flux would undo it)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: &str) -> Identity {
        Identity {
            group: "kustomize.toolkit.fluxcd.io".into(),
            version: "v1".into(),
            kind: "Kustomization".into(),
            namespace: Some("flux-system".into()),
            name: name.into(),
        }
    }

    fn at(file: &str, line: usize) -> Origin {
        Origin {
            file: file.into(),
            revision: None,
            document: 1,
            line,
            item: None,
        }
    }

    #[test]
    fn an_annotate_command_becomes_the_annotation_in_the_manifest() {
        let message = "Suspend it with a reason such as:\n  kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --overwrite reconcile.fluxcd.io/suspended='INC-1 it'\\''s down' --field-manager=flux-suspend";
        let out = for_git(
            message,
            &at("apps/apps.yaml", 3),
            &id("apps"),
            Operation::Update,
        );
        assert_eq!(
            out,
            "Suspend it with a reason such as:\n  in the manifest at apps/apps.yaml:3, set metadata.annotations.reconcile.fluxcd.io/suspended: \"INC-1 it's down\" (a change in Git, not kubectl: Flux would undo it)"
        );
    }

    #[test]
    fn a_merge_patch_becomes_its_fields_and_a_removal_says_so() {
        let message = r#"do `kubectl patch kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --type=merge -p '{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":null}},"spec":{"suspend":true}}' --field-manager=flux-suspend`."#;
        let out = for_git(message, &at("a.yaml", 1), &id("apps"), Operation::Update);
        assert_eq!(out, "do in the manifest at a.yaml:1, remove metadata.annotations.reconcile.fluxcd.io/suspended, set spec.suspend: true (a change in Git, not kubectl: Flux would undo it).");
    }

    #[test]
    fn another_object_stdin_and_other_commands_keep_their_words() {
        let message = "run `kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io other -n flux-system a=b` or `kubectl get ks`";
        let out = for_git(message, &at("a.yaml", 1), &id("apps"), Operation::Update);
        assert_eq!(out, message);
        let own = "run `kubectl annotate ks apps -n flux-system a=b`";
        assert_eq!(
            for_git(own, &at("-", 1), &id("apps"), Operation::Update),
            own
        );
    }

    #[test]
    fn a_deletion_keeps_the_manifest_for_one_more_commit() {
        let message = "detach it first: `kubectl annotate flexibleservers.dbforpostgresql.azure.com apps -n flux-system serviceoperator.azure.com/reconcile-policy=detach-on-delete --overwrite --field-manager=aso-reconcile`. Then delete again.";
        let out = for_git(
            message,
            &at("infra/shop.yaml", 26),
            &id("apps"),
            Operation::Delete,
        );
        assert_eq!(out, "detach it first: keep the manifest (it was at infra/shop.yaml:26) and in it set metadata.annotations.serviceoperator.azure.com/reconcile-policy: \"detach-on-delete\"; once Flux has applied that, remove the manifest in a later commit. Then delete again.");
    }
}

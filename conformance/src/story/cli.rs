//! What a person's `kubectl` or `flux` command sends, read in the clients'
//! source:
//! - `kubectl annotate` sets and removes keys on its copy of the object and
//!   sends the JSON merge patch between the two, always, under field manager
//!   `kubectl-annotate` (kubernetes/kubectl `pkg/cmd/annotate/annotate.go`,
//!   `AnnotateOptions.RunAnnotate` and `updateAnnotations`, commit dee3483a);
//!   without `--overwrite` an existing key is an error.
//! - `kubectl patch --type merge` sends its patch as given (RFC 7386) under
//!   field manager `kubectl-patch`.
//! - `kubectl delete` sends DeleteOptions with `propagationPolicy` from
//!   `--cascade`, `background` by default (kubernetes/kubectl
//!   `pkg/cmd/delete/delete_flags.go` `GetCascadingStrategy`,
//!   `pkg/cmd/delete/delete.go` `DeleteOptions.deleteResource`, commit dee3483a).
//! - `kubectl rollout pause` / `resume` of a Deployment set `spec.paused` to
//!   true / false on the typed object and send the two-way strategic merge
//!   patch between the two, `{"spec":{"paused":true}}` or
//!   `{"spec":{"paused":null}}` (`paused` is `omitempty`), under field
//!   manager `kubectl-rollout`; pausing a paused Deployment or resuming one
//!   that is not paused is an error (kubernetes/kubectl
//!   `pkg/cmd/rollout/rollout_pause.go`, `rollout_resume.go`,
//!   `pkg/polymorphichelpers/objectpauser.go`, `objectresumer.go`, commit
//!   dee3483a). `kubectl rollout undo` sends a JSON patch under no field
//!   manager (`pkg/polymorphichelpers/rollback.go`): a story writes it as
//!   a `patch` of type `json` with `userAgent: kubectl`.
//! - `flux suspend` / `flux resume` set `spec.suspend` to true / false on the
//!   typed object and send controller-runtime's `client.MergeFrom` diff;
//!   `suspend` is `omitempty`, so the patch is `{"spec":{"suspend":true}}`,
//!   `{"spec":{"suspend":null}}` or `{}` (fluxcd/flux2 `cmd/flux/suspend.go`
//!   `suspendCommand.patch`, `cmd/flux/resume.go` `resumeCommand.patch`,
//!   commit da2d22d3). Its client names no field manager, so kube-apiserver
//!   records the user agent's first word, `flux`.

use serde_json::{json, Map, Value};

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
    pub fn field_manager(&self) -> Option<&str> {
        self.field_manager
            .as_deref()
            .or_else(|| self.action.default_field_manager())
    }

    /// The manager kube-apiserver records in managedFields: the client's
    /// field manager, or the first word of its user agent, `flux`.
    pub fn manager(&self) -> &str {
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
    /// `kubectl rollout pause` (true) or `resume` (false) of a Deployment.
    Rollout {
        pause: bool,
    },
    /// `kubectl delete`, with its `propagationPolicy`.
    Delete {
        propagation: String,
    },
}

impl Action {
    /// The field manager kubectl names by default (`--field-manager`'s
    /// default, kubernetes/kubectl `pkg/cmd/annotate/annotate.go` and
    /// `pkg/cmd/patch/patch.go`, commit dee3483a); none for the flux CLI.
    fn default_field_manager(&self) -> Option<&'static str> {
        match self {
            Action::Annotate { .. } => Some("kubectl-annotate"),
            Action::MergePatch(_) => Some("kubectl-patch"),
            Action::Rollout { .. } => Some("kubectl-rollout"),
            Action::FluxSuspend | Action::FluxResume | Action::Delete { .. } => None,
        }
    }
}

/// The command of already split (and filled) words: `kubectl …` or `flux …`.
pub fn parse_words(words: &[String]) -> Result<Command, String> {
    match words.split_first() {
        Some((tool, rest)) if tool == "kubectl" => kubectl(rest),
        Some((tool, rest)) if tool == "flux" => flux(rest),
        _ => Err("not a kubectl or flux command".to_string()),
    }
}

/// A command line as a POSIX shell splits it.
pub fn parse(command: &str) -> Result<Command, String> {
    let words = shlex::split(command).ok_or("unbalanced quotes")?;
    parse_words(&words)
}

#[expect(
    clippy::too_many_lines,
    reason = "one arm per kubectl word and flag the stories use"
)]
fn kubectl(words: &[String]) -> Result<Command, String> {
    let mut namespace = None;
    let mut overwrite = false;
    let mut patch_type = None;
    let mut patch = None;
    let mut field_manager = None;
    let mut cascade = "background".to_string();
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
            // `--cascade` alone means background (its NoOptDefVal).
            "--cascade" => cascade = "background".to_string(),
            w if w.starts_with("--cascade=") => cascade = value("--cascade")?,
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
        "delete" => {
            let propagation = match cascade.as_str() {
                "background" | "true" => "Background",
                "foreground" => "Foreground",
                "orphan" | "false" => "Orphan",
                other => {
                    return Err(format!(
                        "--cascade must be background, foreground or orphan, not {other}"
                    ))
                }
            };
            let action = Action::Delete {
                propagation: propagation.to_string(),
            };
            (action, args.iter().collect())
        }
        "rollout" => match args.split_first() {
            Some((sub, rest)) if sub == "pause" || sub == "resume" => (
                Action::Rollout {
                    pause: sub == "pause",
                },
                rest.iter().collect(),
            ),
            _ => return Err(format!("unsupported kubectl rollout {args:?}")),
        },
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
        Action::Delete { .. } => Err("kubectl delete sends no patch".to_string()),
        Action::Rollout { pause } => {
            if stored.get("kind").and_then(Value::as_str) != Some("Deployment") {
                return Err("kubectl refuses: pausing and resuming are for Deployments".into());
            }
            let paused = stored.pointer("/spec/paused") == Some(&Value::Bool(true));
            match (pause, paused) {
                (true, false) => Ok(json!({"spec": {"paused": true}})),
                (false, true) => Ok(json!({"spec": {"paused": null}})),
                (true, true) => Err("kubectl refuses: the Deployment is already paused".into()),
                (false, false) => Err("kubectl refuses: the Deployment is not paused".into()),
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_rollout_pauses_and_resumes_deployments_only() {
        let c = parse("kubectl rollout pause deployment/web -n shop").unwrap();
        assert_eq!(
            (c.resource.as_str(), c.name.as_str()),
            ("deployment", "web")
        );
        assert_eq!(c.field_manager(), Some("kubectl-rollout"));
        let running = json!({"kind": "Deployment", "spec": {"replicas": 2}});
        let paused = json!({"kind": "Deployment", "spec": {"paused": true}});
        assert_eq!(
            patch_for(&c.action, &running).unwrap(),
            json!({"spec": {"paused": true}})
        );
        assert!(patch_for(&c.action, &paused).is_err());
        let r = parse("kubectl rollout resume deployment web -n shop").unwrap();
        assert_eq!(
            patch_for(&r.action, &paused).unwrap(),
            json!({"spec": {"paused": null}})
        );
        assert!(patch_for(&r.action, &running).is_err());
        assert!(patch_for(&c.action, &json!({"kind": "StatefulSet"})).is_err());
        assert!(parse("kubectl rollout restart deployment/web").is_err());
    }

    #[test]
    fn kubectl_delete_cascades_in_the_background_unless_told() {
        let c = parse("kubectl delete kustomization apps -n flux-system").unwrap();
        assert_eq!(
            c.action,
            Action::Delete {
                propagation: "Background".into()
            }
        );
        assert_eq!(
            (c.name.as_str(), c.namespace.as_deref()),
            ("apps", Some("flux-system"))
        );
        let c = parse("kubectl delete ns/apps --cascade=foreground").unwrap();
        assert_eq!(
            c.action,
            Action::Delete {
                propagation: "Foreground".into()
            }
        );
        assert!(parse("kubectl delete ns/apps --cascade=sideways").is_err());
        assert!(patch_for(&c.action, &serde_json::json!({})).is_err());
    }
}

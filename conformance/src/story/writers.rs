//! How each writer turns its intent into requests, and who it is.
//!
//! A step is planned as moves ([`plan`]); each move is built into its
//! request from the state at the moment it is sent ([`build`]), because a
//! move may follow another of the same step (kustomize-controller's apply
//! follows its managedFields cleanup).

use guard_core::model::{controllers, ServiceAccount};
use guard_core::Timestamp;
use serde_json::{json, Value};

use super::cli::{self, Action, Command};
use super::format::{ApplyClient, Step, Target, Write};
use super::managed_fields::record_manager;
use super::owner_apply;
use super::request::{options, resource_of, Sent};
use super::state::{is, target_of, State};

/// Service accounts the stories name by their short name: every
/// controller of the model (Flux's and Flux Operator's in `flux-system`,
/// the namespace controller and garbage collector in `kube-system` with
/// their own credentials, ASO's in `azureserviceoperator-system`).
fn service_accounts() -> impl Iterator<Item = ServiceAccount> {
    controllers::FLUX.iter().map(|c| c.service_account).chain([
        controllers::NAMESPACE_CONTROLLER,
        controllers::GARBAGE_COLLECTOR,
        controllers::ASO,
    ])
}

/// A deterministic UUID-shaped id for `seed`: FNV-1a, then splitmix64's
/// finalizer so that similar seeds give unlike ids.
pub fn uid(seed: &str) -> String {
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let fnv = seed.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let (a, b) = (mix(fnv), mix(fnv ^ 0x9e37_79b9_7f4a_7c15));
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// The userInfo of a service account.
fn service_account(namespace: &str, name: &str) -> Value {
    let username = format!("system:serviceaccount:{namespace}:{name}");
    json!({"username": username, "uid": uid(&username), "groups": [
        "system:serviceaccounts", format!("system:serviceaccounts:{namespace}"),
        "system:authenticated"]})
}

/// The person a story names nobody for.
fn default_person() -> Value {
    json!({"username": "alice@example.com", "groups": ["system:authenticated"]})
}

/// The userInfo of `by`: a known service account's short name, a person's
/// username, or a whole userInfo.
pub fn user(by: &Value) -> Result<Value, String> {
    match by {
        Value::String(name) => Ok(service_accounts()
            .find(|sa| sa.name == name)
            .map(|sa| service_account(sa.namespace, sa.name))
            .unwrap_or_else(|| json!({"username": name, "groups": ["system:authenticated"]}))),
        Value::Object(map) if map.get("username").is_some_and(Value::is_string) => Ok(by.clone()),
        other => Err(format!(
            "`by` must be a name or a userInfo with a username, not {other}"
        )),
    }
}

/// Who sends a step's requests when it names nobody.
pub fn default_user(write: &Write) -> Value {
    match write {
        Write::Apply(_) => {
            let sa = controllers::KUSTOMIZE_CONTROLLER.service_account;
            service_account(sa.namespace, sa.name)
        }
        Write::Collect(_) => service_account(
            controllers::GARBAGE_COLLECTOR.namespace,
            controllers::GARBAGE_COLLECTOR.name,
        ),
        Write::DeleteNamespace(_) => service_account(
            controllers::NAMESPACE_CONTROLLER.namespace,
            controllers::NAMESPACE_CONTROLLER.name,
        ),
        // The audit scanner's requests carry an empty userInfo.
        Write::Audit(_) => json!({}),
        _ => default_person(),
    }
}

/// One request a step will send, built when it is sent.
#[derive(Debug, Clone)]
pub enum Move {
    /// A PATCH or PUT of an existing object: `body` is a merge patch.
    Merge {
        target: Target,
        body: Value,
        field_manager: Option<String>,
        manager: String,
        subresource: Option<String>,
    },
    JsonPatch {
        target: Target,
        body: Value,
        field_manager: Option<String>,
        manager: String,
    },
    /// A person's command, patched against the object as it is then.
    Command(Target, Command),
    /// kustomize-controller's dry-run apply, which it compares with the
    /// stored object to decide whether to apply at all.
    DryRunApply {
        manifest: Value,
        field_manager: String,
    },
    /// kustomize-controller's managedFields cleanup before its apply.
    Cleanup(Target),
    /// The apply itself, unless neither the cleanup nor a drift calls for it.
    Apply {
        manifest: Value,
        field_manager: String,
    },
    Create {
        object: Value,
        manager: Option<String>,
        field_manager: Option<String>,
    },
    Delete {
        target: Target,
        options: Value,
        /// The collection's empty name (the namespace controller).
        collection: bool,
    },
    /// The audit scanner's evaluation of the stored object.
    Audit(Target),
}

/// What the registry does with an admitted request.
#[derive(Debug, Clone)]
pub enum Effect {
    /// Store the request's object (with the policy's patch applied).
    Store,
    /// Store only the status of the request's object over the stored one.
    StoreStatus,
    Delete {
        propagation: Option<String>,
    },
    /// Nothing is stored; the admitted object is what the writer compares.
    DryRun,
    /// Nothing is stored or compared: a policy report is all it makes.
    Report,
}

/// What a writer remembers between the requests of one step.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    /// The object the dry run answered (the policy's patch applied).
    pub dry_run: Option<Value>,
    /// The cleanup was sent.
    pub cleaned: bool,
}

/// A request, built.
#[derive(Debug, Clone)]
pub struct Built {
    pub sent: Sent,
    pub effect: Effect,
}

/// The object a command's kind word and name refer to.
fn command_target(state: &State, command: &Command) -> Result<Target, String> {
    let word = command
        .resource
        .split('.')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let namespace = command.namespace.clone().unwrap_or_default();
    state
        .objects
        .iter()
        .map(target_of)
        .find(|t| {
            let kind = t.kind.to_ascii_lowercase();
            (word == kind || word == crate::cluster::plural(&t.kind) || word == format!("{kind}s"))
                && t.name == command.name
                && t.namespace == namespace
        })
        .ok_or(format!(
            "{} {} in namespace {namespace:?} is not in the cluster",
            command.resource, command.name
        ))
}

/// The moves of a step; `stop` says the writer sends no more after a refusal.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per kind of step a story writes"
)]
pub fn plan(step: &Step, state: &State) -> Result<(Vec<Move>, bool), String> {
    Ok(match &step.write {
        Write::Kubectl(line) | Write::Flux(line) => {
            let tool = if matches!(step.write, Write::Kubectl(_)) {
                "kubectl"
            } else {
                "flux"
            };
            let command = cli::parse(&format!("{tool} {line}"))?;
            let target = command_target(state, &command)?;
            let single = match &command.action {
                Action::Delete { propagation } => Move::Delete {
                    options: json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                     "propagationPolicy": propagation}),
                    target,
                    collection: false,
                },
                _ => Move::Command(target, command),
            };
            (vec![single], true)
        }
        Write::Patch(p) | Write::Update(p) => {
            let manager = p
                .field_manager
                .clone()
                .or_else(|| p.user_agent.clone())
                .ok_or("a patch that names no fieldManager needs the userAgent's first word")?;
            let single = match p.patch_type {
                super::format::PatchType::Merge => Move::Merge {
                    target: p.target.clone(),
                    body: p.body.clone(),
                    field_manager: p.field_manager.clone(),
                    manager,
                    subresource: p.subresource.clone(),
                },
                super::format::PatchType::Json => {
                    if p.subresource.is_some() {
                        return Err("a JSON patch of a subresource is not modelled".into());
                    }
                    Move::JsonPatch {
                        target: p.target.clone(),
                        body: p.body.clone(),
                        field_manager: p.field_manager.clone(),
                        manager,
                    }
                }
            };
            (vec![single], true)
        }
        Write::Apply(a) => {
            let target = target_of(&a.manifest);
            let apply = Move::Apply {
                manifest: a.manifest.clone(),
                field_manager: a.field_manager.clone(),
            };
            let moves = match a.client {
                ApplyClient::SsaManager => vec![
                    Move::DryRunApply {
                        manifest: a.manifest.clone(),
                        field_manager: a.field_manager.clone(),
                    },
                    Move::Cleanup(target),
                    apply,
                ],
                ApplyClient::Single => vec![apply],
                ApplyClient::DryRun => vec![Move::DryRunApply {
                    manifest: a.manifest.clone(),
                    field_manager: a.field_manager.clone(),
                }],
            };
            (moves, true)
        }
        Write::Create(c) => (
            vec![Move::Create {
                object: c.object.clone(),
                manager: c.field_manager.clone().or_else(|| c.user_agent.clone()),
                field_manager: c.field_manager.clone(),
            }],
            true,
        ),
        Write::Delete(d) => {
            let mut opts = json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"});
            if let (Some(p), Some(map)) = (&d.propagation_policy, opts.as_object_mut()) {
                map.insert("propagationPolicy".into(), json!(p));
            }
            let single = Move::Delete {
                target: d.target.clone(),
                options: opts,
                collection: false,
            };
            (vec![single], true)
        }
        Write::Collect(c) => {
            if state.get(&c.owner).is_some() {
                return Err(format!(
                    "the garbage collector deletes dependents of {} only once it is gone",
                    c.owner
                ));
            }
            let moves = dependents(state, &c.owner)
                .into_iter()
                .map(|object| Move::Delete {
                    options: json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                     "preconditions": {"uid": object.pointer("/metadata/uid")},
                                     "propagationPolicy": "Background"}),
                    target: target_of(&object),
                    collection: false,
                })
                .collect();
            (moves, false)
        }
        Write::Audit(target) => (vec![Move::Audit(target.clone())], true),
        Write::DeleteNamespace(ns) => {
            let namespace = state.get(&Target {
                api_version: "v1".into(),
                kind: "Namespace".into(),
                namespace: String::new(),
                name: ns.name.clone(),
            });
            if namespace
                .and_then(|n| n.pointer("/metadata/deletionTimestamp"))
                .is_none()
            {
                return Err(format!(
                    "the namespace controller empties Namespace {} only once it is terminating",
                    ns.name
                ));
            }
            let moves = state
                .in_namespace(&ns.name)
                .iter()
                .map(|object| Move::Delete {
                    target: target_of(object),
                    options: json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                     "propagationPolicy": "Background"}),
                    collection: true,
                })
                .collect();
            (moves, false)
        }
    })
}

/// Objects whose owner references name `owner` (by kind and name, in the
/// owner's namespace or, for a cluster-scoped owner, anywhere).
fn dependents(state: &State, owner: &Target) -> Vec<Value> {
    state
        .objects
        .iter()
        .filter(|o| {
            let ns = o
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("");
            (owner.namespace.is_empty() || owner.namespace == ns)
                && o.pointer("/metadata/ownerReferences")
                    .and_then(Value::as_array)
                    .is_some_and(|refs| {
                        refs.iter().any(|r| {
                            r.get("kind").and_then(Value::as_str) == Some(owner.kind.as_str())
                                && r.get("name").and_then(Value::as_str)
                                    == Some(owner.name.as_str())
                        })
                    })
        })
        .cloned()
        .collect()
}

fn stored<'a>(state: &'a State, target: &Target) -> Result<&'a Value, String> {
    state
        .get(target)
        .ok_or(format!("{target} is not in the cluster"))
}

fn update(target: &Target, old: &Value, object: Value, field_manager: Option<&str>) -> Sent {
    Sent {
        uid: String::new(),
        operation: "UPDATE",
        resource: resource_of(old),
        name: target.name.clone(),
        namespace: target.namespace.clone(),
        sub_resource: None,
        user: Value::Null,
        object,
        old: old.clone(),
        options: options("UpdateOptions", field_manager),
        dry_run: false,
    }
}

/// Builds a move's request from the state as it is; `None` when the writer
/// sends nothing (a cleanup with nothing to clean).
#[expect(clippy::too_many_lines, reason = "one arm per move a writer makes")]
pub fn build(
    m: &Move,
    state: &State,
    now: Timestamp,
    memory: &mut Memory,
) -> Result<Option<Built>, String> {
    let store = |sent| {
        Some(Built {
            sent,
            effect: Effect::Store,
        })
    };
    Ok(match m {
        Move::Merge {
            target,
            body,
            field_manager,
            manager,
            subresource,
        } => {
            let old = stored(state, target)?;
            let mut object = old.clone();
            json_patch::merge(&mut object, body);
            record_manager(&mut object, manager, body, now);
            let mut sent = update(target, old, object, field_manager.as_deref());
            match subresource.as_deref() {
                None => store(sent),
                Some("status") => {
                    sent.sub_resource = Some("status".into());
                    Some(Built {
                        sent,
                        effect: Effect::StoreStatus,
                    })
                }
                Some(other) => return Err(format!("the {other} subresource is not modelled")),
            }
        }
        Move::JsonPatch {
            target,
            body,
            field_manager,
            manager,
        } => {
            let old = stored(state, target)?;
            let ops: json_patch::Patch = serde_json::from_value(body.clone())
                .map_err(|e| format!("not a JSON patch: {e}"))?;
            let mut object = old.clone();
            json_patch::patch(&mut object, &ops)
                .map_err(|e| format!("the JSON patch does not apply: {e}"))?;
            // What the patch set and removed, as the merge patch between the two.
            let merge = merge_patch_of(old, &object);
            record_manager(&mut object, manager, &merge, now);
            store(update(target, old, object, field_manager.as_deref()))
        }
        Move::Command(target, command) => {
            let old = stored(state, target)?;
            let body = cli::patch_for(&command.action, old)?;
            let mut object = old.clone();
            json_patch::merge(&mut object, &body);
            record_manager(&mut object, command.manager(), &body, now);
            store(update(target, old, object, command.field_manager()))
        }
        Move::Cleanup(target) => match state.get(target).and_then(owner_apply::cleanup) {
            None => None,
            Some(cleaned) => {
                memory.cleaned = true;
                let old = stored(state, target)?;
                store(update(target, old, cleaned, Some(owner_apply::applier())))
            }
        },
        Move::DryRunApply {
            manifest,
            field_manager,
        } => {
            let mut sent = applied(state, manifest, field_manager, now);
            sent.dry_run = true;
            if let Some(map) = sent.options.as_object_mut() {
                map.insert("dryRun".into(), json!(["All"]));
            }
            Some(Built {
                sent,
                effect: Effect::DryRun,
            })
        }
        Move::Apply {
            manifest,
            field_manager,
        } => {
            let target = target_of(manifest);
            let unchanged = match (state.get(&target), &memory.dry_run) {
                (Some(existing), Some(dry)) => !memory.cleaned && !drifted(existing, dry),
                _ => false,
            };
            if unchanged {
                None
            } else {
                store(applied(state, manifest, field_manager, now))
            }
        }
        Move::Audit(target) => {
            let object = stored(state, target)?.clone();
            let mut sent = create(target, object, None);
            sent.options = Value::Null;
            Some(Built {
                sent,
                effect: Effect::Report,
            })
        }
        Move::Create {
            object,
            manager,
            field_manager,
        } => {
            let target = target_of(object);
            if state.get(&target).is_some() {
                return Err(format!("{target} already exists"));
            }
            let mut object = object.clone();
            if let Some(manager) = manager {
                let mut stripped = object.clone();
                if let Some(meta) = stripped.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("name");
                    meta.remove("namespace");
                    meta.insert("managedFields".into(), json!([]));
                }
                if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.insert("managedFields".into(), json!([]));
                }
                let fields = owner_apply::manifest_fields(&stripped);
                let entry = json!({"manager": manager, "operation": "Update",
                    "apiVersion": object.get("apiVersion"),
                    "time": guard_core::rfc3339::format(now),
                    "fieldsType": "FieldsV1", "fieldsV1": fields});
                if let Some(list) = object
                    .pointer_mut("/metadata/managedFields")
                    .and_then(Value::as_array_mut)
                {
                    list.push(entry);
                }
            }
            store(create(&target, object, field_manager.as_deref()))
        }
        Move::Delete {
            target,
            options,
            collection,
        } => {
            let old = stored(state, target)?;
            let propagation = options
                .get("propagationPolicy")
                .and_then(Value::as_str)
                .map(str::to_string);
            Some(Built {
                sent: Sent {
                    uid: String::new(),
                    operation: "DELETE",
                    resource: resource_of(old),
                    name: if *collection {
                        String::new()
                    } else {
                        target.name.clone()
                    },
                    namespace: target.namespace.clone(),
                    sub_resource: None,
                    user: Value::Null,
                    object: Value::Null,
                    old: old.clone(),
                    options: options.clone(),
                    dry_run: false,
                },
                effect: Effect::Delete { propagation },
            })
        }
    })
}

fn create(target: &Target, object: Value, field_manager: Option<&str>) -> Sent {
    Sent {
        uid: String::new(),
        operation: "CREATE",
        resource: resource_of(&object),
        name: target.name.clone(),
        namespace: target.namespace.clone(),
        sub_resource: None,
        user: Value::Null,
        object,
        old: Value::Null,
        options: options("CreateOptions", field_manager),
        dry_run: false,
    }
}

/// The merge patch that turns `old` into `new` (RFC 7386: removed members
/// are null).
fn merge_patch_of(old: &Value, new: &Value) -> Value {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut out = serde_json::Map::new();
            for (k, v) in b {
                match a.get(k) {
                    Some(was) if was == v => {}
                    Some(was) => {
                        out.insert(k.clone(), merge_patch_of(was, v));
                    }
                    None => {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
            for k in a.keys() {
                if !b.contains_key(k) {
                    out.insert(k.clone(), Value::Null);
                }
            }
            Value::Object(out)
        }
        _ => new.clone(),
    }
}

/// Whether `object` is the one `target` names (for per-request expectations).
pub fn names(sent: &Sent, target: &Target) -> bool {
    let subject = if sent.object.is_null() {
        &sent.old
    } else {
        &sent.object
    };
    is(subject, target)
}

/// The server-side apply of `manifest` over what is stored (a CREATE when
/// nothing is).
fn applied(state: &State, manifest: &Value, field_manager: &str, now: Timestamp) -> Sent {
    let target = target_of(manifest);
    let fields = owner_apply::manifest_fields(manifest);
    let time = guard_core::rfc3339::format(now);
    match state.get(&target) {
        Some(old) => {
            let object = owner_apply::apply(old, manifest, &fields, &time);
            update(&target, old, object, Some(field_manager))
        }
        None => {
            let mut object = manifest.clone();
            let entry = json!([{"manager": field_manager, "operation": "Apply",
                "apiVersion": manifest.get("apiVersion"), "time": time,
                "fieldsType": "FieldsV1", "fieldsV1": fields}]);
            if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("managedFields".into(), entry);
            }
            create(&target, object, Some(field_manager))
        }
    }
}

/// fluxcd/pkg `ssa/manager_diff.go` `hasDrifted` (commit e2cfd1a2): the dry
/// run's labels, annotations, or anything outside `metadata` and `status`
/// differ from the stored object's.
fn drifted(existing: &Value, dry_run: &Value) -> bool {
    let without = |o: &Value| {
        let mut copy = o.clone();
        if let Some(map) = copy.as_object_mut() {
            map.remove("metadata");
            map.remove("status");
        }
        copy
    };
    ["/metadata/labels", "/metadata/annotations"]
        .iter()
        .any(|p| existing.pointer(p) != dry_run.pointer(p))
        || without(existing) != without(dry_run)
}

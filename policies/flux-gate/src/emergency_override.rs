//! The emergency override annotation: who may set it on a Flux object,
//! reading it from the Kustomization or HelmRelease that applies a change,
//! and the command that removes it.

use std::fmt;

use guard_core::context;
use guard_core::identity;
use guard_core::json_eq::Key;
use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Context, Metadata, Verdict};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::binding::FluxOwnerKind;
use crate::compile::Compiled;
use crate::OVERRIDE_ANNOTATION;

/// Adding or changing the emergency-override annotation on a Kustomization
/// or HelmRelease is for members of emergencyOverride.groups only: there it
/// lets every change applied from that object pass closed gates, so a change
/// from Git must not be able to set it on itself.
pub(crate) fn guard_override_annotation(
    request: &AdmissionRequest,
    c: &Compiled,
    old: Option<&Metadata>,
    new: Option<&Metadata>,
) -> Option<Verdict> {
    if c.override_groups.is_empty()
        || FluxOwnerKind::parse(&request.kind.kind).is_none()
        || !matches!(
            request.kind.group.as_str(),
            "kustomize.toolkit.fluxcd.io" | "helm.toolkit.fluxcd.io"
        )
    {
        return None;
    }
    let value = new?.annotation(OVERRIDE_ANNOTATION)?;
    if old.and_then(|m| m.annotation(OVERRIDE_ANNOTATION)) == Some(value)
        || c.override_group(&request.user_info).is_some()
    {
        return None;
    }
    Some(Verdict::deny(format!(
        "The {OVERRIDE_ANNOTATION} annotation is honoured only for members of emergencyOverride.groups ({}); {} is not one. On {} it would let every change applied from it pass closed gates, so only those members may set it.",
        override_groups_text(c),
        identity::describe(&request.user_info),
        ObjectName::of(request, new).describe(),
    )))
}

/// An emergency override found on the Flux object that applies a change.
pub(crate) struct OwnerOverride<'m> {
    pub(crate) owner: ObjectName<'m>,
    pub(crate) reason: String,
}

/// An emergency override on the Kustomization or HelmRelease that applies
/// this object, with its reason. The annotation there is trusted because
/// this policy lets only members of emergencyOverride.groups set it. `Err`
/// names the owners that could not be read (`Kind namespace/name`, error)
/// when none of those read carries an override: a failed lookup is not "no
/// override", and the refusal says so.
pub(crate) fn owner_override<'m>(
    meta: &'m Metadata,
    ctx: &Context<'_>,
) -> Result<Option<OwnerOverride<'m>>, Vec<(String, String)>> {
    let mut failed = Vec::new();
    for kind in [FluxOwnerKind::Kustomization, FluxOwnerKind::HelmRelease] {
        let Some((namespace, name)) = kind.owner_of(&meta.labels) else {
            continue;
        };
        let object = context::ObjectRef {
            api_version: kind.api_version(),
            kind: kind.kind(),
            namespace,
            name,
        };
        let annotation = match owner_override_annotation(ctx, &object) {
            Ok(Some(annotation)) => annotation,
            // Gone: nothing there overrides anything.
            Ok(None) => continue,
            Err(e) => {
                failed.push((kind.object(namespace, name).describe(), e));
                continue;
            }
        };
        let reason = annotation.as_deref().map(str::trim).unwrap_or_default();
        if !reason.is_empty() {
            return Ok(Some(OwnerOverride {
                owner: kind.object(namespace, name),
                reason: reason.to_string(),
            }));
        }
    }
    if failed.is_empty() {
        Ok(None)
    } else {
        Err(failed)
    }
}

/// The owner's override annotation, if it has one; `None` when the owner
/// does not exist.
fn owner_override_annotation(
    ctx: &Context<'_>,
    object: &context::ObjectRef<'_>,
) -> Result<Option<Option<String>>, String> {
    let Some(raw) = ctx.cluster.get(object).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    override_annotation(&raw).map(Some)
}

fn override_annotation(raw: &RawValue) -> Result<Option<String>, String> {
    match context::annotations_as::<OverrideAnnotation>(raw) {
        Ok(annotation) => Ok(annotation.0),
        // Read again as `context::annotations` reads, for its words.
        Err(_) => context::annotations(raw)
            .map(|a| a.get(OVERRIDE_ANNOTATION).map(str::to_string))
            .map_err(|e| format!("unreadable: {e}")),
    }
}

/// A map of strings, as [`guard_core::StringMap`] reads it (later duplicates win),
/// reduced to the override's value: the owner's other annotations (up to
/// 256 KiB) are checked but not copied.
#[derive(Default)]
struct OverrideAnnotation(Option<String>);

impl<'de> Deserialize<'de> for OverrideAnnotation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = OverrideAnnotation;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut found = None;
                while let Some(key) = access.next_key_seed(Key)? {
                    let value = access.next_value_seed(Key)?;
                    if key == OVERRIDE_ANNOTATION {
                        found = Some(value.into_owned());
                    }
                }
                Ok(OverrideAnnotation(found))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// The command that removes the emergency override from `object`.
pub(crate) fn remove_override(object: &ObjectName<'_>) -> String {
    object.kubectl("annotate", &[&format!("{OVERRIDE_ANNOTATION}-")])
}

pub(crate) fn override_groups_text(c: &Compiled) -> String {
    if c.override_groups.is_empty() {
        "none configured".to_string()
    } else {
        c.override_groups.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{eval, freeze, object, update, Broken};
    use crate::AUDIT_KEY;
    use guard_core::context::ObjectRef;
    use guard_core::testing::raw;
    use guard_core::{Cluster, ClusterError, ClusterObject};
    use serde_json::json;

    /// The override is read from the owner as `context::annotations` reads
    /// its annotations, whatever the owner holds.
    #[test]
    fn the_owner_override_is_read_as_the_annotations_are() {
        let owners = [
            r#"{}"#,
            r#"{"metadata":null}"#,
            r#"{"metadata":{"annotations":null}}"#,
            r#"{"metadata":{"annotations":{"a":"1"}},"spec":{"x":[1,{"y":2}]}}"#,
            r#"{"metadata":{"annotations":{"gating.toolkit.fluxcd.io/emergency-override":" INC-7 "}}}"#,
            r#"{"metadata":{"annotations":{"gating.toolkit.fluxcd.io/emergency-override":"a","gating.toolkit.fluxcd.io/emergency-override":"b"}}}"#,
            r#"{"metadata":{"annotations":{"gating.toolkit.fluxcd.io\/emergency-override":"\u0041"}}}"#,
            r#"{"metadata":{"annotations":{"gating.toolkit.fluxcd.io/emergency-override":1}}}"#,
            r#"{"metadata":{"annotations":{"a":"\ud800"}}}"#,
            r#"{"metadata":{"annotations":["x"]}}"#,
            r#"{"metadata":{"annotations":{}},"metadata":{}}"#,
            r#"{"metadata":{"annotations":{},"annotations":{}}}"#,
            r#"{"metadata":"x"}"#,
            r#"{"metadata":[{"gating.toolkit.fluxcd.io/emergency-override":"a"}]}"#,
            r#"[{"annotations":{"gating.toolkit.fluxcd.io/emergency-override":"a"}}]"#,
            r#"[]"#,
            r#""x""#,
            r#"null"#,
        ];
        for owner in owners {
            let raw = RawValue::from_string(owner.to_string()).unwrap();
            let whole = context::annotations(&raw)
                .map(|a| a.get(OVERRIDE_ANNOTATION).map(str::to_string))
                .map_err(|e| format!("unreadable: {e}"));
            assert_eq!(override_annotation(&raw), whole, "{owner}");
        }
    }

    /// The owner's override is read through a lookup; when that fails the
    /// change is held (no override honoured) and the refusal says why,
    /// instead of reading as "no override" without a word.
    #[test]
    fn an_owner_override_that_cannot_be_read_is_named() {
        let labels = json!({"kustomize.toolkit.fluxcd.io/name": "apps",
                            "kustomize.toolkit.fluxcd.io/namespace": "flux-system"});
        let mut req = update("./b", false, json!({}), "bob", &[]);
        let mut new = object(json!({"path": "./b"}), json!({}));
        new["metadata"]["labels"] = labels.clone();
        let mut old = object(json!({"path": "./a"}), json!({}));
        old["metadata"]["labels"] = labels;
        req.object = Some(serde_json::value::to_raw_value(&new).unwrap());
        req.old_object = Some(serde_json::value::to_raw_value(&old).unwrap());
        let v = eval(&req, &freeze(), &Broken);
        assert!(!v.allowed);
        let m = v.message.unwrap();
        assert!(
            m.contains(
                "An emergency override on Kustomization flux-system/apps could not be checked \
                 (\"timeout\"), so none is honoured from it; retry."
            ),
            "{m}"
        );
        // The owner found, with an override: it passes.
        struct Owner;
        impl Cluster for Owner {
            fn get(&self, o: &ObjectRef<'_>) -> Result<Option<ClusterObject>, ClusterError> {
                assert_eq!(
                    (o.kind, o.namespace, o.name),
                    ("Kustomization", "flux-system", "apps")
                );
                Ok(Some(raw(
                    &json!({"metadata": {"annotations": {OVERRIDE_ANNOTATION: " INC-7 "}}}),
                )))
            }
            fn list_all(&self, _: &str, _: &str) -> Result<Vec<ClusterObject>, ClusterError> {
                Ok(vec![])
            }
        }
        let v = eval(&req, &freeze(), &Owner);
        assert!(v.allowed, "{v:?}");
        assert!(
            v.audit_annotations[AUDIT_KEY].ends_with(": \"INC-7\""),
            "{v:?}"
        );
    }
}

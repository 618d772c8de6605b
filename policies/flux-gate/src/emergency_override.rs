//! The emergency override annotation: who may set it on a Flux object, and
//! reading it from the Kustomization or HelmRelease that applies a change,
//! for the writes of that object's applier only.

use std::fmt;

use guard_core::context::{self, ShapeError};
use guard_core::identity;
use guard_core::json_text::Key;
use guard_core::object::{ObjectName, OwnedObjectName};
use guard_core::request::null_default;
use guard_core::{AdmissionRequest, ClusterError, Context, Metadata, Operation};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::flux_owner::FluxOwnerKind;
use crate::gating::OVERRIDE_ANNOTATION;
use crate::settings::Compiled;
use crate::writer;

/// Whether the write adds or changes the emergency-override annotation on
/// a Kustomization or HelmRelease without its sender being a member of
/// emergencyOverride.groups: there it lets every change applied from that
/// object pass closed gates, so a change from Git must not be able to set it
/// on itself.
pub(crate) fn sets_override_without_membership(
    request: &AdmissionRequest,
    c: &Compiled,
    old: Option<&Metadata>,
    new: Option<&Metadata>,
) -> bool {
    if c.override_groups.is_empty()
        || FluxOwnerKind::parse(&request.kind.kind)
            .is_none_or(|k| k.model().group != request.kind.group)
    {
        return false;
    }
    let Some(value) = new.and_then(|m| m.annotation(OVERRIDE_ANNOTATION)) else {
        return false;
    };
    old.and_then(|m| m.annotation(OVERRIDE_ANNOTATION)) != Some(value)
        && c.override_group(&request.user_info).is_none()
}

/// An emergency override found on the Flux object that applies a change.
pub(crate) struct OwnerOverride<'m> {
    pub(crate) owner: ObjectName<'m>,
    pub(crate) reason: String,
}

/// An override on an owner that lets through only what its applier sends.
pub(crate) struct ForeignOverride<'m> {
    pub(crate) owner: ObjectName<'m>,
    pub(crate) applier: String,
    pub(crate) field_manager: &'static str,
    /// This request's sender and field manager (empty: none).
    pub(crate) sender: String,
    pub(crate) manager: String,
}

/// What the Flux objects named by a change's owner labels say about it.
#[derive(Default)]
pub(crate) struct OwnerOverrides<'m> {
    /// An override the request may use.
    pub(crate) honoured: Option<OwnerOverride<'m>>,
    /// Overrides found that do not cover this request.
    pub(crate) refused: Vec<ForeignOverride<'m>>,
    /// Owners that could not be read, and why: a failed lookup is not "no
    /// override", and the refusal says so.
    pub(crate) unchecked: Vec<(OwnedObjectName, OwnerError)>,
}

/// Why the Flux object that applies a change could not be read. Its words
/// are in `render`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum OwnerError {
    /// The lookup failed: the cluster's error.
    Lookup(ClusterError),
    /// Its annotations do not read.
    Annotations(ShapeError),
    /// Its `spec.serviceAccountName` does not read.
    ServiceAccount(ShapeError),
}

/// An emergency override on the Kustomization or HelmRelease that applies
/// this object, honoured only for the write that object's applier sends:
/// its identity (the controller's service account, or the one it
/// impersonates for that object, [`writer::applier`]) and its field manager
/// (none on DELETE, which carries no field manager). The owner labels
/// name the owner; the applier writes them itself on every apply
/// (fluxcd/pkg ssa/v0.77.0 `ssa/manager.go` `SetOwnerLabels`, called by
/// kustomize-controller's `reconcile` after the build; helm-controller's
/// `postrender/build.go` `BuildPostRenderers` adds the origin labels last),
/// so for its own write they are its word, while anyone else may copy them.
/// The annotation on the owner is trusted because this policy lets only
/// members of emergencyOverride.groups set it.
pub(crate) fn owner_override<'m>(
    meta: &'m Metadata,
    request: &AdmissionRequest,
    c: &Compiled,
    ctx: &Context<'_>,
) -> OwnerOverrides<'m> {
    let mut found = OwnerOverrides::default();
    for Owner {
        kind,
        namespace,
        name,
        read,
    } in owners(meta, ctx)
    {
        let owner = kind.object(namespace, name);
        let view = match read {
            Ok(Some(view)) => view,
            // Gone: nothing there overrides anything.
            Ok(None) => continue,
            Err(e) => {
                found.unchecked.push((OwnedObjectName::of(&owner), e));
                continue;
            }
        };
        let reason = view.reason.as_deref().map(str::trim).unwrap_or_default();
        if reason.is_empty() {
            continue;
        }
        let applier = writer::applier(kind, namespace, &view.service_account, c);
        let manager = request.field_manager().unwrap_or_default();
        let by_applier = request.user_info.username == applier
            && (request.operation == Operation::Delete || manager == kind.field_manager());
        if by_applier {
            found.honoured = Some(OwnerOverride {
                owner,
                reason: reason.to_string(),
            });
            return found;
        }
        found.refused.push(ForeignOverride {
            owner,
            applier,
            field_manager: kind.field_manager(),
            sender: identity::describe(&request.user_info),
            manager,
        });
    }
    found
}

/// The usernames the Flux objects named by this object's owner labels apply
/// it as ([`writer::applier`]), read from each owner. `Err`: an owner could
/// not be read, so its applier is unknown.
pub(crate) fn owner_appliers(
    meta: &Metadata,
    c: &Compiled,
    ctx: &Context<'_>,
) -> Result<Vec<String>, OwnerError> {
    let mut appliers = Vec::new();
    for Owner {
        kind,
        namespace,
        read,
        ..
    } in owners(meta, ctx)
    {
        if let Some(view) = read? {
            appliers.push(writer::applier(kind, namespace, &view.service_account, c));
        }
    }
    Ok(appliers)
}

/// A Flux object this object's owner labels name, read from the cluster
/// (`Ok(None)`: it is gone).
struct Owner<'m> {
    kind: FluxOwnerKind,
    namespace: &'m str,
    name: &'m str,
    read: Result<Option<OwnerView>, OwnerError>,
}

/// Each owner in turn, read only when it is reached (the override stops at
/// the first one that honours it).
fn owners<'m, 'c>(
    meta: &'m Metadata,
    ctx: &'c Context<'_>,
) -> impl Iterator<Item = Owner<'m>> + use<'m, 'c> {
    [FluxOwnerKind::Kustomization, FluxOwnerKind::HelmRelease]
        .into_iter()
        .filter_map(move |kind| {
            let (namespace, name) = kind.owner_of(&meta.labels)?;
            let api_version = kind.api_version();
            let object = context::ObjectRef {
                api_version: &api_version,
                kind: kind.kind(),
                namespace,
                name,
            };
            let read = read_owner(ctx, &object);
            Some(Owner {
                kind,
                namespace,
                name,
                read,
            })
        })
}

/// What a Flux object says about overrides: the annotation's value and the
/// service account its applies impersonate.
struct OwnerView {
    reason: Option<String>,
    service_account: String,
}

/// The owner, if it exists.
fn read_owner(
    ctx: &Context<'_>,
    object: &context::ObjectRef<'_>,
) -> Result<Option<OwnerView>, OwnerError> {
    let Some(raw) = ctx.cluster.get(object).map_err(OwnerError::Lookup)? else {
        return Ok(None);
    };
    Ok(Some(owner_view(&raw)?))
}

/// The owner read once for both fields (it may be an object at the size
/// limit); when that fails, each field is read again on its own, for the
/// words its error has always had. Only an object is read in one pass: serde
/// reads a struct from a list too, by position, where the two views would
/// each take the list's first element.
fn owner_view(raw: &RawValue) -> Result<OwnerView, OwnerError> {
    #[derive(Deserialize)]
    struct View {
        #[serde(default, deserialize_with = "null_default")]
        metadata: Meta,
        #[serde(default)]
        spec: Option<Spec>,
    }
    #[derive(Default, Deserialize)]
    struct Meta {
        #[serde(default, deserialize_with = "null_default")]
        annotations: OverrideAnnotation,
    }
    if guard_core::json_text::first_byte(raw.get()) == Some(b'{') {
        if let Ok(view) = context::read::<View>(raw) {
            return Ok(OwnerView {
                reason: view.metadata.annotations.0,
                service_account: view
                    .spec
                    .and_then(|s| s.service_account_name)
                    .unwrap_or_default(),
            });
        }
    }
    Ok(OwnerView {
        reason: override_annotation(raw)?,
        service_account: service_account_name(raw)?,
    })
}

/// `spec` of an owner, reduced to the service account its applies impersonate.
#[derive(Deserialize)]
struct Spec {
    #[serde(default, rename = "serviceAccountName")]
    service_account_name: Option<String>,
}

/// `spec.serviceAccountName`, empty when not set.
fn service_account_name(raw: &RawValue) -> Result<String, OwnerError> {
    #[derive(Deserialize)]
    struct View {
        #[serde(default)]
        spec: Option<Spec>,
    }
    let view: View = context::read(raw).map_err(OwnerError::ServiceAccount)?;
    Ok(view
        .spec
        .and_then(|s| s.service_account_name)
        .unwrap_or_default())
}

fn override_annotation(raw: &RawValue) -> Result<Option<String>, OwnerError> {
    match context::annotations_as::<OverrideAnnotation>(raw) {
        Ok(annotation) => Ok(annotation.0),
        // Read again as `context::annotations` reads, for its error.
        Err(_) => context::annotations(raw)
            .map(|a| a.get(OVERRIDE_ANNOTATION).map(str::to_string))
            .map_err(OwnerError::Annotations),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::AUDIT_KEY;
    use crate::test_support::{eval, freeze, object, timing_out, update};
    use conformance::cluster::Recorded;
    use conformance::RecordedCluster;
    use guard_core::testing::raw;
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
                .map_err(OwnerError::Annotations);
            assert_eq!(override_annotation(&raw), whole, "{owner}");
        }
    }

    /// The one-pass read of an owner agrees with reading each field on
    /// its own, errors included, whatever the owner holds.
    #[test]
    fn the_owner_is_read_once_as_each_field_reads_it() {
        let annotations = [
            r#"null"#,
            r#"{}"#,
            r#"{"a":"1","gating.toolkit.fluxcd.io/emergency-override":" INC-7 "}"#,
            r#"{"gating.toolkit.fluxcd.io/emergency-override":1}"#,
            r#"["x"]"#,
        ];
        let specs = [
            r#"null"#,
            r#"{}"#,
            r#"{"serviceAccountName":"deployer","x":[1]}"#,
            r#"{"serviceAccountName":null}"#,
            r#"{"serviceAccountName":7}"#,
            r#""x""#,
            r#"["deployer"]"#,
        ];
        let mut owners: Vec<String> = vec![
            r#"[]"#.into(),
            r#"null"#.into(),
            r#""x""#.into(),
            r#"[{"annotations":{"gating.toolkit.fluxcd.io/emergency-override":"a"}},{"serviceAccountName":"b"}]"#.into(),
            r#"[{"annotations":{"gating.toolkit.fluxcd.io/emergency-override":"a"},"serviceAccountName":"b"}]"#.into(),
            r#"{"metadata":{},"metadata":{}}"#.into(),
            r#"{"spec":{},"spec":{}}"#.into(),
            r#"{"metadata":"x","spec":{"serviceAccountName":"a"}}"#.into(),
        ];
        for a in annotations {
            for s in specs {
                owners.push(format!(
                    r#"{{"metadata":{{"annotations":{a}}},"spec":{s}}}"#
                ));
                owners.push(format!(
                    r#"{{"spec":{s},"status":{{}},"metadata":{{"annotations":{a}}}}}"#
                ));
            }
        }
        for owner in owners {
            let raw = RawValue::from_string(owner.clone()).unwrap();
            let each =
                override_annotation(&raw).and_then(|r| service_account_name(&raw).map(|s| (r, s)));
            let once = owner_view(&raw).map(|v| (v.reason, v.service_account));
            assert_eq!(once, each, "{owner}");
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
        let kustomization = "kustomize.toolkit.fluxcd.io/v1";
        let owner = [timing_out(
            kustomization,
            "Kustomization",
            "flux-system",
            "apps",
        )];
        let v = eval(&req, &freeze(), &RecordedCluster::new(&owner));
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
        let owner = [Recorded::of(json!({"apiVersion": kustomization,
            "kind": "Kustomization", "metadata": {"name": "apps", "namespace": "flux-system",
            "annotations": {OVERRIDE_ANNOTATION: " INC-7 "}}}))];
        let owner = RecordedCluster::new(&owner);
        // Found, with an override: someone who copied the owner labels is
        // told whose writes it covers; the applier's own write passes.
        let v = eval(&req, &freeze(), &owner);
        assert!(!v.allowed);
        assert!(v.message.unwrap().contains(
            "The emergency override on Kustomization flux-system/apps lets through only what its \
             applier sends (system:serviceaccount:flux-system:kustomize-controller, field manager \
             kustomize-controller); this request was sent by bob."
        ));
        req.user_info.username = "system:serviceaccount:flux-system:kustomize-controller".into();
        let v = eval(&req, &freeze(), &owner);
        assert!(!v.allowed, "no field manager: not the apply");
        req.options = Some(raw(
            &json!({"kind": "UpdateOptions", "fieldManager": "kustomize-controller"}),
        ));
        let v = eval(&req, &freeze(), &owner);
        assert!(v.allowed, "{v:?}");
        assert!(
            v.audit_annotations[AUDIT_KEY].ends_with(": \"INC-7\""),
            "{v:?}"
        );
    }
}

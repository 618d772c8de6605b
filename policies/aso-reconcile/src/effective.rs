//! The reconcile policy ASO will really apply, resolved the way ASO does
//! (`GenericReconciler.mergeReconcilePolicy` and `ParseReconcilePolicy`, see
//! the README's notes): the object's annotation; when it is absent or empty,
//! the same annotation on its Namespace; then the operator default
//! (`DEFAULT_RECONCILE_POLICY`, mirrored by `defaultReconcilePolicy`). A
//! non-empty value ASO does not know, legacy values included, is not an error
//! to ASO: it logs and applies the operator default without looking at the
//! Namespace. Every rule of this policy reads the policy from here.

use guard_core::names::quote;
use guard_core::{context, object, Cluster, ClusterObject, ObjectRef};
use serde_json::value::RawValue;

use crate::settings::Settings;
use crate::values::{annotate, suggest, ReconcilePolicy, Vocabulary, RECONCILE_POLICY};
use guard_core::settings::LookupFailure;

/// Where the effective policy comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Object,
    Namespace(String),
    OperatorDefault,
    /// Written on the object by this policy's `explicitDefaults`.
    ExplicitDefault,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effective {
    pub policy: ReconcilePolicy,
    pub source: Source,
    /// Whether the Namespace could be read (or did not need to be).
    pub namespace_read: bool,
    /// Warnings about state the requester cannot see (ignored values, lookups).
    pub notes: Vec<String>,
}

impl Effective {
    /// e.g. `manage (operator default)`.
    pub fn describe(&self) -> String {
        let from = match &self.source {
            Source::Object => "set on the object".to_string(),
            Source::Namespace(ns) => format!("inherited from Namespace {}", quote(ns)),
            Source::OperatorDefault => "the operator default".to_string(),
            Source::ExplicitDefault => "written on the object from explicitDefaults".to_string(),
        };
        format!("{} ({from})", self.policy.as_str())
    }
}

/// Resolves the effective policy of an object in `namespace` whose own
/// annotation is `own`. `Err` is a refusal message (the Namespace could not
/// be read and `namespaceLookupFailure` is `deny`).
pub fn resolve(
    own: Option<&str>,
    namespace: &str,
    settings: &Settings,
    cluster: &dyn Cluster,
) -> Result<Effective, String> {
    resolve_with(own, namespace, settings, || {
        namespace_annotation(namespace, cluster)
    })
}

/// [`resolve`] with the Namespace's annotation read by `read_namespace`
/// (called only when the object has no usable annotation of its own); used
/// without a lookup where the Namespace is at hand (its own DELETE).
pub fn resolve_with(
    own: Option<&str>,
    namespace: &str,
    settings: &Settings,
    read_namespace: impl FnOnce() -> Result<Option<String>, String>,
) -> Result<Effective, String> {
    let mut notes = Vec::new();
    let operator_default = |notes, namespace_read| Effective {
        policy: settings.default_reconcile_policy,
        source: Source::OperatorDefault,
        namespace_read,
        notes,
    };
    // An empty annotation is no annotation to ASO.
    if let Some(value) = own.filter(|v| !v.is_empty()) {
        if let Some(policy) = ReconcilePolicy::parse(value) {
            return Ok(Effective {
                policy,
                source: Source::Object,
                namespace_read: true,
                notes,
            });
        }
        // ASO falls back to its default without looking at the Namespace.
        notes.push(format!(
            "annotation {RECONCILE_POLICY} has the value {}, which ASO does not know{}: it \
             ignores it and applies the operator default, {}",
            quote(value),
            legacy_hint(value),
            settings.default_reconcile_policy.as_str()
        ));
        return Ok(operator_default(notes, true));
    }
    if namespace.is_empty() {
        return Ok(operator_default(notes, true));
    }
    match read_namespace() {
        Ok(None) => Ok(operator_default(notes, true)),
        // ASO parses an empty Namespace annotation as the operator default.
        Ok(Some(value)) if value.is_empty() => Ok(operator_default(notes, true)),
        Ok(Some(value)) => match ReconcilePolicy::parse(&value) {
            Some(policy) => Ok(Effective {
                policy,
                source: Source::Namespace(namespace.to_string()),
                namespace_read: true,
                notes,
            }),
            None => {
                // The likely intent, or the value that changes nothing.
                let fix =
                    suggest::<ReconcilePolicy>(&value).unwrap_or(settings.default_reconcile_policy);
                notes.push(format!(
                    "Namespace {} has {RECONCILE_POLICY}={}, a value ASO does not know{}: it \
                     ignores it and applies the operator default, {}; fix it with: `{}`",
                    quote(namespace),
                    quote(&value),
                    legacy_hint(&value),
                    settings.default_reconcile_policy.as_str(),
                    annotate(
                        &object::ObjectName::new("Namespace", "namespaces", "", namespace),
                        RECONCILE_POLICY,
                        fix.as_str()
                    )
                ));
                Ok(operator_default(notes, true))
            }
        },
        Err(error) => match settings.namespace_lookup_failure {
            LookupFailure::Deny => Err(format!(
                "cannot read Namespace {} to resolve the effective {RECONCILE_POLICY} ({}); \
                 retry, or set the annotation on the object itself so that the Namespace is \
                 not needed",
                quote(namespace),
                quote(&error)
            )),
            LookupFailure::Allow => {
                notes.push(format!(
                    "Namespace {} could not be read ({}): its {RECONCILE_POLICY} annotation, if \
                     any, was not considered; judged with the operator default, {}",
                    quote(namespace),
                    quote(&error),
                    settings.default_reconcile_policy.as_str()
                ));
                Ok(operator_default(notes, false))
            }
        },
    }
}

/// What a legacy value (`run`, `skip-delete`) meant to early ASO releases.
fn legacy_hint(value: &str) -> String {
    match ReconcilePolicy::legacy(value) {
        Some(modern) => format!(
            " (a legacy value of early ASO releases; write {} for what it meant)",
            quote(modern.as_str())
        ),
        None => String::new(),
    }
}

/// The Namespace's `reconcile-policy` annotation; `Ok(None)` when the
/// Namespace or the annotation does not exist.
pub(crate) fn namespace_annotation(
    namespace: &str,
    cluster: &dyn Cluster,
) -> Result<Option<String>, String> {
    namespace_policy(namespace_object(namespace, cluster)?.as_deref())
}

/// The Namespace named `namespace` as the cluster has it; `None` when it
/// does not exist. `Err` is the lookup's error.
pub(crate) fn namespace_object(
    namespace: &str,
    cluster: &dyn Cluster,
) -> Result<Option<ClusterObject>, String> {
    let object = ObjectRef {
        api_version: "v1",
        kind: "Namespace",
        namespace: "",
        name: namespace,
    };
    cluster.get(&object).map_err(|e| e.to_string())
}

/// The `reconcile-policy` annotation of a looked-up Namespace.
pub(crate) fn namespace_policy(raw: Option<&RawValue>) -> Result<Option<String>, String> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let mut annotations =
        context::annotations(raw).map_err(|e| format!("unreadable Namespace: {e}"))?;
    Ok(annotations.remove(RECONCILE_POLICY))
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::testing::raw;
    use guard_core::ClusterError;
    use serde_json::{json, Value};

    struct OneNamespace(Result<Option<Value>, ClusterError>);

    impl Cluster for OneNamespace {
        fn get(&self, o: &ObjectRef<'_>) -> Result<Option<ClusterObject>, ClusterError> {
            assert_eq!(
                (o.api_version, o.kind, o.namespace, o.name),
                ("v1", "Namespace", "", "team-a")
            );
            self.0.clone().map(|v| v.as_ref().map(raw))
        }
        fn list_all(&self, _: &str, _: &str) -> Result<Vec<ClusterObject>, ClusterError> {
            Ok(Vec::new())
        }
    }

    fn ns(annotation: Option<&str>) -> OneNamespace {
        let annotations = annotation.map(|v| json!({ RECONCILE_POLICY: v }));
        OneNamespace(Ok(Some(
            json!({"metadata": {"name": "team-a", "annotations": annotations}}),
        )))
    }

    fn settings() -> Settings {
        Settings::default()
    }

    #[test]
    fn the_object_annotation_wins_without_a_lookup() {
        let cluster = OneNamespace(Err(ClusterError("must not be called".into())));
        let e = resolve(Some("skip"), "team-a", &settings(), &cluster).unwrap();
        assert_eq!(
            (e.policy, e.source),
            (ReconcilePolicy::Skip, Source::Object)
        );
        assert!(e.notes.is_empty());
    }

    #[test]
    fn an_unknown_object_value_falls_to_the_operator_default() {
        let s = Settings {
            default_reconcile_policy: ReconcilePolicy::Skip,
            ..settings()
        };
        let e = resolve(
            Some("detach-on-deletee"),
            "team-a",
            &s,
            &ns(Some("detach-on-delete")),
        )
        .unwrap();
        assert_eq!(
            (e.policy, e.source),
            (ReconcilePolicy::Skip, Source::OperatorDefault)
        );
        assert!(e.notes[0].contains("ASO does not know"), "{:?}", e.notes);
    }

    #[test]
    fn legacy_values_are_unknown_to_aso_whatever_the_setting() {
        for accept_legacy_values in [false, true] {
            let s = Settings {
                accept_legacy_values,
                ..settings()
            };
            let e = resolve(Some("skip-delete"), "team-a", &s, &ns(Some("skip"))).unwrap();
            assert_eq!(
                (e.policy, e.source),
                (ReconcilePolicy::Manage, Source::OperatorDefault)
            );
            assert!(e.notes[0].contains("legacy value"), "{:?}", e.notes);
            let e = resolve(None, "team-a", &s, &ns(Some("run"))).unwrap();
            assert_eq!(e.source, Source::OperatorDefault);
        }
    }

    #[test]
    fn an_empty_value_is_no_value() {
        let e = resolve(
            Some(""),
            "team-a",
            &settings(),
            &ns(Some("detach-on-delete")),
        )
        .unwrap();
        assert_eq!(e.policy, ReconcilePolicy::DetachOnDelete);
        assert_eq!(e.source, Source::Namespace("team-a".into()));
        assert!(e.notes.is_empty());
        let e = resolve(Some(""), "team-a", &settings(), &ns(Some(""))).unwrap();
        assert_eq!(
            (e.policy, e.source),
            (ReconcilePolicy::Manage, Source::OperatorDefault)
        );
        assert!(e.notes.is_empty());
    }

    #[test]
    fn the_namespace_annotation_is_inherited() {
        let e = resolve(None, "team-a", &settings(), &ns(Some("detach-on-delete"))).unwrap();
        assert_eq!(e.policy, ReconcilePolicy::DetachOnDelete);
        assert_eq!(e.source, Source::Namespace("team-a".into()));
        assert_eq!(
            e.describe(),
            "detach-on-delete (inherited from Namespace \"team-a\")"
        );
    }

    #[test]
    fn then_the_operator_default() {
        let s = Settings {
            default_reconcile_policy: ReconcilePolicy::DetachOnDelete,
            ..settings()
        };
        for cluster in [ns(None), OneNamespace(Ok(None))] {
            let e = resolve(None, "team-a", &s, &cluster).unwrap();
            assert_eq!(
                (e.policy, e.source.clone()),
                (ReconcilePolicy::DetachOnDelete, Source::OperatorDefault)
            );
            assert_eq!(e.describe(), "detach-on-delete (the operator default)");
        }
        let e = resolve(None, "team-a", &settings(), &ns(Some("Skip"))).unwrap();
        assert_eq!(e.policy, ReconcilePolicy::Manage);
        assert!(
            e.notes[0].contains("`kubectl annotate namespaces team-a serviceoperator.azure.com/reconcile-policy=skip --overwrite --field-manager=aso-reconcile`"),
            "{:?}",
            e.notes
        );
    }

    #[test]
    fn an_unreadable_namespace_is_refused_or_noted() {
        let failing = OneNamespace(Err(ClusterError(
            "namespaces \"team-a\" is forbidden".into(),
        )));
        let m = resolve(None, "team-a", &settings(), &failing).unwrap_err();
        assert!(
            m.contains("cannot read Namespace \"team-a\"") && m.contains("forbidden"),
            "{m}"
        );
        let s = Settings {
            namespace_lookup_failure: LookupFailure::Allow,
            ..settings()
        };
        let e = resolve(None, "team-a", &s, &failing).unwrap();
        assert_eq!(e.policy, ReconcilePolicy::Manage);
        assert!(!e.namespace_read);
        assert!(e.notes[0].contains("could not be read"));
        let garbage = OneNamespace(Ok(Some(json!({"metadata": {"annotations": [1]}}))));
        let m = resolve(None, "team-a", &settings(), &garbage).unwrap_err();
        assert!(m.contains("unreadable Namespace"), "{m}");
    }
}

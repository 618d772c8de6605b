//! The reconcile policy ASO will really apply, resolved the way ASO does
//! (`GenericReconciler.mergeReconcilePolicy` and `ParseReconcilePolicy`, see
//! the README's notes): the object's annotation; when it is absent or empty,
//! the same annotation on its Namespace; then the operator default
//! (`DEFAULT_RECONCILE_POLICY`, mirrored by `defaultReconcilePolicy`). A
//! non-empty value ASO does not know, legacy values included, is not an error
//! to ASO: it logs and applies the operator default without looking at the
//! Namespace. Every rule of this policy reads the policy from here.

use guard_core::{context, Cluster, ClusterError, ClusterObject, ObjectRef};
use serde_json::value::RawValue;

use crate::failure::{Failure, NamespaceError};
use crate::settings::Settings;
use crate::values::{suggest, ReconcilePolicy, Vocabulary, RECONCILE_POLICY};
use guard_core::settings::LookupFailure;

/// Where the effective policy comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    Object,
    Namespace(String),
    OperatorDefault,
    /// Written on the object by this policy's `explicitDefaults`.
    ExplicitDefault,
}

/// The effective policy and where it comes from, as messages name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub policy: ReconcilePolicy,
    pub source: Source,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Effective {
    pub policy: ReconcilePolicy,
    pub source: Source,
    /// Whether the Namespace could be read (or did not need to be).
    pub namespace_read: bool,
    /// State the requester cannot see (ignored values, lookups).
    pub notes: Vec<Note>,
}

impl Effective {
    pub fn resolved(&self) -> Resolved {
        Resolved {
            policy: self.policy,
            source: self.source.clone(),
        }
    }
}

/// What resolving found that the requester should know; each ends in the
/// operator default.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Note {
    /// The object's own value is one ASO does not know.
    UnknownOnObject { value: String },
    /// The Namespace's value is one ASO does not know; `fix` is the likely
    /// intent, or the value that changes nothing.
    UnknownOnNamespace {
        namespace: String,
        value: String,
        fix: ReconcilePolicy,
    },
    /// The Namespace could not be read and `namespaceLookupFailure` is `allow`.
    NamespaceUnread {
        namespace: String,
        error: NamespaceError,
    },
}

/// Resolves the effective policy of an object in `namespace` whose own
/// annotation is `own`. `Err`: the Namespace could not be read and
/// `namespaceLookupFailure` is `deny`, or it does not read.
pub(crate) fn resolve(
    own: Option<&str>,
    namespace: &str,
    settings: &Settings,
    cluster: &dyn Cluster,
) -> Result<Effective, Failure> {
    resolve_with(own, namespace, settings, || {
        namespace_annotation(namespace, cluster)
    })
}

/// [`resolve`] with the Namespace's annotation read by `read_namespace`
/// (called only when the object has no usable annotation of its own); used
/// without a lookup where the Namespace is at hand (its own DELETE).
pub(crate) fn resolve_with(
    own: Option<&str>,
    namespace: &str,
    settings: &Settings,
    read_namespace: impl FnOnce() -> Result<Option<String>, NamespaceError>,
) -> Result<Effective, Failure> {
    let default = |notes, namespace_read| Effective {
        policy: settings.default_reconcile_policy,
        source: Source::OperatorDefault,
        namespace_read,
        notes,
    };
    // An empty annotation is no annotation to ASO.
    if let Some(value) = own.filter(|v| !v.is_empty()) {
        return Ok(match ReconcilePolicy::parse(value) {
            Some(policy) => Effective {
                policy,
                source: Source::Object,
                namespace_read: true,
                notes: Vec::new(),
            },
            // ASO falls back to its default without looking at the Namespace.
            None => default(
                vec![Note::UnknownOnObject {
                    value: value.to_string(),
                }],
                true,
            ),
        });
    }
    if namespace.is_empty() {
        return Ok(default(Vec::new(), true));
    }
    match read_namespace() {
        // ASO parses an empty Namespace annotation as the operator default.
        Ok(None) => Ok(default(Vec::new(), true)),
        Ok(Some(value)) if value.is_empty() => Ok(default(Vec::new(), true)),
        Ok(Some(value)) => Ok(match ReconcilePolicy::parse(&value) {
            Some(policy) => Effective {
                policy,
                source: Source::Namespace(namespace.to_string()),
                namespace_read: true,
                notes: Vec::new(),
            },
            None => {
                let fix =
                    suggest::<ReconcilePolicy>(&value).unwrap_or(settings.default_reconcile_policy);
                let note = Note::UnknownOnNamespace {
                    namespace: namespace.to_string(),
                    value,
                    fix,
                };
                default(vec![note], true)
            }
        }),
        Err(error) => {
            let namespace = namespace.to_string();
            match settings.namespace_lookup_failure {
                LookupFailure::Deny => Err(Failure::NamespaceLookup { namespace, error }),
                LookupFailure::Allow => Ok(default(
                    vec![Note::NamespaceUnread { namespace, error }],
                    false,
                )),
            }
        }
    }
}

/// The Namespace's `reconcile-policy` annotation; `Ok(None)` when the
/// Namespace or the annotation does not exist.
pub(crate) fn namespace_annotation(
    namespace: &str,
    cluster: &dyn Cluster,
) -> Result<Option<String>, NamespaceError> {
    let object = namespace_object(namespace, cluster).map_err(NamespaceError::Lookup)?;
    namespace_policy(object.as_deref())
}

/// The Namespace named `namespace` as the cluster has it; `None` when it
/// does not exist. `Err` is the lookup's error.
pub(crate) fn namespace_object(
    namespace: &str,
    cluster: &dyn Cluster,
) -> Result<Option<ClusterObject>, ClusterError> {
    let object = ObjectRef {
        api_version: "v1",
        kind: "Namespace",
        namespace: "",
        name: namespace,
    };
    cluster.get(&object)
}

/// The `reconcile-policy` annotation of a looked-up Namespace.
pub(crate) fn namespace_policy(raw: Option<&RawValue>) -> Result<Option<String>, NamespaceError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let mut annotations = context::annotations(raw).map_err(NamespaceError::Unreadable)?;
    Ok(annotations.remove(RECONCILE_POLICY))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        failing_namespace, namespace_lookup_error, Recorded, RecordedCluster,
    };
    use serde_json::json;

    /// Namespace `team-a`, with this reconcile-policy annotation.
    fn ns(annotation: Option<&str>) -> [Recorded; 1] {
        let annotations = annotation.map(|v| json!({ RECONCILE_POLICY: v }));
        [Recorded::of(
            json!({"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": "team-a", "annotations": annotations}}),
        )]
    }

    fn settings() -> Settings {
        Settings::default()
    }

    /// `resolve` for `team-a`, its Namespace annotated with `namespace`.
    fn in_ns(object: Option<&str>, s: &Settings, namespace: Option<&str>) -> Effective {
        resolve(object, "team-a", s, &RecordedCluster::new(&ns(namespace))).unwrap()
    }

    #[test]
    fn the_object_annotation_wins_without_a_lookup() {
        let cluster = failing_namespace("team-a", "must not be called");
        let cluster = RecordedCluster::new(&cluster);
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
        let e = in_ns(Some("detach-on-deletee"), &s, Some("detach-on-delete"));
        assert_eq!(
            (e.policy, e.source),
            (ReconcilePolicy::Skip, Source::OperatorDefault)
        );
        assert_eq!(
            e.notes,
            [Note::UnknownOnObject {
                value: "detach-on-deletee".into()
            }]
        );
    }

    #[test]
    fn legacy_values_are_unknown_to_aso_whatever_the_setting() {
        for accept_legacy_values in [false, true] {
            let s = Settings {
                accept_legacy_values,
                ..settings()
            };
            let e = in_ns(Some("skip-delete"), &s, Some("skip"));
            assert_eq!(
                (e.policy, e.source),
                (ReconcilePolicy::Manage, Source::OperatorDefault)
            );
            assert_eq!(
                e.notes,
                [Note::UnknownOnObject {
                    value: "skip-delete".into()
                }]
            );
            let e = in_ns(None, &s, Some("run"));
            assert_eq!(e.source, Source::OperatorDefault);
        }
    }

    #[test]
    fn an_empty_value_is_no_value() {
        let e = in_ns(Some(""), &settings(), Some("detach-on-delete"));
        assert_eq!(e.policy, ReconcilePolicy::DetachOnDelete);
        assert_eq!(e.source, Source::Namespace("team-a".into()));
        assert!(e.notes.is_empty());
        let e = in_ns(Some(""), &settings(), Some(""));
        assert_eq!(
            (e.policy, e.source),
            (ReconcilePolicy::Manage, Source::OperatorDefault)
        );
        assert!(e.notes.is_empty());
    }

    #[test]
    fn the_namespace_annotation_is_inherited() {
        let e = in_ns(None, &settings(), Some("detach-on-delete"));
        assert_eq!(e.policy, ReconcilePolicy::DetachOnDelete);
        assert_eq!(e.source, Source::Namespace("team-a".into()));
        assert!(e.notes.is_empty());
    }

    #[test]
    fn then_the_operator_default() {
        let s = Settings {
            default_reconcile_policy: ReconcilePolicy::DetachOnDelete,
            ..settings()
        };
        for recorded in [ns(None).to_vec(), Vec::new()] {
            let cluster = RecordedCluster::new(&recorded);
            let e = resolve(None, "team-a", &s, &cluster).unwrap();
            assert_eq!(
                (e.policy, e.source.clone()),
                (ReconcilePolicy::DetachOnDelete, Source::OperatorDefault)
            );
        }
        let e = in_ns(None, &settings(), Some("Skip"));
        assert_eq!(e.policy, ReconcilePolicy::Manage);
        assert_eq!(
            e.notes,
            [Note::UnknownOnNamespace {
                namespace: "team-a".into(),
                value: "Skip".into(),
                fix: ReconcilePolicy::Skip
            }]
        );
    }

    #[test]
    fn an_unreadable_namespace_is_refused_or_noted() {
        let failing = failing_namespace("team-a", "namespaces \"team-a\" is forbidden");
        let failing = RecordedCluster::new(&failing);
        let forbidden = || {
            NamespaceError::Lookup(namespace_lookup_error(
                "team-a",
                "namespaces \"team-a\" is forbidden",
            ))
        };
        assert_eq!(
            resolve(None, "team-a", &settings(), &failing).unwrap_err(),
            Failure::NamespaceLookup {
                namespace: "team-a".into(),
                error: forbidden()
            }
        );
        let s = Settings {
            namespace_lookup_failure: LookupFailure::Allow,
            ..settings()
        };
        let e = resolve(None, "team-a", &s, &failing).unwrap();
        assert_eq!(e.policy, ReconcilePolicy::Manage);
        assert!(!e.namespace_read);
        assert_eq!(
            e.notes,
            [Note::NamespaceUnread {
                namespace: "team-a".into(),
                error: forbidden()
            }]
        );
        let garbage = [Recorded {
            object: Some(json!({"metadata": {"annotations": [1]}})),
            error: None,
            ..failing_namespace("team-a", "")[0].clone()
        }];
        let garbage = RecordedCluster::new(&garbage);
        let m = resolve(None, "team-a", &settings(), &garbage).unwrap_err();
        assert!(
            matches!(
                &m,
                Failure::NamespaceLookup {
                    error: NamespaceError::Unreadable(_),
                    ..
                }
            ),
            "{m:?}"
        );
    }
}

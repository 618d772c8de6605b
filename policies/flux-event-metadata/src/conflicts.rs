//! Keys an object shares with an Alert that selects it. The Alert's value
//! wins (RFC-0008 precedence), silently for the object's owner; the only
//! trace is a `MetadataAppendFailed` Warning event on the Alert.

use crate::alert::{Alert, Emitter, ListedAlert};
use crate::annotations::Entry;
use crate::findings::Findings;
use crate::settings::{Action, Settings};
use crate::subject::{On, Subject};
use guard_core::string_map::compare_keys;
use guard_core::{context, Cluster};
use serde_json::Value;

pub const ALERT_API_VERSION: &str = "notification.toolkit.fluxcd.io/v1beta3";
/// Alerts beyond this many are not examined; bounded work on a huge cluster.
pub(crate) const MAX_ALERTS: usize = 4096;

#[derive(Debug, PartialEq)]
pub(crate) enum Finding {
    /// The annotation `key` (the part after the prefix) is also set by an
    /// Alert that selects the object, whose value wins. `removable`: the
    /// stored object has it, so `kubectl annotate` can take it off.
    Overridden {
        on: On,
        key: String,
        value: String,
        alert_namespace: String,
        alert_name: String,
        /// `.spec.summary`, else `.spec.eventMetadata`.
        in_summary: bool,
        alert_value: String,
        removable: bool,
    },
    /// The Alerts could not be listed (the cluster's error); `refused`: the
    /// setting alertLookupFailure is `deny`.
    LookupFailed { error: String, refused: bool },
    /// More Alerts were listed than [`MAX_ALERTS`]; the rest went unchecked.
    TooManyAlerts { listed: usize },
}

pub(crate) fn check<F: From<Finding>>(
    subject: &Subject<'_>,
    entries: &[Entry<'_>],
    settings: &Settings,
    cluster: &dyn Cluster,
    findings: &mut Findings<F>,
) {
    // Only an added or changed annotation is a new decision to check against
    // the Alerts; an edit that leaves them alone (`flux suspend`, a finalizer)
    // must not depend on the lookup, nor fail with it.
    if settings.alert_conflicts == Action::Ignore || entries.iter().all(|e| e.unchanged) {
        return;
    }
    let target = &subject.target;
    // With noCrossNamespaceRefs only the Alerts of the object's own namespace
    // ever receive its events (notification-controller discards the rest,
    // `getNotificationParams`, see `Alert::selects`), so only they are asked
    // for: the answer no longer grows with the Alerts of other namespaces.
    let scope = (settings.no_cross_namespace_refs && !target.namespace.is_empty())
        .then_some(target.namespace);
    let alerts = match cluster.list(ALERT_API_VERSION, "Alert", scope) {
        Ok(alerts) => alerts,
        Err(e) => {
            let refused = settings.alert_lookup_failure == Action::Deny;
            findings.report(settings.alert_lookup_failure, false, || {
                Finding::LookupFailed {
                    error: e.to_string(),
                    refused,
                }
            });
            return;
        }
    };
    let emitter = Emitter {
        kind: target.kind,
        namespace: target.namespace,
        name: &target.name,
        labels: &subject.meta.labels,
    };
    for raw in alerts.iter().take(MAX_ALERTS) {
        // Read in place; an Alert that is not read so (an escaped string, a
        // field of another type than its CRD gives) is read whole instead,
        // to the same answer. One that is not JSON cannot be read at all: skip it.
        let listed = context::read::<ListedAlert<'_>>(raw);
        let whole: Value;
        let alert = match &listed {
            Ok(listed) => Alert::from_listed(listed),
            Err(_) => match context::read::<Value>(raw) {
                Ok(object) => {
                    whole = object;
                    Alert::from_object(&whole)
                }
                Err(_) => continue,
            },
        };
        if alert.selects(&emitter, settings.no_cross_namespace_refs) {
            check_alert(subject, entries, &alert, settings.alert_conflicts, findings);
        }
    }
    if alerts.len() > MAX_ALERTS {
        findings.warn(|| Finding::TooManyAlerts {
            listed: alerts.len(),
        });
    }
}

/// The keys of one selecting Alert that the object's annotations also set.
fn check_alert<F: From<Finding>>(
    subject: &Subject<'_>,
    entries: &[Entry<'_>],
    alert: &Alert<'_>,
    action: Action,
    findings: &mut Findings<F>,
) {
    // One binary search per Alert key, not a scan of the object's
    // annotations: `entries` come in key order (annotations::entries).
    let by_key = |key: &str| {
        entries
            .binary_search_by(|e| compare_keys(e.key.as_bytes(), key.as_bytes()))
            .ok()
            .and_then(|i| entries.get(i))
    };
    let summary = alert.summary().ok().flatten().map(|s| ("summary", s, true));
    let metadata = alert.event_metadata().unwrap_or_default();
    let alert_keys = summary
        .into_iter()
        .chain(metadata.into_iter().map(|(k, v)| (k, v, false)));
    for (key, alert_value, in_summary) in alert_keys {
        let Some(entry) = by_key(key) else {
            continue;
        };
        findings.report(action, entry.unchanged, || Finding::Overridden {
            on: subject.on,
            key: key.to_string(),
            value: entry.value.to_string(),
            alert_namespace: alert.namespace.to_string(),
            alert_name: alert.name.to_string(),
            in_summary,
            alert_value: alert_value.to_string(),
            removable: subject.stored(key),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::PREFIX;
    use guard_core::context::{ClusterError, ClusterObject, ObjectRef};
    use guard_core::object;
    use guard_core::Metadata;
    use serde_json::{json, Value};

    /// The Alerts of the cluster, and the namespaces they were listed in
    /// (`None`: all of them).
    struct Alerts(
        Result<Vec<Value>, ClusterError>,
        std::cell::RefCell<Vec<Option<String>>>,
    );

    impl Cluster for Alerts {
        fn get(&self, _: &ObjectRef<'_>) -> Result<Option<ClusterObject>, ClusterError> {
            Ok(None)
        }
        fn list_all(
            &self,
            api_version: &str,
            kind: &str,
        ) -> Result<Vec<ClusterObject>, ClusterError> {
            assert_eq!((api_version, kind), (ALERT_API_VERSION, "Alert"));
            self.0
                .as_ref()
                .map(|items| items.iter().map(guard_core::testing::raw).collect())
                .map_err(Clone::clone)
        }
        fn list(
            &self,
            api_version: &str,
            kind: &str,
            namespace: Option<&str>,
        ) -> Result<Vec<ClusterObject>, ClusterError> {
            self.1.borrow_mut().push(namespace.map(str::to_string));
            let all = self.list_all(api_version, kind)?;
            Ok(all
                .into_iter()
                .filter(|raw| {
                    let alert: Value = serde_json::from_str(raw.get()).unwrap();
                    namespace.is_none_or(|ns| alert["metadata"]["namespace"] == ns)
                })
                .collect())
        }
    }

    fn slack(spec: Value) -> Value {
        json!({"apiVersion": ALERT_API_VERSION, "kind": "Alert",
               "metadata": {"name": "slack", "namespace": "flux-system"}, "spec": spec})
    }

    fn run(
        settings: &str,
        alerts: Result<Vec<Value>, ClusterError>,
        old_env: Option<&str>,
    ) -> guard_core::Verdict {
        run_listing(settings, alerts, old_env).0
    }

    /// [`run`], and the namespaces the Alerts were listed in.
    fn run_listing(
        settings: &str,
        alerts: Result<Vec<Value>, ClusterError>,
        old_env: Option<&str>,
    ) -> (guard_core::Verdict, Vec<Option<String>>) {
        let settings = guard_core::settings::parse::<Settings>(settings.as_bytes()).unwrap();
        let mut meta = Metadata::default();
        meta.annotations
            .insert(format!("{PREFIX}env"), "dev".into());
        meta.labels.insert("team".into(), "payments".into());
        let old = old_env.map(|v| {
            let mut m = meta.clone();
            m.annotations.insert(format!("{PREFIX}env"), v.into());
            m
        });
        let request = crate::test_support::request(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            "helmreleases",
            "flux-system",
            "podinfo",
            "alice",
        );
        let subject = Subject {
            group: "helm.toolkit.fluxcd.io",
            target: object::ObjectName::of(&request, None),
            meta: &meta,
            old: old.as_ref(),
            generated: false,
            on: On::Object,
        };
        let entries: Vec<Entry<'_>> =
            crate::annotations::entries(subject.meta, subject.old).collect();
        let mut findings = Findings::new(false);
        let cluster = Alerts(alerts, Default::default());
        check(&subject, &entries, &settings, &cluster, &mut findings);
        let v = crate::test_support::verdict(findings, None, &request, &settings);
        (v, cluster.1.take())
    }

    #[test]
    fn a_selecting_alert_with_the_same_key_is_reported() {
        let alerts = vec![slack(
            json!({"eventSources": [{"kind": "HelmRelease", "name": "*", "matchLabels": {"team": "payments"}}],
                                          "eventMetadata": {"env": "production"}}),
        )];
        let v = run("{}", Ok(alerts.clone()), None);
        assert!(v.allowed);
        assert!(v.warnings[0].starts_with(
            "annotation event.toolkit.fluxcd.io/env=\"dev\" is overridden by Alert flux-system/slack \
             (spec.eventMetadata.env=\"production\"), which selects this HelmRelease"
        ), "{:?}", v.warnings);
        let v = run(r#"{"alertConflicts":"deny"}"#, Ok(alerts.clone()), None);
        assert!(v.message.unwrap().contains("MetadataAppendFailed"));
        // Unchanged: not looked up again, so neither refused nor warned.
        assert_eq!(
            run(
                r#"{"alertConflicts":"deny"}"#,
                Ok(alerts.clone()),
                Some("dev")
            ),
            guard_core::Verdict::allow()
        );
        assert!(run(r#"{"alertConflicts":"ignore"}"#, Ok(alerts), None)
            .warnings
            .is_empty());
    }

    #[test]
    fn summary_conflicts_and_unselecting_alerts() {
        let alerts = vec![
            slack(
                json!({"eventSources": [{"kind": "HelmRelease", "name": "other"}], "eventMetadata": {"env": "x"}}),
            ),
            slack(
                json!({"eventSources": [{"kind": "HelmRelease", "name": "podinfo"}], "eventMetadata": {"team": "x"}}),
            ),
        ];
        assert!(run("{}", Ok(alerts), None).warnings.is_empty());
        let settings = "{}";
        let mut meta_alert = slack(
            json!({"eventSources": [{"kind": "HelmRelease", "name": "podinfo"}], "summary": "prod"}),
        );
        meta_alert["spec"]["eventMetadata"] = json!({"env": "prod"});
        let v = run(settings, Ok(vec![meta_alert]), None);
        assert_eq!(v.warnings.len(), 1);
    }

    #[test]
    fn lookup_failures_follow_the_setting() {
        let err = || {
            Err(ClusterError(
                "alerts.notification.toolkit.fluxcd.io is forbidden".into(),
            ))
        };
        let v = run("{}", err(), None);
        assert!(v.allowed);
        assert!(
            v.warnings[0].contains("could not list the Alerts")
                && v.warnings[0].contains("the check was skipped")
        );
        let v = run(r#"{"alertLookupFailure":"deny"}"#, err(), None);
        assert!(v.message.unwrap().contains("alertLookupFailure is deny"));
        // Annotations left as they were: no lookup, so nothing can fail.
        let v = run(r#"{"alertLookupFailure":"deny"}"#, err(), Some("dev"));
        assert_eq!(v, guard_core::Verdict::allow());
    }

    #[test]
    fn no_cross_namespace_refs_ignores_alerts_elsewhere() {
        let mut elsewhere = slack(
            json!({"eventSources": [{"kind": "HelmRelease", "name": "*", "namespace": "flux-system"}],
                   "eventMetadata": {"env": "production"}}),
        );
        elsewhere["metadata"]["namespace"] = json!("monitoring");
        let alerts = vec![elsewhere];
        let (v, asked) = run_listing("{}", Ok(alerts.clone()), None);
        assert_eq!((v.warnings.len(), asked), (1, vec![None]));
        // Only the object's namespace is listed: the Alert elsewhere is
        // neither read nor handed to the policy.
        let (v, asked) = run_listing(r#"{"noCrossNamespaceRefs":true}"#, Ok(alerts), None);
        assert!(v.warnings.is_empty());
        assert_eq!(asked, [Some("flux-system".to_string())]);
    }
}

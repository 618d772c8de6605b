//! Keys an object shares with an Alert that selects it. The Alert's value
//! wins (RFC-0008 precedence), silently for the object's owner; the only
//! trace is a `MetadataAppendFailed` Warning event on the Alert.

use crate::alert::{Alert, Emitter};
use crate::annotations::Entry;
use crate::findings::Findings;
use crate::key_index::KeyIndex;
use crate::settings::{Action, Settings};
use crate::subject::{On, Subject};
use guard_core::json_text::TextReader;
use guard_core::{context, Cluster, ClusterError};
use serde_json::value::RawValue;
use serde_json::Value;
use std::cell::OnceCell;

/// The Alert API the lookups read (its storage version, from the model).
pub fn alert_api_version() -> String {
    guard_core::model::kinds::ALERT.api_version()
}
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
    LookupFailed { error: ClusterError, refused: bool },
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
    let reply = match cluster.list_text(&alert_api_version(), "Alert", scope) {
        Ok(reply) => reply,
        Err(e) => return lookup_failed(&e, settings, findings),
    };
    let emitter = Emitter {
        kind: target.kind,
        namespace: target.namespace,
        name: &target.name,
        labels: &subject.meta.labels,
    };
    // The object's event keys indexed once for every selecting Alert's keys.
    let by_key = OnceCell::new();
    let judge = |alert: &Alert<'_>, findings: &mut Findings<F>| {
        if alert.selects(&emitter, settings.no_cross_namespace_refs) {
            let by_key = by_key.get_or_init(|| KeyIndex::new(entries.iter().map(|e| (e.key, e))));
            check_alert(subject, by_key, alert, settings.alert_conflicts, findings);
        }
    };
    match each_listed_alert(&reply, findings, judge) {
        Ok(listed) if listed > MAX_ALERTS => findings.warn(|| Finding::TooManyAlerts { listed }),
        Ok(_) => {}
        Err(e) => lookup_failed(&e, settings, findings),
    }
}

/// Hands each of the first [`MAX_ALERTS`] Alerts of a List reply to `judge`,
/// with the findings to report to; returns how many the List has.
///
/// One pass over the List's text, each Alert read in place
/// ([`Alert::read_in_place`]) and judged. A List not read so (an escaped
/// string, a field of another type than its CRD gives, text that is not
/// JSON) goes the long way, to the same answer: what the pass found is kept
/// aside until it has read every Alert.
fn each_listed_alert<F>(
    reply: &[u8],
    findings: &mut Findings<F>,
    judge: impl Fn(&Alert<'_>, &mut Findings<F>),
) -> Result<usize, ClusterError> {
    let mut found = findings.fresh();
    let in_place =
        context::each_listed_in_place(reply, MAX_ALERTS, Alert::read_in_place, |alert| {
            judge(&alert, &mut found);
        });
    match in_place {
        Some(listed) => {
            findings.append(found);
            Ok(listed)
        }
        None => the_long_way(reply, findings, judge),
    }
}

/// [`each_listed_alert`] with each Alert's text found first, then read in
/// place or, failing that, whole (the two readings agree, see
/// [`Alert::read_in_place`]); one that is not JSON cannot be read at all,
/// and is skipped.
fn the_long_way<F>(
    reply: &[u8],
    findings: &mut Findings<F>,
    judge: impl Fn(&Alert<'_>, &mut Findings<F>),
) -> Result<usize, ClusterError> {
    let alerts = context::list_items::<&RawValue>(reply)?;
    for raw in alerts.iter().take(MAX_ALERTS) {
        let mut reader = TextReader::new(raw.get());
        let in_place = Alert::read_in_place(&mut reader).filter(|_| reader.end().is_some());
        let whole: Value;
        let alert = match in_place {
            Some(alert) => alert,
            None => match context::read::<Value>(raw) {
                Ok(object) => {
                    whole = object;
                    Alert::from_object(&whole)
                }
                Err(_) => continue,
            },
        };
        judge(&alert, findings);
    }
    Ok(alerts.len())
}

fn lookup_failed<F: From<Finding>>(
    e: &ClusterError,
    settings: &Settings,
    findings: &mut Findings<F>,
) {
    let refused = settings.alert_lookup_failure == Action::Deny;
    findings.report(settings.alert_lookup_failure, false, || {
        Finding::LookupFailed {
            error: e.clone(),
            refused,
        }
    });
}

/// The keys of one selecting Alert that the object's annotations also set.
fn check_alert<F: From<Finding>>(
    subject: &Subject<'_>,
    by_key: &KeyIndex<'_, &Entry<'_>>,
    alert: &Alert<'_>,
    action: Action,
    findings: &mut Findings<F>,
) {
    let summary = alert.summary().ok().flatten().map(|s| ("summary", s, true));
    let metadata = alert.event_metadata_pairs();
    let alert_keys = summary
        .into_iter()
        .chain(metadata.iter().map(|&(k, v)| (k, v, false)));
    for (key, alert_value, in_summary) in alert_keys {
        let Some(entry) = by_key.get(key) else {
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
    use conformance::cluster::Recorded;
    use conformance::RecordedCluster;
    use guard_core::object;
    use guard_core::Metadata;
    use serde_json::{json, Value};

    fn slack(spec: Value) -> Value {
        json!({"apiVersion": alert_api_version(), "kind": "Alert",
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
            source_kind: None,
            on: On::Object,
        };
        let entries: Vec<Entry<'_>> =
            crate::annotations::entries(subject.meta, subject.old).collect();
        let mut findings = Findings::new(false);
        // The Alerts of the cluster, or one whose every lookup fails.
        let recorded: Vec<Recorded> = match alerts {
            Ok(alerts) => alerts.into_iter().map(Recorded::of).collect(),
            Err(e) => vec![Recorded::failing(
                &alert_api_version(),
                "Alert",
                "flux-system",
                "slack",
                &e.0,
            )],
        };
        let cluster = RecordedCluster::new(&recorded);
        check(&subject, &entries, &settings, &cluster, &mut findings);
        let v = crate::test_support::verdict(findings, None, &request, &settings);
        let listed = cluster
            .listed()
            .into_iter()
            .map(|(api_version, kind, namespace)| {
                assert_eq!((api_version, kind.as_str()), (alert_api_version(), "Alert"));
                namespace
            });
        (v, listed.collect())
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

    /// Both readings of a List reply, each after `before` findings: what
    /// the judge saw of every Alert (as findings), and the count or error.
    fn both_readings(
        reply: &[u8],
        before: usize,
    ) -> [(Result<usize, ClusterError>, Findings<String>); 2] {
        let judge = |alert: &Alert<'_>, found: &mut Findings<String>| {
            found.warn(|| format!("{alert:?}"));
            found.report(Action::Deny, alert.suspended(), || alert.name.to_string());
        };
        let start = || {
            let mut findings = Findings::new(false);
            for _ in 0..before {
                findings.warn(|| "before".to_string());
            }
            findings
        };
        let (mut fast, mut slow) = (start(), start());
        let fast_count = each_listed_alert(reply, &mut fast, judge);
        let slow_count = the_long_way(reply, &mut slow, judge);
        [(fast_count, fast), (slow_count, slow)]
    }

    /// The one pass agrees with the long way on any List: Alerts it reads in
    /// place, Alerts only the whole parse reads (the pass then gives way),
    /// and replies of other shapes.
    #[test]
    fn the_one_pass_agrees_with_the_long_way() {
        let alerts = [
            r#"{"metadata":{"name":"a","namespace":"n"},"spec":{"summary":"s","eventMetadata":{"env":"x","team":"y"},"eventSources":[{"kind":"HelmRelease","name":"*","matchLabels":{"a":"1"}}]}}"#,
            r#"{"metadata":{"name":"b","namespace":"n"},"spec":{"suspend":true,"eventSources":[]}}"#,
            r#"{"apiVersion":"v1","metadata":{"name":"c"},"status":{"conditions":[1,"x"]}}"#,
            "{}",
            // Read whole only.
            r#"{"metadata":{"name":"a\"b"}}"#,
            r#"{"metadata":{"name":null}}"#,
            r#"{"spec":{"summary":5}}"#,
            r#"{"spec":{"eventMetadata":{"b":"1","a":"2"}}}"#,
            r#"{"spec":{"eventSources":[null]}}"#,
            "5",
            "null",
        ];
        let mut rng = guard_core::testing::Rng::new(11);
        let mut next = |n: usize| rng.below(n);
        for round in 0..2000 {
            // Half the rounds only Alerts read in place.
            let kinds = if round % 2 == 0 { 4 } else { alerts.len() };
            let items: Vec<&str> = (0..next(12)).map(|_| alerts[next(kinds)]).collect();
            let reply = format!(r#"{{"kind":"AlertList","items":[{}]}}"#, items.join(","));
            let [fast, slow] = both_readings(reply.as_bytes(), next(10));
            assert_eq!(fast, slow, "{reply}");
        }
        let replies: [&[u8]; 11] = [
            br#"{"items":null}"#,
            br#"{}"#,
            br#"{"metadata":{"resourceVersion":"7"},"items":[{}],"kind":"AlertList"}"#,
            br#"{"items":[{}],"items":[{}]}"#,
            br#"[[{}]]"#,
            br#"{"items":{}}"#,
            br#"not json"#,
            br#"{"items":[{}]} x"#,
            b"{\"items\":[{\"metadata\":{\"name\":\"\xff\"}}]}",
            b"{\"items\":[{\"metadata\":{\"uid\":\"\xff\"}}]}",
            br#"{"items":[{"spec":{"eventMetadata":{"a":"1"}}}],"items":null}"#,
        ];
        for reply in replies {
            let [fast, slow] = both_readings(reply, 3);
            assert_eq!(fast, slow, "{}", String::from_utf8_lossy(reply));
        }
        // Past MAX_ALERTS: counted alike, the rest unread.
        let many = format!(r#"{{"items":[{}]}}"#, vec!["{}"; MAX_ALERTS + 2].join(","));
        let [fast, slow] = both_readings(many.as_bytes(), 0);
        assert_eq!(fast.0, Ok(MAX_ALERTS + 2));
        assert_eq!(fast, slow);
    }
}

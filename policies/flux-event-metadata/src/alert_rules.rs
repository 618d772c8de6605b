//! The rules for an Alert's own metadata: `.spec.eventMetadata` and the
//! deprecated `.spec.summary`, which notification-controller merges into every
//! event it dispatches, below controller metadata in precedence.

use std::collections::BTreeSet;

use guard_core::names::{check_name_part, NameError};
use guard_core::UserInfo;

use crate::alert::{Alert, FieldError};
use crate::findings::Findings;
use crate::kinds;
use crate::settings::{Action, Settings};
use crate::values::{self, RoutingFormat};

/// notification-controller's CRD bound on `.spec.summary`.
pub const SUMMARY_MAX: usize = 255;

/// The field of the Alert a value is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Field {
    Summary,
    /// `.spec.eventMetadata.<key>`.
    Metadata(String),
}

#[derive(Debug, PartialEq)]
pub(crate) enum Finding {
    /// `.spec.summary` or `.spec.eventMetadata` is not of its CRD type.
    Unreadable(FieldError),
    /// An eventMetadata key that is not an annotation name part; `error`
    /// is guard-core's.
    BadKey { key: String, error: NameError },
    ControlCharacter {
        field: Field,
        value: String,
        character: char,
    },
    /// The value has `length` characters, over `max` (maxValueLength).
    TooLong {
        field: Field,
        length: usize,
        max: usize,
    },
    RoutingFormat {
        field: Field,
        value: String,
        format: RoutingFormat,
    },
    /// A routing key set or changed by someone routingKeySetters does not list.
    RoutingSetter { key: String },
    /// The controller of the source `kind` (of `group`) sends `key` itself.
    ControllerKey {
        key: String,
        kind: String,
        group: &'static str,
    },
    /// `.spec.summary` over [`SUMMARY_MAX`] characters.
    SummaryTooLong { length: usize },
    /// `.spec.summary` and `.spec.eventMetadata.summary` both set.
    SummaryTwice {
        summary: String,
        in_metadata: String,
    },
    /// `.spec.summary` is deprecated.
    SummaryDeprecated { summary: String },
}

pub(crate) fn check<F: From<Finding>>(
    alert: &Alert<'_>,
    old: Option<&Alert<'_>>,
    settings: &Settings,
    user: &UserInfo,
    findings: &mut Findings<F>,
) {
    let (summary, metadata) = match (alert.summary(), alert.event_metadata()) {
        (Ok(s), Ok(m)) => (s, m),
        (Err(e), _) | (_, Err(e)) => {
            findings.report(Action::Deny, false, || Finding::Unreadable(e));
            return;
        }
    };
    let old_summary = old.and_then(|o| o.summary().ok().flatten());
    let old_metadata = old
        .and_then(|o| o.event_metadata().ok())
        .unwrap_or_default();
    let unchanged =
        |key: &str, value: &str| old_metadata.iter().any(|&(k, v)| k == key && v == value);

    let overridden = controller_overrides(alert, settings.no_cross_namespace_refs);
    for &(key, value) in &metadata {
        let same = unchanged(key, value);
        check_metadata(key, value, same, &overridden, settings, user, findings);
    }
    if let Some(summary) = summary {
        let same = old_summary == Some(summary);
        let in_metadata = metadata.iter().find(|&&(k, _)| k == "summary");
        let both_same = in_metadata.is_some_and(|&(_, v)| same && unchanged("summary", v));
        check_summary(
            summary,
            same,
            in_metadata.map(|&(_, v)| (v, both_same)),
            settings,
            findings,
        );
    }
}

/// The rules on one `.spec.eventMetadata` entry.
fn check_metadata<F: From<Finding>>(
    key: &str,
    value: &str,
    same: bool,
    overridden: &BTreeSet<(&'static str, &str)>,
    settings: &Settings,
    user: &UserInfo,
    findings: &mut Findings<F>,
) {
    if let Err(error) = check_name_part(key) {
        findings.report(Action::Deny, same, || Finding::BadKey {
            key: key.to_string(),
            error,
        });
        return;
    }
    let field = || Field::Metadata(key.to_string());
    check_value(field, key, value, same, settings, findings);
    // The Alert's value beats every selected object's annotation, so the
    // routing keys' setters are the same people here as on objects.
    let setters = &settings.routing_key_setters;
    if values::is_routing_key(key) && !same && !setters.is_empty() && !setters.matches(user) {
        findings.report(Action::Deny, false, || Finding::RoutingSetter {
            key: key.to_string(),
        });
    }
    if let Some((group, kind)) = overridden
        .iter()
        .find(|(g, k)| kinds::controller_sends(g, k, key, None))
    {
        findings.report(settings.controller_keys, same, || Finding::ControllerKey {
            key: key.to_string(),
            kind: kind.to_string(),
            group,
        });
    }
}

/// The rules on `.spec.summary`; `in_metadata`: `.spec.eventMetadata.summary`
/// too, and whether both were already so.
fn check_summary<F: From<Finding>>(
    summary: &str,
    same: bool,
    in_metadata: Option<(&str, bool)>,
    settings: &Settings,
    findings: &mut Findings<F>,
) {
    check_value(
        || Field::Summary,
        "summary",
        summary,
        same,
        settings,
        findings,
    );
    if let Some(length) = values::excess_length(summary, SUMMARY_MAX) {
        findings.report(Action::Deny, same, || Finding::SummaryTooLong { length });
    }
    if let Some((both, both_same)) = in_metadata {
        findings.report(Action::Deny, both_same, || Finding::SummaryTwice {
            summary: summary.to_string(),
            in_metadata: both.to_string(),
        });
        return;
    }
    // A summary already stored is grandfathered like every other finding:
    // with `deny`, refusing it would also refuse `flux suspend alert`.
    findings.report(settings.deprecated_summary, same, || {
        Finding::SummaryDeprecated {
            summary: summary.to_string(),
        }
    });
}

/// The value rules an Alert's metadata shares with annotations.
fn check_value<F: From<Finding>>(
    field: impl Fn() -> Field,
    key: &str,
    value: &str,
    same: bool,
    settings: &Settings,
    findings: &mut Findings<F>,
) {
    if let Some(character) = values::invisible_character(value, settings.allow_newlines) {
        findings.report(Action::Deny, same, || Finding::ControlCharacter {
            field: field(),
            value: value.to_string(),
            character,
        });
    }
    if let Some(length) = values::excess_length(value, settings.max_value_length) {
        findings.report(Action::Deny, same, || Finding::TooLong {
            field: field(),
            length,
            max: settings.max_value_length,
        });
    }
    if let Some(format) = values::routing_format_error(key, value) {
        findings.report(settings.routing_key_format, same, || {
            Finding::RoutingFormat {
                field: field(),
                value: value.to_string(),
                format,
            }
        });
    }
}

/// The (group, kind) pairs of the Alert's sources, whose controller keys
/// override the Alert's metadata. With `--no-cross-namespace-refs` a source
/// in another namespace delivers no events, so it overrides nothing.
fn controller_overrides<'a>(
    alert: &Alert<'a>,
    same_namespace_only: bool,
) -> BTreeSet<(&'static str, &'a str)> {
    alert
        .sources()
        .filter(|s| !same_namespace_only || s.namespace_or(alert.namespace) == alert.namespace)
        .filter_map(|s| kinds::group_of_kind(s.kind).map(|g| (g, s.kind)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::model::kinds::NOTIFICATION;
    use guard_core::settings::parse;
    use serde_json::{json, Value};

    fn run(settings: &str, spec: Value, old: Option<Value>) -> guard_core::Verdict {
        run_as(settings, spec, old, "alice@example.com")
    }

    fn run_as(settings: &str, spec: Value, old: Option<Value>, who: &str) -> guard_core::Verdict {
        let settings = parse::<Settings>(settings.as_bytes()).unwrap();
        let alert = Alert::new("slack", "flux-system", Some(&spec));
        let old = old
            .as_ref()
            .map(|o| Alert::new("slack", "flux-system", Some(o)));
        let request = crate::test_support::request(
            NOTIFICATION,
            "Alert",
            "alerts",
            "flux-system",
            "slack",
            who,
        );
        let mut findings = Findings::new(false);
        check(
            &alert,
            old.as_ref(),
            &settings,
            &request.user_info,
            &mut findings,
        );
        crate::test_support::verdict(findings, None, &request, &settings)
    }

    fn sources() -> Value {
        json!([{"kind": "Kustomization", "name": "*"}, {"kind": "HelmRelease", "name": "*"}])
    }

    #[test]
    fn valid_metadata_passes_quietly() {
        let v = run(
            "{}",
            json!({"eventSources": sources(), "eventMetadata": {"env": "production", "cluster": "eu-1"}}),
            None,
        );
        assert!(v.allowed && v.warnings.is_empty(), "{v:?}");
    }

    #[test]
    fn keys_overridden_by_controllers() {
        let v = run(
            "{}",
            json!({"eventSources": sources(), "eventMetadata": {"commit_status": "x"}}),
            None,
        );
        let m = v.message.unwrap();
        assert!(m.starts_with("spec.eventMetadata.commit_status competes with kustomize-controller, which sends its own `commit_status` with some Kustomization events"), "{m}");
        // `app-version` is helm-controller's, but this Alert only selects Kustomizations.
        let only_ks = json!([{"kind": "Kustomization", "name": "*"}]);
        assert!(
            run(
                "{}",
                json!({"eventSources": only_ks, "eventMetadata": {"app-version": "1"}}),
                None
            )
            .allowed
        );
        let v = run(
            r#"{"controllerKeys":"warn"}"#,
            json!({"eventSources": sources(), "eventMetadata": {"app-version": "x"}}),
            None,
        );
        assert!(v.allowed && v.warnings.len() == 1);
        // `revision` also picks the commit of the events that carry none of
        // the controller's: its format is checked as `commit`'s.
        let v = run(
            r#"{"controllerKeys":"warn"}"#,
            json!({"eventSources": sources(), "eventMetadata": {"revision": "x"}}),
            None,
        );
        assert!(!v.allowed, "{v:?}");
        assert!(v
            .message
            .unwrap()
            .contains("spec.eventMetadata.revision=\"x\" is not a full Git SHA-1"));
    }

    #[test]
    fn routing_keys_need_a_setter() {
        let s = r#"{"routingKeySetters":{"serviceAccounts":["ci:release-bot"]}}"#;
        let sha = "4f2a6c1d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49";
        let spec = json!({"eventSources": sources(), "eventMetadata": {"change_request": "42", "commit": sha}});
        let v = run(s, spec.clone(), None);
        let m = v.message.unwrap();
        assert!(m.starts_with("2 problems"), "{m}");
        assert!(m.contains(
            "spec.eventMetadata.change_request chooses which pull request receives the comment"
        ));
        assert!(m.contains("and alice@example.com is not one of them"));
        assert!(
            run_as(
                s,
                spec.clone(),
                None,
                "system:serviceaccount:ci:release-bot"
            )
            .allowed
        );
        // Unchanged values are not set by this request; anyone may edit the rest of the Alert.
        assert!(run(s, spec.clone(), Some(spec)).allowed);
        assert!(run("{}", json!({"eventMetadata": {"commit": sha}}), None).allowed);
    }

    #[test]
    fn no_cross_namespace_refs_drops_overrides_from_other_namespaces() {
        let spec = json!({"eventSources": [{"kind": "HelmRelease", "name": "*", "namespace": "apps"}],
                          "eventMetadata": {"app-version": "x"}});
        assert!(!run("{}", spec.clone(), None).allowed);
        assert!(run(r#"{"noCrossNamespaceRefs":true}"#, spec, None).allowed);
    }

    #[test]
    fn invalid_keys_types_and_values() {
        let v = run(
            "{}",
            json!({"eventSources": sources(), "eventMetadata": {"my key": "x"}}),
            None,
        );
        assert!(v
            .message
            .unwrap()
            .starts_with("spec.eventMetadata key \"my key\" may contain only"));
        let v = run(
            "{}",
            json!({"eventSources": sources(), "eventMetadata": "env=prod"}),
            None,
        );
        assert_eq!(v.message.unwrap(), "Alert flux-system/slack: spec.eventMetadata must be a map of keys to strings, not a string.");
        let v = run(
            "{}",
            json!({"eventSources": sources(), "eventMetadata": {"env": "a\u{1b}[31m"}}),
            None,
        );
        assert!(v.message.unwrap().contains("control character '\\u{1b}'"));
        let v = run(
            "{}",
            json!({"eventSources": sources(), "eventMetadata": {"commit": "HEAD"}}),
            None,
        );
        assert!(v
            .message
            .unwrap()
            .starts_with("spec.eventMetadata.commit=\"HEAD\" is not a full Git SHA-1 commit"));
    }

    #[test]
    fn summary_rules() {
        let v = run(
            "{}",
            json!({"eventSources": sources(), "summary": "Production cluster"}),
            None,
        );
        assert!(v.allowed);
        assert_eq!(
            v.warnings,
            [
                r#"spec.summary is deprecated and will be removed with the Alert v1 API; move it to spec.eventMetadata.summary: `kubectl patch alerts.notification.toolkit.fluxcd.io slack -n flux-system --type=merge -p '{"spec":{"summary":null,"eventMetadata":{"summary":"Production cluster"}}}'`."#
            ]
        );
        assert!(run(
            r#"{"deprecatedSummary":"ignore"}"#,
            json!({"summary": "x"}),
            None
        )
        .warnings
        .is_empty());
        // With deny, only a new or changed summary is refused: one already
        // stored stays (flux suspend alert must pass), with the warning.
        let deny = r#"{"deprecatedSummary":"deny"}"#;
        let stored = json!({"eventSources": sources(), "summary": "Production cluster"});
        assert!(!run(deny, stored.clone(), None).allowed);
        let mut suspended = stored.clone();
        suspended["suspend"] = json!(true);
        let v = run(deny, suspended, Some(stored.clone()));
        assert!(v.allowed && v.warnings[0].ends_with("so the change is accepted.)"));
        let mut changed = stored.clone();
        changed["summary"] = json!("Staging cluster");
        assert!(!run(deny, changed, Some(stored)).allowed);
        let v = run("{}", json!({"summary": "it's"}), None);
        assert!(v.warnings[0].contains(r#""summary":"it'\''s""#));

        let both =
            json!({"eventSources": sources(), "summary": "a", "eventMetadata": {"summary": "b"}});
        let v = run("{}", both.clone(), None);
        assert!(v.message.unwrap().starts_with(
            "summary is set twice, as spec.summary=\"a\" and spec.eventMetadata.summary=\"b\""
        ));
        assert!(run("{}", both.clone(), Some(both)).allowed);

        let v = run("{}", json!({"summary": "x".repeat(256)}), None);
        assert_eq!(
            v.message.unwrap(),
            "spec.summary has 256 characters; notification-controller accepts at most 255."
        );
        let v = run("{}", json!({"summary": 3}), None);
        assert_eq!(
            v.message.unwrap(),
            "Alert flux-system/slack: spec.summary must be a string, not a number."
        );
    }
}

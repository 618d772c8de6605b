//! The rules for an Alert's own metadata: `.spec.eventMetadata` and the
//! deprecated `.spec.summary`, which notification-controller merges into every
//! event it dispatches, below controller metadata in precedence.

use std::collections::BTreeSet;

use guard_core::identity::describe;
use guard_core::names::{check_name_part, quote, shell_quoted};
use guard_core::object::ObjectName;
use guard_core::UserInfo;

use crate::alert::Alert;
use crate::kinds;
use crate::report::Findings;
use crate::settings::{Action, Settings};
use crate::values;

/// notification-controller's CRD bound on `.spec.summary`.
pub const SUMMARY_MAX: usize = 255;

pub fn check(
    alert: &Alert<'_>,
    old: Option<&Alert<'_>>,
    target: &ObjectName<'_>,
    settings: &Settings,
    user: &UserInfo,
    findings: &mut Findings,
) {
    let (summary, metadata) = match (alert.summary(), alert.event_metadata()) {
        (Ok(s), Ok(m)) => (s, m),
        (Err(e), _) | (_, Err(e)) => {
            findings.report(Action::Deny, false, || {
                format!("{}: {e}.", target.describe())
            });
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
        if let Err(e) = check_name_part(key) {
            findings.report(Action::Deny, same, || {
                format!(
                    "spec.eventMetadata key {} {e}; keys follow annotation-name rules: at most 63 \
                     letters, digits, '-', '_' and '.', beginning and ending with a letter or digit.",
                    quote(key)
                )
            });
            continue;
        }
        let field = format!("spec.eventMetadata.{key}");
        check_value(&field, key, value, same, settings, findings);
        // The Alert's value beats every selected object's annotation, so the
        // routing keys' setters are the same people here as on objects.
        let setters = &settings.routing_key_setters;
        if values::is_routing_key(key) && !same && !setters.is_empty() && !setters.matches(user) {
            findings.report(Action::Deny, false, || {
                format!(
                    "{field} chooses {} for every event of the objects this Alert selects, so only \
                     the identities in the policy setting routingKeySetters may set or change it, and \
                     {} is not one of them. Leave it to them, or remove it from the Alert.",
                    values::routing_purpose(key),
                    describe(user)
                )
            });
        }
        if let Some((group, kind)) = overridden
            .iter()
            .find(|(g, _)| kinds::controller_keys(g).contains(&key))
        {
            findings.report(settings.controller_keys, same, || {
                format!(
                    "{field} is never delivered for {kind} events: {} sends its own `{key}`, and \
                     controller metadata takes precedence over an Alert's (RFC-0008), so \
                     notification-controller records a MetadataAppendFailed Warning event on this \
                     Alert at every dispatch. Rename or remove the key.",
                    kinds::controller_name(group)
                )
            });
        }
    }

    let Some(summary) = summary else {
        return;
    };
    let same = old_summary == Some(summary);
    check_value("spec.summary", "summary", summary, same, settings, findings);
    if let Some(len) = values::excess_length(summary, SUMMARY_MAX) {
        findings.report(Action::Deny, same, || {
            format!("spec.summary has {len} characters; notification-controller accepts at most {SUMMARY_MAX}.")
        });
    }
    if let Some(&(_, both)) = metadata.iter().find(|&&(k, _)| k == "summary") {
        findings.report(Action::Deny, same && unchanged("summary", both), || {
            format!(
                "summary is set twice, as spec.summary={} and spec.eventMetadata.summary={}; \
                 spec.summary silently wins and a MetadataAppendFailed Warning event lands on this \
                 Alert at every dispatch. Keep one: remove spec.summary (it is deprecated).",
                quote(summary),
                quote(both)
            )
        });
        return;
    }
    // A summary already stored is grandfathered like every other finding:
    // with `deny`, refusing it would also refuse `flux suspend alert`.
    findings.report(settings.deprecated_summary, same, || {
        format!(
            "spec.summary is deprecated and will be removed with the Alert v1 API; move it to \
             spec.eventMetadata.summary: `{}`.",
            target.kubectl(
                "patch",
                &["--type=merge", "-p", &shell_quoted(&merge_patch(summary))]
            )
        )
    });
}

/// The value rules an Alert's metadata shares with annotations.
fn check_value(
    field: &str,
    key: &str,
    value: &str,
    same: bool,
    settings: &Settings,
    findings: &mut Findings,
) {
    if let Some(c) = values::control_character(value, settings.allow_newlines) {
        findings.report(Action::Deny, same, || {
            format!(
                "{field} has the control character {c:?} in its value {}; providers show values \
                 verbatim, so write it as one line of printable text.",
                quote(value)
            )
        });
    }
    if let Some(len) = values::excess_length(value, settings.max_value_length) {
        findings.report(Action::Deny, same, || {
            format!(
                "{field} has a value of {len} characters; at most {} are accepted.",
                settings.max_value_length
            )
        });
    }
    if let Some(expected) = values::routing_format_error(key, value) {
        findings.report(settings.routing_key_format, same, || {
            format!("{field}={} is not {expected}.", quote(value))
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

/// `{"spec":{"summary":null,"eventMetadata":{"summary":"…"}}}`
/// Written out rather than built as a map, so the key order never depends on
/// serde_json's features.
fn merge_patch(summary: &str) -> String {
    let value = serde_json::to_string(summary).unwrap_or_default();
    format!(r#"{{"spec":{{"summary":null,"eventMetadata":{{"summary":{value}}}}}}}"#)
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let target = ObjectName::new(
            "Alert",
            "alerts.notification.toolkit.fluxcd.io",
            "flux-system",
            "slack",
        );
        let user = UserInfo {
            username: who.into(),
            ..UserInfo::default()
        };
        let mut findings = Findings::default();
        check(
            &alert,
            old.as_ref(),
            &target,
            &settings,
            &user,
            &mut findings,
        );
        findings.into_verdict(&target)
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
        assert!(m.starts_with("spec.eventMetadata.commit_status is never delivered for Kustomization events: kustomize-controller sends its own `commit_status`"), "{m}");
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
            json!({"eventSources": sources(), "eventMetadata": {"revision": "x"}}),
            None,
        );
        assert!(v.allowed && v.warnings.len() == 1);
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
        let spec = json!({"eventSources": [{"kind": "Kustomization", "name": "*", "namespace": "apps"}],
                          "eventMetadata": {"revision": "x"}});
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

//! The rules for `event.toolkit.fluxcd.io/` annotations on objects that emit
//! Flux events. Flux copies these annotations into every event without
//! checking them, so each mistake here is otherwise invisible until a
//! notification is wrong.

use guard_core::names::{check_name_part, NameError};
use guard_core::UserInfo;

use crate::annotations::{entries, Entry};
use crate::findings::Findings;
use crate::kinds::{self, PREFIX};
use crate::settings::{Action, KeyLists, Settings};
use crate::subject::{On, Subject};
use crate::values::{self, RoutingFormat};

/// A problem with the event annotations of a [`Subject`].
#[derive(Debug, PartialEq)]
pub(crate) struct Finding {
    pub(crate) on: On,
    pub(crate) problem: Problem,
}

/// What is wrong. `key` is the part after the prefix; `removable`: the
/// stored object has the annotation, so `kubectl annotate` can take it off.
#[derive(Debug, PartialEq)]
pub(crate) enum Problem {
    /// The key is not an annotation name part; `error` is guard-core's.
    BadKey { key: String, error: NameError },
    ControlCharacter {
        key: String,
        value: String,
        character: char,
    },
    /// The value has `length` characters, over `max` (maxValueLength).
    TooLong {
        key: String,
        length: usize,
        max: usize,
    },
    /// The object's own controller sends this key on some events, and wins
    /// on those.
    ControllerKey {
        key: String,
        value: String,
        removable: bool,
    },
    /// reservedKeys lists the key.
    Reserved {
        key: String,
        value: String,
        removable: bool,
    },
    /// deniedKeys lists the key.
    Denied { key: String, removable: bool },
    /// allowedKeys is set and does not list the key.
    NotAllowed { key: String, removable: bool },
    /// A routing key (a commit key, `change_request`) whose value cannot route.
    RoutingFormat {
        key: String,
        value: String,
        format: RoutingFormat,
    },
    /// A routing key set or changed by someone routingKeySetters does not list.
    RoutingSetter { key: String },
    /// The value does not match the valuePatterns entry for its key.
    PatternMismatch {
        key: String,
        value: String,
        pattern: String,
    },
    /// More event annotations than maxKeys.
    TooMany { count: usize, max: usize },
    /// A requiredKeys key is missing; `pattern` is its valuePatterns entry;
    /// `exists`: the object exists, so `kubectl annotate` can add it.
    Required {
        key: String,
        pattern: Option<String>,
        exists: bool,
    },
    /// A requiredKeys key is missing from an object a Flux controller
    /// generates: only ever a warning, the fix is in the owner's template.
    RequiredOnGenerated { key: String },
}

/// Applies every per-key and per-object rule. Returns the entries whose key
/// is valid, for the Alert conflict check.
pub(crate) fn check<'a, F: From<Finding>>(
    subject: &'a Subject<'a>,
    settings: &Settings,
    user: &UserInfo,
    findings: &mut Findings<F>,
) -> Vec<Entry<'a>> {
    let mut valid = Vec::new();
    let mut count = 0usize;
    let lists = KeyLists::new(settings);
    let mut report = Reporter { subject, findings };
    for entry in entries(subject.meta, subject.old) {
        // Saturating: a count past usize::MAX is still "too many".
        count = count.saturating_add(1);
        if check_entry(&mut report, settings, &lists, user, &entry) {
            valid.push(entry);
        }
    }
    check_count(&mut report, settings, count);
    check_required(&mut report, settings);
    valid
}

/// Reports findings on one subject: each is tagged with whose annotations
/// it is about, and built only when it is kept.
struct Reporter<'r, 's, F> {
    subject: &'r Subject<'s>,
    findings: &'r mut Findings<F>,
}

impl<F: From<Finding>> Reporter<'_, '_, F> {
    fn report(&mut self, action: Action, preexisting: bool, problem: impl FnOnce() -> Problem) {
        let on = self.subject.on;
        self.findings.report(action, preexisting, || Finding {
            on,
            problem: problem(),
        });
    }
}

/// Returns whether the key is well-formed (the value rules ran).
fn check_entry<F: From<Finding>>(
    report: &mut Reporter<'_, '_, F>,
    settings: &Settings,
    lists: &KeyLists<'_>,
    user: &UserInfo,
    entry: &Entry<'_>,
) -> bool {
    let Entry {
        key,
        value,
        unchanged,
    } = *entry;
    if let Err(error) = check_name_part(key) {
        report.report(Action::Deny, unchanged, || Problem::BadKey {
            key: key.to_string(),
            error,
        });
        return false;
    }
    let too_long = check_value(report, settings, entry);
    check_key_lists(report, settings, lists, entry);
    let subject = report.subject;
    let routes = key == values::CHANGE_REQUEST
        || kinds::picks_commit(subject.group, subject.target.kind, key);
    if routes {
        check_routing(report, settings, user, entry);
    }
    // A value already refused for its length is not matched: the pattern's
    // cost is budgeted for values up to maxValueLength (guard_core::pattern).
    let pattern = (!too_long).then(|| settings.pattern(key)).flatten();
    if let Some((source, pattern)) = pattern {
        if !pattern.is_match(value) {
            report.report(Action::Deny, unchanged, || Problem::PatternMismatch {
                key: key.to_string(),
                value: value.to_string(),
                pattern: source.to_string(),
            });
        }
    }
    true
}

/// The rules on the value alone; returns whether it is too long.
fn check_value<F: From<Finding>>(
    report: &mut Reporter<'_, '_, F>,
    settings: &Settings,
    entry: &Entry<'_>,
) -> bool {
    let (key, value, unchanged) = (entry.key, entry.value, entry.unchanged);
    if let Some(character) = values::invisible_character(value, settings.allow_newlines) {
        report.report(Action::Deny, unchanged, || Problem::ControlCharacter {
            key: key.to_string(),
            value: value.to_string(),
            character,
        });
    }
    let too_long = values::excess_length(value, settings.max_value_length);
    if let Some(length) = too_long {
        report.report(Action::Deny, unchanged, || Problem::TooLong {
            key: key.to_string(),
            length,
            max: settings.max_value_length,
        });
    }
    too_long.is_some()
}

/// The keys the object's controller sends, and the settings' key lists.
fn check_key_lists<F: From<Finding>>(
    report: &mut Reporter<'_, '_, F>,
    settings: &Settings,
    lists: &KeyLists<'_>,
    entry: &Entry<'_>,
) {
    let (key, value, unchanged) = (entry.key, entry.value, entry.unchanged);
    let subject = report.subject;
    // Looked up only for a finding that is kept.
    let removable = || subject.stored(key);
    if kinds::controller_sends(subject.group, subject.target.kind, key, subject.source_kind) {
        report.report(settings.controller_keys, unchanged, || {
            Problem::ControllerKey {
                key: key.to_string(),
                value: value.to_string(),
                removable: removable(),
            }
        });
    }
    if lists.reserved.contains(key) {
        report.report(Action::Deny, unchanged, || Problem::Reserved {
            key: key.to_string(),
            value: value.to_string(),
            removable: removable(),
        });
    }
    if lists.denied.contains(key) {
        report.report(Action::Deny, unchanged, || Problem::Denied {
            key: key.to_string(),
            removable: removable(),
        });
    }
    if !lists.allowed.is_empty() && !lists.allowed.contains(key) {
        report.report(Action::Deny, unchanged, || Problem::NotAllowed {
            key: key.to_string(),
            removable: removable(),
        });
    }
}

fn check_routing<F: From<Finding>>(
    report: &mut Reporter<'_, '_, F>,
    settings: &Settings,
    user: &UserInfo,
    entry: &Entry<'_>,
) {
    let (key, value, unchanged) = (entry.key, entry.value, entry.unchanged);
    if let Some(format) = values::routing_format_error(key, value) {
        report.report(settings.routing_key_format, unchanged, || {
            Problem::RoutingFormat {
                key: key.to_string(),
                value: value.to_string(),
                format,
            }
        });
    }
    // Only a new or changed value is someone setting it.
    let setters = &settings.routing_key_setters;
    if !unchanged && !setters.is_empty() && !setters.matches(user) {
        report.report(Action::Deny, false, || Problem::RoutingSetter {
            key: key.to_string(),
        });
    }
}

fn check_count<F: From<Finding>>(
    report: &mut Reporter<'_, '_, F>,
    settings: &Settings,
    count: usize,
) {
    let max = settings.max_keys;
    if count <= max {
        return;
    }
    let old_count = report.subject.old.map_or(0, |o| entries(o, None).count());
    report.report(Action::Deny, old_count >= count, || Problem::TooMany {
        count,
        max,
    });
}

fn check_required<F: From<Finding>>(report: &mut Reporter<'_, '_, F>, settings: &Settings) {
    let subject = report.subject;
    for key in settings.required_for(subject.target.kind) {
        let full = format!("{PREFIX}{key}");
        if subject.meta.annotations.contains_key(&full) {
            continue;
        }
        if subject.generated {
            let on = subject.on;
            report.findings.warn(|| Finding {
                on,
                problem: Problem::RequiredOnGenerated { key: key.clone() },
            });
            continue;
        }
        let was_missing = subject
            .old
            .is_some_and(|o| !o.annotations.contains_key(&full));
        report.report(Action::Deny, was_missing, || Problem::Required {
            key: key.clone(),
            pattern: settings.value_patterns.get(key).cloned(),
            exists: subject.exists(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;
    use guard_core::object::ObjectName;
    use guard_core::settings::parse;
    use guard_core::Metadata;

    const HELM: &str = "helm.toolkit.fluxcd.io";

    fn meta(pairs: &[(&str, &str)]) -> Metadata {
        Metadata {
            annotations: pairs
                .iter()
                .map(|(k, v)| (format!("{PREFIX}{k}"), v.to_string()))
                .collect(),
            ..Metadata::default()
        }
    }

    /// The findings of the rules on the HelmRelease `apps/podinfo`.
    fn findings(
        settings: &Settings,
        new: &[(&str, &str)],
        old: Option<&[(&str, &str)]>,
        request: &guard_core::AdmissionRequest,
    ) -> Findings<crate::decision::Finding> {
        let new = meta(new);
        let old = old.map(meta);
        let subject = Subject {
            group: HELM,
            target: ObjectName::of(request, None),
            meta: &new,
            old: old.as_ref(),
            generated: false,
            source_kind: None,
            on: On::Object,
        };
        let mut findings = Findings::new(false);
        check(&subject, settings, &request.user_info, &mut findings);
        findings
    }

    /// Runs the rules on a HelmRelease and returns the verdict users read.
    fn run(
        settings: &str,
        new: &[(&str, &str)],
        old: Option<&[(&str, &str)]>,
        who: &str,
    ) -> guard_core::Verdict {
        let settings = parse::<Settings>(settings.as_bytes()).unwrap();
        let request = test_support::podinfo(who);
        let found = findings(&settings, new, old, &request);
        test_support::verdict(found, None, &request, &settings)
    }

    /// `kubectl annotate` can remove only what the stored object has.
    #[test]
    fn removal_follows_the_stored_object() {
        let settings = parse::<Settings>(br#"{"deniedKeys":["team"]}"#).unwrap();
        let request = test_support::podinfo("alice");
        let denied = |old: Option<&[(&str, &str)]>| {
            findings(&settings, &[("team", "a")], old, &request).refusals
        };
        let refusal = |removable| {
            vec![crate::decision::Finding::Object(Finding {
                on: On::Object,
                problem: Problem::Denied {
                    key: "team".into(),
                    removable,
                },
            })]
        };
        assert_eq!(denied(Some(&[("team", "b")])), refusal(true));
        assert_eq!(denied(Some(&[("owner", "b")])), refusal(false));
        assert_eq!(denied(None), refusal(false));
    }

    fn refusal(v: &guard_core::Verdict) -> &str {
        assert!(!v.allowed, "expected a refusal, got {v:?}");
        v.message.as_deref().unwrap()
    }

    #[test]
    fn rfc_story_one_deployment_id_is_accepted() {
        let v = run(
            "{}",
            &[("deploymentID", "e076e315-5a48-41c3-81c8-8d8bdee7d74d")],
            None,
            "alice",
        );
        assert!(v.allowed && v.warnings.is_empty(), "{v:?}");
    }

    #[test]
    fn key_syntax() {
        let v = run("{}", &[("", "x")], None, "alice");
        assert!(refusal(&v).starts_with(
            "annotation \"event.toolkit.fluxcd.io/\": the key after `event.toolkit.fluxcd.io/` must not be empty."
        ));
        let v = run("{}", &[("-team", "x")], None, "alice");
        assert!(refusal(&v).contains("must begin and end with a letter or digit"));
    }

    #[test]
    fn control_characters_and_length() {
        let v = run("{}", &[("note", "line1\nline2")], None, "alice");
        assert!(refusal(&v).starts_with("annotation event.toolkit.fluxcd.io/note has the control character '\\n' in its value \"line1\\nline2\""));
        assert!(
            run(
                r#"{"allowNewlines":true}"#,
                &[("note", "a\nb")],
                None,
                "alice"
            )
            .allowed
        );
        let big = "x".repeat(65536);
        let v = run("{}", &[("note", &big)], None, "alice");
        let m = refusal(&v);
        assert!(m.contains("has a value of 65536 characters; at most 1024 are accepted"));
        assert!(m.len() < 400, "the value must not be echoed in full");
    }

    #[test]
    fn controller_keys_lose() {
        let v = run("{}", &[("app-version", "1.0")], None, "alice");
        let m = refusal(&v);
        assert!(m.starts_with("annotation event.toolkit.fluxcd.io/app-version competes with helm-controller, which sends its own `app-version` with some HelmRelease events"), "{m}");
        assert!(m.contains("MetadataAppendFailed"));
        assert!(m.ends_with("remove `event.toolkit.fluxcd.io/app-version` from the manifest."));
        // Not a controller key of helm-controller.
        assert!(run("{}", &[("commit_status", "x")], None, "alice").allowed);
        let v = run(
            r#"{"controllerKeys":"warn"}"#,
            &[("oci-digest", "x")],
            None,
            "alice",
        );
        assert!(v.allowed && v.warnings[0].contains("competes with helm-controller"));
    }

    #[test]
    fn unchanged_problems_are_not_refused() {
        let old: &[(&str, &str)] = &[("revision", "x")];
        let v = run("{}", &[("revision", "x")], Some(old), "alice");
        assert!(v.allowed);
        assert!(v.warnings[0].contains(
            "kubectl annotate helmreleases.helm.toolkit.fluxcd.io podinfo -n apps event.toolkit.fluxcd.io/revision-"
        ));
        assert!(v.warnings[0].ends_with("so the change is accepted.)"));
        // A changed value is a new decision.
        assert!(!run("{}", &[("revision", "y")], Some(old), "alice").allowed);
    }

    #[test]
    fn tenant_key_lists() {
        let m = refusal(&run(
            r#"{"reservedKeys":["env"]}"#,
            &[("env", "dev")],
            None,
            "alice",
        ))
        .to_string();
        assert!(
            m.contains("`env` is reserved for cluster-level metadata"),
            "{m}"
        );
        let m = refusal(&run(
            r#"{"deniedKeys":["secret"]}"#,
            &[("secret", "s")],
            None,
            "alice",
        ))
        .to_string();
        assert!(m.starts_with("annotation event.toolkit.fluxcd.io/secret is not permitted in this cluster (deniedKeys)"));
        let s = r#"{"allowedKeys":["team","deploymentID"]}"#;
        assert!(run(s, &[("team", "a")], None, "alice").allowed);
        let m = refusal(&run(s, &[("owner", "a")], None, "alice")).to_string();
        assert!(m.contains("is not among the keys permitted in this cluster (team, deploymentID)"));
    }

    #[test]
    fn value_patterns() {
        let s = r#"{"valuePatterns":{"deploymentID":"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"}}"#;
        assert!(
            run(
                s,
                &[("deploymentID", "e076e315-5a48-41c3-81c8-8d8bdee7d74d")],
                None,
                "a"
            )
            .allowed
        );
        let m = refusal(&run(s, &[("deploymentID", "42")], None, "a")).to_string();
        assert!(m.starts_with(
            "annotation event.toolkit.fluxcd.io/deploymentID=\"42\" does not match the pattern"
        ));
    }

    #[test]
    fn routing_keys() {
        let sha = "4f2a6c1d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49";
        assert!(
            run(
                "{}",
                &[("commit", sha), ("change_request", "42")],
                None,
                "a"
            )
            .allowed
        );
        let m = refusal(&run("{}", &[("commit", "4f2a6c1")], None, "a")).to_string();
        assert!(m.contains("=\"4f2a6c1\" is not a full Git SHA-1 commit"));
        assert!(m.contains("which Git commit receives the commit status"));
        let m = refusal(&run("{}", &[("change_request", "#42")], None, "a")).to_string();
        assert!(m.contains("positive decimal integer"));
        let s = r#"{"routingKeySetters":{"serviceAccounts":["ci:release-bot"]}}"#;
        let m = refusal(&run(s, &[("commit", sha)], None, "alice@example.com")).to_string();
        assert!(m.contains(
            "routingKeySetters may set or change it, and alice@example.com is not one of them"
        ));
        assert!(
            run(
                s,
                &[("commit", sha)],
                None,
                "system:serviceaccount:ci:release-bot"
            )
            .allowed
        );
        // Leaving a value alone is not setting it.
        let old: &[(&str, &str)] = &[("commit", sha)];
        assert!(run(s, &[("commit", sha)], Some(old), "alice").allowed);
    }

    #[test]
    fn key_count() {
        let many: Vec<(String, String)> = (0..22)
            .map(|i| (format!("k{i}"), "v".to_string()))
            .collect();
        let pairs: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let m = refusal(&run("{}", &pairs, None, "a")).to_string();
        assert!(m.starts_with(
            "HelmRelease apps/podinfo has 22 `event.toolkit.fluxcd.io/` annotations; at most 20"
        ));
        assert!(m.ends_with("Remove 2 of them."));
        assert!(run("{}", &pairs, Some(&pairs), "a").allowed);
    }

    #[test]
    fn required_keys() {
        let s = r#"{"requiredKeys":{"HelmRelease":["team"]},"valuePatterns":{"team":"[a-z]+"}}"#;
        let m = refusal(&run(s, &[("image", "x")], None, "a")).to_string();
        assert_eq!(
            m,
            "every HelmRelease must carry the annotation event.toolkit.fluxcd.io/team (requiredKeys), \
             with a value matching \"[a-z]+\"; add it under metadata.annotations in the manifest."
        );
        let old: &[(&str, &str)] = &[("image", "x")];
        let v = run(s, &[("image", "y")], Some(old), "a");
        assert!(v.allowed && v.warnings[0].contains("`kubectl annotate helmreleases.helm.toolkit.fluxcd.io podinfo -n apps event.toolkit.fluxcd.io/team=<value>`"));
        // Removing a required key that was there is refused.
        let had: &[(&str, &str)] = &[("team", "payments")];
        assert!(!run(s, &[], Some(had), "a").allowed);
        assert!(
            run(
                r#"{"requiredKeys":{"Kustomization":["team"]}}"#,
                &[],
                None,
                "a"
            )
            .allowed
        );
    }

    #[test]
    fn several_problems_are_reported_together() {
        let m = refusal(&run(
            r#"{"deniedKeys":["app-version"]}"#,
            &[("app-version", "x")],
            None,
            "a",
        ))
        .to_string();
        assert!(m.starts_with("2 problems with the event metadata of HelmRelease apps/podinfo: (1) annotation event.toolkit.fluxcd.io/app-version competes"), "{m}");
        assert!(m.contains("(2) annotation event.toolkit.fluxcd.io/app-version is not permitted"));
    }
}

//! The rules for `event.toolkit.fluxcd.io/` annotations on objects that emit
//! Flux events. Flux copies these annotations into every event without
//! checking them, so each mistake here is otherwise invisible until a
//! notification is wrong.

use std::collections::BTreeSet;

use guard_core::identity::describe;
use guard_core::names::{check_name_part, quote, shell_word};
use guard_core::object::ObjectName;
use guard_core::{Metadata, UserInfo};

use crate::annotations::{entries, Entry};
use crate::generated::Origin;
use crate::kinds::{self, PREFIX};
use crate::report::Findings;
use crate::settings::{Action, Settings};
use crate::values;

/// An object that emits events, before and after the change.
pub struct Subject<'a> {
    pub group: &'a str,
    pub target: ObjectName<'a>,
    pub meta: &'a Metadata,
    /// The stored object of an UPDATE.
    pub old: Option<&'a Metadata>,
    /// Set when a Flux controller generated the object from a template.
    pub origin: Option<Origin>,
    /// Set when the annotations are an owner's template, checked on the
    /// owner's write, for the object a controller will generate from it.
    pub template: Option<Template>,
}

/// Where a template's annotations are written, for messages.
pub struct Template {
    /// The object being written: `HelmRelease apps/podinfo`.
    pub owner: String,
    /// Its field holding them: `spec.chart.metadata.annotations`.
    pub field: &'static str,
    /// The controller that copies them: `helm-controller`.
    pub controller: &'static str,
}

impl Subject<'_> {
    /// The object exists already, so a `kubectl annotate` can fix it.
    pub fn exists(&self) -> bool {
        self.old.is_some()
    }

    /// The annotation `key` (the part after the prefix) as messages name it.
    pub fn field(&self, key: &str) -> String {
        match &self.template {
            None => format!("annotation {PREFIX}{key}"),
            Some(t) => format!("{}[{PREFIX}{key}]", t.field),
        }
    }

    /// What carries the annotations: the object, or the owner's template.
    pub fn holder(&self) -> String {
        match &self.template {
            None => self.target.describe(),
            Some(t) => format!("{} of {}", t.field, t.owner),
        }
    }

    /// How to take the annotation `key` (the part after the prefix) off;
    /// `stored`: the stored object has it, so `kubectl` can remove it.
    pub fn removal(&self, key: &str, stored: bool) -> String {
        if let Some(t) = &self.template {
            return format!("remove `{PREFIX}{key}` from {} in the manifest", t.field);
        }
        if self.exists() && stored {
            format!(
                "remove it from the manifest, or run `{}`",
                self.target
                    .kubectl("annotate", &[&shell_word(&format!("{PREFIX}{key}-"))])
            )
        } else {
            format!("remove `{PREFIX}{key}` from the manifest")
        }
    }
}

/// Applies every per-key and per-object rule. Returns the entries whose key
/// is valid, for the Alert conflict check.
pub fn check<'a>(
    subject: &'a Subject<'a>,
    settings: &Settings,
    user: &UserInfo,
    findings: &mut Findings,
) -> Vec<Entry<'a>> {
    let mut valid = Vec::new();
    let mut count = 0usize;
    let lists = KeyLists::new(settings);
    for entry in entries(subject.meta, subject.old) {
        // Saturating: a count past usize::MAX is still "too many".
        count = count.saturating_add(1);
        if check_entry(subject, settings, &lists, user, &entry, findings) {
            valid.push(entry);
        }
    }
    check_count(subject, settings, count, findings);
    check_required(subject, settings, findings);
    valid
}

/// The settings' key lists as sets, built once per request: each of
/// thousands of annotations is looked up in each list of up to thousands.
struct KeyLists<'s> {
    reserved: BTreeSet<&'s str>,
    denied: BTreeSet<&'s str>,
    allowed: BTreeSet<&'s str>,
}

impl<'s> KeyLists<'s> {
    fn new(settings: &'s Settings) -> Self {
        let set = |keys: &'s [String]| keys.iter().map(String::as_str).collect();
        Self {
            reserved: set(&settings.reserved_keys),
            denied: set(&settings.denied_keys),
            allowed: set(&settings.allowed_keys),
        }
    }
}

/// Returns whether the key is well-formed (the value rules ran).
fn check_entry(
    subject: &Subject<'_>,
    settings: &Settings,
    lists: &KeyLists<'_>,
    user: &UserInfo,
    entry: &Entry<'_>,
    findings: &mut Findings,
) -> bool {
    let Entry {
        key,
        value,
        unchanged,
    } = *entry;
    // Messages are built only when shown, so what only they need is lazy too.
    let stored = || {
        subject
            .old
            .is_some_and(|o| o.annotations.contains_key(&format!("{PREFIX}{key}")))
    };
    let removal = || subject.removal(key, stored());
    if let Err(e) = check_name_part(key) {
        findings.report(Action::Deny, unchanged, || {
            let holder = match &subject.template {
                None => "annotation".to_string(),
                Some(t) => format!("{} key", t.field),
            };
            format!(
                "{holder} {}: the key after `{PREFIX}` {e}. Keys are annotation names: at most 63 \
                 letters, digits, '-', '_' and '.', beginning and ending with a letter or digit.",
                quote(&format!("{PREFIX}{key}"))
            )
        });
        return false;
    }
    let field = || subject.field(key);
    if let Some(c) = values::control_character(value, settings.allow_newlines) {
        findings.report(Action::Deny, unchanged, || {
            let field = field();
            format!(
                "{field} has the control character {c:?} in its value {}; providers show values \
                 verbatim, so write it as one line of printable text.",
                quote(value)
            )
        });
    }
    let too_long = values::excess_length(value, settings.max_value_length);
    if let Some(len) = too_long {
        findings.report(Action::Deny, unchanged, || {
            let field = field();
            format!(
                "{field} has a value of {len} characters; at most {} are accepted, since it is sent \
                 with every event of this object.",
                settings.max_value_length
            )
        });
    }
    if kinds::controller_keys(subject.group).contains(&key) {
        findings.report(settings.controller_keys, unchanged, || {
            let field = field();
            format!(
                "{field} always loses: {} sends its own `{key}` with every {} event and controller \
                 metadata takes precedence over annotations (RFC-0008), so {} is never delivered and \
                 notification-controller records a MetadataAppendFailed Warning event on every Alert \
                 that selects this object, at every dispatch. Choose another key, or {}.",
                kinds::controller_name(subject.group),
                subject.target.kind,
                quote(value),
                removal()
            )
        });
    }
    if lists.reserved.contains(key) {
        findings.report(Action::Deny, unchanged, || {
            let field = field();
            format!(
                "{field}: `{key}` is reserved for cluster-level metadata that Alerts set, and an \
                 Alert's value takes precedence over an object's annotation, so {} would silently \
                 lose. Choose another key, or {}.",
                quote(value),
                removal()
            )
        });
    }
    if lists.denied.contains(key) {
        findings.report(Action::Deny, unchanged, || {
            let field = field();
            format!(
                "{field} is not permitted in this cluster (deniedKeys); {}.",
                removal()
            )
        });
    }
    if !lists.allowed.is_empty() && !lists.allowed.contains(key) {
        findings.report(Action::Deny, unchanged, || {
            let field = field();
            format!(
                "{field} is not among the keys permitted in this cluster ({}); use one of them, or {}.",
                list(&settings.allowed_keys),
                removal()
            )
        });
    }
    if values::is_routing_key(key) {
        check_routing(subject, settings, user, entry, findings);
    }
    // A value already refused for its length is not matched: the pattern's
    // cost is budgeted for values up to maxValueLength (guard_core::pattern).
    let pattern = too_long.is_none().then(|| settings.pattern(key)).flatten();
    if let Some((source, pattern)) = pattern {
        if !pattern.is_match(value) {
            findings.report(Action::Deny, unchanged, || {
                let field = field();
                format!(
                    "{field}={} does not match the pattern this cluster requires for `{key}`: {} \
                     (the whole value must match).",
                    quote(value),
                    quote(source)
                )
            });
        }
    }
    true
}

fn check_routing(
    subject: &Subject<'_>,
    settings: &Settings,
    user: &UserInfo,
    entry: &Entry<'_>,
    findings: &mut Findings,
) {
    let Entry {
        key,
        value,
        unchanged,
    } = *entry;
    if let Some(expected) = values::routing_format_error(key, value) {
        findings.report(settings.routing_key_format, unchanged, || {
            format!(
                "{}={} is not {expected}; notification-controller uses `{key}` to choose {}.",
                subject.field(key),
                quote(value),
                values::routing_purpose(key)
            )
        });
    }
    // Only a new or changed value is someone setting it.
    let setters = &settings.routing_key_setters;
    if !unchanged && !setters.is_empty() && !setters.matches(user) {
        findings.report(Action::Deny, false, || {
            format!(
                "{} chooses {}, so only the identities in the policy setting routingKeySetters may \
                 set or change it, and {} is not one of them. Leave it to them, or {}.",
                subject.field(key),
                values::routing_purpose(key),
                describe(user),
                subject.removal(key, false)
            )
        });
    }
}

fn check_count(subject: &Subject<'_>, settings: &Settings, count: usize, findings: &mut Findings) {
    let max = settings.max_keys;
    if count <= max {
        return;
    }
    let old_count = subject.old.map_or(0, |o| entries(o, None).count());
    findings.report(Action::Deny, old_count >= count, || {
        format!(
            "{} has {count} `{PREFIX}` annotations; at most {max} are accepted, since every one is \
             sent with every event. Remove {} of them.",
            subject.holder(),
            count.saturating_sub(max)
        )
    });
}

fn check_required(subject: &Subject<'_>, settings: &Settings, findings: &mut Findings) {
    let target = &subject.target;
    for key in settings.required_for(target.kind) {
        let full = format!("{PREFIX}{key}");
        if subject.meta.annotations.contains_key(&full) {
            continue;
        }
        if let Some(origin) = &subject.origin {
            findings.warn(format!(
                "{} lacks the annotation {full} (requiredKeys), but {} generates it from {}, so it is \
                 accepted rather than stalling the {}; {} copies only {} of the {} onto it, so add \
                 the key there.",
                target.describe(),
                origin.controller,
                origin.owner(),
                origin.owner_kind,
                origin.controller,
                origin.template,
                origin.owner_kind,
            ));
            continue;
        }
        let was_missing = subject
            .old
            .is_some_and(|o| !o.annotations.contains_key(&full));
        findings.report(Action::Deny, was_missing, || {
            let shape = settings
                .pattern(key)
                .map(|(source, _)| format!(" matching {}", quote(source)))
                .unwrap_or_default();
            if let Some(t) = &subject.template {
                return format!(
                    "every {} must carry the annotation {full} (requiredKeys), with a value{shape}; \
                     {} generates {} from {} and copies only {} onto it, so add the key there.",
                    target.kind,
                    t.controller,
                    target.describe(),
                    t.owner,
                    t.field
                );
            }
            let how = if subject.exists() {
                format!(
                    "add it to the manifest, or run `{}`",
                    target.kubectl("annotate", &[&format!("{}=<value>", shell_word(&full))])
                )
            } else {
                "add it under metadata.annotations in the manifest".to_string()
            };
            format!(
                "every {} must carry the annotation {full} (requiredKeys), with a value{shape}; {how}.",
                target.kind
            )
        });
    }
}

/// A settings list for a message, bounded.
fn list(keys: &[String]) -> String {
    const MAX: usize = 12;
    let mut shown: Vec<&str> = keys.iter().take(MAX).map(String::as_str).collect();
    if keys.len() > MAX {
        shown.push("…");
    }
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::podinfo;
    use guard_core::settings::parse;

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

    fn user(name: &str) -> UserInfo {
        UserInfo {
            username: name.into(),
            ..UserInfo::default()
        }
    }

    #[test]
    fn removal_advice_fits_the_operation() {
        let (new, old) = (meta(&[]), meta(&[]));
        let subject = |old| Subject {
            group: HELM,
            target: podinfo(),
            meta: &new,
            old,
            origin: None,
            template: None,
        };
        assert_eq!(
            subject(Some(&old)).removal("revision", true),
            "remove it from the manifest, or run `kubectl annotate \
             helmreleases.helm.toolkit.fluxcd.io podinfo -n apps event.toolkit.fluxcd.io/revision-`"
        );
        assert_eq!(
            subject(Some(&old)).removal("revision", false),
            "remove `event.toolkit.fluxcd.io/revision` from the manifest"
        );
        assert_eq!(
            subject(None).removal("revision", true),
            "remove `event.toolkit.fluxcd.io/revision` from the manifest"
        );
    }

    /// Runs the rules on a HelmRelease and returns (refusals+warnings verdict).
    fn run(
        settings: &str,
        new: &[(&str, &str)],
        old: Option<&[(&str, &str)]>,
        who: &str,
    ) -> guard_core::Verdict {
        let settings = parse::<Settings>(settings.as_bytes()).unwrap();
        let new = meta(new);
        let old = old.map(meta);
        let subject = Subject {
            group: HELM,
            target: podinfo(),
            meta: &new,
            old: old.as_ref(),
            origin: None,
            template: None,
        };
        let mut findings = Findings::default();
        check(&subject, &settings, &user(who), &mut findings);
        findings.into_verdict(&subject.target)
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
        assert!(m.starts_with("annotation event.toolkit.fluxcd.io/app-version always loses: helm-controller sends its own `app-version` with every HelmRelease event"), "{m}");
        assert!(m.contains("MetadataAppendFailed"));
        assert!(m.ends_with("remove `event.toolkit.fluxcd.io/app-version` from the manifest."));
        // Not a controller key of helm-controller.
        assert!(run("{}", &[("commit_status", "x")], None, "alice").allowed);
        let v = run(
            r#"{"controllerKeys":"warn"}"#,
            &[("revision", "x")],
            None,
            "alice",
        );
        assert!(v.allowed && v.warnings[0].contains("always loses"));
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
            r#"{"deniedKeys":["revision"]}"#,
            &[("revision", "x")],
            None,
            "a",
        ))
        .to_string();
        assert!(m.starts_with("2 problems with the event metadata of HelmRelease apps/podinfo: (1) annotation event.toolkit.fluxcd.io/revision always loses"), "{m}");
        assert!(m.contains("(2) annotation event.toolkit.fluxcd.io/revision is not permitted"));
    }
}

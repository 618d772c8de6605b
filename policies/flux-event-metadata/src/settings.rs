//! The policy's settings: every rule is on by default with the safe choice,
//! and each one can be loosened or tightened in the ClusterAdmissionPolicy.

use std::collections::{BTreeMap, BTreeSet};

use guard_core::identity::Identities;
use guard_core::names::{check_name_part, NameError};
use guard_core::pattern;
use guard_core::settings::Invalid;
use regex_lite::Regex;
use serde::Deserialize;

use crate::kinds;

/// What a rule does when it finds something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Refuse the request.
    Deny,
    /// Accept it with an admission warning.
    Warn,
    /// Say nothing.
    Ignore,
}

guard_core::one_of!(Action {
    "deny" => Action::Deny,
    "warn" => Action::Warn,
    "ignore" => Action::Ignore,
});

/// The largest `maxValueLength`: all annotations of an object together may
/// hold at most 256 KiB, so a larger bound could never be reached.
pub const VALUE_LENGTH_CEILING: usize = 256 * 1024;
/// Patterns are compiled for every request; a bound keeps that cheap.
pub(crate) const MAX_PATTERN_LEN: usize = 1024;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct Settings {
    /// A key the object's own controller also sends (e.g. `revision` on a
    /// Kustomization) always loses and raises `MetadataAppendFailed` on Alerts.
    pub controller_keys: Action,
    /// `commit` must be a full lower-case Git SHA, `change_request` a positive integer.
    pub routing_key_format: Action,
    /// Who may add or change `commit` and `change_request`; empty lets anyone.
    pub routing_key_setters: Identities,
    /// Keys refused on every object that emits events.
    pub denied_keys: Vec<String>,
    /// When not empty, the only keys permitted on objects that emit events.
    pub allowed_keys: Vec<String>,
    /// Keys every object of a kind must carry, by kind (`*` for every kind).
    pub required_keys: BTreeMap<String, Vec<String>>,
    /// A regular expression per key that the whole value must match.
    pub value_patterns: BTreeMap<String, String>,
    /// The longest value, in characters, of an annotation or an Alert's metadata.
    pub max_value_length: usize,
    /// The most `event.toolkit.fluxcd.io/` annotations one object may carry.
    pub max_keys: usize,
    /// Lets values contain line feeds (other control characters stay refused).
    pub allow_newlines: bool,
    /// Keys that Alerts set for the whole cluster (e.g. `cluster`, `env`);
    /// refused on objects because the Alert's value would always win.
    pub reserved_keys: Vec<String>,
    /// A key also set by an Alert that selects the object.
    pub alert_conflicts: Action,
    /// What to do when the Alerts cannot be listed (`deny` or `warn`).
    pub alert_lookup_failure: Action,
    /// `event.toolkit.fluxcd.io/` annotations on objects that emit no events.
    pub inert_annotations: Action,
    /// An Alert's deprecated `.spec.summary`.
    pub deprecated_summary: Action,
    /// The Flux controllers that generate objects (helm-controller's
    /// HelmCharts, source-watcher's ExternalArtifacts); such an object is
    /// never refused for a missing key, which would stall its owner.
    pub flux_controllers: Identities,
    /// Mirrors notification-controller's `--no-cross-namespace-refs`: an
    /// Alert then receives only the events of objects in its own namespace.
    pub no_cross_namespace_refs: bool,
    /// `value_patterns` as `compile` compiled them, each anchored to the
    /// whole value: compiled once per request, where checking the settings
    /// and then matching had compiled each twice.
    /// By key, in `value_patterns`' order (a sorted list, not a second map:
    /// smaller in the module).
    #[serde(skip)]
    compiled: Vec<(String, Regex)>,
}

/// The service accounts of the Flux controllers that generate objects
/// from a template in their owner (the model's generators), as
/// `namespace:name`.
fn flux_generators() -> Vec<String> {
    guard_core::model::controllers::FLUX
        .iter()
        .filter(|c| !c.generates.is_empty())
        .map(|c| c.service_account.short())
        .collect()
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            controller_keys: Action::Deny,
            routing_key_format: Action::Deny,
            routing_key_setters: Identities::default(),
            denied_keys: Vec::new(),
            allowed_keys: Vec::new(),
            required_keys: BTreeMap::new(),
            value_patterns: BTreeMap::new(),
            max_value_length: 1024,
            max_keys: 20,
            allow_newlines: false,
            reserved_keys: Vec::new(),
            alert_conflicts: Action::Warn,
            alert_lookup_failure: Action::Warn,
            inert_annotations: Action::Warn,
            deprecated_summary: Action::Warn,
            flux_controllers: Identities {
                service_accounts: flux_generators(),
                ..Identities::default()
            },
            no_cross_namespace_refs: false,
            compiled: Vec::new(),
        }
    }
}

impl Settings {
    /// The pattern for `key` and its program, matched against the whole
    /// value; `None` when `key` has none. Kept with the settings for the
    /// request: a program is at most `pattern::MAX_PROGRAM_BYTES` (1 MiB).
    pub fn pattern(&self, key: &str) -> Option<(&str, &Regex)> {
        let source = self.value_patterns.get(key)?;
        let index = self
            .compiled
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()?;
        self.compiled
            .get(index)
            .map(|(_, re)| (source.as_str(), re))
    }

    /// Each pattern's share of the matching budget: every pattern may meet a
    /// value of maxValueLength characters in the same request.
    fn pattern_size_limit(&self) -> usize {
        pattern::size_limit(self.max_value_length, self.value_patterns.len())
    }

    /// The keys required on `kind`, from its own entry and from `*`.
    pub fn required_for<'a>(&'a self, kind: &str) -> impl Iterator<Item = &'a String> + 'a {
        let own = self.required_keys.get(kind).into_iter().flatten();
        let all = self.required_keys.get("*").into_iter().flatten();
        own.chain(all)
    }
}

fn anchored(source: &str, size_limit: usize) -> Result<Regex, pattern::Refused> {
    pattern::compile(&format!("^(?:{source})$"), size_limit)
}

/// Why settings are refused: the setting at fault and what is wrong with
/// it, as values; the words are in `render`. Returned boxed, one word to
/// move however large the refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsError {
    /// `routingKeySetters` or `fluxControllers`.
    Identities(Invalid),
    /// Entry `index` of the key list `setting` (`deniedKeys`,
    /// `requiredKeys.<kind>`, …) is not a key.
    Key {
        setting: String,
        index: usize,
        key: String,
        why: NameError,
    },
    /// `setting` holds an action it does not accept; `allowed` are those it does.
    Action {
        setting: &'static str,
        action: Action,
        allowed: &'static [Action],
    },
    /// A key both denied and allowed.
    DeniedAndAllowed(String),
    /// `requiredKeys` names a kind that emits no events.
    NotAnEmittingKind(String),
    /// `requiredKeys.<kind>` requires `key`, which the list `by` refuses.
    RequiredButRefused {
        kind: String,
        key: String,
        by: &'static str,
    },
    /// `maxValueLength` out of its range.
    MaxValueLength(usize),
    /// `maxKeys` out of its range.
    MaxKeys(usize),
    /// A `valuePatterns` key that is not a key.
    PatternKey { key: String, why: NameError },
    /// The pattern of `valuePatterns.<key>` is `len` characters long, more
    /// than [`MAX_PATTERN_LEN`].
    PatternTooLong { key: String, len: usize },
    /// The pattern of `valuePatterns.<key>` does not compile; `max_value_length`
    /// and the number of `patterns` bound its program.
    Pattern {
        key: String,
        source: String,
        refused: pattern::Refused,
        max_value_length: usize,
        patterns: usize,
    },
}

impl From<Invalid> for Box<SettingsError> {
    fn from(invalid: Invalid) -> Self {
        Box::new(SettingsError::Identities(invalid))
    }
}

impl std::error::Error for SettingsError {}

fn check_keys(setting: &str, keys: &[String]) -> Result<(), Box<SettingsError>> {
    for (index, key) in keys.iter().enumerate() {
        check_name_part(key).map_err(|why| {
            Box::new(SettingsError::Key {
                setting: setting.to_string(),
                index,
                key: key.clone(),
                why,
            })
        })?;
    }
    Ok(())
}

fn check_action(
    setting: &'static str,
    action: Action,
    allowed: &'static [Action],
) -> Result<(), Box<SettingsError>> {
    if allowed.contains(&action) {
        return Ok(());
    }
    Err(Box::new(SettingsError::Action {
        setting,
        action,
        allowed,
    }))
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Deny => "deny",
            Action::Warn => "warn",
            Action::Ignore => "ignore",
        }
    }
}

impl guard_core::Settings for Settings {
    type Document = Self;
    type Error = Box<SettingsError>;

    /// Checks values that types alone cannot, naming the setting at fault.
    fn compile(mut settings: Self) -> Result<Self, Box<SettingsError>> {
        let sets = KeyLists::new(&settings);
        check_key_lists(&settings, &sets)?;
        // A lookup failure cannot be ignored silently: the conflicts stay unknown.
        check_action(
            "alertLookupFailure",
            settings.alert_lookup_failure,
            &[Action::Deny, Action::Warn],
        )?;
        check_required_keys(&settings, &sets)?;
        drop(sets);
        if !(1..=VALUE_LENGTH_CEILING).contains(&settings.max_value_length) {
            return Err(Box::new(SettingsError::MaxValueLength(
                settings.max_value_length,
            )));
        }
        settings.compiled = compile_patterns(&settings)?;
        if !(1..=1000).contains(&settings.max_keys) {
            return Err(Box::new(SettingsError::MaxKeys(settings.max_keys)));
        }
        settings.routing_key_setters.validate("routingKeySetters")?;
        settings.flux_controllers.validate("fluxControllers")?;
        Ok(settings)
    }
}

/// deniedKeys, allowedKeys and reservedKeys as sets, built once per
/// request (the settings come with each): each of up to thousands of keys,
/// the object's or another list's, is looked up in lists of up to thousands.
pub(crate) struct KeyLists<'s> {
    pub(crate) denied: BTreeSet<&'s str>,
    pub(crate) allowed: BTreeSet<&'s str>,
    pub(crate) reserved: BTreeSet<&'s str>,
}

impl<'s> KeyLists<'s> {
    pub(crate) fn new(settings: &'s Settings) -> Self {
        let set = |keys: &'s [String]| keys.iter().map(String::as_str).collect();
        Self {
            denied: set(&settings.denied_keys),
            allowed: set(&settings.allowed_keys),
            reserved: set(&settings.reserved_keys),
        }
    }
}

/// deniedKeys, allowedKeys and reservedKeys: name parts, and no key both
/// denied and allowed.
fn check_key_lists(settings: &Settings, sets: &KeyLists<'_>) -> Result<(), Box<SettingsError>> {
    check_keys("deniedKeys", &settings.denied_keys)?;
    check_keys("allowedKeys", &settings.allowed_keys)?;
    check_keys("reservedKeys", &settings.reserved_keys)?;
    if let Some(key) = settings
        .denied_keys
        .iter()
        .find(|k| sets.allowed.contains(k.as_str()))
    {
        return Err(Box::new(SettingsError::DeniedAndAllowed(key.clone())));
    }
    Ok(())
}

/// requiredKeys: kinds that emit events, and keys no other list refuses.
fn check_required_keys(settings: &Settings, sets: &KeyLists<'_>) -> Result<(), Box<SettingsError>> {
    for (kind, keys) in &settings.required_keys {
        if kind != "*" && !kinds::is_emitting_kind_name(kind) {
            return Err(Box::new(SettingsError::NotAnEmittingKind(kind.clone())));
        }
        check_keys(&format!("requiredKeys.{kind}"), keys)?;
        for key in keys {
            let conflict = if sets.denied.contains(key.as_str()) {
                Some("deniedKeys")
            } else if sets.reserved.contains(key.as_str()) {
                Some("reservedKeys")
            } else if !sets.allowed.is_empty() && !sets.allowed.contains(key.as_str()) {
                Some("allowedKeys (by leaving it out)")
            } else {
                None
            };
            if let Some(by) = conflict {
                return Err(Box::new(SettingsError::RequiredButRefused {
                    kind: kind.clone(),
                    key: key.clone(),
                    by,
                }));
            }
        }
    }
    Ok(())
}

/// valuePatterns, each compiled within its share of the matching budget.
fn compile_patterns(settings: &Settings) -> Result<Vec<(String, Regex)>, Box<SettingsError>> {
    let mut compiled = Vec::new();
    for (key, source) in &settings.value_patterns {
        check_name_part(key).map_err(|why| {
            Box::new(SettingsError::PatternKey {
                key: key.clone(),
                why,
            })
        })?;
        if source.len() > MAX_PATTERN_LEN {
            return Err(Box::new(SettingsError::PatternTooLong {
                key: key.clone(),
                len: source.len(),
            }));
        }
        let program = anchored(source, settings.pattern_size_limit()).map_err(|refused| {
            Box::new(SettingsError::Pattern {
                key: key.clone(),
                source: source.clone(),
                refused,
                max_value_length: settings.max_value_length,
                patterns: settings.value_patterns.len(),
            })
        })?;
        compiled.push((key.clone(), program));
    }
    Ok(compiled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::settings::parse;

    fn err(json: &str) -> String {
        parse::<Settings>(json.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn no_configuration_is_a_valid_configuration() {
        let s = parse::<Settings>(b"{}").unwrap();
        assert_eq!(s.controller_keys, Action::Deny);
        assert_eq!(s.alert_conflicts, Action::Warn);
        assert_eq!(s.max_value_length, 1024);
        assert!(parse::<Settings>(b"null").is_ok());
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(err(r#"{"deniedKey":["a"]}"#).contains("unknown field `deniedKey`"));
    }

    #[test]
    fn actions_name_their_values() {
        assert_eq!(
            err(r#"{"controllerKeys":"refuse"}"#),
            "invalid settings: controllerKeys: \"refuse\" is not accepted; use one of: deny, \
             warn, ignore at line 1 column 26"
        );
        assert!(err(r#"{"alertLookupFailure":"ignore"}"#).contains(
            "alertLookupFailure: \"ignore\" is not accepted here; use one of deny, warn"
        ));
    }

    #[test]
    fn key_lists_must_hold_name_parts() {
        assert!(
            err(r#"{"deniedKeys":["ok","event.toolkit.fluxcd.io/x"]}"#).starts_with(
                "invalid settings: deniedKeys[1]: \"event.toolkit.fluxcd.io/x\" may contain only"
            )
        );
        assert!(err(r#"{"allowedKeys":[""]}"#).contains("allowedKeys[0]: \"\" must not be empty"));
        assert!(err(r#"{"reservedKeys":["-env"]}"#).contains("reservedKeys[0]"));
        assert!(err(r#"{"deniedKeys":["a"],"allowedKeys":["a"]}"#)
            .contains("deniedKeys and allowedKeys both list \"a\""));
    }

    #[test]
    fn required_keys_need_a_known_kind_and_a_possible_key() {
        assert!(err(r#"{"requiredKeys":{"Deployment":["team"]}}"#)
            .contains("requiredKeys: \"Deployment\" is not a kind that emits Flux events; use \"*\" or one of Bucket,"));
        assert!(err(r#"{"requiredKeys":{"HelmRelease":["a b"]}}"#)
            .contains("requiredKeys.HelmRelease[0]"));
        assert!(
            err(r#"{"requiredKeys":{"*":["team"]},"deniedKeys":["team"]}"#)
                .contains("requiredKeys.*: \"team\" is required but refused by deniedKeys")
        );
        assert!(
            err(r#"{"requiredKeys":{"*":["env"]},"reservedKeys":["env"]}"#)
                .contains("reservedKeys")
        );
        assert!(
            err(r#"{"requiredKeys":{"*":["team"]},"allowedKeys":["owner"]}"#)
                .contains("allowedKeys")
        );
        let s = parse::<Settings>(br#"{"requiredKeys":{"HelmRelease":["team"],"*":["owner"]}}"#)
            .unwrap();
        assert_eq!(s.required_for("HelmRelease").count(), 2);
        assert_eq!(s.required_for("Kustomization").count(), 1);
    }

    #[test]
    fn patterns_must_compile_and_match_whole_values() {
        assert!(err(r#"{"valuePatterns":{"deploymentID":"[0-9"}}"#)
            .contains("valuePatterns.deploymentID: \"[0-9\" is not a valid regular expression ("));
        assert!(
            err(r#"{"valuePatterns":{"bad key":"x"}}"#).contains("valuePatterns: key \"bad key\"")
        );
        let e = err(r#"{"valuePatterns":{"a":".*a{0,1000}b","b":"x"},"maxValueLength":4096}"#);
        assert!(
            e.contains("valuePatterns.a: \".*a{0,1000}b\" compiles to more than 2048 bytes"),
            "{e}"
        );
        assert!(
            e.ends_with("(maxValueLength is 4096, shared by 2 patterns)"),
            "{e}"
        );
        // Short values do not buy a program past the cap, and the message
        // does not blame maxValueLength for it.
        let e = err(r#"{"valuePatterns":{"a":"[a-z]{0,200000}"},"maxValueLength":1}"#);
        assert!(
            e.ends_with(
                "compiles to more than 1048576 bytes, the most a settings pattern may compile to \
                 (it is compiled for every request); write a simpler pattern (bounded repetitions \
                 such as {0,10000} are the usual cause)"
            ),
            "{e}"
        );
        let long = format!(r#"{{"valuePatterns":{{"a":"{}"}}}}"#, "x".repeat(1025));
        assert!(err(&long).contains("at most 1024"));
        let s = parse::<Settings>(br#"{"valuePatterns":{"team":"[a-z]+"}}"#).unwrap();
        let (_, re) = s.pattern("team").unwrap();
        assert!(re.is_match("payments"));
        assert!(!re.is_match("payments team"));
        assert!(s.pattern("other").is_none());
    }

    #[test]
    fn bounds_are_checked() {
        assert!(err(r#"{"maxValueLength":0}"#)
            .contains("maxValueLength: 0 is out of range; accepted: 1 to 262144"));
        assert!(err(r#"{"maxKeys":0}"#).contains("maxKeys: 0 is out of range"));
        assert!(err(r#"{"maxKeys":-1}"#).contains("invalid value"));
    }

    #[test]
    fn flux_controllers_default_to_flux_service_accounts() {
        let s = parse::<Settings>(b"{}").unwrap();
        assert_eq!(
            s.flux_controllers.service_accounts,
            ["flux-system:helm-controller", "flux-system:source-watcher"]
        );
        assert!(!s.no_cross_namespace_refs);
        let s = parse::<Settings>(
            br#"{"fluxControllers":{"serviceAccounts":["flux:helm-controller"]},"noCrossNamespaceRefs":true}"#,
        )
        .unwrap();
        assert_eq!(
            s.flux_controllers.service_accounts,
            ["flux:helm-controller"]
        );
        assert!(s.no_cross_namespace_refs);
        assert!(
            err(r#"{"fluxControllers":{"serviceAccounts":["helm-controller"]}}"#)
                .contains("fluxControllers.serviceAccounts")
        );
    }

    #[test]
    fn setters_are_identities() {
        assert!(err(r#"{"routingKeySetters":{"serviceAccounts":["ci"]}}"#)
            .contains("routingKeySetters.serviceAccounts"));
        assert!(err(r#"{"routingKeySetters":{"user":["a"]}}"#).contains("unknown field `user`"));
    }
}

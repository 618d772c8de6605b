//! The policy's settings: strict (an unknown field is an error at boot) and
//! safe without any configuration (mirror mode, a reason of at least five
//! visible characters, no identity restriction).

use guard_core::duration::{self, GoDuration};
use guard_core::identity::Identities;
use guard_core::names::{self, QualifiedNameError};
use guard_core::pattern;
use guard_core::settings::Invalid;
use regex_lite::Regex;
use serde::Deserialize;

use crate::kinds::{self, SUSPEND_ANNOTATION};

/// How the policy makes the annotation count on today's Flux.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Keep the annotation and the mechanism controllers honour in step
    /// (the policy mutates).
    #[default]
    Mirror,
    /// For controllers that honour RFC-0006: no mutation, but the version-skew
    /// prune hazard is refused.
    AnnotationOnly,
    /// Validating only: the annotation without the honoured mechanism is refused.
    DenyAnnotationOnly,
}

guard_core::one_of!(Mode {
    "mirror" => Mode::Mirror,
    "annotation-only" => Mode::AnnotationOnly,
    "deny-annotation-only" => Mode::DenyAnnotationOnly,
});

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Mirror => "mirror",
            Mode::AnnotationOnly => "annotation-only",
            Mode::DenyAnnotationOnly => "deny-annotation-only",
        }
    }
}

/// What the Flux Operator Web UI's Suspend button, which has no field for a
/// reason, gets (`operatorUiSuspensions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UiSuspensions {
    /// Refused like any suspension without a reason, saying what works.
    #[default]
    Deny,
    /// Admitted without a reason; the background audit reports the missing
    /// reason afterwards.
    Admit,
}

guard_core::one_of!(UiSuspensions {
    "deny" => UiSuspensions::Deny,
    "admit" => UiSuspensions::Admit,
});

/// `reasonPattern`: its source as written, and its program, compiled once
/// with the settings (bounded by `maxReasonLength`, so after it is known).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(from = "Option<String>")]
pub struct ReasonPattern {
    pub source: String,
    pub regex: Option<Regex>,
}

impl From<Option<String>> for ReasonPattern {
    fn from(source: Option<String>) -> Self {
        Self {
            source: source.unwrap_or_default(),
            regex: None,
        }
    }
}

/// The bounds the settings validation enforces (the benchmark's worst case
/// uses each of them to the full).
pub mod limits {
    /// Longest `reasonPattern` accepted: a pattern is a short rule, and
    /// compiling it happens on every request.
    pub const MAX_PATTERN_LEN: usize = 1024;
    /// Kubernetes caps all annotations of an object at 256 KiB together: the
    /// largest `maxReasonLength`.
    pub const MAX_ANNOTATION_BYTES: usize = 256 * 1024;
}
use limits::*;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct Settings {
    pub mode: Mode,
    /// Entering suspension needs a reason in `reconcile.fluxcd.io/suspended`.
    pub require_reason: bool,
    /// Fewest visible characters a reason must have (the `until=` part aside).
    pub min_reason_length: usize,
    /// Most characters the whole annotation value may have.
    pub max_reason_length: usize,
    /// Reasons that say nothing (`true`, `suspended`, ...), compared
    /// case-insensitively with the trimmed reason.
    pub placeholder_reasons: Vec<String>,
    /// A regular expression every reason must match, e.g. a ticket reference.
    pub reason_pattern: ReasonPattern,
    /// Every reason must carry `until=<RFC 3339 time>`.
    pub require_expiry: bool,
    /// How far ahead `until=` may be; setting it also requires an expiry.
    #[serde(deserialize_with = "duration::optional")]
    pub max_duration: Option<GoDuration>,
    /// Who may suspend or change a reason (empty: anyone RBAC lets through).
    pub suspenders: Identities,
    /// Who may resume (empty: anyone RBAC lets through).
    pub resumers: Identities,
    /// The controllers that apply manifests from Git, besides every apply
    /// under field manager `kustomize-controller` ([`crate::reconciler`]).
    /// When they re-apply a manifest carrying the annotation, the annotation
    /// wins over a `spec.suspend` their apply dropped or unset (mirror mode).
    pub reconcilers: Identities,
    /// Write the suspender's username into `suspenderAnnotation` (mirror mode).
    pub record_suspender: bool,
    pub suspender_annotation: String,
    /// Admit the Flux Operator Web UI's suspensions without a reason.
    pub operator_ui_suspensions: UiSuspensions,
    /// Flux Operator's service account, `namespace:name`: what the Web UI
    /// writes as in its `FineGrained` mode. Its chart installs it in the
    /// release's namespace, so it is not always `flux-system`.
    pub operator_service_account: String,
}

/// The default placeholders: what people type when a tool insists on a value.
pub const DEFAULT_PLACEHOLDERS: &[&str] = &[
    "true",
    "false",
    "yes",
    "no",
    "y",
    "1",
    "0",
    "on",
    "suspended",
    "suspend",
    "paused",
    "pause",
    "disabled",
    "reason",
    "todo",
    "tbd",
    "wip",
    "n/a",
    "na",
    "none",
    "-",
    ".",
];

pub const DEFAULT_SUSPENDER_ANNOTATION: &str = guard_core::model::keys::SUSPENDED_BY;

/// The service accounts of the Flux controllers that apply objects from a
/// source (the model's appliers), as `namespace:name`.
fn default_reconcilers() -> Vec<String> {
    guard_core::model::controllers::FLUX
        .iter()
        .filter(|c| c.apply_manager().is_some())
        .map(|c| c.service_account.short())
        .collect()
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            mode: Mode::Mirror,
            require_reason: true,
            min_reason_length: 5,
            max_reason_length: 1024,
            placeholder_reasons: DEFAULT_PLACEHOLDERS.iter().map(|p| p.to_string()).collect(),
            reason_pattern: ReasonPattern::default(),
            require_expiry: false,
            max_duration: None,
            suspenders: Identities::default(),
            resumers: Identities::default(),
            reconcilers: Identities {
                service_accounts: default_reconcilers(),
                ..Identities::default()
            },
            record_suspender: false,
            suspender_annotation: DEFAULT_SUSPENDER_ANNOTATION.to_string(),
            operator_ui_suspensions: UiSuspensions::Deny,
            operator_service_account: guard_core::model::controllers::FLUX_OPERATOR
                .service_account
                .short(),
        }
    }
}

impl Settings {
    /// Is `user` Flux Operator's service account (`operatorServiceAccount`)?
    pub fn is_operator(&self, username: &str) -> bool {
        username.strip_prefix(guard_core::model::SERVICE_ACCOUNT_PREFIX)
            == Some(self.operator_service_account.as_str())
    }

    /// Is an `until=` expiry required on every reason?
    pub fn expiry_required(&self) -> bool {
        self.require_expiry || self.max_duration.is_some()
    }
}

/// Why settings are refused: the setting at fault and what is wrong with
/// it, as values; the words are in `render`. Returned boxed, one word to
/// move however large the refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsError {
    /// `suspenders`, `resumers` or `reconcilers`.
    Identities(Invalid),
    /// `operatorServiceAccount` is not `namespace:name`.
    OperatorServiceAccount(String),
    /// `recordSuspender` in a mode that never mutates.
    RecordSuspender(Mode),
    /// `maxDuration` (its text) is not positive.
    MaxDuration(String),
    /// `reasonPattern` is longer than [`MAX_PATTERN_LEN`].
    PatternTooLong,
    /// `maxReasonLength` is 0 or more than [`MAX_ANNOTATION_BYTES`].
    MaxReasonLength(usize),
    /// `minReasonLength` exceeds `maxReasonLength`.
    MinExceedsMax { min: usize, max: usize },
    /// `placeholderReasons[i]` is empty.
    EmptyPlaceholder(usize),
    /// `suspenderAnnotation` is not an annotation key.
    NotAKey {
        key: String,
        why: QualifiedNameError,
    },
    /// `suspenderAnnotation` is one the policy reads.
    ReadAnnotation(String),
    /// `reasonPattern` does not compile; `max_reason_length` bounds its program.
    Pattern {
        source: String,
        refused: pattern::Refused,
        max_reason_length: usize,
    },
}

impl From<Invalid> for Box<SettingsError> {
    fn from(invalid: Invalid) -> Self {
        Box::new(SettingsError::Identities(invalid))
    }
}

impl std::error::Error for SettingsError {}

impl guard_core::Settings for Settings {
    type Document = Self;
    type Error = Box<SettingsError>;

    fn compile(mut document: Self) -> Result<Self, Box<SettingsError>> {
        document.reason_pattern.regex = document.check()?;
        Ok(document)
    }
}

impl Settings {
    /// Checks values that types alone cannot, naming the setting at fault;
    /// `reasonPattern`'s program, compiled.
    fn check(&self) -> Result<Option<Regex>, Box<SettingsError>> {
        self.check_reason_bounds()?;
        self.suspenders.validate("suspenders")?;
        self.resumers.validate("resumers")?;
        self.reconcilers.validate("reconcilers")?;
        let account = &self.operator_service_account;
        if !matches!(account.split_once(':'), Some((ns, name))
            if names::check_dns1123_label(ns).is_ok() && !name.is_empty() && !name.contains(':'))
        {
            return Err(SettingsError::OperatorServiceAccount(account.clone()).into());
        }
        self.check_suspender_annotation()?;
        let reason_pattern = self.compile_reason_pattern()?;
        if self.record_suspender && self.mode != Mode::Mirror {
            return Err(SettingsError::RecordSuspender(self.mode).into());
        }
        Ok(reason_pattern)
    }

    /// `maxDuration`, the lengths, the pattern's length and the placeholders.
    fn check_reason_bounds(&self) -> Result<(), Box<SettingsError>> {
        if let Some(max) = self.max_duration.as_ref().filter(|d| d.nanos <= 0) {
            return Err(SettingsError::MaxDuration(max.text.clone()).into());
        }
        if self.reason_pattern.source.len() > MAX_PATTERN_LEN {
            return Err(SettingsError::PatternTooLong.into());
        }
        if self.max_reason_length == 0 || self.max_reason_length > MAX_ANNOTATION_BYTES {
            return Err(SettingsError::MaxReasonLength(self.max_reason_length).into());
        }
        if self.min_reason_length > self.max_reason_length {
            return Err(SettingsError::MinExceedsMax {
                min: self.min_reason_length,
                max: self.max_reason_length,
            }
            .into());
        }
        if let Some(i) = self
            .placeholder_reasons
            .iter()
            .position(|p| p.trim().is_empty())
        {
            return Err(SettingsError::EmptyPlaceholder(i).into());
        }
        Ok(())
    }

    /// `suspenderAnnotation`: a key, and not one the policy reads.
    fn check_suspender_annotation(&self) -> Result<(), Box<SettingsError>> {
        let key = &self.suspender_annotation;
        names::check_qualified_name(key).map_err(|why| {
            Box::new(SettingsError::NotAKey {
                key: key.clone(),
                why,
            })
        })?;
        if key == SUSPEND_ANNOTATION || kinds::is_disable_annotation(key) {
            return Err(SettingsError::ReadAnnotation(key.clone()).into());
        }
        Ok(())
    }

    /// `reasonPattern`'s program, `None` when there is no pattern.
    fn compile_reason_pattern(&self) -> Result<Option<Regex>, Box<SettingsError>> {
        if self.reason_pattern.source.is_empty() {
            return Ok(None);
        }
        // Matched against reasons up to maxReasonLength, so its cost is
        // bounded by the pair (guard_core::pattern).
        let limit = pattern::size_limit(self.max_reason_length, 1);
        let regex = pattern::compile(&self.reason_pattern.source, limit).map_err(|refused| {
            Box::new(SettingsError::Pattern {
                source: self.reason_pattern.source.clone(),
                refused,
                max_reason_length: self.max_reason_length,
            })
        })?;
        Ok(Some(regex))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Settings, String> {
        guard_core::settings::parse::<Settings>(json.as_bytes()).map_err(|e| e.to_string())
    }

    fn err(json: &str) -> String {
        parse(json).unwrap_err()
    }

    #[test]
    fn defaults_are_safe_and_valid() {
        let s = parse("{}").unwrap();
        assert_eq!(s.mode, Mode::Mirror);
        assert!(s.require_reason);
        assert_eq!((s.min_reason_length, s.max_reason_length), (5, 1024));
        assert!(s.placeholder_reasons.iter().any(|p| p == "suspended"));
        assert!(s.suspenders.is_empty() && s.resumers.is_empty());
        assert!(!s.expiry_required());
        assert_eq!(s.suspender_annotation, "fluxcd.controlplane.io/suspendedBy");
        assert!(parse("null").is_ok());
    }

    #[test]
    fn every_setting_reads_in_camel_case() {
        let s = parse(
            r#"{"mode":"annotation-only","requireReason":false,"minReasonLength":3,
                "maxReasonLength":200,"placeholderReasons":["x"],"reasonPattern":"^INC-[0-9]+",
                "requireExpiry":true,"maxDuration":"72h",
                "suspenders":{"groups":["sre"]},"resumers":{"users":["bob"]},
                "reconcilers":{"serviceAccounts":["flux-system:flux-operator"]},
                "recordSuspender":false,"suspenderAnnotation":"example.com/suspended-by"}"#,
        )
        .unwrap();
        assert_eq!(s.mode, Mode::AnnotationOnly);
        assert_eq!(
            s.max_duration.as_ref().map(|d| d.nanos),
            Some(72 * 3600 * 1_000_000_000)
        );
        assert!(s
            .reason_pattern
            .regex
            .as_ref()
            .unwrap()
            .is_match("INC-42 db"));
        assert!(s.expiry_required());
        assert_eq!(s.suspenders.groups, vec!["sre".to_string()]);
    }

    #[test]
    fn max_duration_alone_requires_an_expiry() {
        assert!(parse(r#"{"maxDuration":"24h"}"#).unwrap().expiry_required());
    }

    #[test]
    fn unknown_fields_and_modes_are_refused_with_the_accepted_values() {
        let e = err(r#"{"requireReasons":true}"#);
        assert!(
            e.contains("unknown field `requireReasons`") && e.contains("requireReason"),
            "{e}"
        );
        let e = err(r#"{"mode":"strict"}"#);
        assert!(
            e.contains("mirror") && e.contains("deny-annotation-only"),
            "{e}"
        );
    }

    #[test]
    fn lengths_are_checked() {
        assert!(err(r#"{"maxReasonLength":0}"#)
            .contains("maxReasonLength: 0 is out of range; accepted: 1 to 262144"));
        assert!(err(r#"{"maxReasonLength":300000}"#).contains("maxReasonLength"));
        let e = err(r#"{"minReasonLength":20,"maxReasonLength":10}"#);
        assert!(
            e.contains("minReasonLength (20) must not exceed maxReasonLength (10)"),
            "{e}"
        );
        assert!(err(r#"{"minReasonLength":-1}"#).contains("invalid settings"));
    }

    #[test]
    fn placeholders_must_not_be_empty() {
        assert!(err(r#"{"placeholderReasons":["ok"," "]}"#).contains("placeholderReasons[1]"));
    }

    #[test]
    fn patterns_must_compile() {
        let e = err(r#"{"reasonPattern":"^(INC-"}"#);
        assert!(
            e.contains("reasonPattern: \"^(INC-\" is not a regular expression"),
            "{e}"
        );
        let e = err(&format!(r#"{{"reasonPattern":"{}"}}"#, "a".repeat(2000)));
        assert!(e.contains("reasonPattern: at most 1024"), "{e}");
        assert!(parse(r#"{"reasonPattern":""}"#)
            .unwrap()
            .reason_pattern
            .regex
            .is_none());
    }

    #[test]
    fn a_pattern_costs_at_most_its_budget_for_the_longest_reason() {
        let slow = r#"{"reasonPattern":".*INC-[0-9]{0,1000}x"}"#;
        assert!(parse(slow).is_err());
        let e = err(r#"{"reasonPattern":"^[A-Z]+-[0-9]+","maxReasonLength":262144}"#);
        assert!(
            e.contains("reasonPattern: \"^[A-Z]+-[0-9]+\" compiles to more than 64 bytes"),
            "{e}"
        );
        assert!(e.ends_with("(maxReasonLength is 262144)"), "{e}");
        assert!(parse(r#"{"reasonPattern":"^[A-Z]+-[0-9]+","maxReasonLength":4096}"#).is_ok());
    }

    #[test]
    fn durations_are_go_durations() {
        let e = err(r#"{"maxDuration":"3d"}"#);
        assert!(
            e.contains("maxDuration: invalid duration \"3d\": unknown unit"),
            "{e}"
        );
        let e = err(r#"{"maxDuration":"-1h"}"#);
        assert!(
            e.contains("maxDuration: \"-1h\" is not a positive duration"),
            "{e}"
        );
        assert!(err(r#"{"maxDuration":"0"}"#).contains("not a positive duration"));
    }

    #[test]
    fn identity_lists_are_checked_by_name() {
        let e = err(r#"{"suspenders":{"serviceAccounts":["kustomize-controller"]}}"#);
        assert!(e.contains("suspenders.serviceAccounts"), "{e}");
        assert!(err(r#"{"resumers":{"users":[""]}}"#).contains("resumers.users"));
        assert!(err(r#"{"reconcilers":{"groups":[" "]}}"#).contains("reconcilers.groups"));
        assert!(err(r#"{"suspenders":{"user":["a"]}}"#).contains("unknown field `user`"));
        for account in ["flux-operator", "Flux:flux-operator", "cd-system:", "a:b:c"] {
            let e = err(&format!(r#"{{"operatorServiceAccount":"{account}"}}"#));
            assert!(e.contains("operatorServiceAccount: "), "{e}");
        }
    }

    #[test]
    fn suspender_annotation_must_be_a_free_key() {
        assert!(err(r#"{"suspenderAnnotation":"not a key"}"#)
            .contains("suspenderAnnotation: \"not a key\" is not an annotation key"));
        let e = err(r#"{"suspenderAnnotation":"reconcile.fluxcd.io/suspended"}"#);
        assert!(e.contains("already reads"), "{e}");
        assert!(
            err(r#"{"suspenderAnnotation":"fluxcd.controlplane.io/reconcile"}"#)
                .contains("already reads")
        );
    }

    #[test]
    fn recording_needs_mirror_mode() {
        assert!(parse(r#"{"recordSuspender":true}"#).is_ok());
        let e = err(r#"{"recordSuspender":true,"mode":"deny-annotation-only"}"#);
        assert!(e.contains("recordSuspender: writing the suspender is a mutation, and mode deny-annotation-only never mutates"), "{e}");
    }
}

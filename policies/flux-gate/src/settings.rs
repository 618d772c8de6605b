//! The policy settings, as written in a ClusterAdmissionPolicy, and their
//! compiling into [`Compiled`], which every evaluation reads.
//!
//! Validation compiles: cron expressions, time zones, durations and instants
//! are parsed once, by `Settings::compile` with the gates in `gates` and the
//! bindings in `bindings`, and kept for the evaluation (guard-core validates
//! the settings on every call before evaluating).

mod bindings;
mod gates;

use guard_core::duration::{self, GoDuration};
use guard_core::identity::Identities;
use guard_core::names;
use guard_core::request::null_default;
use guard_core::rfc3339::Instant;
use guard_core::selector::LabelSelector;
use guard_core::settings::LookupFailure;
use guard_core::{Operation, UserInfo};
use jiff::SignedDuration;
use serde::Deserialize;

use crate::flux_owner::FluxOwnerKind;
use crate::gate::{Action, DeclaredGate};

use self::bindings::compile_binding;
pub use self::bindings::{parse_ref, Binding, GateRef};
use self::gates::{compile_gate, ZoneCache};

/// Do these settings (their JSON) bind no request? Read without compiling
/// anything: only `bindings`, and whether it holds an entry.
pub(crate) fn without_bindings(json: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Bindings {
        #[serde(default)]
        bindings: Option<Vec<serde::de::IgnoredAny>>,
    }
    if json.is_empty() || json == b"null" {
        return true;
    }
    serde_json::from_slice::<Bindings>(json)
        .is_ok_and(|b| b.bindings.unwrap_or_default().is_empty())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct Settings {
    /// Gates declared here, by name.
    #[serde(deserialize_with = "null_default")]
    pub(crate) gates: Vec<GateSettings>,
    /// Which requests which gates hold.
    #[serde(deserialize_with = "null_default")]
    pub(crate) bindings: Vec<BindingSettings>,
    /// Namespace of Gate objects named without one.
    pub(crate) gate_namespace: String,
    /// `deny` or `allow` a held request when a Gate object cannot be read.
    pub(crate) on_gate_lookup_error: LookupFailure,
    /// Who passes closed gates (exact matches).
    #[serde(deserialize_with = "null_default")]
    pub(crate) break_glass: Identities,
    /// Who may pass closed gates with the emergency override annotation.
    #[serde(deserialize_with = "null_default")]
    pub(crate) emergency_override: OverrideSettings,
    /// How far in the future a Gate's requestedAt annotation may be.
    pub(crate) clock_skew_tolerance: GoDuration,
    /// Namespace kustomize-controller and helm-controller run in.
    pub(crate) flux_namespace: String,
    /// The controllers' `--default-service-account`, when set.
    pub(crate) default_service_account: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            gates: Vec::new(),
            bindings: Vec::new(),
            gate_namespace: "flux-system".into(),
            on_gate_lookup_error: LookupFailure::Deny,
            break_glass: Identities::default(),
            emergency_override: OverrideSettings::default(),
            clock_skew_tolerance: GoDuration {
                text: "5m".into(),
                nanos: 300_000_000_000,
            },
            flux_namespace: "flux-system".into(),
            default_service_account: String::new(),
        }
    }
}

/// A declared gate's state when no schedule or freeze says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateDefault {
    Opened,
    Closed,
}

guard_core::one_of!(GateDefault { "opened" => GateDefault::Opened, "closed" => GateDefault::Closed });

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct GateSettings {
    pub(crate) name: String,
    pub(crate) default: GateDefault,
    #[serde(deserialize_with = "null_default")]
    pub(crate) schedules: Vec<ScheduleSettings>,
    #[serde(deserialize_with = "null_default")]
    pub(crate) freezes: Vec<FreezeSettings>,
}

impl Default for GateSettings {
    fn default() -> Self {
        GateSettings {
            name: String::new(),
            default: GateDefault::Opened,
            schedules: Vec::new(),
            freezes: Vec::new(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct ScheduleSettings {
    pub(crate) cron: String,
    pub(crate) time_zone: String,
    #[serde(deserialize_with = "duration::optional")]
    pub(crate) window: Option<GoDuration>,
    #[serde(deserialize_with = "null_default")]
    pub(crate) action: Option<Action>,
}

impl Default for ScheduleSettings {
    fn default() -> Self {
        ScheduleSettings {
            cron: String::new(),
            time_zone: "UTC".into(),
            window: None,
            action: None,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct FreezeSettings {
    #[serde(deserialize_with = "null_default")]
    pub(crate) start: Option<Instant>,
    #[serde(deserialize_with = "null_default")]
    pub(crate) end: Option<Instant>,
    pub(crate) reason: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct BindingSettings {
    #[serde(deserialize_with = "null_default")]
    pub(crate) gates: Vec<String>,
    #[serde(rename = "match", deserialize_with = "null_default")]
    pub(crate) matches: MatchSettings,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct MatchSettings {
    #[serde(deserialize_with = "null_default")]
    pub(crate) kinds: Vec<KindSettings>,
    #[serde(deserialize_with = "null_default")]
    pub(crate) namespaces: Vec<String>,
    #[serde(deserialize_with = "null_default")]
    pub(crate) label_selector: LabelSelector,
    #[serde(deserialize_with = "null_default")]
    pub(crate) operations: Vec<Operation>,
    /// Who sends the write (exact users, groups, service accounts).
    #[serde(deserialize_with = "null_default")]
    pub(crate) requested_by: Identities,
    /// The Kustomizations or HelmReleases whose applied objects match.
    #[serde(deserialize_with = "null_default")]
    pub(crate) applied_by: Vec<OwnerSettings>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct OwnerSettings {
    #[serde(deserialize_with = "null_default")]
    pub(crate) kind: Option<FluxOwnerKind>,
    pub(crate) namespace: String,
    pub(crate) name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct KindSettings {
    pub(crate) group: String,
    pub(crate) kind: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct OverrideSettings {
    #[serde(deserialize_with = "null_default")]
    pub(crate) groups: Vec<String>,
}

/// Bounds that keep one evaluation's work small whatever the settings say:
/// `make bench` times the worst case they allow, which tests/worst_case.rs
/// builds from these (under target/bench/worst-case, as `make worst-cases`).
pub mod limits {
    /// Gates declared in settings.
    pub const MAX_GATES: usize = 32;
    /// Schedules of one gate, and of all gates together.
    pub const MAX_SCHEDULES: usize = 16;
    pub const MAX_SCHEDULES_TOTAL: usize = 64;
    /// Freezes of one gate, and of all gates together.
    pub const MAX_FREEZES: usize = 32;
    pub const MAX_FREEZES_TOTAL: usize = 128;
    /// Bindings, and the Gate objects they name all together.
    pub const MAX_BINDINGS: usize = 32;
    pub const MAX_BOUND_OBJECTS: usize = 16;
    /// Gates one object may name in its annotation.
    pub const MAX_ANNOTATED: usize = 16;
}

/// The settings, parsed and checked.
#[derive(Debug)]
pub struct Compiled {
    pub(crate) gates: Vec<DeclaredGate>,
    pub(crate) bindings: Vec<Binding>,
    pub(crate) gate_namespace: String,
    pub(crate) allow_on_lookup_error: bool,
    pub(crate) clock_skew: SignedDuration,
    pub(crate) break_glass: Identities,
    pub(crate) override_groups: Vec<String>,
    /// Where kustomize-controller and helm-controller run, and the service
    /// account they impersonate by default ([`crate::writer`]).
    pub(crate) flux_namespace: String,
    pub(crate) default_service_account: String,
}

impl Compiled {
    pub(crate) fn break_glass_matches(&self, user: &UserInfo) -> bool {
        self.break_glass.matches(user)
    }

    /// The first emergency-override group the user is in.
    pub(crate) fn override_group(&self, user: &UserInfo) -> Option<&str> {
        self.override_groups
            .iter()
            .find(|g| user.groups.contains(g))
            .map(String::as_str)
    }
}

use limits::*;

const MAX_SKEW: SignedDuration = SignedDuration::from_hours(24);

/// What the policy evaluates with: the document compiled once, when
/// policy-server passes it.
impl guard_core::Settings for Compiled {
    type Document = Settings;
    type Error = String;

    fn compile(document: Settings) -> Result<Self, String> {
        document.compile()
    }
}

impl Settings {
    fn compile(&self) -> Result<Compiled, String> {
        self.check_counts()?;
        let gates = self.compile_gates()?;
        names::check_dns1123_label(&self.gate_namespace)
            .map_err(|e| format!("gateNamespace: {} {e}", names::quote(&self.gate_namespace)))?;
        let bindings = self.compile_bindings(&gates)?;
        self.break_glass
            .validate("breakGlass")
            .map_err(|e| e.to_string())?;
        if self
            .emergency_override
            .groups
            .iter()
            .any(|g| g.trim().is_empty())
        {
            return Err("emergencyOverride.groups: entries must not be empty".into());
        }
        let clock_skew = self.clock_skew_tolerance.signed();
        if clock_skew.is_negative() || clock_skew > MAX_SKEW {
            return Err(format!(
                "clockSkewTolerance: {} must be from 0s to 24h",
                names::quote(&self.clock_skew_tolerance.text)
            ));
        }
        self.check_flux_identity()?;
        Ok(Compiled {
            gates,
            bindings,
            gate_namespace: self.gate_namespace.clone(),
            allow_on_lookup_error: self.on_gate_lookup_error == LookupFailure::Allow,
            clock_skew,
            break_glass: self.break_glass.clone(),
            override_groups: self.emergency_override.groups.clone(),
            flux_namespace: self.flux_namespace.clone(),
            default_service_account: self.default_service_account.clone(),
        })
    }

    /// The [`limits`] on how many gates, schedules, freezes and bindings.
    fn check_counts(&self) -> Result<(), String> {
        if self.gates.len() > MAX_GATES {
            return Err(format!(
                "gates: at most {MAX_GATES} gates (found {})",
                self.gates.len()
            ));
        }
        let schedules: usize = self.gates.iter().map(|g| g.schedules.len()).sum();
        if schedules > MAX_SCHEDULES_TOTAL {
            return Err(format!(
                "gates[*].schedules: at most {MAX_SCHEDULES_TOTAL} schedules in all gates together (found {schedules})"
            ));
        }
        let freezes: usize = self.gates.iter().map(|g| g.freezes.len()).sum();
        if freezes > MAX_FREEZES_TOTAL {
            return Err(format!(
                "gates[*].freezes: at most {MAX_FREEZES_TOTAL} freezes in all gates together (found {freezes})"
            ));
        }
        if self.bindings.len() > MAX_BINDINGS {
            return Err(format!(
                "bindings: at most {MAX_BINDINGS} bindings (found {})",
                self.bindings.len()
            ));
        }
        Ok(())
    }

    fn compile_gates(&self) -> Result<Vec<DeclaredGate>, String> {
        let mut zones = ZoneCache::default();
        let mut gates: Vec<DeclaredGate> = Vec::with_capacity(self.gates.len());
        for (i, g) in self.gates.iter().enumerate() {
            let gate = compile_gate(&format!("gates[{i}]"), g, &mut zones)?;
            if gates.iter().any(|other| other.name == gate.name) {
                return Err(format!(
                    "gates[{i}].name: {} is declared twice",
                    names::quote(&gate.name)
                ));
            }
            gates.push(gate);
        }
        Ok(gates)
    }

    fn compile_bindings(&self, gates: &[DeclaredGate]) -> Result<Vec<Binding>, String> {
        let bindings = self
            .bindings
            .iter()
            .enumerate()
            .map(|(i, b)| {
                compile_binding(&format!("bindings[{i}]"), b, gates, &self.gate_namespace)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut objects: Vec<&GateRef> = Vec::new();
        for r in bindings.iter().flat_map(|b| &b.gates) {
            if matches!(r, GateRef::Object { .. }) && !objects.contains(&r) {
                objects.push(r);
            }
        }
        if objects.len() > MAX_BOUND_OBJECTS {
            return Err(format!(
                "bindings[*].gates: at most {MAX_BOUND_OBJECTS} Gate objects in all bindings together (found {})",
                objects.len()
            ));
        }
        Ok(bindings)
    }

    /// `fluxNamespace` and `defaultServiceAccount`: the names Flux's appliers
    /// are known by ([`crate::writer`]).
    fn check_flux_identity(&self) -> Result<(), String> {
        names::check_dns1123_label(&self.flux_namespace)
            .map_err(|e| format!("fluxNamespace: {} {e}", names::quote(&self.flux_namespace)))?;
        if !self.default_service_account.is_empty() {
            names::check_dns1123_subdomain(&self.default_service_account).map_err(|e| {
                format!(
                    "defaultServiceAccount: {} {e}",
                    names::quote(&self.default_service_account)
                )
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_errors, err, parse};
    use guard_core::Operation;

    #[test]
    fn no_configuration_is_valid_and_useful() {
        let s = parse("{}").unwrap();
        let c = s;
        assert!(c.gates.is_empty() && c.bindings.is_empty());
        assert_eq!(c.gate_namespace, "flux-system");
        assert!(!c.allow_on_lookup_error);
        assert_eq!(c.clock_skew, SignedDuration::from_mins(5));
        assert!(parse("null").is_ok());
    }

    #[test]
    fn a_full_configuration_compiles() {
        let s = parse(
            r#"{"gates":[{"name":"no-deploy-friday","schedules":[{"cron":"0 0 * * FRI",
                "timeZone":"America/Los_Angeles","window":"24h","action":"close"}],
                "freezes":[{"start":"2026-12-20T00:00:00Z","end":"2027-01-04T00:00:00Z","reason":"year end"}]}],
                "bindings":[{"gates":["no-deploy-friday","team-a/qa-approval","sre-approval"],
                "match":{"kinds":[{"group":"kustomize.toolkit.fluxcd.io","kind":"Kustomization"}],
                "namespaces":["flux-system"],"labelSelector":{"matchLabels":{"tier":"prod"}},
                "operations":["UPDATE","DELETE"]}}],
                "gateNamespace":"gates","onGateLookupError":"allow",
                "breakGlass":{"users":["alice@example.com"],"groups":["sre-leads"]},
                "emergencyOverride":{"groups":["sre-oncall"]},"clockSkewTolerance":"30s"}"#,
        )
        .unwrap();
        let c = s;
        assert_eq!(c.gates.len(), 1);
        assert_eq!(
            c.bindings[0].gates,
            vec![
                GateRef::Declared(0),
                GateRef::Object {
                    namespace: "team-a".into(),
                    name: "qa-approval".into()
                },
                GateRef::Object {
                    namespace: "gates".into(),
                    name: "sre-approval".into()
                },
            ]
        );
        assert_eq!(
            c.bindings[0].operations,
            vec![Operation::Update, Operation::Delete]
        );
        assert!(c.allow_on_lookup_error);
    }

    #[test]
    fn every_settings_error_names_the_setting_and_the_accepted_values() {
        #[rustfmt::skip]
        let cases: Vec<(String, &str)> = vec![
            (r#"{"gate":[]}"#.into(), "unknown field `gate`"),
            (r#"{"gates":[{"name":"a"},{"name":"a"}]}"#.into(), "gates[1].name: \"a\" is declared twice"),
            (r#"{"gateNamespace":"a.b"}"#.into(), "gateNamespace: \"a.b\" may not contain '.'"),
            (r#"{"onGateLookupError":"warn"}"#.into(), "onGateLookupError: \"warn\" is not accepted; use one of: deny, allow"),
            (r#"{"breakGlass":{"users":[""]}}"#.into(), "breakGlass.users: entries must not be empty"),
            (r#"{"breakGlass":{"serviceAccounts":["x"]}}"#.into(), "breakGlass.serviceAccounts"),
            (r#"{"emergencyOverride":{"groups":[" "]}}"#.into(), "emergencyOverride.groups: entries must not be empty"),
            (r#"{"clockSkewTolerance":"5 min"}"#.into(), "clockSkewTolerance: invalid duration"),
            (r#"{"clockSkewTolerance":"48h"}"#.into(), "clockSkewTolerance: \"48h\" must be from 0s to 24h"),
            (r#"{"fluxNamespace":"Flux"}"#.into(), "fluxNamespace: \"Flux\""),
            (r#"{"defaultServiceAccount":"a b"}"#.into(), "defaultServiceAccount: \"a b\""),
        ];
        assert_errors(cases);
    }

    #[test]
    fn bounds() {
        let many: Vec<String> = (0..=MAX_GATES)
            .map(|i| format!(r#"{{"name":"g{i}"}}"#))
            .collect();
        assert!(err(&format!(r#"{{"gates":[{}]}}"#, many.join(",")))
            .contains(&format!("at most {MAX_GATES} gates")));
        let sched = r#"{"cron":"0 0 * * *","window":"1h","action":"open"}"#;
        let scheds = vec![sched; MAX_SCHEDULES + 1].join(",");
        assert!(err(&format!(
            r#"{{"gates":[{{"name":"g","schedules":[{scheds}]}}]}}"#
        ))
        .contains(&format!("gates[0].schedules: at most {MAX_SCHEDULES}")));
        let full = vec![sched; MAX_SCHEDULES].join(",");
        let gates: Vec<String> = (0..=MAX_SCHEDULES_TOTAL / MAX_SCHEDULES)
            .map(|i| format!(r#"{{"name":"g{i}","schedules":[{full}]}}"#))
            .collect();
        assert!(err(&format!(r#"{{"gates":[{}]}}"#, gates.join(",")))
            .contains("schedules in all gates together"));
        let objects: Vec<String> = (0..=MAX_BOUND_OBJECTS)
            .map(|i| format!(r#""o{i}""#))
            .collect();
        assert!(err(&format!(
            r#"{{"bindings":[{{"gates":[{}]}}]}}"#,
            objects.join(",")
        ))
        .contains("Gate objects in all bindings together"));
    }
}

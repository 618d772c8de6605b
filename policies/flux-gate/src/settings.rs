//! The policy settings, as written in a ClusterAdmissionPolicy, and their
//! compiled form.
//!
//! Validation compiles: cron expressions, time zones, durations and instants
//! are parsed once, by [`Settings::validate`], and kept for the evaluation
//! (guard-core validates the settings on every call before evaluating).

use guard_core::identity::Identities;
use guard_core::names;
use guard_core::request::null_default;
use guard_core::selector::LabelSelector;
use guard_core::{GroupKind, Operation, UserInfo};
use jiff::{SignedDuration, Timestamp};
use serde::Deserialize;

use crate::binding::{self, FluxOwner, FluxOwnerKind, GateRef};
use crate::cron::Cron;
use crate::gate::{Action, DeclaredGate, Freeze, Schedule, Zone};
use crate::{GATE_KIND, GATING_GROUP};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct Settings {
    /// Gates declared here, by name.
    #[serde(deserialize_with = "null_default")]
    pub gates: Vec<GateSettings>,
    /// Which requests which gates hold.
    #[serde(deserialize_with = "null_default")]
    pub bindings: Vec<BindingSettings>,
    /// Namespace of Gate objects named without one.
    pub gate_namespace: String,
    /// `deny` or `allow` a held request when a Gate object cannot be read.
    pub on_gate_lookup_error: String,
    /// Who passes closed gates (exact matches).
    #[serde(deserialize_with = "null_default")]
    pub break_glass: Identities,
    /// Who may pass closed gates with the emergency override annotation.
    #[serde(deserialize_with = "null_default")]
    pub emergency_override: OverrideSettings,
    /// How far in the future a Gate's requestedAt annotation may be.
    pub clock_skew_tolerance: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            gates: Vec::new(),
            bindings: Vec::new(),
            gate_namespace: "flux-system".into(),
            on_gate_lookup_error: "deny".into(),
            break_glass: Identities::default(),
            emergency_override: OverrideSettings::default(),
            clock_skew_tolerance: "5m".into(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct GateSettings {
    pub name: String,
    /// `opened` or `closed`.
    pub default: String,
    #[serde(deserialize_with = "null_default")]
    pub schedules: Vec<ScheduleSettings>,
    #[serde(deserialize_with = "null_default")]
    pub freezes: Vec<FreezeSettings>,
}

impl Default for GateSettings {
    fn default() -> Self {
        GateSettings {
            name: String::new(),
            default: "opened".into(),
            schedules: Vec::new(),
            freezes: Vec::new(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct ScheduleSettings {
    pub cron: String,
    pub time_zone: String,
    pub window: String,
    /// `open` or `close`.
    pub action: String,
}

impl Default for ScheduleSettings {
    fn default() -> Self {
        ScheduleSettings {
            cron: String::new(),
            time_zone: "UTC".into(),
            window: String::new(),
            action: String::new(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct FreezeSettings {
    pub start: String,
    pub end: String,
    pub reason: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct BindingSettings {
    #[serde(deserialize_with = "null_default")]
    pub gates: Vec<String>,
    #[serde(rename = "match", deserialize_with = "null_default")]
    pub matches: MatchSettings,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct MatchSettings {
    #[serde(deserialize_with = "null_default")]
    pub kinds: Vec<KindSettings>,
    #[serde(deserialize_with = "null_default")]
    pub namespaces: Vec<String>,
    #[serde(deserialize_with = "null_default")]
    pub label_selector: LabelSelector,
    #[serde(deserialize_with = "null_default")]
    pub operations: Vec<String>,
    /// Who sends the write (exact users, groups, service accounts).
    #[serde(deserialize_with = "null_default")]
    pub requested_by: Identities,
    /// The Kustomizations or HelmReleases whose applied objects match.
    #[serde(deserialize_with = "null_default")]
    pub applied_by: Vec<OwnerSettings>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct OwnerSettings {
    /// `Kustomization` or `HelmRelease`.
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct KindSettings {
    pub group: String,
    pub kind: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct OverrideSettings {
    #[serde(deserialize_with = "null_default")]
    pub groups: Vec<String>,
}

/// The settings, parsed and checked.
#[derive(Debug)]
pub struct Compiled {
    pub gates: Vec<DeclaredGate>,
    pub bindings: Vec<Binding>,
    pub gate_namespace: String,
    pub allow_on_lookup_error: bool,
    pub clock_skew: SignedDuration,
    pub break_glass: Identities,
    pub override_groups: Vec<String>,
}

impl Compiled {
    pub fn break_glass_matches(&self, user: &UserInfo) -> bool {
        self.break_glass.matches(user)
    }

    /// The first emergency-override group the user is in.
    pub fn override_group(&self, user: &UserInfo) -> Option<&str> {
        self.override_groups
            .iter()
            .find(|g| user.groups.contains(g))
            .map(String::as_str)
    }
}

#[derive(Debug)]
pub struct Binding {
    pub gates: Vec<GateRef>,
    /// Empty: every kind.
    pub kinds: Vec<GroupKind>,
    /// Empty: every namespace.
    pub namespaces: Vec<String>,
    pub selector: LabelSelector,
    pub operations: Vec<Operation>,
    /// Empty: anyone.
    pub requested_by: Identities,
    /// Empty: any object, applied by Flux or not.
    pub applied_by: Vec<FluxOwner>,
}

/// Bounds that keep one evaluation's work small whatever the settings say:
/// `make bench` times the worst case they allow (tests/bench/
/// flux-gate-worst-case.yaml, checked against these by tests/worst_case.rs).
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

use limits::*;

const MAX_WINDOW: SignedDuration = SignedDuration::from_hours(8784);
const MAX_SKEW: SignedDuration = SignedDuration::from_hours(24);

/// What the policy evaluates with: the document compiled once, when
/// policy-server passes it.
impl guard_core::Settings for Compiled {
    type Document = Settings;

    fn compile(document: Settings) -> Result<Self, String> {
        document.compile()
    }
}

impl Settings {
    fn compile(&self) -> Result<Compiled, String> {
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
        let mut zones = ZoneCache::default();
        let mut gates: Vec<DeclaredGate> = Vec::with_capacity(self.gates.len());
        for (i, g) in self.gates.iter().enumerate() {
            let gate = compile_gate(&format!("gates[{i}]"), g, &mut zones)?;
            if gates.iter().any(|other| other.name == gate.name) {
                return Err(format!(
                    "gates[{i}].name: {:?} is declared twice",
                    gate.name
                ));
            }
            gates.push(gate);
        }
        names::check_dns1123_label(&self.gate_namespace)
            .map_err(|e| format!("gateNamespace: {} {e}", names::quote(&self.gate_namespace)))?;
        let bindings = self
            .bindings
            .iter()
            .enumerate()
            .map(|(i, b)| {
                compile_binding(&format!("bindings[{i}]"), b, &gates, &self.gate_namespace)
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
        let allow_on_lookup_error = match self.on_gate_lookup_error.as_str() {
            "deny" => false,
            "allow" => true,
            other => {
                return Err(format!(
                    "onGateLookupError: {} is not accepted; use deny or allow",
                    names::quote(other)
                ))
            }
        };
        self.break_glass.validate("breakGlass")?;
        if self
            .emergency_override
            .groups
            .iter()
            .any(|g| g.trim().is_empty())
        {
            return Err("emergencyOverride.groups: entries must not be empty".into());
        }
        let clock_skew = duration("clockSkewTolerance", &self.clock_skew_tolerance)?;
        if clock_skew.is_negative() || clock_skew > MAX_SKEW {
            return Err(format!(
                "clockSkewTolerance: {} must be from 0s to 24h",
                names::quote(&self.clock_skew_tolerance)
            ));
        }
        Ok(Compiled {
            gates,
            bindings,
            gate_namespace: self.gate_namespace.clone(),
            allow_on_lookup_error,
            clock_skew,
            break_glass: self.break_glass.clone(),
            override_groups: self.emergency_override.groups.clone(),
        })
    }
}

/// Zones read once per settings, however many schedules name them.
#[derive(Default)]
struct ZoneCache(Vec<Zone>);

impl ZoneCache {
    fn get(&mut self, name: &str) -> Option<Zone> {
        if let Some(z) = self.0.iter().find(|z| z.name == name) {
            return Some(z.clone());
        }
        let zone = Zone {
            name: name.to_string(),
            tz: crate::zones::get(name)?,
        };
        self.0.push(zone.clone());
        Some(zone)
    }
}

fn compile_gate(
    path: &str,
    g: &GateSettings,
    zones: &mut ZoneCache,
) -> Result<DeclaredGate, String> {
    if g.name.contains('/') {
        return Err(format!(
            "{path}.name: {} must not contain '/'; names with a namespace refer to Gate objects",
            names::quote(&g.name)
        ));
    }
    names::check_dns1123_subdomain(&g.name)
        .map_err(|e| format!("{path}.name: {} {e}", names::quote(&g.name)))?;
    let default_open = match g.default.as_str() {
        "opened" => true,
        "closed" => false,
        other => {
            return Err(format!(
                "{path}.default: {} is not accepted; use opened or closed",
                names::quote(other)
            ))
        }
    };
    if g.schedules.len() > MAX_SCHEDULES {
        return Err(format!("{path}.schedules: at most {MAX_SCHEDULES} entries"));
    }
    if g.freezes.len() > MAX_FREEZES {
        return Err(format!("{path}.freezes: at most {MAX_FREEZES} entries"));
    }
    let schedules = g
        .schedules
        .iter()
        .enumerate()
        .map(|(i, s)| compile_schedule(&format!("{path}.schedules[{i}]"), s, zones))
        .collect::<Result<Vec<_>, _>>()?;
    let freezes = g
        .freezes
        .iter()
        .enumerate()
        .map(|(i, f)| compile_freeze(&format!("{path}.freezes[{i}]"), f))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DeclaredGate {
        name: g.name.clone(),
        default_open,
        schedules,
        freezes,
    })
}

fn compile_schedule(
    path: &str,
    s: &ScheduleSettings,
    zones: &mut ZoneCache,
) -> Result<Schedule, String> {
    let cron =
        Cron::parse(&s.cron).map_err(|e| format!("{path}.cron: {} {e}", names::quote(&s.cron)))?;
    let zone = zones.get(&s.time_zone).ok_or_else(|| {
        format!(
            "{path}.timeZone: {} is not a known IANA time zone; use a name such as UTC, \
             Europe/Berlin or America/Los_Angeles",
            names::quote(&s.time_zone)
        )
    })?;
    if s.window.is_empty() {
        return Err(format!(
            "{path}.window: required: how long each firing holds, a Go duration such as 1h or 24h"
        ));
    }
    let window = duration(&format!("{path}.window"), &s.window)?;
    if !window.is_positive() || window > MAX_WINDOW {
        return Err(format!(
            "{path}.window: {} must be more than 0s and at most 8784h (366 days)",
            names::quote(&s.window)
        ));
    }
    let action = match s.action.as_str() {
        "open" => Action::Open,
        "close" => Action::Close,
        "" => return Err(format!("{path}.action: required: open or close")),
        other => {
            return Err(format!(
                "{path}.action: {} is not accepted; use open or close",
                names::quote(other)
            ))
        }
    };
    Ok(Schedule::new(
        s.cron.trim().to_string(),
        cron,
        zone,
        window,
        action,
    ))
}

fn compile_freeze(path: &str, f: &FreezeSettings) -> Result<Freeze, String> {
    let start = instant(&format!("{path}.start"), &f.start)?;
    let end = instant(&format!("{path}.end"), &f.end)?;
    if end <= start {
        return Err(format!(
            "{path}.end: {} must be after start {}",
            f.end, f.start
        ));
    }
    Ok(Freeze {
        start,
        end,
        reason: f.reason.clone(),
    })
}

fn compile_binding(
    path: &str,
    b: &BindingSettings,
    gates: &[DeclaredGate],
    gate_namespace: &str,
) -> Result<Binding, String> {
    if b.gates.is_empty() {
        return Err(format!("{path}.gates: name at least one gate"));
    }
    let refs = b
        .gates
        .iter()
        .enumerate()
        .map(|(i, g)| {
            binding::parse_ref(g, gates, gate_namespace)
                .map_err(|e| format!("{path}.gates[{i}]: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let m = &b.matches;
    let mut kinds = Vec::with_capacity(m.kinds.len());
    for (i, k) in m.kinds.iter().enumerate() {
        if k.kind.is_empty() {
            return Err(format!(
                "{path}.match.kinds[{i}].kind: required, e.g. {{group: kustomize.toolkit.fluxcd.io, kind: Kustomization}}"
            ));
        }
        if k.group == GATING_GROUP && k.kind == GATE_KIND {
            return Err(format!(
                "{path}.match.kinds[{i}]: Gate objects are never held, so that a closed gate can always be opened"
            ));
        }
        kinds.push(GroupKind::new(&k.group, &k.kind));
    }
    for (i, ns) in m.namespaces.iter().enumerate() {
        names::check_dns1123_label(ns)
            .map_err(|e| format!("{path}.match.namespaces[{i}]: {} {e}", names::quote(ns)))?;
    }
    m.label_selector
        .validate(&format!("{path}.match.labelSelector"))?;
    let operations = if m.operations.is_empty() {
        vec![Operation::Create, Operation::Update, Operation::Delete]
    } else {
        m.operations
            .iter()
            .enumerate()
            .map(|(i, op)| match op.as_str() {
                "CREATE" => Ok(Operation::Create),
                "UPDATE" => Ok(Operation::Update),
                "DELETE" => Ok(Operation::Delete),
                other => Err(format!(
                    "{path}.match.operations[{i}]: {} is not accepted; use CREATE, UPDATE or DELETE",
                    names::quote(other)
                )),
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    m.requested_by
        .validate(&format!("{path}.match.requestedBy"))?;
    let applied_by = m
        .applied_by
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let at = format!("{path}.match.appliedBy[{i}]");
            let kind = FluxOwnerKind::parse(&o.kind).ok_or_else(|| {
                format!(
                    "{at}.kind: {} is not accepted; use Kustomization or HelmRelease",
                    names::quote(&o.kind)
                )
            })?;
            if !o.namespace.is_empty() {
                names::check_dns1123_label(&o.namespace)
                    .map_err(|e| format!("{at}.namespace: {} {e}", names::quote(&o.namespace)))?;
            }
            if !o.name.is_empty() {
                names::check_dns1123_subdomain(&o.name)
                    .map_err(|e| format!("{at}.name: {} {e}", names::quote(&o.name)))?;
            }
            Ok(FluxOwner {
                kind,
                namespace: o.namespace.clone(),
                name: o.name.clone(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Binding {
        gates: refs,
        kinds,
        namespaces: m.namespaces.clone(),
        selector: m.label_selector.clone(),
        operations,
        requested_by: m.requested_by.clone(),
        applied_by,
    })
}

fn duration(path: &str, text: &str) -> Result<SignedDuration, String> {
    guard_core::duration::parse(text)
        .map(SignedDuration::from_nanos)
        .map_err(|e| format!("{path}: {e}"))
}

fn instant(path: &str, text: &str) -> Result<Timestamp, String> {
    guard_core::rfc3339::parse(text).map_err(|_| {
        format!(
            "{path}: {} is not an RFC 3339 instant; write e.g. 2026-12-24T00:00:00Z",
            names::quote(text)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Compiled, String> {
        guard_core::settings::parse::<Compiled>(json.as_bytes())
    }

    fn err(json: &str) -> String {
        parse(json).unwrap_err()
    }

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
        let gate = |inner: &str| format!(r#"{{"gates":[{{"name":"g",{inner}}}]}}"#);
        let sched = |inner: &str| {
            let mut s =
                serde_json::json!({"cron": "0 0 * * FRI", "window": "24h", "action": "close"});
            let over: serde_json::Value = serde_json::from_str(&format!("{{{inner}}}")).unwrap();
            for (k, v) in over.as_object().unwrap() {
                s[k] = v.clone();
            }
            gate(&format!(r#""schedules":[{s}]"#))
        };
        let binding = |inner: &str| format!(r#"{{"bindings":[{{"gates":["x"],{inner}}}]}}"#);
        let cases: Vec<(String, &str)> = vec![
            (r#"{"gate":[]}"#.into(), "unknown field `gate`"),
            (r#"{"gates":[{"name":""}]}"#.into(), "gates[0].name: \"\" must not be empty"),
            (r#"{"gates":[{"name":"a/b"}]}"#.into(), "gates[0].name: \"a/b\" must not contain '/'"),
            (r#"{"gates":[{"name":"Big"}]}"#.into(), "gates[0].name: \"Big\" must begin and end"),
            (r#"{"gates":[{"name":"a"},{"name":"a"}]}"#.into(), "gates[1].name: \"a\" is declared twice"),
            (gate(r#""default":"open""#), "gates[0].default: \"open\" is not accepted; use opened or closed"),
            (sched(r#""cron":"0 0 31 2 *""#), "gates[0].schedules[0].cron: \"0 0 31 2 *\" never fires"),
            (sched(r#""cron":"0 0 * * FRY""#), "gates[0].schedules[0].cron: \"0 0 * * FRY\" day of week field"),
            (sched(r#""timeZone":"Europe/Berln""#), "gates[0].schedules[0].timeZone: \"Europe/Berln\" is not a known IANA time zone"),
            (sched(r#""window":"""#), "gates[0].schedules[0].window: required"),
            (sched(r#""window":"1d""#), "gates[0].schedules[0].window: invalid duration \"1d\""),
            (sched(r#""window":"-1h""#), "gates[0].schedules[0].window: \"-1h\" must be more than 0s and at most 8784h"),
            (sched(r#""window":"0s""#), "must be more than 0s"),
            (sched(r#""window":"9000h""#), "at most 8784h"),
            (sched(r#""action":"""#), "gates[0].schedules[0].action: required: open or close"),
            (sched(r#""action":"deny""#), "gates[0].schedules[0].action: \"deny\" is not accepted; use open or close"),
            (sched(r#""windows":"1h""#), "unknown field `windows`"),
            (gate(r#""freezes":[{"start":"2026-12-24","end":"2026-12-27T00:00:00Z"}]"#), "gates[0].freezes[0].start: \"2026-12-24\" is not an RFC 3339 instant"),
            (gate(r#""freezes":[{"start":"2026-12-24T00:00:00Z","end":"2026-12-23T00:00:00Z"}]"#), "gates[0].freezes[0].end: 2026-12-23T00:00:00Z must be after start"),
            (r#"{"bindings":[{"gates":[]}]}"#.into(), "bindings[0].gates: name at least one gate"),
            (r#"{"bindings":[{"gates":["a/b/c"]}]}"#.into(), "bindings[0].gates[0]: \"a/b/c\""),
            (r#"{"bindings":[{"gates":["Bad_Name"]}]}"#.into(), "bindings[0].gates[0]: \"Bad_Name\""),
            (binding(r#""match":{"kinds":[{"group":"x"}]}"#), "bindings[0].match.kinds[0].kind: required"),
            (binding(r#""match":{"kinds":[{"group":"gating.toolkit.fluxcd.io","kind":"Gate"}]}"#), "bindings[0].match.kinds[0]: Gate objects are never held"),
            (binding(r#""match":{"namespaces":["Flux"]}"#), "bindings[0].match.namespaces[0]: \"Flux\""),
            (binding(r#""match":{"operations":["PATCH"]}"#), "bindings[0].match.operations[0]: \"PATCH\" is not accepted; use CREATE, UPDATE or DELETE"),
            (binding(r#""match":{"labelSelector":{"matchExpressions":[{"key":"a","operator":"In"}]}}"#), "bindings[0].match.labelSelector.matchExpressions: key \"a\""),
            (r#"{"gateNamespace":"a.b"}"#.into(), "gateNamespace: \"a.b\" may not contain '.'"),
            (r#"{"onGateLookupError":"warn"}"#.into(), "onGateLookupError: \"warn\" is not accepted; use deny or allow"),
            (r#"{"breakGlass":{"users":[""]}}"#.into(), "breakGlass.users: entries must not be empty"),
            (r#"{"breakGlass":{"serviceAccounts":["x"]}}"#.into(), "breakGlass.serviceAccounts"),
            (r#"{"emergencyOverride":{"groups":[" "]}}"#.into(), "emergencyOverride.groups: entries must not be empty"),
            (r#"{"clockSkewTolerance":"5 min"}"#.into(), "clockSkewTolerance: invalid duration"),
            (r#"{"clockSkewTolerance":"48h"}"#.into(), "clockSkewTolerance: \"48h\" must be from 0s to 24h"),
        ];
        for (json, want) in cases {
            let e = err(&json);
            assert!(e.starts_with("invalid settings: "), "{e}");
            assert!(e.contains(want), "{json}\n  got: {e}\n want: {want}");
        }
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

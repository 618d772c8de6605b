//! The words of the policy's errors: what could not be read, which Gate
//! field is wrong, which setting is refused. Each names where the fault is.

use std::fmt::{self, Display, Formatter};

use guard_core::model::kinds::KUSTOMIZE;
use guard_core::names::quote;

use crate::binding::AnnotationError;
use crate::decision::Unreadable;
use crate::emergency_override::OwnerError;
use crate::gate_object::GateError;
use crate::gating::GATES_ANNOTATION;
use crate::settings::limits::{
    MAX_ANNOTATED, MAX_BINDINGS, MAX_BOUND_OBJECTS, MAX_FREEZES, MAX_FREEZES_TOTAL, MAX_GATES,
    MAX_SCHEDULES, MAX_SCHEDULES_TOTAL,
};
use crate::settings::{Limit, RefError, Rule, SettingsError};
use crate::split_object::SplitError;

impl Display for Unreadable {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Unreadable::Read(e) => e.fmt(f),
            Unreadable::Split(e) => e.fmt(f),
        }
    }
}

impl Display for SplitError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "malformed {}", self.which.field())?;
        if let Some(member) = self.member {
            write!(f, ".{member}")?;
        }
        write!(f, ": not a JSON object ({})", self.error)
    }
}

impl Display for RefError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not a gate name: ", quote(&self.text))?;
        if self.in_namespace {
            f.write_str("namespace ")?;
        }
        write!(f, "{}; write name or namespace/name", self.why)
    }
}

impl Display for AnnotationError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            AnnotationError::TooMany(n) => write!(
                f,
                "annotation {GATES_ANNOTATION} names {n} gates; at most {MAX_ANNOTATED} are allowed"
            ),
            AnnotationError::Ref(e) => {
                write!(f, "annotation {GATES_ANNOTATION}: {e}, separated by commas")
            }
        }
    }
}

impl Display for GateError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            GateError::Read(e) => e.fmt(f),
            GateError::Shape(e) => e.fmt(f),
            GateError::SpecNotAnObject => {
                f.write_str("spec: must be an object with default and window")
            }
            GateError::NoSpec => {
                f.write_str("spec: required, with default (opened or closed) and window (e.g. 1h)")
            }
            GateError::NotAString { field, found } => {
                write!(f, "spec.{field}: must be a string (found {found})")
            }
            GateError::Default(value) => write!(
                f,
                "spec.default: {} is not accepted; use opened or closed",
                quote(value)
            ),
            GateError::NoDefault => f.write_str("spec.default: required: opened or closed"),
            GateError::Window(e) => write!(f, "spec.window: {e}"),
            GateError::WindowRange(window) => write!(
                f,
                "spec.window: {} must be from 0s to 8784h (366 days)",
                quote(window)
            ),
            GateError::NoWindow => f.write_str(
                "spec.window: required: how long an open or close request holds, e.g. 1h",
            ),
            GateError::Interval(e) => write!(f, "spec.interval: {e}"),
            GateError::IntervalNotPositive(interval) => {
                write!(f, "spec.interval: {} must be more than 0s", quote(interval))
            }
            GateError::NotAnInstant { key, value } => write!(
                f,
                "annotation {key}: {} is not an RFC 3339 instant; write the current time in UTC, \
                 e.g. 2026-11-20T10:00:00Z ($(date -u +%Y-%m-%dT%H:%M:%SZ))",
                quote(value)
            ),
        }
    }
}

impl Display for OwnerError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            OwnerError::Lookup(e) => e.fmt(f),
            OwnerError::Annotations(e) => write!(f, "unreadable: {e}"),
            OwnerError::ServiceAccount(e) => {
                write!(f, "unreadable: spec.serviceAccountName: {e}")
            }
        }
    }
}

impl Display for SettingsError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SettingsError::Invalid(e) => e.fmt(f),
            SettingsError::Rule { at, rule } => {
                f.write_str(at)?;
                rule.fmt(f)
            }
            SettingsError::TooMany { limit, found } => {
                let (setting, max, what) = match limit {
                    Limit::Gates => ("gates", MAX_GATES, "gates"),
                    Limit::SchedulesTotal => (
                        "gates[*].schedules",
                        MAX_SCHEDULES_TOTAL,
                        "schedules in all gates together",
                    ),
                    Limit::FreezesTotal => (
                        "gates[*].freezes",
                        MAX_FREEZES_TOTAL,
                        "freezes in all gates together",
                    ),
                    Limit::Bindings => ("bindings", MAX_BINDINGS, "bindings"),
                    Limit::BoundObjects => (
                        "bindings[*].gates",
                        MAX_BOUND_OBJECTS,
                        "Gate objects in all bindings together",
                    ),
                };
                write!(f, "{setting}: at most {max} {what} (found {found})")
            }
            SettingsError::DeclaredTwice { index, name } => {
                write!(f, "gates[{index}].name: {} is declared twice", quote(name))
            }
            SettingsError::NameWithSlash { at, name } => write!(
                f,
                "{at}.name: {} must not contain '/'; names with a namespace refer to Gate objects",
                quote(name)
            ),
            SettingsError::Cron { at, cron, why } => {
                write!(f, "{at}.cron: {} {why}", quote(cron))
            }
            SettingsError::TimeZone { at, zone } => write!(
                f,
                "{at}.timeZone: {} is not a known IANA time zone; use a name such as UTC, \
                 Europe/Berlin or America/Los_Angeles",
                quote(zone)
            ),
            SettingsError::Window { at, window } => write!(
                f,
                "{at}.window: {} must be more than 0s and at most 8784h (366 days)",
                quote(window)
            ),
            SettingsError::FreezeOrder { at, end, start } => write!(
                f,
                "{at}.end: {} must be after start {}",
                quote(end),
                quote(start)
            ),
            SettingsError::ClockSkew(text) => write!(
                f,
                "clockSkewTolerance: {} must be from 0s to 24h",
                quote(text)
            ),
            SettingsError::GateRef { setting, error } => write!(f, "{setting}: {error}"),
        }
    }
}

/// The rule's words, after the path of the entry that breaks it.
impl Display for Rule {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let instant = "required: an RFC 3339 instant such as 2026-12-24T00:00:00Z";
        match self {
            Rule::Schedules => write!(f, ".schedules: at most {MAX_SCHEDULES} entries"),
            Rule::Freezes => write!(f, ".freezes: at most {MAX_FREEZES} entries"),
            Rule::WindowRequired => f.write_str(
                ".window: required: how long each firing holds, a Go duration such as 1h or 24h",
            ),
            Rule::ActionRequired => f.write_str(".action: required: open or close"),
            Rule::StartRequired => write!(f, ".start: {instant}"),
            Rule::EndRequired => write!(f, ".end: {instant}"),
            Rule::NoGates => f.write_str(".gates: name at least one gate"),
            Rule::KindRequired => write!(
                f,
                ".kind: required, e.g. {{group: {KUSTOMIZE}, kind: Kustomization}}"
            ),
            Rule::GateKind => f.write_str(
                ": Gate objects are never held, so that a closed gate can always be opened",
            ),
            Rule::Connect => {
                f.write_str(": CONNECT never writes an object; use CREATE, UPDATE or DELETE")
            }
            Rule::OwnerKindRequired => f.write_str(".kind: required: Kustomization or HelmRelease"),
        }
    }
}

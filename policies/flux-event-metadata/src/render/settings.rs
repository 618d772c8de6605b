//! The words of a settings refusal ([`SettingsError`]), each naming its setting.

use guard_core::names::quote;

use crate::kinds::{self, PREFIX};
use crate::settings::{SettingsError, MAX_PATTERN_LEN, VALUE_LENGTH_CEILING};

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Identities(e) => e.fmt(f),
            Self::Key {
                setting,
                index,
                key,
                why,
            } => write!(
                f,
                "{setting}[{index}]: {} {why}; write the part after `{PREFIX}`, e.g. \"team\"",
                quote(key)
            ),
            Self::Action {
                setting,
                action,
                allowed,
            } => {
                write!(
                    f,
                    "{setting}: {} is not accepted here; use one of ",
                    quote(action.name())
                )?;
                for (i, allowed) in allowed.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(allowed.name())?;
                }
                Ok(())
            }
            Self::DeniedAndAllowed(key) => write!(
                f,
                "deniedKeys and allowedKeys both list {}; keep it in one of them",
                quote(key)
            ),
            Self::NotAnEmittingKind(kind) => write!(
                f,
                "requiredKeys: {} is not a kind that emits Flux events; use \"*\" or one of {}",
                quote(kind),
                kinds::emitting_kind_names().join(", ")
            ),
            Self::RequiredButRefused { kind, key, by } => write!(
                f,
                "requiredKeys.{kind}: {} is required but refused by {by}; no object could pass",
                quote(key)
            ),
            Self::MaxValueLength(n) => write!(
                f,
                "maxValueLength: {n} is out of range; accepted: 1 to {VALUE_LENGTH_CEILING} characters"
            ),
            Self::MaxKeys(n) => write!(f, "maxKeys: {n} is out of range; accepted: 1 to 1000"),
            Self::PatternKey { key, why } => {
                write!(f, "valuePatterns: key {} {why}", quote(key))
            }
            Self::PatternTooLong { key, len } => write!(
                f,
                "valuePatterns.{key}: the pattern has {len} characters; at most {MAX_PATTERN_LEN} are accepted"
            ),
            Self::Pattern {
                key,
                source,
                refused,
                max_value_length,
                patterns,
            } => {
                write!(f, "valuePatterns.{key}: {} {refused}", quote(source))?;
                if refused.limited_by_text_length() {
                    write!(
                        f,
                        " (maxValueLength is {max_value_length}, shared by {patterns} patterns)"
                    )?;
                }
                Ok(())
            }
        }
    }
}

//! The suspension reason: the value of `reconcile.fluxcd.io/suspended`, with an
//! optional expiry written inside it as `until=<RFC 3339 time>`.

use guard_core::{rfc3339, Timestamp};

use crate::settings::Settings;
use crate::write::Write;

const UNTIL: &str = "until=";

/// Why an `until=` expiry cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreadable {
    MoreThanOne,
    /// The text after `until=`, which is not an RFC 3339 time.
    NotATime(String),
}

/// Why a reason given now is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// Longer than `maxReasonLength`.
    TooLong,
    Expiry(Unreadable),
    Empty,
    Placeholder,
    /// Fewer visible characters than `minReasonLength`.
    TooShort {
        visible: usize,
    },
    /// Does not match `reasonPattern`.
    Unmatched,
    /// `requireExpiry` or `maxDuration` without an `until=`.
    NoExpiry,
    Expired {
        at: Timestamp,
        now: Timestamp,
    },
    /// Further ahead than `maxDuration`, by `ahead` nanoseconds.
    TooFar {
        at: Timestamp,
        ahead: i128,
    },
}

/// What the reason rule found on a write that gives a reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Finding {
    /// No annotation where one is required: a reason (`requireReason`), or,
    /// without it, the expiry `requireExpiry` or `maxDuration` asks for.
    Missing,
    Refused {
        value: String,
        problem: Problem,
    },
}

/// The expiry of a reason: `None` without `until=`, an error when it does not parse.
pub(crate) fn until(value: &str) -> Option<Result<Timestamp, Unreadable>> {
    let mut tokens = value.split_whitespace().filter(|t| t.starts_with(UNTIL));
    let token = tokens.next()?;
    if tokens.next().is_some() {
        return Some(Err(Unreadable::MoreThanOne));
    }
    let text = token.get(UNTIL.len()..).unwrap_or("");
    Some(rfc3339::parse(text).map_err(|_| Unreadable::NotATime(text.to_string())))
}

/// The reason without its `until=` token, trimmed.
fn text_of(value: &str) -> String {
    value
        .split_whitespace()
        .filter(|t| !t.starts_with(UNTIL))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Characters that show nothing: padding a reason with them must not pass
/// the minimum length.
fn is_visible(c: char) -> bool {
    !(c.is_whitespace()
        || c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
            | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
            | '\u{FFA0}' | '\u{E0000}'..='\u{E0FFF}'))
}

/// The reason rule of a write: entering suspension or changing the reason
/// needs an acceptable one. Returns the expiry of the reason given.
pub(crate) fn check_given(
    write: &Write<'_>,
    settings: &Settings,
    now: Timestamp,
) -> Result<Option<Timestamp>, Finding> {
    if !write.change.gives_reason() {
        return Ok(None);
    }
    match write.state.reason.as_deref() {
        // Without requireReason the expiry rules still need the annotation.
        None if settings.require_reason || settings.expiry_required() => Err(Finding::Missing),
        None => Ok(None),
        Some(value) => check(value, settings, now).map_err(|problem| Finding::Refused {
            value: value.to_string(),
            problem,
        }),
    }
}

/// Checks a reason given now (entering suspension, or a changed reason) and
/// returns its expiry. With `requireReason: false` the value is not judged
/// as a reason (the RFC's generic `true` passes); the length cap and the
/// expiry rules still apply.
pub(crate) fn check(
    value: &str,
    settings: &Settings,
    now: Timestamp,
) -> Result<Option<Timestamp>, Problem> {
    // Bounded before anything else looks at a value that may be 256 KiB.
    let max = settings.max_reason_length;
    if value.chars().take(max.saturating_add(1)).count() > max {
        return Err(Problem::TooLong);
    }
    let expiry = until(value).transpose().map_err(Problem::Expiry)?;
    if settings.require_reason {
        check_text(&text_of(value), settings)?;
    }
    check_expiry(expiry, settings, now)
}

/// Emptiness, placeholders, visible length and `reasonPattern`.
fn check_text(text: &str, settings: &Settings) -> Result<(), Problem> {
    if text.is_empty() {
        return Err(Problem::Empty);
    }
    if settings
        .placeholder_reasons
        .iter()
        .any(|p| p.trim().eq_ignore_ascii_case(text))
    {
        return Err(Problem::Placeholder);
    }
    let visible = text.chars().filter(|c| is_visible(*c)).count();
    if visible < settings.min_reason_length {
        return Err(Problem::TooShort { visible });
    }
    if let Some(regex) = &settings.reason_pattern.regex {
        if !regex.is_match(text) {
            return Err(Problem::Unmatched);
        }
    }
    Ok(())
}

/// `requireExpiry`, `maxDuration` and an expiry already passed.
fn check_expiry(
    expiry: Option<Timestamp>,
    settings: &Settings,
    now: Timestamp,
) -> Result<Option<Timestamp>, Problem> {
    match expiry {
        None if settings.expiry_required() => Err(Problem::NoExpiry),
        None => Ok(None),
        Some(at) if at <= now => Err(Problem::Expired { at, now }),
        Some(at) => {
            if let Some(max) = &settings.max_duration {
                let ahead = at.as_nanosecond().saturating_sub(now.as_nanosecond());
                if ahead > i128::from(max.nanos) {
                    return Err(Problem::TooFar { at, ahead });
                }
            }
            Ok(Some(at))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-11-20T10:00:00Z".parse().unwrap()
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn settings(json: &str) -> Settings {
        guard_core::settings::parse::<Settings>(json.as_bytes()).unwrap()
    }

    fn refused(value: &str, json: &str) -> Problem {
        check(value, &settings(json), now()).unwrap_err()
    }

    #[test]
    fn a_plain_reason_passes_without_expiry() {
        assert_eq!(
            check("INC-4711 database migration", &settings("{}"), now()),
            Ok(None)
        );
    }

    #[test]
    fn expiry_is_read_from_the_reason() {
        let until = check(
            "INC-4711 migration until=2026-11-22T18:00:00Z",
            &settings("{}"),
            now(),
        );
        assert_eq!(until, Ok(Some(at("2026-11-22T18:00:00Z"))));
        let offset = check(
            "INC-4711 migration until=2026-11-22T19:00:00+01:00",
            &settings("{}"),
            now(),
        );
        assert_eq!(offset, Ok(Some(at("2026-11-22T18:00:00Z"))));
    }

    #[test]
    fn empty_and_short_and_padded_reasons_are_refused() {
        assert_eq!(refused("", "{}"), Problem::Empty);
        assert_eq!(refused("   \t", "{}"), Problem::Empty);
        assert_eq!(refused("until=2026-11-22T18:00:00Z", "{}"), Problem::Empty);
        assert_eq!(refused("db", "{}"), Problem::TooShort { visible: 2 });
        let padded = "ab\u{200B}\u{200B}\u{200B}\u{202E}\u{FEFF}";
        assert_eq!(refused(padded, "{}"), Problem::TooShort { visible: 2 });
        assert!(check("déjà vu 🙂", &settings("{}"), now()).is_ok());
    }

    #[test]
    fn placeholders_are_refused_whatever_their_case() {
        for p in ["true", "SUSPENDED", " Paused ", "n/a"] {
            assert_eq!(
                refused(p, r#"{"minReasonLength":0}"#),
                Problem::Placeholder,
                "{p}"
            );
        }
        assert_eq!(
            refused("blocked", r#"{"placeholderReasons":["Blocked"]}"#),
            Problem::Placeholder
        );
    }

    #[test]
    fn long_reasons_are_refused_without_reading_them_all() {
        let huge = "x".repeat(64 * 1024);
        assert_eq!(refused(&huge, "{}"), Problem::TooLong);
        assert!(check(&"é".repeat(1024), &settings("{}"), now()).is_ok());
    }

    #[test]
    fn the_pattern_is_matched_against_the_reason_without_expiry() {
        let json = r#"{"reasonPattern":"^[A-Z]+-[0-9]+ "}"#;
        assert!(check(
            "until=2026-11-21T00:00:00Z OPS-12 cutover",
            &settings(json),
            now()
        )
        .is_ok());
        assert_eq!(refused("cutover of the repo", json), Problem::Unmatched);
    }

    #[test]
    fn malformed_and_repeated_expiries_are_refused() {
        assert_eq!(
            refused("INC-1 migration until=tomorrow", "{}"),
            Problem::Expiry(Unreadable::NotATime("tomorrow".into()))
        );
        assert_eq!(
            refused("INC-1 migration until=2026-11-22", "{}"),
            Problem::Expiry(Unreadable::NotATime("2026-11-22".into()))
        );
        let twice = "INC-1 until=2026-11-21T00:00:00Z until=2026-11-22T00:00:00Z";
        assert_eq!(
            refused(twice, "{}"),
            Problem::Expiry(Unreadable::MoreThanOne)
        );
    }

    #[test]
    fn expiries_must_be_ahead_and_within_max_duration() {
        for passed in ["2026-11-20T10:00:00Z", "2026-11-19T10:00:00Z"] {
            assert_eq!(
                refused(&format!("INC-1 migration until={passed}"), "{}"),
                Problem::Expired {
                    at: at(passed),
                    now: now()
                }
            );
        }
        let json = r#"{"maxDuration":"72h"}"#;
        assert_eq!(refused("INC-1 migration", json), Problem::NoExpiry);
        assert!(check(
            "INC-1 migration until=2026-11-23T10:00:00Z",
            &settings(json),
            now()
        )
        .is_ok());
        assert_eq!(
            refused("INC-1 migration until=2026-11-23T10:00:01Z", json),
            Problem::TooFar {
                at: at("2026-11-23T10:00:01Z"),
                ahead: (72 * 3600 + 1) * 1_000_000_000
            }
        );
        assert_eq!(
            refused("INC-1 migration", r#"{"requireExpiry":true}"#),
            Problem::NoExpiry
        );
    }

    #[test]
    fn without_required_reasons_only_the_cap_and_the_expiry_are_checked() {
        let lax = r#"{"requireReason":false}"#;
        assert_eq!(check("true", &settings(lax), now()), Ok(None));
        assert_eq!(check("", &settings(lax), now()), Ok(None));
        assert_eq!(
            refused("x until=soon", lax),
            Problem::Expiry(Unreadable::NotATime("soon".into()))
        );
        assert_eq!(refused(&"x".repeat(2000), lax), Problem::TooLong);
        assert_eq!(
            refused("true", r#"{"requireReason":false,"requireExpiry":true}"#),
            Problem::NoExpiry
        );
    }

    #[test]
    fn until_reads_kept_reasons() {
        assert!(until("no expiry here").is_none());
        assert!(until("x until=bad").unwrap().is_err());
        assert!(until("x until=2026-01-01T00:00:00Z").unwrap().is_ok());
    }
}

//! The suspension reason: the value of `reconcile.fluxcd.io/suspended`, with an
//! optional expiry written inside it as `until=<RFC 3339 time>`.

use guard_core::{duration, names, rfc3339, Timestamp};

use crate::settings::Settings;

const UNTIL: &str = "until=";

/// The expiry of a reason: `None` without `until=`, an error when it does not parse.
pub fn until(value: &str) -> Option<Result<Timestamp, String>> {
    let mut tokens = value.split_whitespace().filter(|t| t.starts_with(UNTIL));
    let token = tokens.next()?;
    if tokens.next().is_some() {
        return Some(Err("it has more than one until= time; keep one".to_string()));
    }
    let text = token.get(UNTIL.len()..).unwrap_or("");
    Some(rfc3339::parse(text).map_err(|_| {
        format!(
            "until={} is not an RFC 3339 time; write it like until=2026-11-22T18:00:00Z",
            names::quote(text)
        )
    }))
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

/// Checks a reason given now (entering suspension, or a changed reason) and
/// returns its expiry. The error says what is wrong, for the refusal message.
/// With `requireReason: false` the value is not judged as a reason (the RFC's
/// generic `true` passes); the length cap and the expiry rules still apply.
pub fn check(
    value: &str,
    settings: &Settings,
    now: Timestamp,
) -> Result<Option<Timestamp>, String> {
    // Bounded before anything else looks at a value that may be 256 KiB.
    let max = settings.max_reason_length;
    if value.chars().take(max.saturating_add(1)).count() > max {
        return Err(format!(
            "it is longer than maxReasonLength ({max} characters)"
        ));
    }
    let expiry = until(value).transpose()?;
    if settings.require_reason {
        check_text(&text_of(value), settings)?;
    }
    check_expiry(expiry, settings, now)
}

/// Emptiness, placeholders, visible length and `reasonPattern`.
fn check_text(text: &str, settings: &Settings) -> Result<(), String> {
    if text.is_empty() {
        return Err("it is empty; say why reconciliation is stopped".to_string());
    }
    if settings
        .placeholder_reasons
        .iter()
        .any(|p| p.trim().eq_ignore_ascii_case(text))
    {
        return Err(
            "it is a placeholder that says nothing; say why reconciliation is stopped".to_string(),
        );
    }
    let visible = text.chars().filter(|c| is_visible(*c)).count();
    if visible < settings.min_reason_length {
        return Err(format!(
            "it has {visible} visible characters, fewer than minReasonLength ({})",
            settings.min_reason_length
        ));
    }
    if let Some(regex) = &settings.reason_pattern.regex {
        if !regex.is_match(text) {
            return Err(format!(
                "it does not match reasonPattern {}",
                names::quote(&settings.reason_pattern.source)
            ));
        }
    }
    Ok(())
}

/// `requireExpiry`, `maxDuration` and an expiry already passed.
fn check_expiry(
    expiry: Option<Timestamp>,
    settings: &Settings,
    now: Timestamp,
) -> Result<Option<Timestamp>, String> {
    match expiry {
        None if settings.expiry_required() => Err(
            "it has no expiry; this cluster requires until=<RFC 3339 time> in the reason"
                .to_string(),
        ),
        None => Ok(None),
        Some(at) if at <= now => Err(format!(
            "its expiry until={} has already passed (now is {})",
            rfc3339::format(at),
            rfc3339::format(now)
        )),
        Some(at) => {
            if let Some(max) = &settings.max_duration {
                let ahead = at.as_nanosecond().saturating_sub(now.as_nanosecond());
                if ahead > i128::from(max.nanos) {
                    let shown = i64::try_from(ahead)
                        .map_or_else(|_| "centuries".to_string(), duration::format);
                    return Err(format!(
                        "its expiry until={} is {shown} ahead, more than maxDuration ({})",
                        rfc3339::format(at),
                        max.text
                    ));
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

    fn settings(json: &str) -> Settings {
        guard_core::settings::parse::<Settings>(json.as_bytes()).unwrap()
    }

    fn refused(value: &str, json: &str) -> String {
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
        let at = check(
            "INC-4711 migration until=2026-11-22T18:00:00Z",
            &settings("{}"),
            now(),
        );
        assert_eq!(at, Ok(Some("2026-11-22T18:00:00Z".parse().unwrap())));
        let offset = check(
            "INC-4711 migration until=2026-11-22T19:00:00+01:00",
            &settings("{}"),
            now(),
        );
        assert_eq!(offset, Ok(Some("2026-11-22T18:00:00Z".parse().unwrap())));
    }

    #[test]
    fn empty_and_short_and_padded_reasons_are_refused() {
        assert!(refused("", "{}").contains("it is empty"));
        assert!(refused("   \t", "{}").contains("it is empty"));
        assert!(refused("until=2026-11-22T18:00:00Z", "{}").contains("it is empty"));
        assert!(
            refused("db", "{}").contains("2 visible characters, fewer than minReasonLength (5)")
        );
        let padded = "ab\u{200B}\u{200B}\u{200B}\u{202E}\u{FEFF}";
        assert!(refused(padded, "{}").contains("2 visible characters"));
        assert!(check("déjà vu 🙂", &settings("{}"), now()).is_ok());
    }

    #[test]
    fn placeholders_are_refused_whatever_their_case() {
        for p in ["true", "SUSPENDED", " Paused ", "n/a"] {
            assert!(
                refused(p, r#"{"minReasonLength":0}"#).contains("placeholder"),
                "{p}"
            );
        }
        assert!(refused("blocked", r#"{"placeholderReasons":["Blocked"]}"#).contains("placeholder"));
    }

    #[test]
    fn long_reasons_are_refused_without_reading_them_all() {
        let huge = "x".repeat(64 * 1024);
        assert!(refused(&huge, "{}").contains("longer than maxReasonLength (1024 characters)"));
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
        assert!(refused("cutover of the repo", json)
            .contains("does not match reasonPattern \"^[A-Z]+-[0-9]+ \""));
    }

    #[test]
    fn malformed_and_repeated_expiries_are_refused() {
        assert!(refused("INC-1 migration until=tomorrow", "{}")
            .contains("until=\"tomorrow\" is not an RFC 3339 time"));
        assert!(refused("INC-1 migration until=2026-11-22", "{}").contains("not an RFC 3339 time"));
        let twice = "INC-1 until=2026-11-21T00:00:00Z until=2026-11-22T00:00:00Z";
        assert!(refused(twice, "{}").contains("more than one until="));
    }

    #[test]
    fn expiries_must_be_ahead_and_within_max_duration() {
        assert!(refused("INC-1 migration until=2026-11-20T10:00:00Z", "{}")
            .contains("has already passed"));
        assert!(refused("INC-1 migration until=2026-11-19T10:00:00Z", "{}")
            .contains("has already passed"));
        let json = r#"{"maxDuration":"72h"}"#;
        assert!(refused("INC-1 migration", json).contains("it has no expiry"));
        assert!(check(
            "INC-1 migration until=2026-11-23T10:00:00Z",
            &settings(json),
            now()
        )
        .is_ok());
        let e = refused("INC-1 migration until=2026-11-23T10:00:01Z", json);
        assert!(
            e.contains("is 72h0m1s ahead, more than maxDuration (72h)"),
            "{e}"
        );
        assert!(refused("INC-1 migration", r#"{"requireExpiry":true}"#).contains("no expiry"));
    }

    #[test]
    fn without_required_reasons_only_the_cap_and_the_expiry_are_checked() {
        let lax = r#"{"requireReason":false}"#;
        assert_eq!(check("true", &settings(lax), now()), Ok(None));
        assert_eq!(check("", &settings(lax), now()), Ok(None));
        assert!(refused("x until=soon", lax).contains("is not an RFC 3339 time"));
        assert!(refused(&"x".repeat(2000), lax).contains("longer than maxReasonLength"));
        assert!(
            refused("true", r#"{"requireReason":false,"requireExpiry":true}"#)
                .contains("it has no expiry")
        );
    }

    #[test]
    fn until_reads_kept_reasons() {
        assert!(until("no expiry here").is_none());
        assert!(until("x until=bad").unwrap().is_err());
        assert!(until("x until=2026-01-01T00:00:00Z").unwrap().is_ok());
    }
}

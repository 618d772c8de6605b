//! The words of a settings refusal ([`SettingsError`]), each naming its setting.

use guard_core::names::quote;
use guard_core::pattern::Refused;

use crate::settings::limits::{MAX_ANNOTATION_BYTES, MAX_PATTERN_LEN};
use crate::settings::{SettingsError, DEFAULT_SUSPENDER_ANNOTATION};

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Identities(e) => e.fmt(f),
            Self::OperatorServiceAccount(account) => write!(
                f,
                "operatorServiceAccount: {} is not a service account; write `namespace:name`, \
                 e.g. flux-system:flux-operator",
                quote(account)
            ),
            Self::RecordSuspender(mode) => write!(
                f,
                "recordSuspender: writing the suspender is a mutation, and mode {} never mutates; \
                 use mode mirror or set recordSuspender to false",
                mode.as_str()
            ),
            Self::MaxDuration(text) => write!(
                f,
                "maxDuration: {} is not a positive duration; write one such as 72h or 168h, \
                 or leave it empty for no cap",
                quote(text)
            ),
            Self::PatternTooLong => write!(
                f,
                "reasonPattern: at most {MAX_PATTERN_LEN} characters are accepted"
            ),
            Self::MaxReasonLength(n) => write!(
                f,
                "maxReasonLength: {n} is out of range; accepted: 1 to {MAX_ANNOTATION_BYTES}"
            ),
            Self::MinExceedsMax { min, max } => write!(
                f,
                "minReasonLength ({min}) must not exceed maxReasonLength ({max})"
            ),
            Self::EmptyPlaceholder(i) => write!(
                f,
                "placeholderReasons[{i}]: entries must not be empty (an empty reason is always refused)"
            ),
            Self::NotAKey { key, why } => write!(
                f,
                "suspenderAnnotation: {} is not an annotation key: {why}",
                quote(key)
            ),
            Self::ReadAnnotation(key) => write!(
                f,
                "suspenderAnnotation: {} is an annotation the policy already reads; \
                 use another key, e.g. {DEFAULT_SUSPENDER_ANNOTATION}",
                quote(key)
            ),
            Self::Pattern {
                source,
                refused,
                max_reason_length,
            } => {
                let source = quote(source);
                match refused {
                    Refused::Syntax(e) => write!(
                        f,
                        "reasonPattern: {source} is not a regular expression ({e}); \
                         write one such as ^[A-Z]+-[0-9]+ (a ticket reference first)"
                    ),
                    too_large if too_large.limited_by_text_length() => write!(
                        f,
                        "reasonPattern: {source} {too_large} (maxReasonLength is {max_reason_length})"
                    ),
                    too_large => write!(f, "reasonPattern: {source} {too_large}"),
                }
            }
        }
    }
}

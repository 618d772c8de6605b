//! Checks on one metadata value, shared by object annotations and an Alert's
//! `.spec.eventMetadata`: providers render values verbatim, so what is wrong
//! here reaches chat messages, commit statuses and pull-request comments.

/// The keys that steer where notifications go, not just what they say:
/// the commit keys (`commit`, `originRevision`, `revision`, which the git
/// notifiers read in that order) and `change_request`.
pub const CHANGE_REQUEST: &str = "change_request";

pub fn is_routing_key(key: &str) -> bool {
    key == CHANGE_REQUEST || crate::kinds::is_commit_key(key)
}

/// The first control character a provider would mangle, if any. A line feed
/// passes only when `allow_newlines` is set.
pub fn control_character(value: &str, allow_newlines: bool) -> Option<char> {
    value
        .chars()
        .find(|&c| c.is_control() && !(allow_newlines && c == '\n'))
}

/// The value's length in characters when it exceeds `max`.
pub fn excess_length(value: &str, max: usize) -> Option<usize> {
    // Bytes bound characters from above, so short values are never counted.
    if value.len() <= max {
        return None;
    }
    let chars = value.chars().count();
    (chars > max).then_some(chars)
}

/// What a routing key's value is not, when it is not what its key needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RoutingFormat {
    /// `commit`: not a full lower-case SHA-1 hash, bare or in a revision.
    NotSha1,
    /// `commit`: a SHA-256 hash, which the git notifiers cannot use.
    Sha256,
    /// `change_request`: not a positive decimal integer.
    NotChangeRequest,
}

/// For a routing key, what is wrong with its value, if anything.
pub(crate) fn routing_format_error(key: &str, value: &str) -> Option<RoutingFormat> {
    match key {
        CHANGE_REQUEST if !is_positive_integer(value) => Some(RoutingFormat::NotChangeRequest),
        CHANGE_REQUEST => None,
        _ if crate::kinds::is_commit_key(key) => commit_format_error(value),
        _ => None,
    }
}

/// notification-controller's git notifiers read `commit` before any revision
/// (fluxcd/pkg `apis/event` v0.27.0 `Event.GetRevision`) and pass it to
/// `parseRevision` (notification-controller 2e46958, `internal/notifier/util.go`):
/// `git.ExtractHashFromRevision(git.TransformRevision(rev))` must give a hash
/// whose `Algorithm()` is known, and fluxcd/pkg `git` v0.52.0 (`git.go`,
/// `Hash.Algorithm`) knows only a length of 40, SHA-1. A SHA-256 commit fails
/// with "failed to extract commit hash" at every dispatch. The pinned source
/// takes any 40 bytes; a commit status can only land on a real commit name,
/// so the hash must also be lower-case hex, as Git prints it.
fn commit_format_error(value: &str) -> Option<RoutingFormat> {
    let hash = commit_hash(value);
    if hash.len() == 40 && hash.bytes().all(is_lower_hex) {
        return None;
    }
    if hash.len() == 64 && hash.bytes().all(is_lower_hex) {
        return Some(RoutingFormat::Sha256);
    }
    Some(RoutingFormat::NotSha1)
}

/// The hash part of a revision, as `git.ExtractHashFromRevision` after
/// `git.TransformRevision` finds it (fluxcd/pkg `git/utils.go`, v0.52.0): what
/// follows the last `:`, else what follows the last `/`, else the whole value.
fn commit_hash(value: &str) -> &str {
    match value.rfind(':').or_else(|| value.rfind('/')) {
        Some(i) => value.get(i.saturating_add(1)..).unwrap_or(""),
        None => value,
    }
}

fn is_lower_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

/// notification-controller parses `change_request` as a Go `int`.
fn is_positive_integer(value: &str) -> bool {
    !value.starts_with('0')
        && !value.is_empty()
        && value.bytes().all(|b| b.is_ascii_digit())
        && value.parse::<i64>().is_ok_and(|n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters() {
        assert_eq!(control_character("line1\nline2", false), Some('\n'));
        assert_eq!(control_character("line1\nline2", true), None);
        assert_eq!(control_character("a\tb", true), Some('\t'));
        assert_eq!(control_character("a\u{7f}", false), Some('\u{7f}'));
        assert_eq!(control_character("ünïcödé ✓", false), None);
    }

    #[test]
    fn lengths_in_characters() {
        assert_eq!(excess_length("abc", 3), None);
        assert_eq!(excess_length("abcd", 3), Some(4));
        assert_eq!(excess_length("ééé", 3), None);
        assert_eq!(excess_length(&"x".repeat(65536), 1024), Some(65536));
    }

    #[test]
    fn commit_shas() {
        let sha1 = "4f2a6c1d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49";
        for form in [
            sha1.to_string(),
            format!("sha1:{sha1}"),
            format!("main@sha1:{sha1}"),
            format!("feature/x@sha1:{sha1}"),
            format!("main/{sha1}"),
            format!("HEAD/{sha1}"),
        ] {
            assert_eq!(routing_format_error("commit", &form), None, "{form}");
        }
        let sha256 = "ab".repeat(32);
        for form in [
            sha256.clone(),
            format!("sha256:{sha256}"),
            format!("main@sha256:{sha256}"),
        ] {
            assert!(
                routing_format_error("commit", &form) == Some(RoutingFormat::Sha256),
                "{form}"
            );
        }
        for bad in [
            sha1.to_uppercase(),
            "4f2a6c1".to_string(),
            "g".repeat(40),
            "main".to_string(),
            format!("{sha1}/"),
            format!("{sha1}:"),
            String::new(),
        ] {
            assert!(
                routing_format_error("commit", &bad) == Some(RoutingFormat::NotSha1),
                "{bad}"
            );
        }
    }

    #[test]
    fn change_requests() {
        assert_eq!(routing_format_error(CHANGE_REQUEST, "42"), None);
        assert_eq!(
            routing_format_error(CHANGE_REQUEST, "9223372036854775807"),
            None
        );
        for bad in [
            "0",
            "042",
            "-1",
            "+5",
            "",
            "4.2",
            "#42",
            "9223372036854775808",
        ] {
            assert_eq!(
                routing_format_error(CHANGE_REQUEST, bad),
                Some(RoutingFormat::NotChangeRequest),
                "{bad}"
            );
        }
        assert_eq!(routing_format_error("other", "anything"), None);
        assert!(is_routing_key("commit") && !is_routing_key("commit_status"));
    }
}

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

/// The first character of a value nobody reading the notification can see
/// or trust, if any: a control character (a line feed passes only when
/// `allow_newlines` is set), a format character (Unicode category Cf: the
/// bidirectional overrides and isolates, zero-width spaces and joiners, the
/// soft hyphen, tag characters), a line or paragraph separator (Zl, Zp), or
/// any other code point Unicode says renders as nothing (Default_Ignorable_Code_Point:
/// variation selectors, the combining grapheme joiner, the Hangul fillers),
/// which can carry a hidden payload after visible text.
/// The notifiers pass values through untouched: they build their payloads
/// with Go's `encoding/json`, which escapes U+2028 and U+2029 only for the
/// receiver to decode them again (fluxcd/notification-controller
/// `internal/notifier/*.go`, commit 2e46958a), so a right-to-left override
/// reorders the rest of a chat message. Keys cannot hold any of them: an
/// annotation name part is ASCII (`check_name_part`). One rule for every
/// value: annotations, an Alert's `.spec.eventMetadata` and `.spec.summary`.
pub fn invisible_character(value: &str, allow_newlines: bool) -> Option<char> {
    value.chars().find(|&c| {
        (c.is_control() && !(allow_newlines && c == '\n'))
            || is_format(c)
            || is_separator(c)
            || is_default_ignorable(c)
    })
}

/// Unicode's Default_Ignorable_Code_Point (Unicode 15.1
/// `DerivedCoreProperties.txt`): what a renderer shows as nothing. Most are
/// format characters already; the rest are marks and letters that display
/// nothing (U+034F, U+115F, U+1160, U+17B4, U+17B5, U+180B..U+180F, U+3164,
/// U+FE00..U+FE0F, U+FFA0, U+E0100..U+E01EF) and reserved code points.
fn is_default_ignorable(c: char) -> bool {
    matches!(
        u32::from(c),
        0xAD | 0x34F
            | 0x61C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

/// Unicode's line and paragraph separators (categories Zl and Zp).
fn is_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

/// Unicode general category Cf, format characters (Unicode 15.1
/// `DerivedGeneralCategory.txt`).
fn is_format(c: char) -> bool {
    matches!(
        u32::from(c),
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    )
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
    fn invisible_characters() {
        assert_eq!(invisible_character("line1\nline2", false), Some('\n'));
        assert_eq!(invisible_character("line1\nline2", true), None);
        assert_eq!(invisible_character("a\tb", true), Some('\t'));
        assert_eq!(invisible_character("a\u{7f}", false), Some('\u{7f}'));
        assert_eq!(invisible_character("ünïcödé ✓ 日本 עברית", false), None);
        // Visible: a no-break space, a combining accent, an emoji without selector.
        assert_eq!(
            invisible_character("a\u{A0}b e\u{301} \u{2764}", false),
            None
        );
        for c in [
            '\u{202E}',
            '\u{2066}',
            '\u{200B}',
            '\u{200D}',
            '\u{FEFF}',
            '\u{AD}',
            '\u{2028}',
            '\u{2029}',
            '\u{E0041}',
            '\u{61C}',
            '\u{34F}',
            '\u{115F}',
            '\u{17B4}',
            '\u{180B}',
            '\u{3164}',
            '\u{FE0F}',
            '\u{FFA0}',
            '\u{E0100}',
            '\u{E01EF}',
        ] {
            let value = format!("ok{c}ok");
            assert_eq!(invisible_character(&value, true), Some(c), "{c:?}");
        }
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

//! Kubernetes name rules (apimachinery `validation`), so policies refuse what
//! the API server would, with a message that says which rule.
//!
//! Lengths are in bytes, as Kubernetes counts them: k8s.io/apimachinery
//! `pkg/api/validate/content` `IsLabelKey`, `IsLabelValue`, `IsDNS1123Subdomain`
//! compare Go's `len(value)` and say "must be no more than N bytes" (`MaxLenError`,
//! commit 52d6a1804554ed8f4c716d3ff0cb69923ea29937). Only ASCII passes the
//! character rules, so bytes and characters differ only for a name refused anyway.

/// Why a name breaks a Kubernetes name rule; its words are in `Display`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameError {
    Empty,
    /// Longer than `max` bytes: it has `len`.
    TooLong {
        max: usize,
        len: usize,
    },
    /// Not alphanumeric at both ends (`lower`: lower-case alphanumeric).
    Ends {
        lower: bool,
    },
    /// A name part holds `found`, which it may not.
    NamePartCharacter {
        found: char,
    },
    /// A DNS-1123 name holds a character other than lower-case alphanumerics, `-`, `.`.
    Dns1123Character,
    /// A DNS-1123 label holds a dot.
    Dot,
}

/// Which part of a qualified name breaks a rule, and why; its words are in
/// `Display`. Apart from [`NameError`] so that a module checking only name
/// parts carries none of its code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QualifiedNameError {
    /// The prefix (before the `/`) rather than the name part.
    pub in_prefix: bool,
    /// The part as it was given.
    pub part: String,
    pub why: NameError,
}

impl std::fmt::Display for QualifiedNameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let part = if self.in_prefix { "prefix" } else { "name" };
        write!(f, "{part} {} {}", quote(&self.part), self.why)
    }
}

impl std::fmt::Display for NameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => f.write_str("must not be empty"),
            Self::TooLong { max, len } => write!(f, "must be at most {max} bytes (it has {len})"),
            Self::Ends { lower: false } => f.write_str("must begin and end with a letter or digit"),
            Self::Ends { lower: true } => {
                f.write_str("must begin and end with a lower-case letter or digit")
            }
            Self::NamePartCharacter { found } => write!(
                f,
                "may contain only letters, digits, '-', '_' and '.' (found {found:?})"
            ),
            Self::Dns1123Character => {
                f.write_str("may contain only lower-case letters, digits, '-' and '.'")
            }
            Self::Dot => f.write_str("may not contain '.'"),
        }
    }
}

/// A qualified name's name part: at most 63 bytes, alphanumeric at both
/// ends, `-`, `_` and `.` inside (`[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`).
pub fn check_name_part(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    too_long(name, 63)?;
    let bytes = name.as_bytes();
    let alnum = |b: &u8| b.is_ascii_alphanumeric();
    if !bytes.first().is_some_and(alnum) || !bytes.last().is_some_and(alnum) {
        return Err(NameError::Ends { lower: false });
    }
    if let Some(found) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(NameError::NamePartCharacter { found });
    }
    Ok(())
}

/// A DNS-1123 subdomain: at most 253 bytes of lower-case alphanumerics,
/// `-` and `.`, alphanumeric at both ends (namespaced object names, key prefixes).
pub fn check_dns1123_subdomain(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    too_long(name, 253)?;
    let lower_alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = name.as_bytes();
    if !bytes.first().is_some_and(lower_alnum) || !bytes.last().is_some_and(lower_alnum) {
        return Err(NameError::Ends { lower: true });
    }
    if name
        .bytes()
        .any(|b| !(lower_alnum(&b) || b == b'-' || b == b'.'))
    {
        return Err(NameError::Dns1123Character);
    }
    Ok(())
}

/// A DNS-1123 label: a subdomain of at most 63 bytes without dots
/// (namespace names).
pub fn check_dns1123_label(name: &str) -> Result<(), NameError> {
    check_dns1123_subdomain(name)?;
    too_long(name, 63)?;
    if name.contains('.') {
        return Err(NameError::Dot);
    }
    Ok(())
}

/// The length rule, in the unit Kubernetes counts: bytes.
fn too_long(name: &str, max: usize) -> Result<(), NameError> {
    if name.len() > max {
        return Err(NameError::TooLong {
            max,
            len: name.len(),
        });
    }
    Ok(())
}

/// A qualified name as annotation and label keys use it: `[prefix/]name`.
pub fn check_qualified_name(key: &str) -> Result<(), QualifiedNameError> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    let error = |in_prefix: bool, part: &str, why: NameError| QualifiedNameError {
        in_prefix,
        part: part.to_string(),
        why,
    };
    if let Some(prefix) = prefix {
        check_dns1123_subdomain(prefix).map_err(|why| error(true, prefix, why))?;
    }
    check_name_part(name).map_err(|why| error(false, name, why))
}

/// `text` as one POSIX shell word, inside single quotes (each `'` written
/// `'\''`), for the commands messages suggest; with a control character,
/// inside `$'…'` with escapes, so the word stays on one line.
pub fn shell_quoted(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return format!("'{}'", text.replace('\'', r"'\''"));
    }
    // A control character inside single quotes would reach the message as
    // it is, and kube-apiserver drops a warning holding one: write the
    // word in POSIX.1-2024's dollar-single-quotes, escaped.
    let mut word = String::from("$'");
    for c in text.chars() {
        match c {
            '\\' => word.push_str(r"\\"),
            '\'' => word.push_str(r"\'"),
            '\n' => word.push_str(r"\n"),
            '\t' => word.push_str(r"\t"),
            '\r' => word.push_str(r"\r"),
            c if c.is_control() => {
                let mut bytes = [0; 4];
                for b in c.encode_utf8(&mut bytes).bytes() {
                    word.push_str(&format!("\\x{b:02X}"));
                }
            }
            c => word.push(c),
        }
    }
    word.push('\'');
    word
}

/// `text` as one POSIX shell word, quoted only when it must be: bare when
/// every character is in POSIX's portable set that no shell treats specially
/// (letters, digits and `@%+=:,./_-`), else [`shell_quoted`]. An empty text
/// is `''`, a word the shell keeps.
pub fn shell_word(text: &str) -> std::borrow::Cow<'_, str> {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        text.into()
    } else {
        shell_quoted(text).into()
    }
}

/// Quotes a value for messages, shortened so a 64 KiB value cannot flood a
/// `kubectl` error; control characters are escaped.
pub fn quote(value: &str) -> String {
    const MAX: usize = 80;
    let mut shown: String = value.chars().take(MAX).collect();
    if shown.len() < value.len() {
        shown.push('…');
    }
    format!("{shown:?}")
}

/// The longest message or warning a reply carries, in bytes: half of what a
/// Kubernetes condition message may hold (k8s.io/apimachinery
/// `pkg/apis/meta/v1/types.go`, `Condition.Message`, MaxLength 32768), where
/// Flux shows a refusal. A policy's own sentences stay below it (flux-gate's
/// refusal naming every gate its settings allow is about 9 KB); an echo of
/// the input, such as a serde error quoting a 1 MiB string, does not.
pub const MAX_MESSAGE: usize = 16 * 1024;

/// `text`, or when longer than [`MAX_MESSAGE`] its beginning and its end
/// (where serde puts "at line 1 column N") around a note of what was left out.
pub fn bounded(text: &str) -> std::borrow::Cow<'_, str> {
    const HEAD: usize = 12 * 1024;
    const TAIL: usize = 2 * 1024;
    if text.len() <= MAX_MESSAGE {
        return text.into();
    }
    let head = text
        .get(..text.floor_char_boundary(HEAD))
        .unwrap_or_default();
    let tail_start = text.ceil_char_boundary(text.len().saturating_sub(TAIL));
    let tail = text.get(tail_start..).unwrap_or_default();
    let omitted = text
        .len()
        .saturating_sub(head.len())
        .saturating_sub(tail.len());
    format!("{head} … [{omitted} bytes not shown] … {tail}").into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_word_survives_single_quotes() {
        assert_eq!(shell_quoted("it's done"), r"'it'\''s done'");
        assert_eq!(shell_quoted(""), "''");
    }

    #[test]
    fn shell_words_are_quoted_only_when_they_must_be() {
        assert_eq!(
            shell_word("flexibleservers.dbforpostgresql.azure.com"),
            "flexibleservers.dbforpostgresql.azure.com"
        );
        assert_eq!(
            shell_word("user@example.com:a+b=1,2%/_-"),
            "user@example.com:a+b=1,2%/_-"
        );
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("Team A"), "'Team A'");
        assert_eq!(shell_word("a\nb"), r"$'a\nb'");
        assert_eq!(
            shell_word("tab\there 'q' \\ \u{85}"),
            r"$'tab\there \'q\' \\ \xC2\x85'"
        );
        assert_eq!(shell_word("$(date)"), "'$(date)'");
        assert_eq!(shell_word("*"), "'*'");
        assert_eq!(shell_word("~root"), "'~root'");
        assert_eq!(shell_word("café"), "'café'");
    }

    #[test]
    fn name_parts() {
        assert!(check_name_part("deploymentID").is_ok());
        assert!(check_name_part("a.b_c-d").is_ok());
        assert!(check_name_part(&"a".repeat(63)).is_ok());
        assert!(check_name_part(&"a".repeat(64)).is_err());
        assert!(check_name_part("").is_err());
        assert!(check_name_part("-a").is_err());
        assert!(check_name_part("a_").is_err());
        assert!(check_name_part("a b").is_err());
        assert!(check_name_part("é").is_err());
    }

    #[test]
    fn lengths_are_counted_and_reported_in_bytes() {
        let e_acute = "é".repeat(32);
        assert_eq!(e_acute.chars().count(), 32);
        assert_eq!(
            check_name_part(&e_acute).unwrap_err().to_string(),
            "must be at most 63 bytes (it has 64)"
        );
        assert_eq!(
            check_name_part(&"a".repeat(64)).unwrap_err().to_string(),
            "must be at most 63 bytes (it has 64)"
        );
        assert_eq!(
            check_dns1123_subdomain(&"ü".repeat(127))
                .unwrap_err()
                .to_string(),
            "must be at most 253 bytes (it has 254)"
        );
        assert_eq!(
            check_dns1123_label(&"a".repeat(64))
                .unwrap_err()
                .to_string(),
            "must be at most 63 bytes (it has 64)"
        );
    }

    #[test]
    fn qualified_names() {
        assert!(check_qualified_name("event.toolkit.fluxcd.io/commit").is_ok());
        assert!(check_qualified_name("Event.io/x").is_err());
        assert!(check_qualified_name("a/b/c").is_err());
    }

    #[test]
    fn labels_and_subdomains() {
        assert!(check_dns1123_label("flux-system").is_ok());
        assert!(check_dns1123_label("a.b").is_err());
        assert!(check_dns1123_subdomain("a.b").is_ok());
        assert!(check_dns1123_subdomain("A").is_err());
    }

    #[test]
    fn long_messages_keep_their_beginning_and_end() {
        assert_eq!(bounded("short"), "short");
        let long = format!(
            "invalid type: string \"{}\" at line 1 column 9",
            "é".repeat(600_000)
        );
        let shown = bounded(&long);
        assert!(shown.len() <= MAX_MESSAGE + 64, "{}", shown.len());
        assert!(shown.starts_with("invalid type: string \"éé"));
        assert!(shown.ends_with("éé\" at line 1 column 9"));
        assert!(shown.contains(" bytes not shown] … "));
    }

    #[test]
    fn quoting_bounds_and_escapes() {
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
        assert_eq!(quote(&"x".repeat(100)).chars().count(), 83);
    }
}

//! The settings pattern every policy follows.
//!
//! A settings document derives `Deserialize` with
//! `#[serde(deny_unknown_fields)]` (a typo in a setting is an error at
//! policy-server boot, not a silently ignored option) and `#[serde(default)]`
//! (no configuration is a safe, useful configuration). Its fields use the
//! shared types, so that a value is parsed once and refused the same way in
//! every policy:
//!
//! - one of a few words: an enum made a setting by [`crate::one_of!`];
//! - a Go duration: [`crate::duration::GoDuration`] (or
//!   [`crate::duration::optional`] when it may be left empty);
//! - an instant: [`crate::rfc3339::Instant`];
//! - a regular expression: its source, compiled by [`crate::pattern`] in
//!   `compile`, where the bound on the text it runs over is known.
//!
//! [`parse`] prefixes every deserialization error with the path of the
//! setting at fault. [`Settings::compile`] is the one place that checks what
//! types alone cannot (its errors name the setting and the accepted values)
//! and that makes what evaluation reads (patterns, schedules), so that
//! nothing is compiled twice.

use serde::de::DeserializeOwned;

use crate::names::{quote, NameError};
use serde::Deserialize;

/// What a policy evaluates with: its settings document, checked and compiled.
pub trait Settings: Sized {
    /// The document as policy-server passes it.
    type Document: DeserializeOwned + Default;
    /// Why [`Settings::compile`] refuses a document: which setting and why,
    /// as values; its words are its `Display`.
    type Error: std::fmt::Display + std::fmt::Debug + Send + Sync + 'static;
    /// Checks the document's values that types alone cannot, naming the
    /// setting at fault, and compiles what evaluation needs.
    fn compile(document: Self::Document) -> Result<Self, Self::Error>;
}

/// Settings refused: a document that does not deserialize, or one that
/// [`Settings::compile`] refuses (`E`). Its words are in `Display`, each
/// naming the setting at fault.
#[derive(Debug)]
pub enum SettingsError<E> {
    /// serde's reading failed (`error`) inside the setting at `path`
    /// (`deletionProtection.kinds[2].group`; empty at the top level).
    Document {
        path: String,
        error: serde_json::Error,
    },
    /// The document was read, and `compile` refused it.
    Compile(E),
}

impl<E: std::fmt::Display> std::fmt::Display for SettingsError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("invalid settings: ")?;
        match self {
            Self::Document { path, error } if path.is_empty() => error.fmt(f),
            Self::Document { path, error } => write!(f, "{path}: {error}"),
            Self::Compile(e) => e.fmt(f),
        }
    }
}

impl<E: std::fmt::Display + std::fmt::Debug> std::error::Error for SettingsError<E> {}

/// Reads, checks and compiles settings from their JSON form. `null` and `{}`
/// both give the defaults. A document that does not deserialize is refused
/// with the path of the setting at fault (`deletionProtection.kinds[2].group:
/// invalid type: …`), so every type error names its setting.
pub fn parse<S: Settings>(json: &[u8]) -> Result<S, SettingsError<S::Error>> {
    let document: S::Document = if json.is_empty() || json == b"null" {
        S::Document::default()
    } else {
        serde_json::from_slice::<Option<S::Document>>(json)
            .map_err(|error| SettingsError::Document {
                path: path_at(json, error.line(), error.column()),
                error,
            })?
            .unwrap_or_default()
    };
    S::compile(document).map_err(SettingsError::Compile)
}

/// A setting refused for a reason the policies share: which setting (its
/// path, `bindings[0].match.requestedBy.users`) and why. Its words are in
/// `Display`; a policy's own refusals carry it as one of theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub setting: String,
    pub why: Why,
}

/// Why a setting is refused, in [`Invalid`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// A list holds an empty (or blank) entry.
    EmptyEntry,
    /// A service account entry that is not `namespace:name` (or the full
    /// `system:serviceaccount:namespace:name` username).
    NotAServiceAccount(String),
    /// A label selector requirement on `key` whose values do not suit its
    /// operator (`In`/`NotIn` need values, `Exists`/`DoesNotExist` take none).
    SelectorValues {
        key: String,
        operator: SelectorOperator,
    },
    /// A value that is not the Kubernetes name the setting holds.
    Name { value: String, why: NameError },
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ", self.setting)?;
        match &self.why {
            Why::EmptyEntry => f.write_str("entries must not be empty"),
            Why::NotAServiceAccount(account) => write!(
                f,
                "{account:?} is not a service account; \
                 write `namespace:name` or `system:serviceaccount:namespace:name`"
            ),
            Why::SelectorValues { key, operator } => {
                let needs = if operator.takes_values() {
                    "needs values"
                } else {
                    "takes no values"
                };
                write!(f, "key {key:?} with operator {operator:?} {needs}")
            }
            Why::Name { value, why } => write!(f, "{} {why}", quote(value)),
        }
    }
}

impl std::error::Error for Invalid {}

/// The setting a serde_json error at `line` and `column` (1-based, in bytes,
/// where serde_json stopped reading) is inside: `a.b[2].c`, or empty at the
/// top level. A scan of the text rather than a path-tracking deserializer
/// (such as serde_path_to_error), which would wrap every settings type and
/// add 16 to 36 KB to each module (docs/decisions/0005).
fn path_at(json: &[u8], line: usize, column: usize) -> String {
    enum Frame {
        Object(Option<String>),
        Array(usize),
    }
    let line_start = json
        .split_inclusive(|b| *b == b'\n')
        .take(line.saturating_sub(1))
        .map(<[u8]>::len)
        .sum::<usize>();
    let end = line_start.saturating_add(column).min(json.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        match json.get(i) {
            Some(b'{') => stack.push(Frame::Object(None)),
            Some(b'[') => stack.push(Frame::Array(0)),
            Some(b'}' | b']') => {
                stack.pop();
            }
            Some(b',') => match stack.last_mut() {
                Some(Frame::Array(index)) => *index = index.saturating_add(1),
                Some(Frame::Object(key)) => *key = None,
                None => {}
            },
            Some(b'"') => {
                let close = string_end(json, i);
                if let Some(Frame::Object(key @ None)) = stack.last_mut() {
                    let text = json.get(i..close).unwrap_or_default();
                    *key = Some(serde_json::from_slice(text).unwrap_or_else(|_| {
                        String::from_utf8_lossy(text).trim_matches('"').to_string()
                    }));
                }
                i = close.saturating_sub(1);
            }
            _ => {}
        }
        i = i.saturating_add(1);
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object(Some(key)) if path.is_empty() => path.push_str(key),
            Frame::Object(Some(key)) => {
                path.push('.');
                path.push_str(key);
            }
            Frame::Object(None) => {}
            Frame::Array(index) => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

/// A setting that takes one of a few words. Implement it with [`crate::one_of!`],
/// which also implements `Deserialize`.
pub trait OneOf: Copy + 'static {
    const WORDS: &'static [(&'static str, Self)];
}

/// Deserializes a [`OneOf`]; an unknown word is refused with the accepted ones.
pub fn one_of<'de, D: serde::Deserializer<'de>, T: OneOf>(deserializer: D) -> Result<T, D::Error> {
    crate::text_setting::from_text(deserializer, "one of the accepted words", |text| {
        T::WORDS
            .iter()
            .find(|(word, _)| *word == text)
            .map(|(_, value)| *value)
            .ok_or_else(|| {
                let words: Vec<&str> = T::WORDS.iter().map(|(word, _)| *word).collect();
                format!(
                    "{} is not accepted; use one of: {}",
                    crate::names::quote(text),
                    words.join(", ")
                )
            })
    })
}

/// Makes an enum a setting of one of a few words: `one_of!(Mode { "mirror" =>
/// Mode::Mirror, … })` implements [`OneOf`] and `Deserialize` (smaller in a
/// module than serde's derive, and refusing with the accepted words).
#[macro_export]
macro_rules! one_of {
    ($type:ty { $($word:literal => $value:expr),+ $(,)? }) => {
        impl $crate::settings::OneOf for $type {
            const WORDS: &'static [(&'static str, Self)] = &[$(($word, $value)),+];
        }
        impl<'de> ::serde::Deserialize<'de> for $type {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::settings::one_of(d)
            }
        }
    };
}

/// What a request meets when a cluster lookup it needs fails: `deny`
/// refuses it naming the error; `allow` judges it without the answer, as
/// each policy's setting documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupFailure {
    Deny,
    Allow,
}

one_of!(LookupFailure { "deny" => LookupFailure::Deny, "allow" => LookupFailure::Allow });

/// The index just after the string that opens at `start` (or the end).
fn string_end(json: &[u8], start: usize) -> usize {
    let mut i = start.saturating_add(1);
    while let Some(b) = json.get(i) {
        match b {
            b'\\' => i = i.saturating_add(2),
            b'"' => return i.saturating_add(1),
            _ => i = i.saturating_add(1),
        }
    }
    json.len()
}

/// A label selector requirement's operator (`LabelSelector`, in `selector`).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub enum SelectorOperator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl SelectorOperator {
    /// `In` and `NotIn` compare with values; `Exists` and `DoesNotExist` take none.
    pub fn takes_values(self) -> bool {
        matches!(self, SelectorOperator::In | SelectorOperator::NotIn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::duration::GoDuration;
    use serde::Deserialize;

    #[derive(Debug, Default, Deserialize)]
    #[serde(deny_unknown_fields, default, rename_all = "camelCase")]
    struct Document {
        windows: Vec<Window>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Window {
        length: GoDuration,
        mode: Mode,
    }

    #[derive(Debug, Clone, Copy)]
    enum Mode {
        Open,
        Close,
    }

    crate::one_of!(Mode { "open" => Mode::Open, "close" => Mode::Close });

    /// An open window of no length, at `windows[i]`.
    #[derive(Debug)]
    struct EmptyWindow(usize);

    impl std::fmt::Display for EmptyWindow {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(
                f,
                "windows[{}].length: an open window must not be 0",
                self.0
            )
        }
    }

    impl Settings for Document {
        type Document = Self;
        type Error = EmptyWindow;
        fn compile(document: Self) -> Result<Self, EmptyWindow> {
            let empty = |w: &Window| w.length.nanos == 0 && matches!(w.mode, Mode::Open);
            match document.windows.iter().position(empty) {
                Some(i) => Err(EmptyWindow(i)),
                None => Ok(document),
            }
        }
    }

    fn err(json: &str) -> String {
        parse::<Document>(json.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn every_refusal_names_the_setting_at_fault() {
        assert_eq!(
            err(r#"{"windows":[{"length":"1h","mode":"open"},{"length":"1d","mode":"open"}]}"#),
            "invalid settings: windows[1].length: invalid duration \"1d\": unknown unit \"d\" \
             (use ns, us, ms, s, m or h) at line 1 column 56"
        );
        assert_eq!(
            err(r#"{"windows":[{"length":"1h","mode":"shut"}]}"#),
            "invalid settings: windows[0].mode: \"shut\" is not accepted; use one of: open, \
             close at line 1 column 40"
        );
        assert_eq!(
            err(r#"{"window":[]}"#),
            "invalid settings: window: unknown field `window`, expected `windows` at line 1 \
             column 9"
        );
        assert_eq!(
            err(r#"{"windows":[{"length":"0s","mode":"open"}]}"#),
            "invalid settings: windows[0].length: an open window must not be 0"
        );
        assert_eq!(
            err("{} {}"),
            "invalid settings: trailing characters at line 1 column 4"
        );
    }

    #[test]
    fn the_path_survives_lines_escapes_and_brackets_in_strings() {
        let json = "{\n  \"windows\": [\n    {\"length\": \"1h\", \"mode\": \"open\"},\n    \
                    {\"mode\": \"close\", \"length\": 5}\n  ]\n}";
        assert_eq!(
            err(json),
            "invalid settings: windows[1].length: invalid type: integer `5`, expected a Go \
             duration such as 90s, 1h30m or 1.5h at line 4 column 33"
        );
        assert_eq!(
            err(r#"{"windows":[{"length":"1h","mode":"open"},{"mode":"open"}]}"#),
            "invalid settings: windows[1]: missing field `length` at line 1 column 57"
        );
        assert_eq!(
            path_at(br#"{"a\"[{":{"b]":[1,{"c,":"x"#, 1, 26),
            "a\"[{.b][1].c,"
        );
    }

    #[test]
    fn a_refusal_says_what_where_and_why() {
        let e = parse::<Document>(br#"{"windows":[{"length":"0s","mode":"open"}]}"#).unwrap_err();
        assert!(matches!(e, SettingsError::Compile(EmptyWindow(0))), "{e:?}");
        let e = parse::<Document>(br#"{"windows":[{"length":5,"mode":"open"}]}"#).unwrap_err();
        assert!(
            matches!(&e, SettingsError::Document { path, .. } if path == "windows[0].length"),
            "{e:?}"
        );
        let invalid = |why| {
            Invalid {
                setting: "a.b[1]".into(),
                why,
            }
            .to_string()
        };
        assert_eq!(
            invalid(Why::EmptyEntry),
            "a.b[1]: entries must not be empty"
        );
        assert_eq!(
            invalid(Why::Name {
                value: "A".into(),
                why: NameError::Dot
            }),
            "a.b[1]: \"A\" may not contain '.'"
        );
    }

    #[test]
    fn null_and_nothing_are_the_defaults() {
        for json in ["", "null", "{}"] {
            assert!(parse::<Document>(json.as_bytes())
                .unwrap()
                .windows
                .is_empty());
        }
    }
}

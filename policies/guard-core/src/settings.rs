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

/// What a policy evaluates with: its settings document, checked and compiled.
pub trait Settings: Sized {
    /// The document as policy-server passes it.
    type Document: DeserializeOwned + Default;
    /// Checks the document's values that types alone cannot, naming the
    /// setting at fault, and compiles what evaluation needs.
    fn compile(document: Self::Document) -> Result<Self, String>;
}

/// Reads, checks and compiles settings from their JSON form. `null` and `{}`
/// both give the defaults. A document that does not deserialize is refused
/// with the path of the setting at fault (`deletionProtection.kinds[2].group:
/// invalid type: …`), so every type error names its setting.
pub fn parse<S: Settings>(json: &[u8]) -> Result<S, String> {
    let document: S::Document = if json.is_empty() || json == b"null" {
        S::Document::default()
    } else {
        serde_json::from_slice::<Option<S::Document>>(json)
            .map_err(|e| match path_at(json, e.line(), e.column()) {
                path if path.is_empty() => format!("invalid settings: {e}"),
                path => format!("invalid settings: {path}: {e}"),
            })?
            .unwrap_or_default()
    };
    S::compile(document).map_err(|e| format!("invalid settings: {e}"))
}

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

    impl Settings for Document {
        type Document = Self;
        fn compile(document: Self) -> Result<Self, String> {
            let empty = |w: &Window| w.length.nanos == 0 && matches!(w.mode, Mode::Open);
            match document.windows.iter().position(empty) {
                Some(i) => Err(format!("windows[{i}].length: an open window must not be 0")),
                None => Ok(document),
            }
        }
    }

    fn err(json: &str) -> String {
        parse::<Document>(json.as_bytes()).unwrap_err()
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
    fn null_and_nothing_are_the_defaults() {
        for json in ["", "null", "{}"] {
            assert!(parse::<Document>(json.as_bytes())
                .unwrap()
                .windows
                .is_empty());
        }
    }
}

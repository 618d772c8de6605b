//! The members of an object's text found by its structure alone.
//!
//! The text is known to be JSON (checked strictly, or a part of text that
//! was), so finding where a member's value ends needs no parsing: strings
//! are skipped to their closing quote, containers to their closing bracket.
//! That reads a map of 100,000 annotations several times faster than a
//! parser does, which matters where an edit must find one key in it.

use std::borrow::Cow;
use std::ops::Range;

/// One member of an object's text, by byte offsets into it.
pub(super) struct Member<'t> {
    /// The name, decoded when it holds escapes.
    pub(super) key: Cow<'t, str>,
    /// From the end of the previous member's value (or the `{`) to this
    /// member's value: its separator, name and colon.
    pub(super) region: Range<usize>,
    pub(super) value: Range<usize>,
}

/// Where the members of an object's text lie: after `{`, before `}`.
pub(super) fn body(text: &str) -> Range<usize> {
    let bytes = text.as_bytes();
    let start = bytes
        .iter()
        .position(|&b| b == b'{')
        .map_or(0, |i| i.saturating_add(1));
    let end = bytes
        .iter()
        .rposition(|&b| b == b'}')
        .unwrap_or(text.len())
        .max(start);
    start..end
}

/// Calls `f` with each member of `text`, an object's checked JSON text, in
/// order. `Err` when the text is not an object after all (never expected:
/// callers hand checked text).
pub(super) fn each_member<'t>(text: &'t str, mut f: impl FnMut(Member<'t>)) -> Result<(), String> {
    let bytes = text.as_bytes();
    let broken = |at: usize| format!("unexpected JSON text at byte {at}");
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return Err(broken(at));
    }
    let mut region_start = at.saturating_add(1);
    at = skip_space(bytes, region_start);
    if bytes.get(at) == Some(&b'}') {
        return Ok(());
    }
    loop {
        if bytes.get(at) != Some(&b'"') {
            return Err(broken(at));
        }
        let name_end = skip_string(bytes, at).ok_or_else(|| broken(at))?;
        let name = text.get(at..name_end).ok_or_else(|| broken(at))?;
        let colon = skip_space(bytes, name_end);
        if bytes.get(colon) != Some(&b':') {
            return Err(broken(colon));
        }
        let value_start = skip_space(bytes, colon.saturating_add(1));
        let value_end = skip_value(bytes, value_start).ok_or_else(|| broken(value_start))?;
        f(Member {
            key: decode_name(name).ok_or_else(|| broken(at))?,
            region: region_start..value_start,
            value: value_start..value_end,
        });
        region_start = value_end;
        at = skip_space(bytes, value_end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at.saturating_add(1)),
            Some(b'}') => return Ok(()),
            _ => return Err(broken(at)),
        }
    }
}

/// A member name as its quoted text has it: borrowed unless it holds an
/// escape, which serde_json decodes.
fn decode_name(quoted: &str) -> Option<Cow<'_, str>> {
    let inner = quoted.get(1..quoted.len().saturating_sub(1))?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(quoted).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at = at.saturating_add(1);
    }
    at
}

/// Past the string whose opening quote is at `at`.
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    let mut rest = bytes.get(at.saturating_add(1)..)?.iter().enumerate();
    past_string(&mut rest).map(|end| end.saturating_add(at).saturating_add(2))
}

/// Consumes a string's bytes after its opening quote; the index (in the
/// iterator's slice) of its closing quote. One byte at a time through a
/// slice iterator: no bounds checks, and strings of annotations are short.
fn past_string(rest: &mut std::iter::Enumerate<std::slice::Iter<'_, u8>>) -> Option<usize> {
    loop {
        match rest.next()? {
            (end, b'"') => return Some(end),
            (_, b'\\') => {
                rest.next()?;
            }
            _ => {}
        }
    }
}

/// Past the value that starts at `at`.
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => skip_string(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut rest = bytes.get(at..)?.iter().enumerate();
            loop {
                match rest.next()? {
                    (_, b'"') => {
                        past_string(&mut rest)?;
                    }
                    (_, b'{' | b'[') => depth = depth.saturating_add(1),
                    (i, b'}' | b']') => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(at.saturating_add(i).saturating_add(1));
                        }
                    }
                    _ => {}
                }
            }
        }
        // A number, `true`, `false` or `null`: up to what ends it.
        _ => {
            let rest = bytes.get(at..)?;
            let length = rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(rest.len());
            Some(at.saturating_add(length))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::{Deserializer, MapAccess, Visitor};
    use serde_json::value::RawValue;

    /// serde_json's reading of the same members: names, and where each
    /// value lies (the raw text it hands out points into `text`).
    fn by_serde(text: &str) -> Vec<(String, Range<usize>)> {
        struct Visit(usize);
        impl<'de> Visitor<'de> for Visit {
            type Value = Vec<(String, Range<usize>)>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = access.next_key::<String>()? {
                    let raw: &'de RawValue = access.next_value()?;
                    let start = raw.get().as_ptr() as usize - self.0;
                    members.push((key, start..start + raw.get().len()));
                }
                Ok(members)
            }
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        deserializer
            .deserialize_map(Visit(text.as_ptr() as usize))
            .unwrap()
    }

    fn by_scan(text: &str) -> Vec<(String, Range<usize>)> {
        let mut members = Vec::new();
        each_member(text, |m| members.push((m.key.into_owned(), m.value))).unwrap();
        members
    }

    #[test]
    fn finds_what_serde_json_finds() {
        let texts = super::super::samples::TEXTS
            .iter()
            .copied()
            .chain([
                r#"{"a\"b":"x\\","c\\":[{"d":"]}"},"\"{"],"e":-1.5e-3,"f":true,"g":null}"#,
                " {\n\t\"a\" :\r{ \"b\" : [ ] } ,\"c\":{}\n} ",
                r#"{"k\u00e9y":"v\"al\\ue","\ud83d\ude00":"😀","":""}"#,
            ])
            // The texts callers hand: objects, checked.
            .filter(|t| t.trim_start().starts_with('{'))
            .filter(|t| super::super::check_strictly(t).is_ok());
        let mut read = 0;
        for text in texts {
            assert_eq!(by_scan(text), by_serde(text), "{text}");
            read += 1;
        }
        assert!(read > 20, "{read}");
    }

    #[test]
    fn regions_run_from_the_previous_value_to_the_next() {
        let text = r#"{ "a" : 1 , "b":[2] }"#;
        let mut regions = Vec::new();
        each_member(text, |m| {
            regions.push((
                text[m.region.clone()].to_string(),
                text[m.value.clone()].to_string(),
            ))
        })
        .unwrap();
        assert_eq!(
            regions,
            [
                (r#" "a" : "#.to_string(), "1".to_string()),
                (r#" , "b":"#.to_string(), "[2]".to_string())
            ]
        );
    }

    #[test]
    fn text_that_is_no_object_is_an_error_not_a_trap() {
        for text in [
            "",
            "[1]",
            "{",
            r#"{"a""#,
            r#"{"a":"#,
            r#"{"a":"x"#,
            r#"{"a":1,"#,
            "{1:2}",
            r#"{"a":1 "b":2}"#,
        ] {
            assert!(each_member(text, |_| {}).is_err(), "{text}");
        }
    }
}

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
///
/// `outline`, when the text lies at `.1` in a text it outlines, gives the
/// end of each large value without reading it.
pub(super) fn each_member<'t>(
    text: &'t str,
    outline: Option<(&Outline, usize)>,
    mut f: impl FnMut(Member<'t>),
) -> Result<(), BrokenText> {
    let bytes = text.as_bytes();
    let start = skip_space(bytes, 0);
    walk(text, start, |key, region_start, value_start| {
        let container = matches!(bytes.get(value_start), Some(b'{' | b'['));
        let known = outline.filter(|_| container).and_then(|(outline, base)| {
            let end = outline.end_of(base.checked_add(value_start)?)?;
            end.checked_sub(base)
        });
        let value_end = match known {
            Some(end) => end,
            None => skip_value(bytes, value_start)?,
        };
        f(Member {
            key,
            region: region_start..value_start,
            value: value_start..value_end,
        });
        Some(value_end)
    })
    .map(drop)
}

/// Where the containers of a text's first levels start and end, noted by
/// the walk that checks the text ([`super::strict::plainly_readable`]), so
/// that reading an object's members passes over a large value (a map of
/// 100,000 annotations inside `metadata`) without reading it again.
#[derive(Debug, Default)]
pub struct Outline {
    /// `(start, end)` of each container nested at most [`Outline::LEVELS`]
    /// deep, in order of start; `end` is past its closing bracket.
    spans: Vec<(usize, usize)>,
    /// Indices into `spans` of the containers still open.
    open: Vec<usize>,
}

impl Outline {
    /// The object, its members' values and theirs: `metadata.annotations`.
    const LEVELS: u8 = 3;

    /// A container opens at `at`, nested `depth` deep (the text itself is 1).
    pub(super) fn opens(&mut self, at: usize, depth: u8) {
        if depth <= Self::LEVELS {
            self.open.push(self.spans.len());
            self.spans.push((at, at));
        }
    }

    /// The container nested `depth` deep closes with the bracket at `at`.
    pub(super) fn closes(&mut self, at: usize, depth: u8) {
        if depth <= Self::LEVELS {
            if let Some(span) = self.open.pop().and_then(|i| self.spans.get_mut(i)) {
                span.1 = at.saturating_add(1);
            }
        }
    }

    /// The end of the container that starts at `start`, when outlined.
    pub(super) fn end_of(&self, start: usize) -> Option<usize> {
        let index = self.spans.binary_search_by_key(&start, |s| s.0).ok()?;
        self.spans
            .get(index)
            .map(|s| s.1)
            .filter(|end| *end > start)
    }
}

/// A text that is not an object's members where [`walk`] read it: `at` is
/// the byte it stopped at. Its words are in `Display`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BrokenText {
    pub at: usize,
}

impl std::fmt::Display for BrokenText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unexpected JSON text at byte {}", self.at)
    }
}

impl std::error::Error for BrokenText {}

/// Walks the members of the object whose `{` is at `at` in `text`: `f` gets
/// each member's name, where its region starts (see [`Member`]) and where its
/// value starts, and answers where the value ends, having read it or skipped
/// it ([`skip_value`]); `None` from `f` stops the walk with an error. One
/// walk can so descend into the members it cares about and read a large
/// object once. The answer is the index past the closing `}`.
pub(super) fn walk<'t>(
    text: &'t str,
    mut at: usize,
    mut f: impl FnMut(Cow<'t, str>, usize, usize) -> Option<usize>,
) -> Result<usize, BrokenText> {
    let bytes = text.as_bytes();
    let broken = |at: usize| BrokenText { at };
    if bytes.get(at) != Some(&b'{') {
        return Err(broken(at));
    }
    let mut region_start = at.saturating_add(1);
    at = skip_space(bytes, region_start);
    if bytes.get(at) == Some(&b'}') {
        return Ok(at.saturating_add(1));
    }
    loop {
        if bytes.get(at) != Some(&b'"') {
            return Err(broken(at));
        }
        let (key, name_end) = string_at(text, at).ok_or_else(|| broken(at))?;
        let colon = skip_space(bytes, name_end);
        if bytes.get(colon) != Some(&b':') {
            return Err(broken(colon));
        }
        let value_start = skip_space(bytes, colon.saturating_add(1));
        let value_end = f(key, region_start, value_start).ok_or_else(|| broken(value_start))?;
        region_start = value_end;
        at = skip_space(bytes, value_end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at.saturating_add(1)),
            Some(b'}') => return Ok(at.saturating_add(1)),
            _ => return Err(broken(at)),
        }
    }
}

/// The string whose opening quote is at `at`, as its text has it
/// (borrowed unless it holds an escape, which serde_json decodes), and the
/// index past its closing quote. `None` for an escape serde_json refuses (a
/// lone surrogate).
pub(super) fn string_at(text: &str, at: usize) -> Option<(Cow<'_, str>, usize)> {
    let (close, escaped) = closing_quote(text.as_bytes(), at.saturating_add(1))?;
    let end = close.saturating_add(1);
    let value = if escaped {
        Cow::Owned(serde_json::from_str::<String>(text.get(at..end)?).ok()?)
    } else {
        Cow::Borrowed(text.get(at.saturating_add(1)..close)?)
    };
    Some((value, end))
}

pub(super) fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at = at.saturating_add(1);
    }
    at
}

/// Past the string whose opening quote is at `at`.
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    closing_quote(bytes, at.saturating_add(1)).map(|(end, _)| end.saturating_add(1))
}

/// The index of the quote that closes the string whose bytes start at
/// `from` (just after its opening quote), and whether the string holds an
/// escape.
pub(super) fn closing_quote(bytes: &[u8], mut from: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        let hit = string_stop(bytes, from)?;
        match bytes.get(hit)? {
            b'"' => return Some((hit, escaped)),
            // An escape: the byte after the backslash is never the end.
            b'\\' => {
                escaped = true;
                from = hit.saturating_add(2);
            }
            // A control character, which a checked text's strings do not
            // hold: passed as any other byte.
            _ => from = hit.saturating_add(1),
        }
    }
}

/// The index of the first `"`, `\` or control character (below a space)
/// from `at`, where a string's reading stops. Eight bytes at a time: the
/// inside of strings is most of a large text (a List of thousands of
/// objects, a `last-applied-configuration`, a certificate).
#[inline(always)]
pub(super) fn string_stop(bytes: &[u8], mut at: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // High bit set in each byte below `limit` (at most 0x80), exact in the
    // lowest such byte (a borrow may mark bytes above it).
    let below = |word: u64, limit: u8| {
        word.wrapping_sub(ONES.wrapping_mul(u64::from(limit))) & !word & HIGHS
    };
    let equal = |word: u64, byte: u8| below(word ^ ONES.wrapping_mul(u64::from(byte)), 1);
    while let Some(word) = bytes
        .get(at..at.saturating_add(8))
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
    {
        let word = u64::from_le_bytes(word);
        let hits = equal(word, b'"') | equal(word, b'\\') | below(word, b' ');
        if hits != 0 {
            return Some(at.saturating_add(hits.trailing_zeros() as usize / 8));
        }
        at = at.saturating_add(8);
    }
    let tail = bytes.get(at..)?;
    let found = tail
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < b' ')?;
    Some(at.saturating_add(found))
}

/// Past the value that starts at `at`.
pub(super) fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => skip_string(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut at = at;
            loop {
                match bytes.get(at)? {
                    b'"' => at = closing_quote(bytes, at.saturating_add(1))?.0,
                    b'{' | b'[' => depth = depth.saturating_add(1),
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(at.saturating_add(1));
                        }
                    }
                    _ => {}
                }
                at = at.saturating_add(1);
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
        each_member(text, None, |m| members.push((m.key.into_owned(), m.value))).unwrap();
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

    /// Where [`string_stop`] must stop, found one byte at a time.
    fn stop_byte_at_a_time(bytes: &[u8], from: usize) -> Option<usize> {
        bytes
            .iter()
            .skip(from)
            .position(|&b| b == b'"' || b == b'\\' || b < b' ')
            .map(|i| i + from)
    }

    #[test]
    fn finds_the_first_quote_backslash_or_control_at_every_place() {
        // Every length around the eight-byte step, each special byte at
        // every place, with bytes on either side that look alike in part
        // (0xa2 and 0xdc share the low bits of `"` and `\\`).
        for length in 0..40 {
            for place in 0..=length {
                for special in [b'"', b'\\', 0x00, 0x1f] {
                    for filler in [b'a', 0xa2, 0xdc, b'#', 0x21] {
                        let mut bytes = vec![filler; length];
                        if let Some(b) = bytes.get_mut(place) {
                            *b = special;
                        }
                        for from in 0..=length {
                            let naive = stop_byte_at_a_time(&bytes, from);
                            assert_eq!(string_stop(&bytes, from), naive, "{bytes:?}");
                        }
                    }
                }
            }
        }
    }

    /// Where a string stops, on random bytes: the specials among look-alikes
    /// (0xa2 and 0xdc share the low bits of `"` and `\\`, 0x9f and 0xff
    /// those of control characters), at every length around the eight-byte
    /// step and from every place.
    #[test]
    fn a_string_stops_where_a_byte_at_a_time_stops() {
        let alphabet = [
            b'"', b'\\', 0x00, 0x1f, b'\n', b'a', 0xa2, 0xdc, b' ', 0x21, 0x9f, 0xff,
        ];
        let mut rng = crate::testing::Rng::new(3);
        for _ in 0..3000 {
            let length = rng.below(40);
            // Mostly plain bytes, so that the stop falls anywhere.
            let bytes: Vec<u8> = (0..length)
                .map(|_| {
                    if rng.below(9) == 0 {
                        alphabet[rng.below(5)]
                    } else {
                        alphabet[5 + rng.below(7)]
                    }
                })
                .collect();
            for from in 0..=length {
                let naive = stop_byte_at_a_time(&bytes, from);
                assert_eq!(string_stop(&bytes, from), naive, "{bytes:?} {from}");
            }
        }
    }

    #[test]
    fn regions_run_from_the_previous_value_to_the_next() {
        let text = r#"{ "a" : 1 , "b":[2] }"#;
        let mut regions = Vec::new();
        each_member(text, None, |m| {
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
            assert!(each_member(text, None, |_| {}).is_err(), "{text}");
        }
    }
}

//! Reading JSON text as strictly as serde_json reads a `Value`, without
//! building one.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::scan::{closing_quote, skip_space, skip_value, string_at, Outline};

/// The most containers serde_json nests when it reads a `Value`: its
/// recursion limit of 128 counts down on entering each and fails at zero.
pub(super) const VALUE_DEPTH: u8 = 127;

/// The most containers a mutated object may nest: the reply holds it one
/// level down (`mutated_object`), and policy-server reads the reply with
/// serde_json.
pub(crate) const MUTATED_OBJECT_DEPTH: u8 = VALUE_DEPTH - 1;

/// Reads `json` as strictly as serde_json reads a `Value` (see
/// [`super::RawObject::parse`]) without building one: no allocation but for
/// strings with escapes.
pub fn check_strictly(json: &str) -> Result<(), serde_json::Error> {
    check_within(json, VALUE_DEPTH)
}

pub(super) fn check_within(json: &str, depth: u8) -> Result<(), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    Strict(depth).deserialize(&mut deserializer)?;
    deserializer.end()
}

/// Whether `json`, text whose syntax serde_json has checked (a request's
/// object, held as a raw value), plainly holds nothing [`check_within`]
/// refuses at `depth`. A raw value lets through three things a `Value`'s
/// reading refuses: an escape that decodes to no character (a lone
/// surrogate), a number no float holds, and deep nesting. So every string
/// with an escape is decoded here, and a number with an exponent or of more
/// than 300 characters (a float holds any plain number shorter), or nesting
/// within one level of `depth`, answers `None`, leaving the text to
/// [`check_within`]. One walk by the text's structure, several times faster
/// than reading it through serde; it outlines the text on the way.
pub(super) fn plainly_readable(json: &str, depth: u8) -> Option<Outline> {
    let mut outline = Outline::default();
    // The syntax was checked: only white space follows the value.
    plain_value(
        json,
        skip_space(json.as_bytes(), 0),
        depth,
        Some(&mut outline),
    )?;
    Some(outline)
}

/// Past the value at `at` in checked text, when it plainly holds nothing
/// [`check_within`] refuses at `depth` (as [`plainly_readable`]): the walk
/// that passes over a value and the one that checks it, as one.
pub(super) fn plain_value(
    json: &str,
    at: usize,
    depth: u8,
    outline: Option<&mut Outline>,
) -> Option<usize> {
    match json.as_bytes().get(at)? {
        b'{' | b'[' => plain_walk(json, at, depth, outline),
        // A lone string, number or word: the walk checks it to its end.
        _ => plain_walk(
            json.get(..skip_value(json.as_bytes(), at)?)?,
            at,
            depth,
            outline,
        ),
    }
}

/// [`plain_value`]'s walk, from `at` to the bracket that closes the
/// container opened there, or to the end of `json`.
fn plain_walk(
    json: &str,
    mut at: usize,
    depth: u8,
    mut outline: Option<&mut Outline>,
) -> Option<usize> {
    let bytes = json.as_bytes();
    let mut nesting = 0u8;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'"' => {
                let (close, escaped) = closing_quote(bytes, at.saturating_add(1))?;
                if escaped {
                    string_at(json, at)?;
                }
                at = close.saturating_add(1);
                continue;
            }
            b'{' | b'[' => {
                nesting = nesting.saturating_add(1);
                if nesting >= depth {
                    return None;
                }
                if let Some(outline) = outline.as_deref_mut() {
                    outline.opens(at, nesting);
                }
            }
            b'}' | b']' => {
                if let Some(outline) = outline.as_deref_mut() {
                    outline.closes(at, nesting);
                }
                nesting = nesting.checked_sub(1)?;
                if nesting == 0 {
                    return Some(at.saturating_add(1));
                }
            }
            b'-' | b'0'..=b'9' => {
                let rest = bytes.get(at..).unwrap_or_default();
                let length = rest
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .unwrap_or(rest.len());
                let number = rest.get(..length).unwrap_or_default();
                if length > 300 || number.iter().any(|b| matches!(b, b'e' | b'E')) {
                    return None;
                }
                at = at.saturating_add(length);
                continue;
            }
            _ => {}
        }
        at = at.saturating_add(1);
    }
    Some(at)
}

/// Reads any JSON value as serde_json reads into a `Value`, keeping nothing:
/// strings are decoded, numbers converted, and containers nested at most
/// this many deep.
struct Strict(u8);

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Strict {
    /// The seed for what a container holds; an error past the last level.
    fn inner<E: serde::de::Error>(&self) -> Result<Strict, E> {
        self.0
            .checked_sub(1)
            .map(Strict)
            .ok_or_else(|| E::custom("nested too deep for the reply to be read"))
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.inner()?;
        while seq.next_element_seed(Strict(inner.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.inner()?;
        while map.next_key_seed(Strict(inner.0))?.is_some() {
            map.next_value_seed(Strict(inner.0))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn as_strict_as_a_value_is_read() {
        let nested = |n: usize| format!(r#"{{"a":{}1{}}}"#, "[".repeat(n), "]".repeat(n));
        assert!(check_strictly(&nested(126)).is_ok());
        assert!(serde_json::from_str::<Value>(&nested(126)).is_ok());
        assert!(check_strictly(&nested(127)).is_err());
        assert!(serde_json::from_str::<Value>(&nested(127)).is_err());
        for bad in [r#"{"a":"\ud800"}"#, r#"{"a":1e400}"#, "{", "1 2"] {
            assert!(check_strictly(bad).is_err(), "{bad}");
            assert!(serde_json::from_str::<Value>(bad).is_err(), "{bad}");
        }
        assert!(check_strictly(r#" {"a":"\ud83d\ude00","b":-0.0,"c":1e300} "#).is_ok());
    }

    /// What the one walk passes is what serde reads as a `Value`; what it
    /// leaves includes everything serde refuses.
    #[test]
    fn a_plainly_readable_text_reads_as_a_value() {
        let nested = |n: usize| format!(r#"{{"a":{}1{}}}"#, "[".repeat(n), "]".repeat(n));
        let long = format!(r#"{{"n":1{}}}"#, "0".repeat(400));
        let texts = super::super::samples::TEXTS
            .iter()
            .map(|t| t.to_string())
            .chain([nested(120), nested(126), nested(127), long])
            .chain(
                [
                    r#"{"a":"\ud800"}"#,
                    r#"{"a":"x\udc00y"}"#,
                    r#"{"\ud800":1}"#,
                    r#"{"a":"\ud83d\ude00 \" \\"}"#,
                    r#"{"a":1e400}"#,
                    r#"{"a":-1E-400,"b":[true,false,null]}"#,
                    r#"{"a":12345678901234567890123,"b":-0.5}"#,
                ]
                .map(String::from),
            );
        let mut plain = 0;
        for text in texts {
            // Only text whose syntax a raw value accepts reaches the walk.
            if serde_json::from_str::<&serde_json::value::RawValue>(&text).is_err() {
                continue;
            }
            let strict = check_within(&text, MUTATED_OBJECT_DEPTH).is_ok();
            if plainly_readable(&text, MUTATED_OBJECT_DEPTH).is_some() {
                assert!(strict, "{text}");
                plain += 1;
            }
        }
        assert!(plain > 15, "{plain}");
    }
}

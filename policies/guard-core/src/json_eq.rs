//! Equality of two JSON texts as `serde_json::Value`s are equal, without
//! building them.
//!
//! A `spec` member of an object at the size limit can hold 40,000 map
//! entries; parsing two of them into `Value`s to compare costs an allocation
//! and a tree insertion per entry. Here objects and lists are split one level
//! at a time, borrowing the text, and each member is compared as text first:
//! kube-apiserver serializes both objects of a request alike, so everything
//! an update leaves alone is equal text and is never parsed. Only scalars
//! whose text differs (`1.0` and `1.00`, `"\u0041"` and `"A"`) are parsed.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

/// `a` and `b` parse to equal `Value`s; text that does not parse as a
/// `Value` (a lone surrogate escape, `1e400`, nesting past 128) equals nothing.
pub fn equal(a: &str, b: &str) -> bool {
    a == b
        || (crate::edit::check_strictly(a).is_ok()
            && crate::edit::check_strictly(b).is_ok()
            && equal_valid(a, b))
}

/// [`equal`] for text known to parse as a `Value`.
fn equal_valid(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match (first_byte(a), first_byte(b)) {
        (Some(b'{'), Some(b'{')) => match (members(a), members(b)) {
            (Some(x), Some(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(&y)
                        .all(|((kx, vx), (ky, vy))| kx == ky && equal_valid(vx.get(), vy.get()))
            }
            _ => false,
        },
        (Some(b'['), Some(b'[')) => {
            match (
                serde_json::from_str::<Vec<&RawValue>>(a),
                serde_json::from_str::<Vec<&RawValue>>(b),
            ) {
                (Ok(x), Ok(y)) => {
                    x.len() == y.len()
                        && x.iter().zip(&y).all(|(u, v)| equal_valid(u.get(), v.get()))
                }
                _ => false,
            }
        }
        // An object or a list never equals anything else.
        (Some(b'{' | b'['), _) | (_, Some(b'{' | b'[')) => false,
        _ => matches!(
            (serde_json::from_str::<Value>(a), serde_json::from_str::<Value>(b)),
            (Ok(x), Ok(y)) if x == y
        ),
    }
}

/// The first byte of JSON text, past leading whitespace: which kind of value it is.
pub fn first_byte(text: &str) -> Option<u8> {
    text.trim_start().bytes().next()
}

/// An object's members, keys borrowed when unescaped.
pub type Members<'a> = Vec<(Cow<'a, str>, &'a RawValue)>;

/// An object's members sorted by key, the last of each duplicate kept, as a
/// `Value`'s map holds them.
pub fn members(text: &str) -> Option<Members<'_>> {
    let mut members: Members<'_> = serde_json::from_str::<Entries<'_>>(text).ok()?.0;
    members.sort_by(|(a, _), (b, _)| a.cmp(b));
    members.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1 = later.1;
        }
        same
    });
    Some(members)
}

/// An object's members in document order, keys borrowed when unescaped.
struct Entries<'a>(Members<'a>);

impl<'de> serde::Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Entries<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = access.next_key_seed(Key)? {
                    members.push((key, access.next_value::<&'de RawValue>()?));
                }
                Ok(Entries(members))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// A string (a member name), borrowed from the text unless it has escapes
/// (serde's own `Cow<str>` always copies); [`crate::edit`] reads names the
/// same way.
pub struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `equal` must agree with.
    fn by_value(a: &str, b: &str) -> bool {
        a == b
            || matches!(
                (serde_json::from_str::<Value>(a), serde_json::from_str::<Value>(b)),
                (Ok(x), Ok(y)) if x == y
            )
    }

    #[test]
    fn agrees_with_value_equality() {
        let texts = [
            r#"{}"#,
            r#"[]"#,
            r#"null"#,
            r#"{"a":1,"b":[1,2,{"c":"d"}]}"#,
            r#"{"b":[1,2,{"c":"d"}],"a":1}"#,
            r#" { "a" : 1 , "b" : [ 1 , 2 , { "c" : "\u0064" } ] } "#,
            r#"{"a":1,"b":[1,2,{"c":"e"}]}"#,
            r#"{"a":1.0,"b":[1,2,{"c":"d"}]}"#,
            r#"{"a":2,"a":1,"b":[1,2,{"c":"d"}]}"#,
            r#"{"a":1,"a":2,"b":[1,2,{"c":"d"}]}"#,
            r#"{"\u0061":1,"b":[1,2,{"c":"d"}]}"#,
            r#"{"a":1,"b":[2,1,{"c":"d"}]}"#,
            r#"{"a":1,"b":[1,2,{"c":"d"},3]}"#,
            r#"{"a":1}"#,
            r#"{"a":"1"}"#,
            r#"{"a":1e0}"#,
            r#"{"a":10e-1}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"a":"\ud800","b":1}"#,
            r#"{"b":1,"a":"\ud800"}"#,
            r#"{"a":1e400}"#,
            r#"[1,2]"#,
            r#"[1, 2]"#,
            r#""x""#,
            r#""\u0078""#,
            r#"1"#,
            r#"true"#,
        ];
        for a in texts {
            for b in texts {
                assert_eq!(equal(a, b), by_value(a, b), "{a} vs {b}");
            }
        }
        let deep = |inner: &str| format!("{}{inner}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(
            equal(&deep("1"), &deep(" 1")),
            by_value(&deep("1"), &deep(" 1"))
        );
    }

    #[test]
    fn a_large_map_differing_in_its_last_entry() {
        let map = |last: &str| {
            let body: String = (0..40_000).map(|i| format!(r#""s{i:07}":"","#)).collect();
            format!(r#"{{"substitute":{{{body}"z":"{last}"}}}}"#)
        };
        assert!(!equal(&map("a"), &map("b")));
        assert!(equal(&map("a"), &map("\\u0061")));
    }
}

//! An object's members, split one level down, borrowing the text.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

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
/// (serde's own `Cow<str>` always copies); [`super::RawObject`] reads names the
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

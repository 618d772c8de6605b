//! A string map (`metadata.labels`, `metadata.annotations`) read for a few
//! keys only. A stored object may carry 200,000 labels of which a rule asks
//! two: [`Picked`] reads every entry as strictly as [`StringMap`] does (a
//! map, each value a string, later duplicates winning) but copies only the
//! entries asked for, so the rest costs the reading alone.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};

use crate::string_map::StringMap;

/// Reads a map of strings (or `null`, as empty) into a [`StringMap`] of the
/// entries whose keys are asked for; accepts and refuses what
/// `null_default` into a [`StringMap`] does, in the same words.
#[derive(Clone, Copy)]
pub struct Picked<'k> {
    keys: &'k [&'k str],
    /// Bit `n` set when a key asked for is `n` bytes long (63 for longer):
    /// most keys read are passed over on their length alone.
    lengths: u64,
}

impl<'k> Picked<'k> {
    /// Asks for `keys`.
    pub fn new(keys: &'k [&'k str]) -> Self {
        let lengths = keys.iter().fold(0, |bits, k| bits | length_bit(k));
        Self { keys, lengths }
    }

    /// Reads `json`, a whole text (a looked-up object's labels kept raw),
    /// with the errors [`crate::context::read`] gives.
    pub fn read(self, json: &str) -> Result<StringMap, String> {
        let mut deserializer = serde_json::Deserializer::from_str(json);
        self.deserialize(&mut deserializer)
            .and_then(|map| deserializer.end().map(|()| map))
            .map_err(|e| e.to_string())
    }
}

impl<'de> DeserializeSeed<'de> for Picked<'_> {
    type Value = StringMap;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<StringMap, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for Picked<'_> {
    type Value = StringMap;
    // StringMap's own words, so that errors read as they would.
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }
    fn visit_none<E>(self) -> Result<StringMap, E> {
        Ok(StringMap::new())
    }
    fn visit_unit<E>(self) -> Result<StringMap, E> {
        Ok(StringMap::new())
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<StringMap, D::Error> {
        deserializer.deserialize_map(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<StringMap, A::Error> {
        // Collected first and made a map once (later duplicates win there).
        let mut picked = Vec::new();
        while let Some(wanted) = access.next_key_seed(Key(self))? {
            let value = access.next_value_seed(Value(wanted.is_some()))?;
            if let (Some(key), Some(value)) = (wanted, value) {
                picked.push((key, value));
            }
        }
        Ok(picked.into_iter().collect())
    }
}

fn length_bit(key: &str) -> u64 {
    1 << key.len().min(63)
}

/// A string compared where it lies: `Some` when it is one of the keys asked for.
struct Key<'k>(Picked<'k>);

impl<'de, 'k> DeserializeSeed<'de> for Key<'k> {
    type Value = Option<&'k str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'k> Visitor<'_> for Key<'k> {
    type Value = Option<&'k str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        let Picked { keys, lengths } = self.0;
        if lengths & length_bit(s) == 0 {
            return Ok(None);
        }
        Ok(keys.iter().find(|k| **k == s).copied())
    }
}

/// A value, which must be a string: kept when `.0` (borrowed where the
/// text holds it unescaped), else only read.
struct Value(bool);

impl<'de> DeserializeSeed<'de> for Value {
    type Value = Option<Cow<'de, str>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Value {
    type Value = Option<Cow<'de, str>>;
    // serde's own words for a `String`.
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(self.0.then_some(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(self.0.then(|| Cow::Owned(s.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::null_default;
    use serde::Deserialize;
    use serde_json::value::RawValue;

    #[derive(Deserialize)]
    struct Whole {
        #[serde(default, deserialize_with = "null_default")]
        m: StringMap,
    }

    /// `json` as a member of a view reads it into a StringMap, and picked.
    fn in_place(
        json: &str,
        keys: &[&str],
    ) -> (Result<StringMap, String>, Result<StringMap, String>) {
        struct Outer<'k>(&'k [&'k str]);
        impl<'de> Visitor<'de> for Outer<'_> {
            type Value = StringMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<StringMap, A::Error> {
                let _: Option<String> = a.next_key()?;
                a.next_value_seed(Picked::new(self.0))
            }
        }
        let text = format!(r#"{{"m":{json}}}"#);
        let whole = serde_json::from_str::<Whole>(&text).map(|w| w.m);
        let mut d = serde_json::Deserializer::from_str(&text);
        let picked = d
            .deserialize_map(Outer(keys))
            .and_then(|m| d.end().map(|()| m));
        (
            whole.map_err(|e| e.to_string()),
            picked.map_err(|e| e.to_string()),
        )
    }

    /// Every map a StringMap reads, in place or alone, picked for each
    /// subset of its keys (and keys it lacks): the same entries, or the
    /// same error.
    #[test]
    fn reads_as_a_string_map_does_for_the_keys_asked() {
        let keys = ["a", "b", "k\u{e9}y", "z", "absent"];
        for json in [
            "{}",
            "null",
            r#"{"b":"2","a":"1","c":""}"#,
            r#"{"a":"1","b":"2","a":"3"}"#,
            r#"{"k\u00e9y":"v\"q\"","z":"\ud83d\ude00","y":"x"}"#,
            r#"{"a":1}"#,
            r#"{"c":1}"#,
            r#"{"a":null}"#,
            r#"{"c":"\ud800"}"#,
            r#"["a"]"#,
            r#""a""#,
            "1",
            r#"{"a":"1""#,
        ] {
            let raw = RawValue::from_string(json.to_string()).ok();
            for mask in 0..(1u32 << keys.len()) {
                let asked: Vec<&str> = keys
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| mask & (1 << i) != 0)
                    .map(|(_, k)| *k)
                    .collect();
                let only = |all: &StringMap| -> StringMap {
                    all.iter().filter(|(k, _)| asked.contains(k)).collect()
                };
                let mut pairs = vec![in_place(json, &asked)];
                if let Some(raw) = &raw {
                    let whole = crate::context::read::<Option<StringMap>>(raw)
                        .map(Option::unwrap_or_default);
                    pairs.push((whole, Picked::new(&asked).read(raw.get())));
                }
                for (whole, picked) in pairs {
                    match (&whole, &picked) {
                        (Ok(all), Ok(some)) => assert_eq!(some, &only(all), "{json} {asked:?}"),
                        (Err(a), Err(b)) => assert_eq!(a, b, "{json}"),
                        _ => panic!("{json} {asked:?}: {whole:?} vs {picked:?}"),
                    }
                }
            }
        }
    }
}

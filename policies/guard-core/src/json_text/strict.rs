//! Reading JSON text as strictly as serde_json reads a `Value`, without
//! building one.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};

/// The most containers serde_json nests when it reads a `Value`: its
/// recursion limit of 128 counts down on entering each and fails at zero.
const VALUE_DEPTH: u8 = 127;

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

/// [`check_strictly`] of a value that a view of a larger text kept raw,
/// read as `Strict(depth)` would read it in place.
pub fn check_nested(json: &str, depth: Strict) -> Result<(), serde_json::Error> {
    check_within(json, depth.0)
}

pub(super) fn check_within(json: &str, depth: u8) -> Result<(), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    Strict(depth).deserialize(&mut deserializer)?;
    deserializer.end()
}

/// Reads any JSON value as serde_json reads into a `Value`, keeping nothing:
/// strings are decoded, numbers converted, and containers nested at most
/// this many deep. A view that reads a few members of an object itself
/// reads the others with it, so that it refuses what [`check_strictly`]
/// refuses in the same pass.
pub struct Strict(pub u8);

impl Strict {
    /// The seed for a whole text, as [`check_strictly`] reads it.
    pub const TOP: Strict = Strict(VALUE_DEPTH);
}

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Strict {
    /// The seed for what a container holds; an error past the last level.
    pub fn inner<E: serde::de::Error>(&self) -> Result<Strict, E> {
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
}

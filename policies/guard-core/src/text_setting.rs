//! A setting written as a string and parsed into its type: a Go duration, an
//! instant, one of a few words. Shared by those types' modules and
//! [`crate::settings`], which lists them.

/// Deserializes a setting written as a string through `parse`, refusing
/// inside the visitor, where serde_json places the error at the string (an
/// error raised after deserializing a `String` would be placed after the
/// enclosing object, and [`crate::settings::parse`] would name the wrong
/// setting).
pub fn from_text<'de, D, T, E>(
    deserializer: D,
    expecting: &'static str,
    parse: fn(&str) -> Result<T, E>,
) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    E: std::fmt::Display,
{
    struct Text<T, E> {
        expecting: &'static str,
        parse: fn(&str) -> Result<T, E>,
    }
    impl<T, E: std::fmt::Display> serde::de::Visitor<'_> for Text<T, E> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_str<R: serde::de::Error>(self, text: &str) -> Result<T, R> {
            (self.parse)(text).map_err(R::custom)
        }
    }
    deserializer.deserialize_str(Text { expecting, parse })
}

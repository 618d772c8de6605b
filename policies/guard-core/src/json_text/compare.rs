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

use serde_json::value::RawValue;
use serde_json::Value;

use super::split::{first_byte, members, Members};
use super::strict::check_strictly;

/// `a` and `b` parse to equal `Value`s; text that does not parse as a
/// `Value` (a lone surrogate escape, `1e400`, nesting past 128) equals nothing.
pub fn equal(a: &str, b: &str) -> bool {
    a == b || (check_strictly(a).is_ok() && check_strictly(b).is_ok() && equal_valid(a, b))
}

/// Two objects' members (sorted, text known to parse) are equal.
fn same_members(x: &Members<'_>, y: &Members<'_>) -> bool {
    x.len() == y.len()
        && x.iter()
            .zip(y)
            .all(|((kx, vx), (ky, vy))| kx == ky && equal_valid(vx.get(), vy.get()))
}

/// [`equal`] for text known to parse as a `Value`.
fn equal_valid(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match (first_byte(a), first_byte(b)) {
        (Some(b'{'), Some(b'{')) => match (members(a), members(b)) {
            (Some(x), Some(y)) => same_members(&x, &y),
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

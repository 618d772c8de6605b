//! Equality of two JSON texts as `serde_json::Value`s are equal, without
//! building them, and whether an object changed besides some of its members.
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

/// Did an object's `spec` change, other than in `ignored` top-level members?
///
/// Compared as `Value` maps are, without building them: member order and
/// spacing do not count, a later duplicate name is the one kept, names are
/// compared decoded (`"\u0061"` is `a`). No spec (`None`) and `null` read
/// as `{}`. A spec that is not an object, or does not parse as a `Value`,
/// is unreadable: an unreadable spec differs from a readable one, and two
/// unreadable ones are not told apart (nothing can be said of them).
pub fn spec_changed_besides(old: Option<&str>, new: Option<&str>, ignored: &[&str]) -> bool {
    let (old, new) = (old.unwrap_or("{}"), new.unwrap_or("{}"));
    if old == new {
        return false;
    }
    match (kept_members(old, ignored), kept_members(new, ignored)) {
        (Some(x), Some(y)) => !same_members(&x, &y),
        (None, None) => false,
        _ => true,
    }
}

/// An object's members but `ignored`, when the text is an object that
/// parses as a `Value` (or `null`, read as `{}`).
fn kept_members<'a>(text: &'a str, ignored: &[&str]) -> Option<Members<'a>> {
    if text.trim() == "null" {
        return Some(Members::new());
    }
    check_strictly(text).ok()?;
    let mut kept = members(text)?;
    kept.retain(|(name, _)| !ignored.contains(&name.as_ref()));
    Some(kept)
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
        let texts = super::super::samples::TEXTS;
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

    /// What `spec_changed_besides` must agree with: both specs read as
    /// `Value` maps (absent or null as `{}`), the ignored members removed.
    fn by_maps(old: Option<&str>, new: Option<&str>, ignored: &[&str]) -> bool {
        let map = |text: Option<&str>| -> Option<serde_json::Map<String, Value>> {
            let text = text.filter(|t| t.trim() != "null").unwrap_or("{}");
            let mut map: serde_json::Map<String, Value> = serde_json::from_str(text).ok()?;
            map.retain(|name, _| !ignored.contains(&name.as_str()));
            Some(map)
        };
        map(old) != map(new)
    }

    #[test]
    fn spec_changes_agree_with_comparing_maps() {
        let specs = [
            None,
            Some("null"),
            Some("{}"),
            Some(" { } "),
            Some(r#"{"suspend":true}"#),
            Some(r#"{"suspend":false}"#),
            Some(r#"{"\u0073uspend":true}"#),
            Some(r#"{"path":"./a","suspend":true}"#),
            Some(r#"{"suspend":true, "path":"./a"}"#),
            Some(r#"{"path":"./a"}"#),
            Some(r#"{"path":"./b","suspend":true}"#),
            Some(r#"{"path":"./b","path":"./a"}"#),
            Some(r#"{"path":"./a","path":"./b"}"#),
            Some(r#"{"path":"./a","suspend":true,"suspend":"x"}"#),
            Some(r#"{"path":"./a","interval":1.0}"#),
            Some(r#"{"path":"./a","interval":1}"#),
            Some(r#"{"path":"./a","interval":10e-1}"#),
            Some(r#"{"path":"./a","wait":{"x":[1,{"y":2}]}}"#),
            Some(r#"{"path":"./a","wait":{"x":[1,{"y":3}]}}"#),
            Some(r#"{"path":"\ud800"}"#),
            Some(r#"{"path":"\ud800","suspend":true}"#),
            Some(r#"{"path":1e400}"#),
            Some("[]"),
            Some("[1]"),
            Some(r#""x""#),
            Some("5"),
        ];
        for ignored in [&["suspend"][..], &[], &["suspend", "path"]] {
            for old in specs {
                for new in specs {
                    assert_eq!(
                        spec_changed_besides(old, new, ignored),
                        by_maps(old, new, ignored),
                        "{old:?} vs {new:?} ignoring {ignored:?}"
                    );
                }
            }
        }
    }

    /// The cases the two former answers (flux-suspend's staged spec
    /// changes, flux-gate's held spec changes) were tested on.
    #[test]
    fn what_the_policies_ask() {
        let changed =
            |old: &str, new: &str| spec_changed_besides(Some(old), Some(new), &["suspend"]);
        let (a, b, c) = (
            r#"{"path":"./a","suspend":true}"#,
            r#"{"path":"./a"}"#,
            r#"{"path":"./b","suspend":true}"#,
        );
        assert!(!changed(a, a));
        assert!(!changed(a, b));
        assert!(changed(a, c));
        let base = r#"{"path":"./a","prune":true}"#;
        assert!(changed(base, r#"{"path":"./b","prune":true}"#));
        assert!(changed(base, r#"{"path":"./a","prune":true,"wait":true}"#));
        assert!(!changed(base, r#"{"prune":true, "path":"./a"}"#));
        assert!(!changed(
            base,
            r#"{"path":"./a","prune":true,"suspend":null}"#
        ));
        // A spec that disappears or appears changed; absent, null and `{}` are alike.
        assert!(spec_changed_besides(Some(base), None, &["suspend"]));
        assert!(spec_changed_besides(None, Some(base), &["suspend"]));
        assert!(!spec_changed_besides(None, Some("null"), &["suspend"]));
        assert!(!spec_changed_besides(
            None,
            Some(r#"{"suspend":true}"#),
            &["suspend"]
        ));
        // Unreadable specs: one differs from any readable spec; two are not told apart.
        assert!(changed(r#"{"path":1e400}"#, b));
        assert!(!changed(r#"{"path":1e400}"#, r#"{"path":2e400}"#));
        assert!(changed("[1]", "{}"));
    }
}

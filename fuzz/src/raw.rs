//! Raw-level mutations of the final payload bytes: what serde_json's data
//! model cannot express (duplicate keys, lone surrogate escapes, numbers out
//! of range, nesting past the parser's limit, broken framing). policy-server
//! re-serialises the request it hands a policy, so these cannot reach a
//! deployed policy; they are a separate class, on by default (`--raw`).
//!
//! Each operation names its position as a fraction of the candidate places,
//! so that it applies again to the smaller payloads of a minimization.

use guard_core::testing::Rng;

#[derive(Debug, Clone, PartialEq)]
pub enum RawOp {
    /// Repeat an object's first member name with another value, before (the
    /// original wins in a map) or after (the duplicate wins) its members.
    DuplicateKey {
        at: f64,
        last: bool,
        value: &'static str,
    },
    /// Insert an escape into a string (`\ud800`, `\udc00`, `\u0000`...).
    Escape {
        at: f64,
        text: &'static str,
    },
    /// Replace a value by `depth` nested arrays or objects.
    DeepNest {
        at: f64,
        depth: usize,
        objects: bool,
    },
    /// Replace a number or string value by a number text serde_json may refuse.
    Number {
        at: f64,
        text: &'static str,
    },
    /// Insert bytes that are not UTF-8 into a string.
    InvalidUtf8 {
        at: f64,
        bytes: &'static [u8],
    },
    TrailingGarbage {
        text: &'static str,
    },
    Truncate {
        at: f64,
    },
}

pub const ESCAPES: &[&str] = &[
    "\\ud800",
    "\\udc00",
    "\\udbff",
    "\\ud800\\u0041",
    "\\udc00\\ud800",
    "\\u0000",
    "\\uFFFF",
    "\\ud83d\\ude00",
    "\\u",
    "\\x41",
    "\\",
];

pub const NUMBERS: &[&str] = &[
    "1e400",
    "-1e400",
    "1e-400",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "0.00000000000000000000000000000000000000000000000001",
    "1E+2",
    "-0",
    "01",
    "1.",
    "+1",
    "NaN",
    "Infinity",
    ".5",
];

pub const GARBAGE: &[&str] = &[
    " x", "}", "]", ",", "\u{0}", "{}", "\n\n", "]]]]", "\"", "null", " // c",
];

pub const DUPLICATE_VALUES: &[&str] = &[
    "null",
    "\"\"",
    "0",
    "true",
    "{}",
    "[]",
    "\"x\"",
    "-1",
    "{\"a\":1}",
];

pub const BAD_UTF8: &[&[u8]] = &[
    b"\xff",
    b"\xc0\x80",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xe2\x82",
];

impl RawOp {
    pub fn random(rng: &mut Rng) -> Self {
        let at = rng.unit();
        match rng.below(7) {
            0 => RawOp::DuplicateKey {
                at,
                last: rng.chance(0.5),
                value: pick(rng, DUPLICATE_VALUES),
            },
            1 => RawOp::Escape {
                at,
                text: pick(rng, ESCAPES),
            },
            2 => RawOp::DeepNest {
                at,
                depth: if rng.chance(0.8) {
                    rng.range(120, 300)
                } else {
                    rng.range(300, 5000)
                },
                objects: rng.chance(0.3),
            },
            3 => RawOp::Number {
                at,
                text: pick(rng, NUMBERS),
            },
            4 => RawOp::InvalidUtf8 {
                at,
                bytes: BAD_UTF8
                    .get(rng.below(BAD_UTF8.len()))
                    .copied()
                    .unwrap_or(b"\xff"),
            },
            5 => RawOp::TrailingGarbage {
                text: pick(rng, GARBAGE),
            },
            _ => RawOp::Truncate { at },
        }
    }

    /// A short name of the operation, for reports.
    pub fn name(&self) -> &'static str {
        match self {
            RawOp::DuplicateKey { .. } => "duplicate-key",
            RawOp::Escape { .. } => "escape",
            RawOp::DeepNest { .. } => "deep-nest",
            RawOp::Number { .. } => "number",
            RawOp::InvalidUtf8 { .. } => "invalid-utf8",
            RawOp::TrailingGarbage { .. } => "trailing-garbage",
            RawOp::Truncate { .. } => "truncate",
        }
    }

    pub fn describe(&self) -> String {
        match self {
            RawOp::DuplicateKey { last, value, .. } => format!(
                "an object's first member repeated {} its members with value {value}",
                if *last { "after" } else { "before" }
            ),
            RawOp::Escape { text, .. } => format!("{text} inserted into a string"),
            RawOp::DeepNest { depth, objects, .. } => format!(
                "a value replaced by {depth} nested {}",
                if *objects { "objects" } else { "arrays" }
            ),
            RawOp::Number { text, .. } => format!("a value replaced by the number text {text}"),
            RawOp::InvalidUtf8 { bytes, .. } => {
                format!("bytes {bytes:02x?} (not UTF-8) inserted into a string")
            }
            RawOp::TrailingGarbage { text } => format!("{text:?} appended"),
            RawOp::Truncate { at } => format!("cut at {:.0}% of its length", at * 100.0),
        }
    }

    /// The payload with this operation applied (unchanged when the payload
    /// has no place for it).
    pub fn apply(&self, payload: &[u8]) -> Vec<u8> {
        let tokens = scan(payload);
        let choose = |places: &[usize], at: f64| -> Option<usize> {
            if places.is_empty() {
                return None;
            }
            let i = ((at * places.len() as f64) as usize).min(places.len() - 1);
            places.get(i).copied()
        };
        let mut out = payload.to_vec();
        match self {
            RawOp::DuplicateKey { at, last, value } => {
                let Some(open) = choose(&tokens.nonempty_objects, *at) else {
                    return out;
                };
                let Some(key) = first_key(payload, open) else {
                    return out;
                };
                if *last {
                    if let Some(close) = matching_close(payload, open) {
                        let text = format!(",{key}:{value}");
                        splice(&mut out, close, close, text.as_bytes());
                    }
                } else {
                    let text = format!("{key}:{value},");
                    splice(&mut out, open + 1, open + 1, text.as_bytes());
                }
            }
            RawOp::Escape { at, text } => {
                if let Some((start, _)) = choose_span(&tokens.strings, *at) {
                    splice(&mut out, start + 1, start + 1, text.as_bytes());
                }
            }
            RawOp::DeepNest { at, depth, objects } => {
                if let Some((start, end)) = choose_span(&tokens.values, *at) {
                    let mut text = Vec::with_capacity(depth * 6);
                    for _ in 0..*depth {
                        text.extend_from_slice(if *objects { b"{\"a\":" } else { b"[" });
                    }
                    text.extend_from_slice(b"0");
                    for _ in 0..*depth {
                        text.push(if *objects { b'}' } else { b']' });
                    }
                    splice(&mut out, start, end, &text);
                }
            }
            RawOp::Number { at, text } => {
                if let Some((start, end)) = choose_span(&tokens.values, *at) {
                    splice(&mut out, start, end, text.as_bytes());
                }
            }
            RawOp::InvalidUtf8 { at, bytes } => {
                if let Some((start, _)) = choose_span(&tokens.strings, *at) {
                    splice(&mut out, start + 1, start + 1, bytes);
                }
            }
            RawOp::TrailingGarbage { text } => out.extend_from_slice(text.as_bytes()),
            RawOp::Truncate { at } => {
                let keep = ((*at * payload.len() as f64) as usize).min(payload.len());
                out.truncate(keep);
            }
        }
        out
    }
}

fn pick(rng: &mut Rng, items: &[&'static str]) -> &'static str {
    rng.pick(items).copied().unwrap_or("")
}

fn choose_span(spans: &[(usize, usize)], at: f64) -> Option<(usize, usize)> {
    if spans.is_empty() {
        return None;
    }
    let i = ((at * spans.len() as f64) as usize).min(spans.len() - 1);
    spans.get(i).copied()
}

fn splice(out: &mut Vec<u8>, start: usize, end: usize, with: &[u8]) {
    if start <= end && end <= out.len() {
        out.splice(start..end, with.iter().copied());
    }
}

/// Token positions of a JSON text.
#[derive(Debug, Default)]
struct Tokens {
    /// Offsets of `{` that open a non-empty object.
    nonempty_objects: Vec<usize>,
    /// Every string token (keys too), as `[quote, after closing quote)`.
    strings: Vec<(usize, usize)>,
    /// String and number tokens in value position.
    values: Vec<(usize, usize)>,
}

fn scan(b: &[u8]) -> Tokens {
    let mut t = Tokens::default();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                let start = i;
                i += 1;
                while let Some(&c) = b.get(i) {
                    i += 1;
                    if c == b'\\' {
                        i += 1;
                    } else if c == b'"' {
                        break;
                    }
                }
                let end = i.min(b.len());
                t.strings.push((start, end));
                let mut j = end;
                while b.get(j).is_some_and(u8::is_ascii_whitespace) {
                    j += 1;
                }
                if b.get(j) != Some(&b':') {
                    t.values.push((start, end));
                }
            }
            b'{' => {
                let mut j = i + 1;
                while b.get(j).is_some_and(u8::is_ascii_whitespace) {
                    j += 1;
                }
                if b.get(j) == Some(&b'"') {
                    t.nonempty_objects.push(i);
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while b
                    .get(i)
                    .is_some_and(|c| c.is_ascii_digit() || b"+-.eE".contains(c))
                {
                    i += 1;
                }
                t.values.push((start, i));
            }
            _ => i += 1,
        }
    }
    t
}

/// The first member name (with its quotes) of the object opened at `open`.
fn first_key(b: &[u8], open: usize) -> Option<String> {
    let mut i = open + 1;
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    let start = i;
    if b.get(i) != Some(&b'"') {
        return None;
    }
    i += 1;
    while let Some(&c) = b.get(i) {
        i += 1;
        if c == b'\\' {
            i += 1;
        } else if c == b'"' {
            return String::from_utf8(b.get(start..i)?.to_vec()).ok();
        }
    }
    None
}

/// The offset of the `}` or `]` closing the container opened at `open`.
fn matching_close(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                i += 1;
                while let Some(&c) = b.get(i) {
                    i += 1;
                    if c == b'\\' {
                        i += 1;
                    } else if c == b'"' {
                        break;
                    }
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &[u8] = br#"{"request":{"uid":"1","n":42,"s":"a\"b"},"settings":{}}"#;

    #[test]
    fn duplicate_key_first_and_last() {
        let op = RawOp::DuplicateKey {
            at: 0.0,
            last: false,
            value: "null",
        };
        assert_eq!(
            String::from_utf8(op.apply(DOC)).unwrap(),
            r#"{"request":null,"request":{"uid":"1","n":42,"s":"a\"b"},"settings":{}}"#
        );
        let op = RawOp::DuplicateKey {
            at: 0.99,
            last: true,
            value: "0",
        };
        assert_eq!(
            String::from_utf8(op.apply(DOC)).unwrap(),
            r#"{"request":{"uid":"1","n":42,"s":"a\"b","uid":0},"settings":{}}"#
        );
    }

    #[test]
    fn escapes_numbers_nesting_truncation() {
        let op = RawOp::Escape {
            at: 0.99,
            text: "\\ud800",
        };
        let out = String::from_utf8(op.apply(DOC)).unwrap();
        assert!(out.contains(r#""\ud800settings""#), "{out}");
        let op = RawOp::Number {
            at: 0.0,
            text: "1e400",
        };
        // The first value token is "1" (uid's value).
        let out = String::from_utf8(op.apply(DOC)).unwrap();
        assert!(out.contains(r#""uid":1e400,"#), "{out}");
        let op = RawOp::DeepNest {
            at: 0.0,
            depth: 200,
            objects: false,
        };
        let out = op.apply(DOC);
        assert!(serde_json::from_slice::<serde_json::Value>(&out)
            .unwrap_err()
            .to_string()
            .contains("recursion limit"));
        let op = RawOp::Truncate { at: 0.5 };
        assert_eq!(op.apply(DOC).len(), DOC.len() / 2);
        let op = RawOp::InvalidUtf8 {
            at: 0.0,
            bytes: b"\xff",
        };
        assert!(std::str::from_utf8(&op.apply(DOC)).is_err());
    }

    #[test]
    fn every_operation_changes_the_payload() {
        let mut rng = Rng::new(5);
        let mut names = std::collections::BTreeSet::new();
        for _ in 0..500 {
            let op = RawOp::random(&mut rng);
            names.insert(op.name());
            assert_ne!(op.apply(DOC), DOC, "{op:?}");
        }
        assert_eq!(names.len(), 7);
    }
}

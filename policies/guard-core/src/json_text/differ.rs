//! A quick proof that two JSON texts differ.
//!
//! [`equal`] first reads both texts whole, strictly (text that does not
//! parse as a `Value` equals nothing), then compares. An update that changes
//! one entry of a large spec member needs only the path to that entry: where
//! two texts hold different scalars at the same place (or different keys,
//! lengths or kinds), they are unequal whether or not the rest of them
//! parses. [`proven`] looks for such a place, first where the texts part
//! (kube-apiserver serializes both objects of a request alike, so that is
//! where an update changed something), then member by member; when it finds
//! none, [`equal`] has the last word.

use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::compare::equal;
use super::split::{first_byte, members};

/// Not [`equal`]: the same answer, found without reading both texts whole
/// when a difference lies on the way to where they part. For members an
/// update may have changed; [`equal`] is quicker for texts that are likely
/// the same.
pub fn texts_differ(a: &str, b: &str) -> bool {
    a != b && (proven(a, b) || !equal(a, b))
}

/// True only if `a` and `b` are not [`equal`]; false when they may be.
fn proven(a: &str, b: &str) -> bool {
    a != b && (parted(a, b) || by_members(a, b))
}

/// Split one level down, sorted as a `Value`'s map; members whose text
/// differs are compared by [`proven`].
fn by_members(a: &str, b: &str) -> bool {
    match (first_byte(a), first_byte(b)) {
        (Some(b'{'), Some(b'{')) => match (members(a), members(b)) {
            (Some(x), Some(y)) => {
                x.len() != y.len()
                    || x.iter()
                        .zip(&y)
                        .any(|((kx, vx), (ky, vy))| kx != ky || proven(vx.get(), vy.get()))
            }
            // Not split: `equal` decides.
            _ => false,
        },
        (Some(b'['), Some(b'[')) => match (
            serde_json::from_str::<Vec<&RawValue>>(a),
            serde_json::from_str::<Vec<&RawValue>>(b),
        ) {
            (Ok(x), Ok(y)) => {
                x.len() != y.len() || x.iter().zip(&y).any(|(u, v)| proven(u.get(), v.get()))
            }
            _ => false,
        },
        _ => kinds_or_scalars_differ(a, b),
    }
}

/// For texts that are not both objects or both lists.
fn kinds_or_scalars_differ(a: &str, b: &str) -> bool {
    match (first_byte(a), first_byte(b)) {
        (Some(x @ (b'{' | b'[')), Some(y)) | (Some(y), Some(x @ (b'{' | b'['))) => x != y,
        _ => !equal(a, b),
    }
}

/// The value holding the first byte where `a` and `b` part differs, and
/// each member name on the way down to it is the last of its name in both
/// texts (a later duplicate would be the one a `Value` keeps). Up to there
/// the texts are the same, so the way down is the same in both.
fn parted(a: &str, b: &str) -> bool {
    let (ta, tb) = (a.as_bytes(), b.as_bytes());
    let p = parting(ta, tb);
    let Some((frames, start)) = way_to(ta, p) else {
        return false;
    };
    let (Some(end_a), Some(end_b)) = (value_end(ta, start), value_end(tb, start)) else {
        return false;
    };
    match (a.get(start..end_a), b.get(start..end_b)) {
        (Some(x), Some(y)) => {
            kinds_or_scalars_differ(x, y)
                && last_of_name(ta, end_a, &frames)
                && last_of_name(tb, end_b, &frames)
        }
        _ => false,
    }
}

/// The first byte at which `a` and `b` differ, or the shorter length.
fn parting(a: &[u8], b: &[u8]) -> usize {
    // Whole blocks first, compared as slices (memcmp), then bytes.
    const BLOCK: usize = 256;
    let same_blocks = a
        .chunks(BLOCK)
        .zip(b.chunks(BLOCK))
        .take_while(|(x, y)| x == y)
        .count();
    // The last block may be short.
    let from = same_blocks.saturating_mul(BLOCK).min(a.len()).min(b.len());
    let (rest_a, rest_b) = (
        a.get(from..).unwrap_or_default(),
        b.get(from..).unwrap_or_default(),
    );
    let within = rest_a
        .iter()
        .zip(rest_b)
        .position(|(x, y)| x != y)
        .unwrap_or(rest_a.len().min(rest_b.len()));
    from.saturating_add(within)
}

/// A container open at the place the texts part, and in an object where
/// the name of its member there lies (quotes included).
struct Frame {
    object: bool,
    name: Option<(usize, usize)>,
}

impl Frame {
    /// An object (`true`) or a list just opened, before any member name.
    fn open(object: bool) -> Self {
        Self { object, name: None }
    }
}

#[derive(Clone, Copy)]
enum Expect {
    Value,
    ValueOrClose,
    KeyOrClose,
    Key,
    Colon,
    CommaOrClose,
}

/// The containers open at `p` and where the value holding `p` starts;
/// `None` when `p` is not in a value (a name, spacing, punctuation) or the
/// text is not read to there.
fn way_to(t: &[u8], p: usize) -> Option<(Vec<Frame>, usize)> {
    let mut frames: Vec<Frame> = Vec::new();
    let mut expect = Expect::Value;
    let mut i = 0;
    loop {
        i = skip_space(t, i);
        let c = *t.get(i)?;
        let value_here = match expect {
            Expect::Value => true,
            Expect::ValueOrClose => c != b']',
            _ => false,
        };
        if value_here {
            if i >= p {
                return (i == p).then_some((frames, i));
            }
            match c {
                b'{' => {
                    frames.push(Frame::open(true));
                    expect = Expect::KeyOrClose;
                    i = i.checked_add(1)?;
                }
                b'[' => {
                    frames.push(Frame::open(false));
                    expect = Expect::ValueOrClose;
                    i = i.checked_add(1)?;
                }
                _ => {
                    let end = scalar_end(t, i)?;
                    if p < end {
                        return Some((frames, i));
                    }
                    i = end;
                    expect = Expect::CommaOrClose;
                }
            }
            continue;
        }
        if i >= p {
            return None;
        }
        match (expect, c) {
            (Expect::KeyOrClose | Expect::Key, b'"') => {
                let end = string_end(t, i)?;
                if p < end {
                    return None;
                }
                frames.last_mut()?.name = Some((i, end));
                i = end;
                expect = Expect::Colon;
            }
            (Expect::Colon, b':') => {
                i = i.checked_add(1)?;
                expect = Expect::Value;
            }
            (Expect::CommaOrClose, b',') => {
                i = i.checked_add(1)?;
                expect = if frames.last()?.object {
                    Expect::Key
                } else {
                    Expect::Value
                };
            }
            (Expect::KeyOrClose | Expect::ValueOrClose | Expect::CommaOrClose, b'}' | b']') => {
                frames.pop()?;
                if frames.is_empty() {
                    return None;
                }
                i = i.checked_add(1)?;
                expect = Expect::CommaOrClose;
            }
            _ => return None,
        }
    }
}

/// No member after `from`, in each container of `frames` (innermost last),
/// has the name that container's member at the parting place has. Names
/// with escapes are not compared: they fail the proof.
fn last_of_name(t: &[u8], from: usize, frames: &[Frame]) -> bool {
    let mut i = from;
    for frame in frames.iter().rev() {
        let name = match (frame.object, frame.name) {
            (false, _) => None,
            (true, Some((start, end))) => match t.get(start..end) {
                Some(name) if !name.contains(&b'\\') => Some(name),
                _ => return false,
            },
            (true, None) => return false,
        };
        loop {
            i = skip_space(t, i);
            match (t.get(i), name) {
                (Some(b'}' | b']'), _) => break,
                (Some(b','), None) => {}
                (Some(b','), Some(name)) => {
                    let Some(start) = i.checked_add(1).map(|j| skip_space(t, j)) else {
                        return false;
                    };
                    let Some(end) = string_end(t, start) else {
                        return false;
                    };
                    match t.get(start..end) {
                        Some(key) if key != name && !key.contains(&b'\\') => {}
                        _ => return false,
                    }
                    i = skip_space(t, end);
                    if t.get(i) != Some(&b':') {
                        return false;
                    }
                }
                _ => return false,
            }
            // Past the comma or colon, to the end of the value.
            match i.checked_add(1).and_then(|j| value_end(t, j)) {
                Some(end) => i = end,
                None => return false,
            }
        }
        match i.checked_add(1) {
            Some(j) => i = j,
            None => return false,
        }
    }
    true
}

fn skip_space(t: &[u8], from: usize) -> usize {
    let rest = t.get(from..).unwrap_or_default();
    let spaces = rest
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(rest.len());
    from.saturating_add(spaces)
}

/// Just past the string (quotes included) or other scalar at `from`.
fn scalar_end(t: &[u8], from: usize) -> Option<usize> {
    if t.get(from) == Some(&b'"') {
        return string_end(t, from);
    }
    let rest = t.get(from..)?;
    let len = rest
        .iter()
        .position(|c| matches!(c, b',' | b'}' | b']' | b':' | b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(rest.len());
    from.checked_add(len)
}

/// Just past the closing quote of the string opening at `from`.
fn string_end(t: &[u8], from: usize) -> Option<usize> {
    let mut i = from.checked_add(1)?;
    loop {
        let rest = t.get(i..)?;
        let at = rest.iter().position(|c| matches!(c, b'"' | b'\\'))?;
        let found = i.checked_add(at)?;
        if t.get(found) == Some(&b'"') {
            return found.checked_add(1);
        }
        // An escape: skip the escaped character.
        i = found.checked_add(2)?;
    }
}

/// Just past the JSON value starting at or after `from`, read by serde_json.
fn value_end(t: &[u8], from: usize) -> Option<usize> {
    let rest = t.get(from..)?;
    let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<IgnoredAny>();
    values.next()?.ok()?;
    from.checked_add(values.byte_offset())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::Rng;

    /// `proven` never contradicts `equal`, and finds what changed;
    /// `texts_differ` is exactly not `equal`.
    #[test]
    fn a_difference_is_found_only_where_equal_finds_one() {
        let texts = super::super::samples::TEXTS;
        for a in texts {
            for b in texts {
                let equal = equal(a, b);
                assert!(!(proven(a, b) && equal), "{a} vs {b}");
                assert_eq!(texts_differ(a, b), !equal, "{a} vs {b}");
                assert!(!(parted(a, b) && equal), "{a} vs {b}");
            }
        }
        // Found where the texts part, without splitting.
        for (a, b) in [
            (
                r#"{"a":1,"b":[1,2,{"c":"d"}]}"#,
                r#"{"a":1,"b":[1,2,{"c":"e"}]}"#,
            ),
            (r#"{"a":1,"b":[1,2]}"#, r#"{"a":1,"b":[1,3]}"#),
            (r#"{"a":1e400,"b":1}"#, r#"{"a":1e400,"b":2}"#),
            (r#"{"a":"\ud800","b":1}"#, r#"{"a":"\ud800","b":2}"#),
            (r#"{"a":1}"#, r#"{"a":[1]}"#),
            (r#"{"a":{}}"#, r#"{"a":[1]}"#),
        ] {
            assert!(parted(a, b), "{a} vs {b}");
        }
        // A later member of the same name, or one that may be, is the one kept.
        for (a, b) in [
            (r#"{"a":1,"a":2}"#, r#"{"a":3,"a":2}"#),
            (r#"{"a":1,"\u0061":2}"#, r#"{"a":3,"\u0061":2}"#),
            (
                r#"{"x":{"a":1},"x":{"a":1}}"#,
                r#"{"x":{"a":2},"x":{"a":1}}"#,
            ),
            (r#"{"a": 1}"#, r#"{"a":1}"#),
            (r#"{"a":1}"#, r#"{"b":1}"#),
        ] {
            assert!(!parted(a, b), "{a} vs {b}");
        }
    }

    /// Random documents and edits of them: a change of one scalar, spacing,
    /// member order, a later duplicate, an escaped name.
    #[test]
    fn random_edits_never_contradict_equal() {
        let mut rng = Rng::new(17);
        for _ in 0..20_000 {
            let doc = node(&mut rng, 3);
            let a = render(&doc, &mut rng);
            let mut edited = doc.clone();
            edit(&mut edited, &mut rng);
            let b = render(&edited, &mut rng);
            let equal = equal(&a, &b);
            assert!(!(proven(&a, &b) && equal), "{a} vs {b}");
            assert_eq!(texts_differ(&a, &b), !equal, "{a} vs {b}");
            assert!(!(parted(&a, &b) && equal), "{a} vs {b}");
        }
    }

    #[test]
    fn the_parting_byte() {
        let long: String = "x".repeat(1000);
        for (a, b, p) in [
            ("", "", 0),
            ("ab", "ab", 2),
            ("ab", "abc", 2),
            ("ab", "b", 0),
        ] {
            assert_eq!(parting(a.as_bytes(), b.as_bytes()), p);
        }
        for at in [0, 255, 256, 257, 511, 999] {
            let mut b = long.clone().into_bytes();
            b[at] = b'y';
            assert_eq!(parting(long.as_bytes(), &b), at);
            assert_eq!(parting(long.as_bytes(), &b[..at]), at);
        }
    }

    #[derive(Clone)]
    enum Node {
        Object(Vec<(&'static str, Node)>),
        List(Vec<Node>),
        Scalar(&'static str),
    }

    const NAMES: [&str; 5] = ["a", "b", "c", r"\u0061", "s0"];
    const SCALARS: [&str; 11] = [
        "1",
        "1.0",
        "10e-1",
        "2",
        r#""x""#,
        r#""\u0078""#,
        r#""y""#,
        "true",
        "null",
        r#""\ud800""#,
        "1e400",
    ];

    fn pick<T: Copy>(rng: &mut Rng, from: &[T]) -> T {
        from[rng.below(from.len())]
    }

    fn node(rng: &mut Rng, depth: u32) -> Node {
        match (depth, rng.below(4)) {
            (0, _) | (_, 0) => Node::Scalar(pick(rng, &SCALARS)),
            (_, 1) => Node::List((0..rng.below(4)).map(|_| node(rng, depth - 1)).collect()),
            _ => Node::Object(
                (0..rng.below(4))
                    .map(|_| (pick(rng, &NAMES), node(rng, depth - 1)))
                    .collect(),
            ),
        }
    }

    fn edit(n: &mut Node, rng: &mut Rng) {
        match n {
            Node::Scalar(s) => *s = pick(rng, &SCALARS),
            Node::List(items) if !items.is_empty() && rng.below(4) != 0 => {
                let i = rng.below(items.len());
                edit(&mut items[i], rng);
            }
            Node::Object(members) if !members.is_empty() && rng.below(4) != 0 => {
                let i = rng.below(members.len());
                match rng.below(4) {
                    0 => {
                        let copy = members[i].clone();
                        members.push(copy);
                    }
                    1 => members.swap(0, i),
                    _ => edit(&mut members[i].1, rng),
                }
            }
            Node::List(items) => items.push(node(rng, 1)),
            Node::Object(members) => members.push((pick(rng, &NAMES), node(rng, 1))),
        }
    }

    fn render(n: &Node, rng: &mut Rng) -> String {
        let space = if rng.below(8) == 0 { " " } else { "" };
        match n {
            Node::Scalar(s) => format!("{space}{s}"),
            Node::List(items) => {
                let items: Vec<String> = items.iter().map(|i| render(i, rng)).collect();
                format!("[{}{space}]", items.join(","))
            }
            Node::Object(members) => {
                let members: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("\"{k}\":{}", render(v, rng)))
                    .collect();
                format!("{{{}{space}}}", members.join(","))
            }
        }
    }
}

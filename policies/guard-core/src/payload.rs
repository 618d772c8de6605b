//! The waPC `validate` payload read from its bytes before it is parsed: its
//! settings, found from the end, so that a policy can tell that a request is
//! nothing to it without reading the request ([`crate::Policy::unconcerned`]).
//!
//! policy-server serializes the payload as `{"request":…,"settings":…}`
//! with serde_json (kubewarden policy-evaluator `runtimes/wapc/runtime.rs`
//! `Runtime::validate`, commit 3460bb71 of kubewarden/kubewarden-controller),
//! whose serializer escapes only `"`, `\` and control characters (serde_json
//! `ser.rs` `ESCAPE`), so a key such as an annotation's name appears in the
//! bytes as written. The settings are the last member: its value is matched
//! backwards from the closing brace, skipping strings, which for valid JSON
//! finds the top-level member; anything else is left to the full parse.

const KEY: &[u8] = b"\"settings\"";

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The index of the last byte before `end` that is not whitespace.
fn back_over_space(bytes: &[u8], end: usize) -> Option<usize> {
    bytes.get(..end)?.iter().rposition(|b| !is_space(*b))
}

/// The opening quote of the string whose closing quote is at `close`: the
/// previous quote not escaped by an odd run of backslashes.
fn string_start(bytes: &[u8], close: usize) -> Option<usize> {
    let mut at = close;
    loop {
        at = bytes.get(..at)?.iter().rposition(|b| *b == b'"')?;
        let slashes = bytes
            .get(..at)?
            .iter()
            .rev()
            .take_while(|b| **b == b'\\')
            .count();
        if slashes % 2 == 0 {
            return Some(at);
        }
    }
}

/// The first byte of the JSON value whose last byte is at `last`.
fn value_start(bytes: &[u8], last: usize) -> Option<usize> {
    match bytes.get(last)? {
        b'"' => string_start(bytes, last),
        b'}' | b']' => {
            let mut depth = 0usize;
            let mut at = last;
            loop {
                match bytes.get(at)? {
                    b'"' => at = string_start(bytes, at)?,
                    b'}' | b']' => depth = depth.checked_add(1)?,
                    b'{' | b'[' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(at);
                        }
                    }
                    _ => {}
                }
                at = at.checked_sub(1)?;
            }
        }
        _ => {
            let word = bytes.get(..=last)?;
            let from = word
                .iter()
                .rposition(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+')))?;
            from.checked_add(1)
        }
    }
}

/// The raw `settings` of a payload whose last member is `"settings"`;
/// `None` when the bytes are not shaped so.
pub fn settings(payload: &[u8]) -> Option<&[u8]> {
    let close = back_over_space(payload, payload.len())?;
    if payload.get(close) != Some(&b'}') {
        return None;
    }
    let last = back_over_space(payload, close)?;
    let start = value_start(payload, last)?;
    let colon = back_over_space(payload, start)?;
    if payload.get(colon) != Some(&b':') {
        return None;
    }
    let key_end = back_over_space(payload, colon)?.checked_add(1)?;
    let key_start = key_end.checked_sub(KEY.len())?;
    if payload.get(key_start..key_end) != Some(KEY) {
        return None;
    }
    let before = back_over_space(payload, key_start)?;
    if !matches!(payload.get(before), Some(b',' | b'{')) {
        return None;
    }
    payload.get(start..=last)
}

/// Does `needle` occur anywhere in the payload's bytes? The bytes are read
/// 32 at a time as four 64-bit words (a wasm module has 64-bit words, and no
/// SIMD unless built for it), and a block is looked into only when a word
/// holds the needle's first byte: the needle's first byte should be rare.
pub fn contains(payload: &[u8], needle: &str) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const BLOCK: usize = 32;
    let needle = needle.as_bytes();
    let Some(&first) = needle.first() else {
        return true;
    };
    let starts_at = |at: usize| {
        payload
            .get(at..)
            .is_some_and(|rest| rest.starts_with(needle))
    };
    // Each position of `bytes` (from `base`) that holds the first byte.
    let look = |bytes: &[u8], base: usize| {
        bytes
            .iter()
            .enumerate()
            .any(|(i, b)| *b == first && base.checked_add(i).is_some_and(starts_at))
    };
    let spread = u64::from_ne_bytes([first; 8]);
    // A zero byte in `x` is an occurrence of `first` (the has-zero-byte
    // test; it may flag a byte after a real zero, which `look` rejects).
    let flags = |word: &[u8]| {
        let x = <[u8; 8]>::try_from(word).map_or(0, u64::from_ne_bytes) ^ spread;
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    let mut blocks = payload.chunks_exact(BLOCK);
    let mut base = 0usize;
    for block in &mut blocks {
        let hit = block.chunks_exact(8).fold(0, |any, word| any | flags(word));
        if hit != 0 && look(block, base) {
            return true;
        }
        base = base.wrapping_add(BLOCK);
    }
    look(blocks.remainder(), base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_top_level_settings_from_the_end() {
        let p = br#"{"request":{"settings":{"a":1},"x":"}\"settings\":{"},"settings":{"b":[1,{"c":"]}"}],"settings":{}}}"#;
        assert_eq!(
            settings(p),
            Some(&br#"{"b":[1,{"c":"]}"}],"settings":{}}"#[..])
        );
        assert_eq!(
            settings(br#"{"request":{}, "settings" : null }"#),
            Some(&b"null"[..])
        );
        assert_eq!(
            settings(br#"{"request":{},"settings":"a\"b"}"#),
            Some(&br#""a\"b""#[..])
        );
        assert_eq!(settings(br#"{"settings":{},"request":{}}"#), None);
        assert_eq!(settings(br#"{"request":{"settings":{}}}"#), None);
        assert_eq!(settings(b"not json"), None);
        assert_eq!(settings(br#"{"request":{},"xsettings":{}}"#), None);
        assert!(contains(
            b"abc gating.toolkit.fluxcd.io/gates",
            "gating.toolkit"
        ));
        assert!(!contains(b"abc", "gating"));
    }
}

//! Keys found in a long sorted list by their first eight bytes.
//!
//! The worst case asks an object's 10,000 event annotations for the keys of
//! 4,096 Alerts: some 70,000 lookups. A binary search compares whole keys
//! at every step; here each step compares one integer (a key's first eight
//! bytes read big-endian, which sort as the keys do), and whole keys only
//! among the keys that share those bytes. (An Alert's `matchLabels` are
//! looked up in the object's labels by `StringMap::ascending`, which finds
//! keys given in order cheaper still: they share their heads.)
//! The cost stays that of a binary search whatever the keys: a hash map
//! would be cheaper still, but its keys come from the request and could be
//! chosen to collide.

use guard_core::string_map::compare_keys;

pub(crate) struct KeyIndex<'a, V> {
    /// In key order: each key's head, the key, what it finds.
    entries: Vec<(u64, &'a str, V)>,
}

/// A key's first eight bytes, zero-padded: `a <= b` as keys gives
/// `head(a) <= head(b)`.
fn head(key: &str) -> u64 {
    let mut bytes = [0u8; 8];
    for (to, from) in bytes.iter_mut().zip(key.bytes()) {
        *to = from;
    }
    u64::from_be_bytes(bytes)
}

impl<'a, V> KeyIndex<'a, V> {
    /// The index of `entries`, which come in key order (a `StringMap`'s,
    /// or what is read from one).
    pub(crate) fn new(entries: impl Iterator<Item = (&'a str, V)>) -> Self {
        Self {
            entries: entries
                .map(|(key, value)| (head(key), key, value))
                .collect(),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        // In key order by head, then by the whole key: the heads decide
        // every step but those among keys that share them.
        let head = head(key);
        let found = self
            .entries
            .binary_search_by(|e| {
                e.0.cmp(&head)
                    .then_with(|| compare_keys(e.1.as_bytes(), key.as_bytes()))
            })
            .ok()?;
        self.entries.get(found).map(|e| &e.2)
    }
}

/// Whether two strings are the same, compared eight bytes at a time
/// ([`compare_keys`]) rather than by WebAssembly's byte-at-a-time `memcmp`.
pub(crate) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && compare_keys(a.as_bytes(), b.as_bytes()).is_eq()
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::StringMap;

    /// Every key of a map, and keys beside them, are found as the map finds them.
    #[test]
    fn finds_what_a_binary_search_finds() {
        let mut keys: Vec<String> = [
            "",
            "a",
            "a\0",
            "ab",
            "abcdefg",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
            "abcdefgi",
            "team.example.com/a",
            "team.example.com/b",
            "team.example.com/bb",
            "é",
            "\u{7f}",
        ]
        .map(String::from)
        .to_vec();
        let mut rng = guard_core::testing::Rng::new(7);
        for _ in 0..2000 {
            let key: String = (0..rng.below(12))
                .map(|_| ['a', 'b', '\0', '.', 'z', 'é'][rng.below(6)])
                .collect();
            keys.push(key);
        }
        let map: StringMap = keys.iter().map(|k| (k.as_str(), k.as_str())).collect();
        let index = KeyIndex::new(map.iter());
        let mut probes = keys.clone();
        probes.extend(keys.iter().map(|k| format!("{k}a")));
        probes.extend(keys.iter().map(|k| format!("{k}\0")));
        for probe in &probes {
            assert_eq!(index.get(probe).copied(), map.get(probe), "{probe:?}");
        }
        for a in &probes {
            for b in probes.iter().step_by(7) {
                assert_eq!(
                    compare_keys(a.as_bytes(), b.as_bytes()),
                    a.cmp(b),
                    "{a:?} {b:?}"
                );
                assert_eq!(same(a, b), a == b);
            }
        }
    }
}

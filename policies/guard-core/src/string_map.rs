//! A map of strings as objects carry them (`metadata.labels`,
//! `metadata.annotations`), cheap to read at any size.
//!
//! A request may carry a map of 200,000 entries. Read into a
//! `BTreeMap<String, String>`, each entry costs two allocations and a dozen
//! key comparisons, and the map is read for one or two keys. [`StringMap`]
//! copies every key and value into one text buffer, keeps their places in
//! one vector sorted once at the end (Kubernetes writes maps sorted, so the
//! sort only checks the order), and finds a key by binary search. Cloning
//! it is two copies.

use std::cmp::Ordering;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

/// Where one string lies in [`StringMap::text`].
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Span,
    value: Span,
}

/// A string-to-string map with the lookups and order of a `BTreeMap`, and
/// its reading of JSON: later duplicate keys win, a value that is not a
/// string is an error in the same words.
#[derive(Clone, Default)]
pub struct StringMap {
    /// Every key and value, one after the other.
    text: String,
    /// Sorted by key, one entry per key.
    entries: Vec<Entry>,
}

impl StringMap {
    pub fn new() -> Self {
        Self::default()
    }

    fn str(&self, span: Span) -> &str {
        self.text.get(span.start..span.end).unwrap_or_default()
    }

    fn push(&mut self, s: &str) -> Span {
        let start = self.text.len();
        self.text.push_str(s);
        Span {
            start,
            end: self.text.len(),
        }
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.entries
            .binary_search_by(|entry| self.str(entry.key).cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        let index = self.find(key).ok()?;
        self.entries.get(index).map(|entry| self.str(entry.value))
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.entries
            .iter()
            .map(|entry| (self.str(entry.key), self.str(entry.value)))
    }

    /// The entries whose keys sort at or after `key`, in key order: with
    /// `take_while`, the keys under a prefix without a pass over the rest.
    pub fn iter_from<'s>(&'s self, key: &str) -> impl Iterator<Item = (&'s str, &'s str)> + 's {
        let start = self.find(key).unwrap_or_else(|index| index);
        self.entries
            .get(start..)
            .unwrap_or_default()
            .iter()
            .map(|entry| (self.str(entry.key), self.str(entry.value)))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.entries.iter().map(|entry| self.str(entry.key))
    }

    /// Sets `key` to `value`; returns the value it replaces. The replaced
    /// text stays in the buffer: edits are few, reads many.
    pub fn insert(&mut self, key: String, value: String) -> Option<String> {
        let value_span = self.push(&value);
        match self.find(&key) {
            Ok(index) => {
                let entry = self.entries.get_mut(index)?;
                let old = std::mem::replace(&mut entry.value, value_span);
                Some(self.str(old).to_string())
            }
            Err(index) => {
                let key_span = self.push(&key);
                self.entries.insert(
                    index,
                    Entry {
                        key: key_span,
                        value: value_span,
                    },
                );
                None
            }
        }
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        let index = self.find(key).ok()?;
        let entry = self.entries.remove(index);
        Some(self.str(entry.value).to_string())
    }

    /// Adds an entry read in document order, for [`StringMap::sorted`].
    pub(crate) fn append(&mut self, key: &str, value: &str) {
        let key = self.push(key);
        let value = self.push(value);
        self.entries.push(Entry { key, value });
    }

    /// The map of the entries [`StringMap::append`] added.
    pub(crate) fn sorted(mut self) -> Self {
        self.sort();
        self
    }

    /// Sorts the entries read in document order by key, keeping the last of
    /// each key.
    fn sort(&mut self) {
        // Kubernetes writes maps sorted and without duplicates: one
        // comparison per entry says so, and then there is nothing to do.
        let strictly_increasing = self
            .entries
            .windows(2)
            .all(|pair| matches!(pair, [a, b] if self.str(a.key) < self.str(b.key)));
        if strictly_increasing {
            return;
        }
        let mut entries = std::mem::take(&mut self.entries);
        entries.sort_by(|a, b| self.str(a.key).cmp(self.str(b.key)));
        entries.dedup_by(|later, kept| {
            let same = self.str(later.key) == self.str(kept.key);
            if same {
                kept.value = later.value;
            }
            same
        });
        self.entries = entries;
    }
}

impl PartialEq for StringMap {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for StringMap {}

impl PartialOrd for StringMap {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for StringMap {
    fn cmp(&self, other: &Self) -> Ordering {
        self.iter().cmp(other.iter())
    }
}

impl fmt::Debug for StringMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for StringMap {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = StringMap::new();
        for (key, value) in iter {
            map.append(key.as_ref(), value.as_ref());
        }
        map.sorted()
    }
}

impl<'a> IntoIterator for &'a StringMap {
    type Item = (&'a str, &'a str);
    type IntoIter = Box<dyn Iterator<Item = (&'a str, &'a str)> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// Reads one string straight into the map's buffer, borrowed or decoded,
/// without a `String` of its own.
struct Append<'m>(&'m mut String);

impl<'de> DeserializeSeed<'de> for Append<'_> {
    type Value = Span;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Span, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Append<'_> {
    type Value = Span;
    // serde's own words for a `String`, so that errors read as before.
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, s: &str) -> Result<Span, E> {
        let start = self.0.len();
        self.0.push_str(s);
        Ok(Span {
            start,
            end: self.0.len(),
        })
    }
}

impl<'de> Deserialize<'de> for StringMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = StringMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<StringMap, A::Error> {
                let mut map = StringMap::new();
                while let Some(key) = access.next_key_seed(Append(&mut map.text))? {
                    let value = access.next_value_seed(Append(&mut map.text))?;
                    map.entries.push(Entry { key, value });
                }
                map.sort();
                Ok(map)
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// Lookups of keys given in increasing order, each search starting where
/// the last one ended: keys that lie close together in the map (a selector's
/// `matchLabels`, read in key order) cost a few comparisons each instead of
/// a binary search of the whole map. Keys in any other order are still
/// found, each smaller key by a search of the whole map.
pub struct Ascending<'m> {
    map: &'m StringMap,
    /// Where the last key was, or would be: every entry before it is smaller.
    from: usize,
}

impl StringMap {
    /// A reader for [`Ascending`] lookups, starting at the first key.
    pub fn ascending(&self) -> Ascending<'_> {
        Ascending { map: self, from: 0 }
    }

    fn key_bytes(&self, entry: &Entry) -> &[u8] {
        self.text
            .as_bytes()
            .get(entry.key.start..entry.key.end)
            .unwrap_or_default()
    }
}

impl<'m> Ascending<'m> {
    /// The value of `key`, as [`StringMap::get`] gives it.
    pub fn get(&mut self, key: &str) -> Option<&'m str> {
        let (map, key) = (self.map, key.as_bytes());
        let smaller = |entry: &Entry| compare_keys(map.key_bytes(entry), key).is_lt();
        let smaller_at = |index: usize| map.entries.get(index).is_some_and(smaller);
        let len = map.entries.len();
        // The entries before `low` are smaller than `key`; the one at `high`
        // (if any) is not.
        let (mut low, mut high) = (0, len);
        if self.from.checked_sub(1).is_some_and(smaller_at) {
            // Gallop from the last place: 1, 2, 4... entries on.
            low = self.from;
            let mut step = 0usize;
            loop {
                let probe = low.saturating_add(step);
                if probe >= len {
                    break;
                }
                if !smaller_at(probe) {
                    high = probe;
                    break;
                }
                low = probe.saturating_add(1);
                step = step.saturating_mul(2).saturating_add(1);
            }
        }
        let within = map.entries.get(low..high).unwrap_or_default();
        self.from = low.saturating_add(within.partition_point(smaller));
        map.entries
            .get(self.from)
            .filter(|entry| compare_keys(map.key_bytes(entry), key).is_eq())
            .map(|entry| map.str(entry.value))
    }
}

/// The order of two keys (that of `str`), eight bytes at a time, a short
/// tail read zero-padded: no call to `memcmp`, which in WebAssembly is a
/// call and a loop a byte at a time, for keys under a shared prefix
/// (`team.example.com/...`) that differ only far in. Words are compared as
/// loaded (little-endian) while equal, and turned around only where they
/// differ: WebAssembly has no instruction to swap bytes.
pub fn compare_keys(a: &[u8], b: &[u8]) -> Ordering {
    let mut at = 0usize;
    loop {
        let (x, y) = (word_at(a, at), word_at(b, at));
        if x != y {
            return x.swap_bytes().cmp(&y.swap_bytes());
        }
        // Equal so far, zero-padded: when either ends here, the longer is
        // the larger (its extra bytes, if any, are zeros here and after).
        let next = at.saturating_add(8);
        if a.len() <= next || b.len() <= next {
            return a.len().cmp(&b.len());
        }
        at = next;
    }
}

/// The eight bytes of `bytes` from `at`, little-endian, zero-padded past
/// its end.
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let rest = bytes.get(at..).unwrap_or_default();
    match rest.first_chunk::<8>() {
        Some(word) => u64::from_le_bytes(*word),
        // Fewer than eight bytes: shifted in one at a time, last first, not
        // copied to the stack (a call in WebAssembly).
        None => rest
            .iter()
            .rev()
            .fold(0u64, |word, &b| word << 8 | u64::from(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn keys_compare_as_strings_do() {
        let keys = [
            "",
            "a",
            "ab",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "abcdefgi",
            "abcdefghij",
            "abcdefghabcdefgh",
            "abcdefghabcdefgi",
            "abcdefghabcdefg",
            "é",
            "e\u{0}",
            "b",
            "bbcdefga",
            "abcdefghbbcdefga",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(
                    compare_keys(a.as_bytes(), b.as_bytes()),
                    a.cmp(b),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    /// Ascending lookups find what `get` finds, for keys in any order:
    /// every sequence of three keys from a small alphabet, present or not.
    #[test]
    fn ascending_lookups_agree_with_get() {
        let keys = ["", "a", "ab", "b", "ba", "c", "d", "dd", "e"];
        for present in 0u32..(1 << keys.len()) {
            let map: StringMap = keys
                .iter()
                .enumerate()
                .filter(|(i, _)| present & (1 << i) != 0)
                .map(|(i, k)| (*k, i.to_string()))
                .collect();
            for a in keys {
                for b in keys {
                    for c in keys {
                        let mut ascending = map.ascending();
                        for key in [a, b, c] {
                            assert_eq!(ascending.get(key), map.get(key), "{key} in {map:?}");
                        }
                    }
                }
            }
        }
        let long: StringMap = (0..5000)
            .map(|i| (format!("k{i:05}"), i.to_string()))
            .collect();
        let mut ascending = long.ascending();
        for i in (0..5200).step_by(7).chain([3, 4999, 0]) {
            let key = format!("k{i:05}");
            assert_eq!(ascending.get(&key), long.get(&key), "{key}");
        }
    }

    fn read(json: &str) -> Result<StringMap, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    fn btree(json: &str) -> Result<BTreeMap<String, String>, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_json_as_a_btree_map_does() {
        for json in [
            r#"{}"#,
            r#"{"b":"2","a":"1","c":""}"#,
            r#"{"a":"1","b":"2","a":"3"}"#,
            r#"{"k\u00e9y":"v\"q\"","z":"\ud83d\ude00","y":"x"}"#,
            r#"{"a":1}"#,
            r#"{"a":null}"#,
            r#"["a"]"#,
            r#""a""#,
            r#"{"a":"1""#,
        ] {
            let ours = read(json);
            let theirs = btree(json);
            match (&ours, &theirs) {
                (Ok(map), Ok(tree)) => {
                    let pairs: Vec<(&str, &str)> =
                        tree.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                    assert_eq!(map.iter().collect::<Vec<_>>(), pairs, "{json}");
                    for (k, v) in tree {
                        assert_eq!(map.get(k), Some(v.as_str()));
                    }
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{json}"),
                _ => panic!("{json}: {ours:?} vs {theirs:?}"),
            }
        }
    }

    #[test]
    fn edits_lookups_and_equality() {
        let mut map: StringMap = [("b", "2"), ("a", "1")].into_iter().collect();
        assert_eq!(map.insert("a".into(), "x".into()), Some("1".to_string()));
        assert_eq!(map.insert("c".into(), "3".into()), None);
        assert_eq!(map.remove("b"), Some("2".to_string()));
        assert_eq!(map.remove("b"), None);
        assert!(map.contains_key("c") && !map.contains_key("b"));
        assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "c"]);
        assert_eq!(map.iter_from("b").collect::<Vec<_>>(), [("c", "3")]);
        assert_eq!(map.iter_from("a").count(), 2);
        assert_eq!(map.iter_from("d").count(), 0);
        let same: StringMap = [("c", "3"), ("a", "x")].into_iter().collect();
        assert_eq!(map, same);
        assert_ne!(map, StringMap::new());
        assert_eq!(format!("{map:?}"), r#"{"a": "x", "c": "3"}"#);
    }

    #[test]
    fn many_sorted_entries_read_quickly_and_duplicates_keep_the_last() {
        let body: String = (0..200_000)
            .map(|i| format!(r#""k{i:07}":"{i}","#))
            .collect();
        let map = read(&format!(r#"{{{body}"k0000005":"last"}}"#)).unwrap();
        assert_eq!(map.len(), 200_000);
        assert_eq!(map.get("k0000005"), Some("last"));
        assert_eq!(map.get("k0199999"), Some("199999"));
    }
}

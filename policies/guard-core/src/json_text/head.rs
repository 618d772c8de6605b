//! An object's `metadata` and a few top-level members, read in one walk of
//! its text for the annotations and labels a policy asks about.
//!
//! A request's object may carry 100,000 annotations where the rules read
//! three. Reading them all into [`StringMap`]s through serde was a quarter of
//! a mutating policy's time; this walk passes over the entries it is not
//! asked for by the text's structure alone (the text was checked as JSON
//! when the request was read) and decodes only what it keeps.
//!
//! It answers only for the shapes kube-apiserver stores: anything else (a
//! repeated field, a field of another type, an escape serde would refuse)
//! makes it answer `None`, and the caller reads the object through serde,
//! whose words name the fault. A test holds the two readings together.

use std::borrow::Cow;

use super::scan::{closing_quote, skip_space, skip_value, string_at, walk};
use super::strict::{plain_value, VALUE_DEPTH};
use crate::request::{AdmissionRequest, Metadata, ReadError, Which};
use crate::string_map::StringMap;

/// The annotations and labels a reading keeps; the others are checked (each
/// value a string) and passed over.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked<'k> {
    pub annotations: Keys<'k>,
    pub labels: Keys<'k>,
    /// Top-level members whose text the reading hands back (`spec`).
    pub members: &'k [&'k str],
}

/// The entries of a map a reading keeps.
#[derive(Debug, Clone, Copy)]
pub enum Keys<'k> {
    /// Those under these keys (none when empty).
    Only(&'k [&'k str]),
    /// Every entry: the map as serde reads it.
    All,
}

impl Default for Keys<'_> {
    fn default() -> Self {
        Keys::Only(&[])
    }
}

impl Keys<'_> {
    /// Bit `n` set when a name `n` bytes long may be kept (63 for longer).
    fn lengths(&self) -> u64 {
        match self {
            Keys::Only(keys) => keys.iter().fold(0, |bits, k| bits | length_bit(k.len())),
            Keys::All => u64::MAX,
        }
    }

    fn keeps(&self, name: &str) -> bool {
        match self {
            Keys::Only(keys) => keys.contains(&name),
            Keys::All => true,
        }
    }
}

/// What [`read_head`] found.
#[derive(Debug)]
pub struct Head<'t> {
    /// `None` when the object has no `metadata` or it is `null`. Its maps
    /// hold the entries asked for only.
    pub metadata: Option<Metadata>,
    /// The text of each member of [`Asked::members`], in its order; `None`
    /// when absent (a `null` is handed back as its text).
    pub members: Vec<Option<&'t str>>,
    /// The text of each member of `metadata` named to [`read_head_keeping`],
    /// in its order, as [`Head::members`]; empty from [`read_head`].
    pub metadata_members: Vec<Option<&'t str>>,
}

/// Reads `text`, the JSON text of an object whose syntax was checked (a
/// request's `object`, held as a raw value), as serde reads a view of
/// `metadata: Option<Metadata>` and the asked members as raw values; `None`
/// when the text holds anything that reading would refuse or this one does
/// not answer for.
pub fn read_head<'t>(text: &'t str, asked: &Asked<'_>) -> Option<Head<'t>> {
    read_head_keeping(text, asked, &[])
}

/// [`AdmissionRequest::metadata`], its maps holding only the `labels` and
/// `annotations` asked for. One walk of the text for the shapes
/// kube-apiserver stores (a request may carry 100,000 labels the rules need
/// only know are strings); serde's reading, and its words, for the rest,
/// which may then hold more than was asked.
pub fn metadata_keeping(
    request: &AdmissionRequest,
    which: Which,
    labels: Keys<'_>,
    annotations: Keys<'_>,
) -> Result<Option<Metadata>, ReadError> {
    let asked = Asked {
        annotations,
        labels,
        members: &[],
    };
    match request
        .raw(which)
        .and_then(|raw| read_head(raw.get(), &asked))
    {
        Some(head) => Ok(Some(head.metadata.unwrap_or_default())),
        None => request.metadata(which),
    }
}

/// [`read_head`], handing back too the text of the members of `metadata`
/// named in `kept` (a `uid`, the `managedFields`; not those the reading
/// itself reads, such as `name` or `labels`). A kept member met twice makes
/// it answer `None`, as a repeated field does.
pub fn read_head_keeping<'t>(text: &'t str, asked: &Asked<'_>, kept: &[&str]) -> Option<Head<'t>> {
    read(text, asked, kept, false)
}

/// [`read_head_keeping`], answering only for a text that plainly holds
/// nothing [`super::check_strictly`] refuses: every value it passes over is
/// checked, in the same pass, as [`super::strict::plainly_readable`] checks
/// a whole text, and those it reads are decoded. One walk where a check of
/// the whole text and a reading would be two; `None` leaves the question to
/// a strict reading.
pub fn read_head_strictly<'t>(text: &'t str, asked: &Asked<'_>, kept: &[&str]) -> Option<Head<'t>> {
    read(text, asked, kept, true)
}

fn read<'t>(text: &'t str, asked: &Asked<'_>, kept: &[&str], strict: bool) -> Option<Head<'t>> {
    let bytes = text.as_bytes();
    let mut metadata = Seen::default();
    let mut members = vec![None; asked.members.len()];
    let mut fine = true;
    let start = skip_space(bytes, 0);
    // The containers a member's value may nest, as counted in the whole text.
    let depth = strict.then(|| VALUE_DEPTH.saturating_sub(1));
    walk(text, start, |key, _, at| {
        if key == "metadata" {
            let inner = depth.map(|d| d.saturating_sub(1));
            let (meta, end) = read_metadata(text, at, asked, kept, inner)?;
            fine &= metadata.once(meta);
            return Some(end);
        }
        let end = pass(text, at, depth)?;
        fine &= keep(&mut members, asked.members, &key, text.get(at..end)?);
        Some(end)
    })
    .ok()?;
    let (metadata, metadata_members) = metadata.0.flatten().unzip();
    fine.then(|| Head {
        metadata,
        members,
        metadata_members: metadata_members.unwrap_or_else(|| vec![None; kept.len()]),
    })
}

/// Past the value at `at`; with `depth`, only when it plainly reads as a
/// `Value` nested less than `depth` deep.
fn pass(text: &str, at: usize, depth: Option<u8>) -> Option<usize> {
    match depth {
        Some(depth) => plain_value(text, at, depth, None),
        None => skip_value(text.as_bytes(), at),
    }
}

/// Keeps `value` in the slot of `names` that `key` names, if any; false
/// when that slot was filled before.
fn keep<'t>(slots: &mut [Option<&'t str>], names: &[&str], key: &str, value: &'t str) -> bool {
    match names.iter().position(|name| *name == key) {
        Some(index) => slots
            .get_mut(index)
            .is_some_and(|slot| slot.replace(value).is_none()),
        None => true,
    }
}

/// A field met at most once, as serde's derived readers require.
struct Seen<T>(Option<T>);

impl<T> Default for Seen<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<T> Seen<T> {
    /// Keeps `value`; false when the field was met before.
    fn once(&mut self, value: T) -> bool {
        self.0.replace(value).is_none()
    }
}

/// The metadata and the text of its `kept` members.
type MetadataRead<'t> = Option<(Metadata, Vec<Option<&'t str>>)>;

/// `metadata` at `at`: `None` inside when it is `null`; the end of its value.
/// `depth` as for [`pass`], for its members' values.
fn read_metadata<'t>(
    text: &'t str,
    at: usize,
    asked: &Asked<'_>,
    kept: &[&str],
    depth: Option<u8>,
) -> Option<(MetadataRead<'t>, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'{') {
        let end = skip_value(bytes, at)?;
        return (text.get(at..end)? == "null").then_some((None, end));
    }
    let mut kept_text = vec![None; kept.len()];
    let mut name = Seen::default();
    let mut generate_name = Seen::default();
    let mut namespace = Seen::default();
    let mut labels = Seen::default();
    let mut annotations = Seen::default();
    let mut finalizers = Seen::default();
    let mut deletion_timestamp = Seen::default();
    let mut fine = true;
    let end = walk(text, at, |key, _, at| match &*key {
        "name" => string_field(text, at, &mut name, &mut fine),
        "generateName" => string_field(text, at, &mut generate_name, &mut fine),
        "namespace" => string_field(text, at, &mut namespace, &mut fine),
        "labels" => {
            let (map, end) = picked(text, at, asked.labels)?;
            fine &= labels.once(map);
            Some(end)
        }
        "annotations" => {
            let (map, end) = picked(text, at, asked.annotations)?;
            fine &= annotations.once(map);
            Some(end)
        }
        "finalizers" => {
            let end = skip_value(bytes, at)?;
            let list: Option<Vec<String>> = serde_json::from_str(text.get(at..end)?).ok()?;
            fine &= finalizers.once(list.unwrap_or_default());
            Some(end)
        }
        "deletionTimestamp" => {
            let end = skip_value(bytes, at)?;
            let stamp: Option<String> = serde_json::from_str(text.get(at..end)?).ok()?;
            fine &= deletion_timestamp.once(stamp);
            Some(end)
        }
        _ => {
            let end = pass(text, at, depth)?;
            fine &= keep(&mut kept_text, kept, &key, text.get(at..end)?);
            Some(end)
        }
    })
    .ok()?;
    fine.then(|| {
        let metadata = Metadata {
            name: name.0.unwrap_or_default(),
            generate_name: generate_name.0.unwrap_or_default(),
            namespace: namespace.0.unwrap_or_default(),
            labels: labels.0.unwrap_or_default(),
            annotations: annotations.0.unwrap_or_default(),
            finalizers: finalizers.0.unwrap_or_default(),
            deletion_timestamp: deletion_timestamp.0.flatten(),
        };
        (Some((metadata, kept_text)), end)
    })
}

/// A string field (`null` reads as empty), into `slot`; `fine` turns false
/// when the field was met before.
fn string_field(text: &str, at: usize, slot: &mut Seen<String>, fine: &mut bool) -> Option<usize> {
    let (value, end) = match text.as_bytes().get(at)? {
        b'"' => string_at(text, at).map(|(value, end)| (value.into_owned(), end))?,
        _ => {
            let end = skip_value(text.as_bytes(), at)?;
            (text.get(at..end)? == "null").then(|| (String::new(), end))?
        }
    };
    *fine &= slot.once(value);
    Some(end)
}

/// A map of strings at `at` (`null` reads as empty), keeping the entries
/// `keys` asks for (later duplicates winning, as in a [`StringMap`]); every
/// value must be a string. The end of its value.
///
/// Its own loop rather than [`walk`]'s: a stored object may hold 115,000
/// labels of a few bytes each, where a call per entry and a comparison of
/// each name with each key asked cost more than finding its quotes. A name
/// whose length no key asked has is passed over unread.
fn picked(text: &str, at: usize, keys: Keys<'_>) -> Option<(StringMap, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'{') {
        let end = skip_value(bytes, at)?;
        return (text.get(at..end)? == "null").then(|| (StringMap::new(), end));
    }
    let lengths = keys.lengths();
    let mut kept = StringMap::new();
    let mut at = skip_space(bytes, at.saturating_add(1));
    if bytes.get(at) == Some(&b'}') {
        return Some((kept, at.saturating_add(1)));
    }
    loop {
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let name_at = at;
        let (name_close, name_escaped) = closing_quote(bytes, at.saturating_add(1))?;
        at = skip_space(bytes, name_close.saturating_add(1));
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        at = skip_space(bytes, at.saturating_add(1));
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let value_at = at;
        let (value_close, value_escaped) = closing_quote(bytes, at.saturating_add(1))?;
        // A name with an escape is decoded (serde refuses a lone surrogate
        // there too); a plain one only when its length may match.
        let length = name_close.checked_sub(name_at)?.saturating_sub(1);
        let name = if name_escaped {
            Some(string_at(text, name_at)?.0)
        } else if lengths & length_bit(length) != 0 {
            text.get(name_at.saturating_add(1)..name_close)
                .map(Cow::Borrowed)
        } else {
            None
        };
        match name {
            Some(name) if keys.keeps(&name) => {
                let value = match value_escaped {
                    true => string_at(text, value_at)?.0,
                    false => Cow::Borrowed(text.get(value_at.saturating_add(1)..value_close)?),
                };
                kept.append(&name, &value);
            }
            // Every value is decoded, as serde reads each into the map: an
            // escape it cannot decode (a lone surrogate) is refused.
            _ if value_escaped => {
                string_at(text, value_at)?;
            }
            _ => {}
        }
        at = skip_space(bytes, value_close.saturating_add(1));
        match bytes.get(at)? {
            b',' => at = skip_space(bytes, at.saturating_add(1)),
            b'}' => return Some((kept.sorted(), at.saturating_add(1))),
            _ => return None,
        }
    }
}

/// Bit `n` set for a name `n` bytes long (63 for longer).
fn length_bit(length: usize) -> u64 {
    1 << length.min(63)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_text::check_strictly;
    use serde::Deserialize;
    use serde_json::value::RawValue;

    /// serde's reading the fast one stands in for.
    #[derive(Deserialize)]
    struct View {
        #[serde(default)]
        metadata: Option<Metadata>,
        #[serde(default)]
        spec: Option<Box<RawValue>>,
    }

    /// serde's reading of the `metadata` member kept as text.
    #[derive(Deserialize)]
    struct KeptView {
        #[serde(default)]
        metadata: Option<KeptMetadata>,
    }

    #[derive(Deserialize)]
    struct KeptMetadata {
        #[serde(default)]
        uid: Option<Box<RawValue>>,
    }

    const ANNOTATIONS: &[&str] = &["a", "reconcile.fluxcd.io/suspended", "k\"q"];
    const LABELS: &[&str] = &["l", "app"];
    const ASKED: Asked<'static> = Asked {
        annotations: Keys::Only(ANNOTATIONS),
        labels: Keys::Only(LABELS),
        members: &["spec"],
    };
    const EVERY: Asked<'static> = Asked {
        annotations: Keys::All,
        labels: Keys::All,
        members: &["spec"],
    };

    fn restricted(map: &StringMap, keys: &[&str]) -> Vec<(String, String)> {
        keys.iter()
            .filter_map(|k| map.get(k).map(|v| (k.to_string(), v.to_string())))
            .collect()
    }

    /// Checks one text; true when the fast reading answered.
    fn agree(text: &str) -> bool {
        let by_serde: Result<View, _> = serde_json::from_str(text);
        let every = read_head(text, &EVERY);
        let Some(head) = read_head(text, &ASKED) else {
            assert!(every.is_none(), "{text}");
            assert!(
                read_head_keeping(text, &ASKED, &["uid"]).is_none(),
                "{text}"
            );
            assert!(
                read_head_strictly(text, &ASKED, &["uid"]).is_none(),
                "{text}"
            );
            return false;
        };
        assert!(head.metadata_members.is_empty(), "{text}");
        if let Some(keeping) = read_head_keeping(text, &ASKED, &["uid"]) {
            assert_eq!(keeping.metadata, head.metadata, "{text}");
            assert_eq!(keeping.members, head.members, "{text}");
            let view: KeptView = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("serde refuses what was read: {e}: {text}"));
            let uid = view.metadata.and_then(|m| m.uid);
            let kept = keeping.metadata_members.first().copied().flatten();
            assert_eq!(
                kept.filter(|t| *t != "null"),
                uid.as_deref().map(RawValue::get),
                "{text}"
            );
            if let Some(strictly) = read_head_strictly(text, &ASKED, &["uid"]) {
                assert!(check_strictly(text).is_ok(), "{text}");
                assert_eq!(strictly.metadata, keeping.metadata, "{text}");
                assert_eq!(strictly.members, keeping.members, "{text}");
                assert_eq!(strictly.metadata_members, keeping.metadata_members);
            }
        } else {
            assert!(
                read_head_strictly(text, &ASKED, &["uid"]).is_none(),
                "{text}"
            );
        }
        let view = by_serde.unwrap_or_else(|e| panic!("serde refuses what was read: {e}: {text}"));
        let every = every.unwrap_or_else(|| panic!("kept every entry of none: {text}"));
        assert_eq!(every.metadata, view.metadata, "{text}");
        assert_eq!(every.members, head.members, "{text}");
        match (&head.metadata, &view.metadata) {
            (None, None) => {}
            (Some(fast), Some(slow)) => {
                assert_eq!(fast.name, slow.name, "{text}");
                assert_eq!(fast.generate_name, slow.generate_name, "{text}");
                assert_eq!(fast.namespace, slow.namespace, "{text}");
                assert_eq!(fast.finalizers, slow.finalizers, "{text}");
                assert_eq!(fast.deletion_timestamp, slow.deletion_timestamp, "{text}");
                for (fast_map, slow_map, keys) in [
                    (&fast.annotations, &slow.annotations, ANNOTATIONS),
                    (&fast.labels, &slow.labels, LABELS),
                ] {
                    assert_eq!(
                        restricted(fast_map, keys),
                        restricted(slow_map, keys),
                        "{text}"
                    );
                    assert_eq!(fast_map.len(), restricted(fast_map, keys).len(), "{text}");
                }
            }
            (fast, slow) => panic!("{fast:?} against {slow:?}: {text}"),
        }
        let spec = head
            .members
            .first()
            .copied()
            .flatten()
            .filter(|s| *s != "null");
        assert_eq!(spec, view.spec.as_deref().map(RawValue::get), "{text}");
        true
    }

    use crate::testing::Rng;

    fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
        rng.pick(from).copied().unwrap()
    }

    fn scalar(rng: &mut Rng) -> &'static str {
        pick(
            rng,
            &[
                r#""v""#,
                r#""""#,
                r#""x\"y""#,
                r#""\u00e9\n""#,
                r#""\ud800""#,
                "null",
                "1",
                "-2.5e3",
                "true",
                "[]",
                r#"["f","g"]"#,
                "[1]",
                "{}",
                r#"{"a":"b"}"#,
            ],
        )
    }

    fn map(rng: &mut Rng, keys: &[&str]) -> String {
        let entries: Vec<String> = (0..rng.below(5))
            .map(|_| {
                let value = if rng.below(6) == 0 {
                    scalar(rng)
                } else {
                    pick(rng, &[r#""v1""#, r#""v2""#, r#""e\u0301""#])
                };
                format!("{}:{value}", pick(rng, keys))
            })
            .collect();
        format!("{{{}}}", entries.join(","))
    }

    fn metadata(rng: &mut Rng) -> String {
        let annotation_keys = [
            r#""a""#,
            r#""b""#,
            r#""reconcile.fluxcd.io/suspended""#,
            r#""\u0061""#,
            r#""k\"q""#,
        ];
        let label_keys = [r#""l""#, r#""app""#, r#""other""#];
        let members: Vec<String> = (0..rng.below(7))
            .map(|_| {
                let field = pick(
                    rng,
                    &[
                        "name",
                        "generateName",
                        "namespace",
                        "labels",
                        "annotations",
                        "finalizers",
                        "deletionTimestamp",
                        "uid",
                        "n\\u0061me",
                    ],
                );
                let value = match (field, rng.below(4)) {
                    ("annotations", 0..=2) => map(rng, &annotation_keys),
                    ("labels", 0..=2) => map(rng, &label_keys),
                    ("finalizers", 0..=1) => pick(
                        rng,
                        &[
                            r#"["a","b"]"#,
                            r#"[ "a" , "\u00e9" ]"#,
                            "[ ]",
                            r#"["a",]"#,
                            r#"["a",null]"#,
                        ],
                    )
                    .to_string(),
                    (_, 0..=1) => r#""apps""#.to_string(),
                    _ => scalar(rng).to_string(),
                };
                format!(r#""{field}" : {value}"#)
            })
            .collect();
        format!("{{ {} }}", members.join(" , "))
    }

    #[test]
    fn agrees_with_serde_or_leaves_the_text_to_it() {
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut answered = 0;
        let total = 20_000;
        for _ in 0..total {
            let members: Vec<String> = (0..rng.below(5))
                .map(|_| {
                    let key = pick(
                        &mut rng,
                        &["metadata", "spec", "status", "kind", "met\\u0061data"],
                    );
                    let value = match (key, rng.below(5)) {
                        ("metadata" | "met\\u0061data", 0..=3) => metadata(&mut rng),
                        ("spec", 0..=2) => r#"{"suspend":true,"x":[{"y":"}"}]}"#.to_string(),
                        _ => scalar(&mut rng).to_string(),
                    };
                    format!(r#""{key}":{value}"#)
                })
                .collect();
            let text = format!("{{{}}}", members.join(","));
            if agree(&text) {
                answered += 1;
            }
        }
        // The fast reading must answer for most shapes, or it saves nothing.
        assert!(answered > total / 4, "{answered} of {total}");
    }

    /// Strictly, the walk leaves to a strict reading what a `Value` could
    /// not hold, wherever it lies, and nesting within a level of the limit.
    #[test]
    fn strictly_only_what_a_value_holds() {
        let nested = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let fine = [
            format!(r#"{{"spec":{}}}"#, nested(125)),
            format!(r#"{{"metadata":{{"x":{}}}}}"#, nested(124)),
            r#"{"metadata":{"uid":"\ud83d\ude00","labels":{"\u0061":"1"}},"n":-0.5}"#.into(),
        ];
        let left = [
            format!(r#"{{"spec":{}}}"#, nested(126)),
            format!(r#"{{"metadata":{{"x":{}}}}}"#, nested(125)),
            r#"{"metadata":{"uid":"\ud800"}}"#.into(),
            r#"{"metadata":{"labels":{"\ud800":"1"}}}"#.into(),
            r#"{"metadata":{"x":[1e400]}}"#.into(),
            r#"{"spec":{"\udc00":1}}"#.into(),
            r#"{"n":1E2}"#.into(),
        ];
        for text in fine {
            assert!(check_strictly(&text).is_ok(), "{text}");
            assert!(
                read_head_strictly(&text, &ASKED, &["uid"]).is_some(),
                "{text}"
            );
        }
        for text in left {
            assert!(
                read_head_strictly(&text, &ASKED, &["uid"]).is_none(),
                "{text}"
            );
        }
    }

    #[test]
    fn keeps_only_what_is_asked() {
        let text = r#"{"kind":"K","metadata":{"name":"apps","annotations":{"a":"1","b":"2","a":"3"},"labels":null},"spec":{"s":1}}"#;
        let head = read_head(text, &ASKED).unwrap();
        let metadata = head.metadata.unwrap();
        assert_eq!(metadata.name, "apps");
        assert_eq!(metadata.annotations.get("a"), Some("3"));
        assert_eq!(metadata.annotations.get("b"), None);
        assert_eq!(head.members, [Some(r#"{"s":1}"#)]);
    }
}

//! The reading of a listed Alert through serde that the walk
//! ([`super::in_place`]) replaced: kept for the tests, which hold the walk
//! against it, and it against [`Alert::from_object`].

use std::fmt;

use guard_core::string_map::compare_keys;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use super::{Alert, Source};

/// A listed Alert read in place: the fields [`Alert`] takes, with the types
/// its CRD schema gives them, borrowed from the JSON text. An Alert this
/// cannot read (an escaped string, a `null`, a field of another type, a map
/// out of key order) is read through [`Alert::from_object`] instead, which
/// gives the same answer for every shape.
#[derive(Deserialize)]
pub(crate) struct ListedAlert<'a> {
    #[serde(borrow, default)]
    metadata: ListedMeta<'a>,
    #[serde(borrow, default)]
    spec: ListedSpec<'a>,
}

#[derive(Deserialize, Default)]
struct ListedMeta<'a> {
    #[serde(default)]
    name: &'a str,
    #[serde(default)]
    namespace: &'a str,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ListedSpec<'a> {
    #[serde(default)]
    suspend: bool,
    #[serde(default)]
    summary: &'a str,
    #[serde(borrow, default)]
    event_metadata: Pairs<'a>,
    #[serde(borrow, default)]
    event_sources: Vec<ListedSource<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListedSource<'a> {
    #[serde(default)]
    kind: &'a str,
    #[serde(default)]
    name: &'a str,
    #[serde(default)]
    namespace: &'a str,
    /// `None` when unset, as an empty map is not.
    #[serde(borrow, default)]
    match_labels: Option<Pairs<'a>>,
}

/// A map of strings to strings, in strictly increasing key order (as
/// kube-apiserver writes maps, Go's encoding/json sorting their keys), so
/// with no duplicate keys: then it reads as `serde_json::Map` reads it.
#[derive(Default)]
struct Pairs<'a>(Vec<(&'a str, &'a str)>);

impl<'de: 'a, 'a> Deserialize<'de> for Pairs<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Entries<'a> {
            type Value = Pairs<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of strings in key order")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pairs<'a>, A::Error> {
                // A map of up to sixteen keys read without growing (from
                // empty, it is moved four times on the way to sixteen).
                let mut pairs: Vec<(&'a str, &'a str)> = Vec::with_capacity(16);
                while let Some((key, value)) = map.next_entry::<&'de str, &'de str>()? {
                    // Keys under one prefix agree far in: compared eight
                    // bytes at a time, not one (WebAssembly's memcmp).
                    let after = |&(last, _): &(&str, &str)| {
                        compare_keys(last.as_bytes(), key.as_bytes()).is_lt()
                    };
                    if pairs.last().is_some_and(|last| !after(last)) {
                        return Err(serde::de::Error::custom("keys out of order"));
                    }
                    pairs.push((key, value));
                }
                Ok(Pairs(pairs))
            }
        }
        deserializer.deserialize_map(Entries(std::marker::PhantomData))
    }
}

impl<'a> Alert<'a> {
    /// A listed Alert read in place; the same as [`Alert::from_object`] on
    /// the same JSON.
    pub(crate) fn from_listed(listed: &'a ListedAlert<'a>) -> Self {
        let (meta, spec) = (&listed.metadata, &listed.spec);
        Self {
            name: meta.name,
            namespace: meta.namespace,
            suspended: spec.suspend,
            summary: Ok(Some(spec.summary).filter(|s| !s.is_empty())),
            event_metadata: Ok(spec.event_metadata.0.clone()),
            sources: spec
                .event_sources
                .iter()
                .map(|s| Source {
                    kind: s.kind,
                    name: s.name,
                    namespace: Some(s.namespace).filter(|n| !n.is_empty()),
                    match_labels: s
                        .match_labels
                        .as_ref()
                        .map(|m| m.0.iter().map(|&(k, v)| (k, Some(v))).collect()),
                })
                .collect(),
        }
    }
}

//! A listed Alert read from its JSON text in place, by one walk of the
//! text ([`TextReader`]): the fields the rules take, borrowed, with the
//! types its CRD gives them. In a List of thousands of Alerts, serde's
//! reading (a call per token, even into borrowed views) of the
//! `eventMetadata` and `matchLabels` maps was most of the policy's time.
//!
//! It answers `None` wherever the borrowed serde view it replaced
//! (`serde_view::ListedAlert`, kept for the tests) fails: a field of
//! another type, an escaped string, a map out of key order, a repeated
//! field; or where the reader gives way. The caller then reads the Alert
//! whole ([`Alert::from_object`]), to the same answer. The tests below hold
//! the walk against that view on Lists of every shape, and the view is held
//! against the whole reading in `alert`'s tests.

use super::{Alert, Source};
use guard_core::json_text::TextReader;
use guard_core::string_map::compare_keys;

impl<'a> Alert<'a> {
    /// The Alert whose text `reader` is at, as [`Alert::from_object`]
    /// reads the same text parsed whole, or `None` (see the module's text).
    pub fn read_in_place(reader: &mut TextReader<'a>) -> Option<Self> {
        let (mut metadata, mut spec) = (None, None);
        reader.object(|r, name| match name {
            "metadata" => once(&mut metadata, read_metadata(r)?),
            "spec" => once(&mut spec, Spec::read(r)?),
            _ => r.skip(),
        })?;
        let (name, namespace) = metadata.unwrap_or_default();
        let spec = spec.unwrap_or_default();
        Some(Self {
            name,
            namespace,
            suspended: spec.suspend,
            summary: Ok(Some(spec.summary).filter(|s| !s.is_empty())),
            event_metadata: Ok(spec.event_metadata),
            sources: spec.sources,
        })
    }
}

/// Fills `slot`; `None` when it was filled before, as serde refuses a
/// repeated field.
fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    slot.replace(value).is_none().then_some(())
}

/// `metadata`: its name and namespace.
fn read_metadata<'a>(reader: &mut TextReader<'a>) -> Option<(&'a str, &'a str)> {
    let (mut name, mut namespace) = (None, None);
    reader.object(|r, field| match field {
        "name" => once(&mut name, r.plain_string()?),
        "namespace" => once(&mut namespace, r.plain_string()?),
        _ => r.skip(),
    })?;
    Some((name.unwrap_or_default(), namespace.unwrap_or_default()))
}

#[derive(Default)]
struct Spec<'a> {
    suspend: bool,
    summary: &'a str,
    event_metadata: Vec<(&'a str, &'a str)>,
    sources: Vec<Source<'a>>,
}

impl<'a> Spec<'a> {
    fn read(reader: &mut TextReader<'a>) -> Option<Self> {
        let (mut suspend, mut summary, mut metadata, mut sources) = (None, None, None, None);
        reader.object(|r, field| match field {
            "suspend" => once(&mut suspend, r.boolean()?),
            "summary" => once(&mut summary, r.plain_string()?),
            "eventMetadata" => once(&mut metadata, pairs(r, |v| v)?),
            "eventSources" => {
                let mut list = Vec::new();
                r.list(|r| {
                    list.push(read_source(r)?);
                    Some(())
                })?;
                once(&mut sources, list)
            }
            _ => r.skip(),
        })?;
        Some(Self {
            suspend: suspend.unwrap_or_default(),
            summary: summary.unwrap_or_default(),
            event_metadata: metadata.unwrap_or_default(),
            sources: sources.unwrap_or_default(),
        })
    }
}

/// One `eventSources[]` entry.
fn read_source<'a>(reader: &mut TextReader<'a>) -> Option<Source<'a>> {
    let (mut kind, mut name, mut namespace, mut labels) = (None, None, None, None);
    reader.object(|r, field| match field {
        "kind" => once(&mut kind, r.plain_string()?),
        "name" => once(&mut name, r.plain_string()?),
        "namespace" => once(&mut namespace, r.plain_string()?),
        // `null` is unset, as an empty map is not.
        "matchLabels" => {
            let read = if r.null() {
                None
            } else {
                Some(pairs(r, Some)?)
            };
            once(&mut labels, read)
        }
        _ => r.skip(),
    })?;
    Some(Source {
        kind: kind.unwrap_or_default(),
        name: name.unwrap_or_default(),
        namespace: namespace.filter(|n: &&str| !n.is_empty()),
        match_labels: labels.flatten(),
    })
}

/// A map of strings in strictly increasing key order (as kube-apiserver
/// writes maps, Go's encoding/json sorting their keys), so with no repeated
/// key: then it reads as `serde_json::Map` reads it. Each value taken by
/// `value`.
fn pairs<'a, V>(
    reader: &mut TextReader<'a>,
    value: impl Fn(&'a str) -> V,
) -> Option<Vec<(&'a str, V)>> {
    let mut pairs: Vec<(&'a str, V)> = Vec::new();
    reader.object(|r, key| {
        let text = r.plain_string()?;
        match pairs.last() {
            Some((last, _)) if !compare_keys(last.as_bytes(), key.as_bytes()).is_lt() => {
                return None
            }
            Some(_) => {}
            // Room for a map of sixteen keys at once, not grown four times.
            None => pairs.reserve(16),
        }
        pairs.push((key, value(text)));
        Some(())
    })?;
    Some(pairs)
}

#[cfg(test)]
mod tests {
    use super::super::serde_view::ListedAlert;
    use super::*;
    use guard_core::context::{each_listed, each_listed_in_place};

    use guard_core::testing::Rng;

    fn pick<'s>(rng: &mut Rng, from: &[&'s str]) -> &'s str {
        rng.pick(from).copied().unwrap()
    }

    /// Strings the reading borrows, then the ones it gives way on (or that
    /// serde refuses), then values of other types.
    const STRINGS: [&str; 10] = [
        r#""a""#,
        r#""flux-system""#,
        r#""""#,
        r#""*""#,
        r#""a\"b""#,
        r#""\u00e9""#,
        "\"a\u{1}b\"",
        "null",
        "5",
        "[]",
    ];
    const PLAIN_STRINGS: usize = 4;

    /// Members of a map in key order (`plain`), or not: out of order,
    /// repeated, a value of another type, an escaped key.
    fn map(rng: &mut Rng, plain: bool) -> String {
        let keys = [
            "a",
            "b",
            "team.example.com/label-00",
            "team.example.com/label-01",
            "z",
        ];
        if !plain && rng.below(3) == 0 {
            return pick(
                rng,
                &[
                    r#"{"b":"1","a":"2"}"#,
                    r#"{"a":"1","a":"2"}"#,
                    r#"{"a":1}"#,
                    r#"{"a":null}"#,
                    r#"{"a\"":"1"}"#,
                    "null",
                    "[]",
                    r#"{"a":"1",}"#,
                ],
            )
            .to_string();
        }
        let mut members = Vec::new();
        for k in keys {
            if rng.below(2) == 0 {
                members.push(format!("\"{k}\":{}", string(rng, plain)));
            }
        }
        format!("{{{}}}", members.join(","))
    }

    fn string(rng: &mut Rng, plain: bool) -> String {
        let kinds = if plain { PLAIN_STRINGS } else { STRINGS.len() };
        STRINGS[rng.below(kinds)].to_string()
    }

    /// An object of `members` in a random order, some left out, sometimes
    /// one repeated (`plain`: never), with whitespace or none.
    fn object(rng: &mut Rng, mut members: Vec<String>, plain: bool) -> String {
        members.retain(|_| rng.below(5) != 0);
        for i in (1..members.len()).rev() {
            members.swap(i, rng.below(i + 1));
        }
        if !plain && !members.is_empty() && rng.below(8) == 0 {
            let again = members[rng.below(members.len())].clone();
            members.push(again);
        }
        let (comma, open, close) = match rng.below(3) {
            0 => (" , ", "{ ", " }"),
            1 => (",\n  ", "{\n  ", "\n}"),
            _ => (",", "{", "}"),
        };
        format!("{open}{}{close}", members.join(comma))
    }

    fn source(rng: &mut Rng, plain: bool) -> String {
        if !plain && rng.below(10) == 0 {
            return pick(rng, &["null", "[]", r#"["a"]"#]).to_string();
        }
        let labels = if rng.below(4) == 0 {
            "null".to_string()
        } else {
            map(rng, plain)
        };
        let members = vec![
            format!(r#""kind":{}"#, string(rng, plain)),
            format!(r#""name":{}"#, string(rng, plain)),
            format!(r#""namespace":{}"#, string(rng, plain)),
            format!(r#""matchLabels":{labels}"#),
            r#""apiVersion":"x/v1""#.to_string(),
        ];
        object(rng, members, plain)
    }

    fn alert(rng: &mut Rng, plain: bool) -> String {
        let sources: Vec<String> = (0..rng.below(4)).map(|_| source(rng, plain)).collect();
        let suspend = if plain {
            pick(rng, &["true", "false"])
        } else {
            pick(rng, &["true", "false", "null", r#""true""#, "1"])
        };
        let spec = vec![
            format!(r#""suspend":{suspend}"#),
            format!(r#""summary":{}"#, string(rng, plain)),
            format!(r#""eventMetadata":{}"#, map(rng, plain)),
            format!(r#""eventSources":[{}]"#, sources.join(",")),
            r#""providerRef":{"name":"slack"}"#.to_string(),
            r#""eventSeverity":"info""#.to_string(),
        ];
        let metadata = vec![
            format!(r#""name":{}"#, string(rng, plain)),
            format!(r#""namespace":{}"#, string(rng, plain)),
            r#""uid":"9d8c""#.to_string(),
            r#""generation":1"#.to_string(),
            r#""annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"a\":[1,-2.5e+3,true]}\n"}"#.to_string(),
        ];
        let (metadata, spec) = if !plain && rng.below(10) == 0 {
            let odd = ["null", "5", r#""x""#, "[]"];
            (pick(rng, &odd).to_string(), pick(rng, &odd).to_string())
        } else {
            (object(rng, metadata, plain), object(rng, spec, plain))
        };
        let members = vec![
            r#""apiVersion":"notification.toolkit.fluxcd.io/v1beta3""#.to_string(),
            r#""kind":"Alert""#.to_string(),
            format!(r#""metadata":{metadata}"#),
            format!(r#""spec":{spec}"#),
            r#""status":{"conditions":[{"type":"Ready","status":"True","observedGeneration":-1}],"x":[[],{},null,0.5e-3]}"#.to_string(),
        ];
        object(rng, members, plain)
    }

    /// What each reading makes of a List: its count, and each Alert taken.
    fn in_place(text: &[u8], limit: usize) -> Option<(usize, Vec<String>)> {
        let mut alerts = Vec::new();
        let count = each_listed_in_place(text, limit, Alert::read_in_place, |alert| {
            alerts.push(format!("{alert:?}"));
        })?;
        Some((count, alerts))
    }

    fn by_serde(text: &[u8], limit: usize) -> Result<(usize, Vec<String>), String> {
        let mut alerts = Vec::new();
        let count = each_listed::<ListedAlert<'_>>(text, limit, |listed| {
            alerts.push(format!("{:?}", Alert::from_listed(&listed)));
        })
        .map_err(|e| e.to_string())?;
        Ok((count, alerts))
    }

    /// The walk reads a List as serde reads it into `ListedAlert`s: on
    /// Alerts of every shape the generator makes, each field of the types
    /// its CRD gives or of others, in any order, repeated or not, and on
    /// Lists cut short or with a byte changed, wherever the walk answers,
    /// serde reads the same Alerts; and it answers for every plain List.
    #[test]
    fn reads_a_list_as_serde_reads_it() {
        let mut rng = Rng::new(17);
        let (mut answered, mut plain_lists) = (0, 0);
        for round in 0..6000 {
            let plain = round % 3 == 0;
            let alerts: Vec<String> = (0..rng.below(5)).map(|_| alert(&mut rng, plain)).collect();
            let mut text =
                format!(r#"{{"kind":"AlertList","items":[{}]}}"#, alerts.join(",")).into_bytes();
            let broken = !plain && round % 5 == 1;
            if broken {
                let at = rng.below(text.len());
                match rng.below(3) {
                    0 => text.truncate(at),
                    1 => text[at] = b"\"{}[],:\\0an \x01"[rng.below(13)],
                    _ => {
                        text.remove(at);
                    }
                }
            }
            let limit = rng.below(6);
            let serde = by_serde(&text, limit);
            match in_place(&text, limit) {
                Some(read) => {
                    assert_eq!(Ok(read), serde, "{}", String::from_utf8_lossy(&text));
                    answered += 1;
                }
                None => assert!(!plain, "{}", String::from_utf8_lossy(&text)),
            }
            plain_lists += usize::from(plain);
        }
        // The odd rounds are not all given way on.
        assert!(answered > plain_lists + 500, "{answered} {plain_lists}");
    }
}

//! The outcome of one evaluation, and its waPC wire form.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json_text::{ObjectText, MUTATED_OBJECT_DEPTH};
use crate::names::bounded;

/// How many containers deep `value` nests (a scalar is 0), without recursion.
fn nesting(value: &Value) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(value, 0usize)];
    while let Some((value, above)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(members) => Box::new(members.values()),
            _ => continue,
        };
        let depth = above.saturating_add(1);
        deepest = deepest.max(depth);
        pending.extend(children.map(|child| (child, depth)));
    }
    deepest
}

/// A policy's reply to `validate`, the SDK's `ValidationResponse`
/// (kubewarden-policy-sdk 0.17.3, `src/response.rs`), declared once for
/// its writer and its readers: the policies write it with borrowed text
/// ([`Verdict::to_wire`]); the harness and the fuzzer read it as
/// policy-server does (the default, owned types). Like the SDK's, it has
/// no `deny_unknown_fields`, and each absent member is written `null`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(bound(deserialize = "Text: Deserialize<'de> + Ord, Object: Deserialize<'de>"))]
pub struct ValidationResponse<Text = String, Object = Value> {
    pub accepted: bool,
    pub message: Option<Text>,
    pub code: Option<u16>,
    pub mutated_object: Option<Object>,
    pub audit_annotations: Option<BTreeMap<Text, Text>>,
    pub warnings: Option<Vec<Text>>,
}

/// Allow or deny, plus what the person behind the request should know.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    pub allowed: bool,
    pub message: Option<String>,
    pub code: Option<u16>,
    pub warnings: Vec<String>,
    pub audit_annotations: BTreeMap<String, String>,
    /// The whole object as the policy wants it stored, as JSON text (see
    /// [`crate::json_text::RawObject`]); the host turns it into a JSONPatch
    /// against `request.object`.
    pub mutated_object: Option<ObjectText>,
}

impl PartialEq for Verdict {
    fn eq(&self, other: &Self) -> bool {
        self.allowed == other.allowed
            && self.message == other.message
            && self.code == other.code
            && self.warnings == other.warnings
            && self.audit_annotations == other.audit_annotations
            && self.mutated_value() == other.mutated_value()
    }
}

impl Verdict {
    pub fn allow() -> Self {
        Self {
            allowed: true,
            ..Self::default()
        }
    }

    /// A refusal with HTTP code 400: the request itself is at fault.
    pub fn deny(message: impl Into<String>) -> Self {
        Self::deny_with_code(message, 400)
    }

    pub fn deny_with_code(message: impl Into<String>, code: u16) -> Self {
        Self {
            allowed: false,
            message: Some(message.into()),
            code: Some(code),
            ..Self::default()
        }
    }

    pub fn warn(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    pub fn with_warnings(mut self, warnings: impl IntoIterator<Item = String>) -> Self {
        self.warnings.extend(warnings);
        self
    }

    pub fn audit(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.audit_annotations.insert(key.into(), value.into());
        self
    }

    pub fn mutate(self, object: Value) -> Self {
        if nesting(&object) > usize::from(MUTATED_OBJECT_DEPTH) {
            return Self::deny(format!(
                "malformed object: it nests more than {MUTATED_OBJECT_DEPTH} levels, deeper than \
                 the reply carrying it back could be read"
            ));
        }
        match ObjectText::of_value(&object) {
            Ok(text) => self.mutate_raw(text),
            Err(e) => {
                Self::deny_with_code(format!("cannot serialize the mutated object: {e}"), 500)
            }
        }
    }

    pub fn mutate_raw(mut self, object: ObjectText) -> Self {
        self.mutated_object = Some(object);
        self
    }

    /// The mutated object parsed back, for tests and hosts that inspect it.
    pub fn mutated_value(&self) -> Option<Value> {
        self.mutated_object
            .as_ref()
            .and_then(|text| serde_json::from_str(text.get()).ok())
    }

    /// The waPC `validate` reply, in the SDK's `ValidationResponse` shape.
    pub fn to_wire(&self) -> Vec<u8> {
        // Every text the reply carries is bounded here, whatever built it.
        let wire: ValidationResponse<Cow<'_, str>, ()> = ValidationResponse {
            accepted: self.allowed,
            message: self.message.as_deref().map(|m| defused(bounded(m))),
            code: self.code,
            mutated_object: None,
            audit_annotations: (!self.audit_annotations.is_empty()).then(|| {
                self.audit_annotations
                    .iter()
                    .map(|(k, v)| (Cow::Borrowed(k.as_str()), bounded(v)))
                    .collect()
            }),
            warnings: (!self.warnings.is_empty())
                .then(|| self.warnings.iter().map(|w| bounded(w)).collect()),
        };
        // Serializing plain strings and maps cannot fail; should it ever, an
        // empty reply makes the host answer with code 500.
        let mut reply = serde_json::to_vec(&wire).unwrap_or_default();
        if let Some(object) = &self.mutated_object {
            put_object(&mut reply, object);
        }
        reply
    }
}

/// Writes the object's text in place of the `null` its member was written
/// with. The member is found by its bytes: the members before it are a
/// boolean, a number and a string, and a string's quotes are escaped, so
/// the first `"mutated_object":null` in the reply is the member itself.
fn put_object(reply: &mut Vec<u8>, object: &ObjectText) {
    const MEMBER: &[u8] = br#""mutated_object":"#;
    let null = reply
        .windows(MEMBER.len().saturating_add(4))
        .position(|w| w.strip_prefix(MEMBER) == Some(b"null"))
        .map(|at| at.saturating_add(MEMBER.len()));
    let Some(at) = null else { return };
    let rest = reply.split_off(at).split_off(4);
    reply.reserve_exact(object.get().len().saturating_add(rest.len()));
    reply.extend_from_slice(object.get().as_bytes());
    reply.extend_from_slice(&rest);
}

/// A refusal's message with the phrases Flux reads as "this field is
/// immutable" taken apart. fluxcd/pkg's apply treats any error whose text
/// matches `is\simmutable` or `immutable\sfield` as an immutable-field error
/// and, where force is on (a Kustomization's `spec.force`, or the
/// `kustomize.toolkit.fluxcd.io/force: enabled` annotation), deletes the object
/// and creates it again (fluxcd/pkg e2cfd1a2 `ssa/errors/immutable.go`
/// `IsImmutableError`, `ssa/manager_apply.go` `shouldForceApply`). A refusal
/// quoting someone's text ("prod is immutable until Friday") must not delete
/// what it refused to change, so the whitespace in those phrases becomes a
/// no-break space, which Go's `\s` (ASCII `[\t\n\f\r ]`) does not match.
fn defused(message: Cow<'_, str>) -> Cow<'_, str> {
    const WORD: &[u8] = b"immutable";
    let is_space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0c | b'\r');
    let bytes = message.as_bytes();
    let mut spaces = Vec::new();
    for (at, window) in bytes.windows(WORD.len()).enumerate() {
        if window != WORD {
            continue;
        }
        let before = at.checked_sub(3).and_then(|from| bytes.get(from..at));
        if let Some(&[b'i', b's', space]) = before {
            if is_space(space) {
                spaces.push(at.saturating_sub(1));
            }
        }
        let end = at.saturating_add(WORD.len());
        let after = bytes.get(end..end.saturating_add(6));
        if let Some(&[space, b'f', b'i', b'e', b'l', b'd']) = after {
            if is_space(space) {
                spaces.push(end);
            }
        }
    }
    if spaces.is_empty() {
        return message;
    }
    // The spaces are ASCII, one byte each, so every cut is a char boundary.
    let mut out = String::with_capacity(message.len().saturating_add(spaces.len()));
    let mut from = 0;
    for at in spaces {
        out.push_str(message.get(from..at).unwrap_or(""));
        out.push('\u{a0}');
        from = at.saturating_add(1);
    }
    out.push_str(message.get(from..).unwrap_or(""));
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::MAX_MESSAGE;

    #[test]
    fn a_refusal_never_reads_as_an_immutable_field_to_flux() {
        let reply = |m: &str| -> Value {
            serde_json::from_slice(&Verdict::deny(m.to_string()).to_wire()).unwrap()
        };
        let nbsp = '\u{a0}';
        assert_eq!(
            reply("reason \"prod is immutable\" lacks a ticket")["message"],
            format!("reason \"prod is{nbsp}immutable\" lacks a ticket")
        );
        assert_eq!(
            reply("an immutable\tfield, this\nimmutable")["message"],
            format!("an immutable{nbsp}field, this{nbsp}immutable")
        );
        assert_eq!(reply("immutable is fine")["message"], "immutable is fine");
        assert_eq!(reply("is  immutable")["message"], "is  immutable");
    }

    #[test]
    fn a_mutated_object_the_reply_could_not_carry_is_refused() {
        let nested = |n: usize| -> Value {
            serde_json::from_str(&format!("{}1{}", "[".repeat(n), "]".repeat(n))).unwrap()
        };
        assert_eq!(nesting(&nested(3)), 3);
        assert_eq!(
            nesting(&serde_json::json!({"a": [1, {"b": []}], "c": 2})),
            4
        );
        let fits = Verdict::allow().mutate(nested(126));
        assert!(fits.allowed);
        let reply: Value = serde_json::from_slice(&fits.to_wire()).unwrap();
        assert!(reply["mutated_object"].is_array());
        let refused = Verdict::allow().mutate(nested(127));
        assert!(!refused.allowed);
        assert!(refused
            .message
            .unwrap()
            .contains("nests more than 126 levels"));
    }

    /// The bytes policy-server reads: the SDK's `ValidationResponse`
    /// members in its order, each absent one `null`.
    #[test]
    fn the_wire_reply_keeps_its_bytes() {
        assert_eq!(
            String::from_utf8(Verdict::allow().to_wire()).unwrap(),
            r#"{"accepted":true,"message":null,"code":null,"mutated_object":null,"audit_annotations":null,"warnings":null}"#
        );
        let object = ObjectText::parse(r#"{"b":1, "a":[1.50]}"#.to_string()).unwrap();
        let full = Verdict::deny_with_code("no \"x\"", 403)
            .warn("w1")
            .warn("w2")
            .audit("z", "1")
            .audit("a", "2")
            .mutate_raw(object);
        assert_eq!(
            String::from_utf8(full.to_wire()).unwrap(),
            r#"{"accepted":false,"message":"no \"x\"","code":403,"mutated_object":{"b":1, "a":[1.50]},"audit_annotations":{"a":"2","z":"1"},"warnings":["w1","w2"]}"#
        );
    }

    #[test]
    fn every_text_of_the_wire_reply_is_bounded() {
        let huge = "x".repeat(1 << 20);
        let wire = Verdict::deny(huge.clone())
            .warn(huge.clone())
            .audit("who", huge)
            .to_wire();
        assert!(wire.len() < 3 * (MAX_MESSAGE + 100), "{} bytes", wire.len());
        let reply: Value = serde_json::from_slice(&wire).unwrap();
        for text in [
            &reply["message"],
            &reply["warnings"][0],
            &reply["audit_annotations"]["who"],
        ] {
            assert!(text.as_str().unwrap().contains(" bytes not shown] … "));
        }
    }
}

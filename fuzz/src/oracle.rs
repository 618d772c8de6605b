//! What counts as a finding: a panic, trap, timeout or harness error, a reply
//! policy-server cannot read, or a reply that echoes a huge input.

use guard_core::ValidationResponse;
use serde::Deserialize;

/// A message, warning or audit annotation longer than this echoes its
/// input: the bound the policies promise (`guard_core::names::MAX_MESSAGE`,
/// 16 KiB) unless `--max-message-bytes` says otherwise.
pub const MAX_MESSAGE_BYTES: usize = guard_core::names::MAX_MESSAGE;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    Validate,
    ValidateSettings,
}

impl Operation {
    pub fn name(self) -> &'static str {
        match self {
            Operation::Validate => "validate",
            Operation::ValidateSettings => "validate_settings",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A native panic.
    Panic,
    /// A wasm trap (a panic is one: the modules abort on panic).
    Trap,
    /// Slower than the threshold, or cut by the harness' deadline.
    Timeout,
    /// The harness' memory cap was hit.
    MemoryExhausted,
    /// The module could not be instantiated or initialised.
    InitFailed,
    InitTimeout,
    /// The guest answered through `__guest_error` instead of replying.
    GuestError,
    /// A reply policy-server cannot read.
    InvalidReply,
    /// A message (or warning, audit annotation) over the bound.
    OversizedMessage,
    /// Texts adding up to more than four bounded messages, or a mutated
    /// object larger than twice the request's objects plus the message bound.
    OversizedReply,
}

impl Kind {
    /// Findings about how much an input holds rather than what it says.
    pub fn depends_on_size(self) -> bool {
        matches!(
            self,
            Kind::Timeout | Kind::MemoryExhausted | Kind::OversizedMessage | Kind::OversizedReply
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Panic => "panic",
            Kind::Trap => "trap",
            Kind::Timeout => "timeout",
            Kind::MemoryExhausted => "memory-exhausted",
            Kind::InitFailed => "init-failed",
            Kind::InitTimeout => "init-timeout",
            Kind::GuestError => "guest-error",
            Kind::InvalidReply => "invalid-reply",
            Kind::OversizedMessage => "oversized-message",
            Kind::OversizedReply => "oversized-reply",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub kind: Kind,
    pub operation: Operation,
    /// What findings are told apart by: a panic location, an error's first
    /// line, or where in the input the bytes are.
    pub signature: String,
    /// Everything known, for the report.
    pub detail: String,
}

impl Finding {
    /// The de-duplication key.
    pub fn key(&self) -> (Kind, Operation, String) {
        (self.kind, self.operation, self.signature.clone())
    }

    /// Whether `other` is this finding again, for minimization: the same
    /// kind in the same operation, and the same signature unless the kind
    /// is about size or time, whose signature names where the input's bytes
    /// are, which moves as the input shrinks.
    pub fn same_as(&self, other: &Finding) -> bool {
        self.kind == other.kind
            && self.operation == other.operation
            && (self.kind.depends_on_size() || self.signature == other.signature)
    }
}

/// How many bounded texts (message, warnings, audit annotations) a reply
/// may add up to before their sum is a finding.
pub const TEXTS_PER_REPLY: usize = 4;

/// The SDK's `SettingsValidationResponse`.
#[derive(Deserialize)]
#[expect(dead_code, reason = "parsed to be checked, not read")]
struct SettingsResponse {
    valid: bool,
    message: Option<String>,
}

/// Checks a `validate` reply: it parses as policy-server parses it; no
/// message, warning or audit annotation is over `max_message` bytes; they add
/// up to at most [`TEXTS_PER_REPLY`] of those; the mutated object is at most
/// twice the request's objects plus `max_message`. `object_size` is the
/// serialized size of the request's `object` and `oldObject` together; `input_shape` names where the input's bytes are (see
/// [`crate::tree::dominant_path`]), computed only when needed.
pub fn check_validate_reply(
    reply: &[u8],
    max_message: usize,
    object_size: impl FnOnce() -> usize,
    input_shape: impl FnOnce() -> String,
) -> Option<Finding> {
    let op = Operation::Validate;
    if is_no_answer(reply) {
        return None;
    }
    // The SDK's `ValidationResponse`, as policy-server reads a `validate` reply.
    let parsed: ValidationResponse = match serde_json::from_slice(reply) {
        Ok(r) => r,
        Err(e) => return Some(invalid(op, reply, &e)),
    };
    let mut long = Vec::new();
    if let Some(m) = parsed.message.as_ref().filter(|m| m.len() > max_message) {
        long.push(("message", m.len(), m.as_str()));
    }
    for w in parsed.warnings.iter().flatten() {
        if w.len() > max_message {
            long.push(("warning", w.len(), w.as_str()));
        }
    }
    for (k, v) in parsed.audit_annotations.iter().flatten() {
        if v.len() > max_message || k.len() > max_message {
            long.push(("audit annotation", v.len() + k.len(), v.as_str()));
        }
    }
    if let Some((what, len, text)) = long.first() {
        let shape = input_shape();
        return Some(Finding {
            kind: Kind::OversizedMessage,
            operation: op,
            signature: format!("{what} echoes {shape}"),
            detail: format!("a {what} of {len} bytes: {}", preview(text)),
        });
    }
    // What the reply says, not how many bytes its escaping takes: each
    // text is bounded, but not their number, nor the mutated object.
    let texts = parsed.message.as_ref().map_or(0, String::len)
        + parsed
            .warnings
            .iter()
            .flatten()
            .map(String::len)
            .sum::<usize>()
        + parsed
            .audit_annotations
            .iter()
            .flatten()
            .map(|(k, v)| k.len() + v.len())
            .sum::<usize>();
    let texts_bound = TEXTS_PER_REPLY * max_message;
    if texts > texts_bound {
        let shape = input_shape();
        return Some(Finding {
            kind: Kind::OversizedReply,
            operation: op,
            signature: format!("texts grow with {shape}"),
            detail: format!(
                "message, warnings and audit annotations of {texts} bytes together, over \
                 {texts_bound}: {}",
                preview(&String::from_utf8_lossy(reply))
            ),
        });
    }
    if reply.len() > max_message {
        let mutated = parsed
            .mutated_object
            .as_ref()
            .and_then(|o| serde_json::to_vec(o).ok())
            .map_or(0, |b| b.len());
        let bound = max_message + 2 * object_size();
        if mutated > bound {
            let shape = input_shape();
            return Some(Finding {
                kind: Kind::OversizedReply,
                operation: op,
                signature: format!("mutated object grows with {shape}"),
                detail: format!(
                    "a mutated object of {mutated} bytes, over the bound of {bound}: {}",
                    preview(&String::from_utf8_lossy(reply))
                ),
            });
        }
    }
    None
}

/// The stand-in reply both engines give for a lookup policy-server never
/// answers (`conformance::Reply::NoAnswer`, `{"noAnswer": why}`): the
/// webhook's timeout and `failurePolicy` decide, which is no finding.
fn is_no_answer(reply: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(reply)
        .is_ok_and(|m| m.len() == 1 && m.contains_key(conformance::NO_ANSWER))
}

/// Checks a `validate_settings` reply.
pub fn check_settings_reply(
    reply: &[u8],
    max_message: usize,
    input_shape: impl FnOnce() -> String,
) -> Option<Finding> {
    let op = Operation::ValidateSettings;
    let parsed: SettingsResponse = match serde_json::from_slice(reply) {
        Ok(r) => r,
        Err(e) => return Some(invalid(op, reply, &e)),
    };
    let message = parsed.message.unwrap_or_default();
    if message.len() > max_message {
        let shape = input_shape();
        return Some(Finding {
            kind: Kind::OversizedMessage,
            operation: op,
            signature: format!("message echoes {shape}"),
            detail: format!(
                "a message of {} bytes: {}",
                message.len(),
                preview(&message)
            ),
        });
    }
    None
}

fn invalid(op: Operation, reply: &[u8], e: &serde_json::Error) -> Finding {
    Finding {
        kind: Kind::InvalidReply,
        operation: op,
        signature: first_line(&strip_position(&e.to_string())),
        detail: format!(
            "{e}; the reply ({} bytes): {}",
            reply.len(),
            preview(&String::from_utf8_lossy(reply))
        ),
    }
}

/// serde_json's `... at line 1 column 53` without the position.
pub fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message.get(..i).unwrap_or(message).to_string(),
        None => message.to_string(),
    }
}

pub fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_string()
}

/// The first and last bytes of a long text.
pub fn preview(text: &str) -> String {
    const EDGE: usize = 160;
    if text.len() <= 2 * EDGE + 20 {
        return text.to_string();
    }
    let start = floor_boundary(text, EDGE);
    let end = ceil_boundary(text, text.len() - EDGE);
    format!(
        "{} [... {} bytes ...] {}",
        text.get(..start).unwrap_or(""),
        end - start,
        text.get(end..).unwrap_or("")
    )
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The brief's 8 KiB, to test with.
    const B: usize = 8 << 10;

    fn check(reply: &[u8]) -> Option<Finding> {
        check_validate_reply(reply, B, || 100, || "/request/object (object)".into())
    }

    #[test]
    fn a_well_formed_reply_is_no_finding() {
        assert_eq!(check(br#"{"accepted":true}"#), None);
        assert_eq!(
            check(br#"{"accepted":false,"message":"no","code":400,"warnings":["w"],"audit_annotations":{"a":"b"},"mutated_object":{"x":1}}"#),
            None
        );
        assert_eq!(
            check_settings_reply(br#"{"valid":true,"message":null}"#, B, String::new),
            None
        );
        // policy-server never answering a lookup is no finding; a reply
        // that merely carries the member besides others is still judged.
        assert_eq!(check(br#"{"noAnswer":"the LIST of v1/Secret"}"#), None);
        assert!(check(br#"{"noAnswer":"x","message":"no"}"#).is_some());
    }

    #[test]
    fn replies_policy_server_cannot_read_are_findings() {
        for (reply, why) in [
            (&b"{\"accepted\":true"[..], "EOF while parsing"),
            (br#"{"accepted":"yes"}"#, "invalid type"),
            (br#"{"message":"no"}"#, "missing field `accepted`"),
            (br#"{"accepted":false,"code":70000}"#, "invalid value"),
            (
                br#"{"accepted":false,"message":"\ud800\u0041"}"#,
                "lone leading surrogate",
            ),
            (br#"{"accepted":false,"message":"\ud800"}"#, "hex escape"),
            (
                br#"{"accepted":true,"mutated_object":{"a":1,}}"#,
                "trailing comma",
            ),
            (b"", "EOF while parsing"),
        ] {
            let f = check(reply).unwrap_or_else(|| panic!("no finding for {reply:?}"));
            assert_eq!(f.kind, Kind::InvalidReply);
            assert!(
                f.signature.contains(why),
                "{} does not say {why}",
                f.signature
            );
            assert!(!f.signature.contains("line 1"), "{}", f.signature);
        }
        let f = check_settings_reply(br#"{"valid":1}"#, B, String::new).unwrap();
        assert_eq!(
            (f.kind, f.operation),
            (Kind::InvalidReply, Operation::ValidateSettings)
        );
    }

    #[test]
    fn long_messages_and_replies_are_findings() {
        let long = "x".repeat(B + 1);
        let reply =
            serde_json::to_vec(&serde_json::json!({"accepted": false, "message": long})).unwrap();
        let f = check(&reply).unwrap();
        assert_eq!(f.kind, Kind::OversizedMessage);
        assert_eq!(f.signature, "message echoes /request/object (object)");
        let ok = "x".repeat(B);
        let reply =
            serde_json::to_vec(&serde_json::json!({"accepted": false, "message": ok})).unwrap();
        assert_eq!(check(&reply), None, "exactly 8 KiB is fine");
        let reply =
            serde_json::to_vec(&serde_json::json!({"accepted": true, "warnings": [long]})).unwrap();
        assert!(check(&reply).unwrap().signature.starts_with("warning"));
        // A mutated object is allowed twice the request's object, plus 8 KiB.
        let object = serde_json::json!({"data": "y".repeat(20_000)});
        let reply =
            serde_json::to_vec(&serde_json::json!({"accepted": true, "mutated_object": object}))
                .unwrap();
        assert_eq!(
            check_validate_reply(&reply, B, || 20_010, String::new),
            None
        );
        let f = check_validate_reply(&reply, B, || 5_000, || "/x".into()).unwrap();
        assert_eq!(f.kind, Kind::OversizedReply);
        assert!(
            f.signature.starts_with("mutated object grows"),
            "{}",
            f.signature
        );
        // Texts each within the bound are a finding only when there are
        // more than four bounds' worth of them...
        let warnings: Vec<String> = (0..5).map(|_| "w".repeat(B - 10)).collect();
        let reply =
            serde_json::to_vec(&serde_json::json!({"accepted": true, "warnings": warnings}))
                .unwrap();
        let f = check(&reply).unwrap();
        assert_eq!(f.kind, Kind::OversizedReply);
        assert!(f.signature.starts_with("texts grow"), "{}", f.signature);
        let four = serde_json::to_vec(
            &serde_json::json!({"accepted": true, "warnings": warnings[..4].to_vec()}),
        )
        .unwrap();
        assert_eq!(check(&four), None);
        // ...and escaping does not count: a bounded message of quotes and
        // control characters takes up to six times its length in the reply.
        let escaped = "\"\u{1}".repeat(B / 2);
        let reply = serde_json::to_vec(&serde_json::json!({"accepted": false, "message": escaped}))
            .unwrap();
        assert!(reply.len() > 4 * B);
        assert_eq!(check(&reply), None);
        let reply =
            serde_json::to_vec(&serde_json::json!({"valid": false, "message": long})).unwrap();
        assert_eq!(
            check_settings_reply(&reply, B, String::new).unwrap().kind,
            Kind::OversizedMessage
        );
    }

    #[test]
    fn previews_keep_both_ends_on_char_boundaries() {
        let text = format!("start{}end", "é".repeat(1000));
        let p = preview(&text);
        assert!(
            p.starts_with("start") && p.ends_with("end") && p.len() < 400,
            "{p}"
        );
        assert_eq!(
            strip_position("EOF while parsing a value at line 1 column 5"),
            "EOF while parsing a value"
        );
    }
}

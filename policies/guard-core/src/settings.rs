//! The settings pattern every policy follows.
//!
//! A settings document derives `Deserialize` with
//! `#[serde(deny_unknown_fields)]` (a typo in a setting is an error at
//! policy-server boot, not a silently ignored option) and `#[serde(default)]`
//! (no configuration is a safe, useful configuration). [`Settings::compile`]
//! is the one place that checks values, its errors naming the setting and
//! the accepted values, and the one place that makes what evaluation reads
//! from them (patterns, schedules), so that nothing is compiled twice.

use serde::de::DeserializeOwned;

/// What a policy evaluates with: its settings document, checked and compiled.
pub trait Settings: Sized {
    /// The document as policy-server passes it.
    type Document: DeserializeOwned + Default;
    /// Checks the document's values that types alone cannot, naming the
    /// setting at fault, and compiles what evaluation needs.
    fn compile(document: Self::Document) -> Result<Self, String>;
}

/// Reads, checks and compiles settings from their JSON form. `null` and `{}`
/// both give the defaults.
pub fn parse<S: Settings>(json: &[u8]) -> Result<S, String> {
    let document: S::Document = if json.is_empty() || json == b"null" {
        S::Document::default()
    } else {
        serde_json::from_slice::<Option<S::Document>>(json)
            .map_err(|e| format!("invalid settings: {e}"))?
            .unwrap_or_default()
    };
    S::compile(document).map_err(|e| format!("invalid settings: {e}"))
}

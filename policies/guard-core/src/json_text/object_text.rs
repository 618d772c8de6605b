//! An object's JSON text as the reply carries it back.

use serde_json::Value;

use super::strict::{check_within, MUTATED_OBJECT_DEPTH};

/// The JSON text of an object that policy-server reads as it reads a
/// `serde_json::Value`: written by [`super::RawObject`] from checked text,
/// printed from a `Value`, or checked here. Kept as text and written into
/// the reply as it is ([`crate::Verdict::to_wire`]): a `RawValue` would read
/// the object's megabytes once more only to be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectText(String);

impl ObjectText {
    /// Text this crate wrote from checked parts.
    pub(super) fn written(text: String) -> Self {
        Self(text)
    }

    /// `text` once checked as strictly as the reply is read.
    pub fn parse(text: String) -> Result<Self, serde_json::Error> {
        check_within(&text, MUTATED_OBJECT_DEPTH)?;
        Ok(Self(text))
    }

    pub fn of_value(value: &Value) -> Result<Self, serde_json::Error> {
        serde_json::to_string(value).map(Self)
    }

    pub fn get(&self) -> &str {
        &self.0
    }
}

//! The settings pattern every policy follows.
//!
//! Settings structs derive `Deserialize` with `#[serde(deny_unknown_fields)]`
//! (a typo in a setting is an error at policy-server boot, not a silently
//! ignored option) and `#[serde(default)]` (no configuration is a safe, useful
//! configuration). [`Settings::validate`] is the one place that checks values;
//! its errors name the setting and the accepted values.

use serde::de::DeserializeOwned;

pub trait Settings: DeserializeOwned + Default {
    /// Checks values that types alone cannot, naming the setting at fault.
    fn validate(&self) -> Result<(), String>;
}

/// Parses and validates settings from their JSON form. `null` and `{}` both
/// give the defaults.
pub fn parse<S: Settings>(json: &[u8]) -> Result<S, String> {
    let settings: S = if json.is_empty() || json == b"null" {
        S::default()
    } else {
        serde_json::from_slice::<Option<S>>(json)
            .map_err(|e| format!("invalid settings: {e}"))?
            .unwrap_or_default()
    };
    settings
        .validate()
        .map_err(|e| format!("invalid settings: {e}"))?;
    Ok(settings)
}

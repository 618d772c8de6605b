//! The policy trait and the JSON-in, JSON-out entry points every host calls.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::context::Context;
use crate::request::AdmissionRequest;
use crate::settings::{self, Settings};
use crate::verdict::Verdict;

/// A policy: settings and one pure evaluation function.
pub trait Policy {
    /// The name the policy is published under, e.g. `flux-suspend`.
    const NAME: &'static str;
    type Settings: Settings;
    fn evaluate(
        request: &AdmissionRequest,
        settings: &Self::Settings,
        ctx: &Context<'_>,
    ) -> Verdict;

    /// What the policy reads from the cluster under `settings`, when its
    /// settings decide it; `None` when its metadata.yml's
    /// `contextAwareResources` say it all.
    fn lookups(_settings: &Self::Settings) -> Option<Lookups> {
        None
    }

    /// Whether the request in `payload` (the whole waPC payload, unparsed)
    /// is nothing to the policy under `settings` (their JSON as the payload
    /// carries them; policy-server validated them at boot): no rule of it
    /// can apply, told from bytes that every applicable request carries
    /// ([`crate::payload::contains`]). Such a request is allowed, silently,
    /// before anything is parsed or compiled and before the clock is read:
    /// what the engine costs a module that reads nothing is then nearly all
    /// it costs. By default every request is read.
    fn unconcerned(_settings: &[u8], _payload: &[u8]) -> bool {
        false
    }

    /// Whether [`Policy::unconcerned`] is asked at all; a policy that
    /// answers it sets this, and the others' modules carry none of it.
    const ASKS_UNCONCERNED: bool = false;
}

/// What a payload's bytes tell before it is parsed.
pub enum Prejudged<S> {
    /// Nothing to the policy: allowed unread.
    Unconcerned,
    /// Its settings, compiled once for the evaluation.
    Settings(S),
    /// The settings could not be found or compiled from the bytes alone.
    Unread,
}

/// The reply that allows with nothing to say: [`Verdict::allow`]'s wire
/// form, written out (a test holds them equal).
pub const ALLOWED_JSON: &[u8] = br#"{"accepted":true,"message":null,"code":null,"mutated_object":null,"audit_annotations":null,"warnings":null}"#;

/// Whether the request is nothing to the policy under the settings found at
/// the payload's end ([`crate::payload::settings`]); otherwise those
/// settings, compiled.
pub fn prejudge<P: Policy>(payload: &[u8]) -> Prejudged<P::Settings> {
    if !P::ASKS_UNCONCERNED {
        return Prejudged::Unread;
    }
    let Some(raw) = crate::payload::settings(payload) else {
        return Prejudged::Unread;
    };
    if P::unconcerned(raw, payload) {
        return Prejudged::Unconcerned;
    }
    match settings::parse::<P::Settings>(raw) {
        Ok(s) => Prejudged::Settings(s),
        Err(_) => Prejudged::Unread,
    }
}

/// A kind a policy reads from the cluster (a `contextAwareResources` entry).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextAwareResource {
    pub api_version: String,
    pub kind: String,
}

/// The kinds a policy reads and the host capabilities it calls to read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookups {
    pub resources: Vec<ContextAwareResource>,
    pub capabilities: Vec<&'static str>,
}

/// The waPC `validate` payload: `{"request": AdmissionRequest, "settings": {...}}`.
#[derive(Deserialize)]
struct ValidatePayload {
    request: Option<AdmissionRequest>,
    #[serde(default)]
    settings: Option<Box<RawValue>>,
}

/// Judges a waPC `validate` payload. Never fails: a malformed payload or invalid
/// settings is a refusal that says what is wrong.
pub fn evaluate_payload<P: Policy>(payload: &[u8], ctx: &Context<'_>) -> Verdict {
    evaluate_prejudged::<P>(payload, prejudge::<P>(payload), ctx)
}

/// [`evaluate_payload`] after [`prejudge`].
pub fn evaluate_prejudged<P: Policy>(
    payload: &[u8],
    prejudged: Prejudged<P::Settings>,
    ctx: &Context<'_>,
) -> Verdict {
    let compiled = match prejudged {
        Prejudged::Unconcerned => return Verdict::allow(),
        Prejudged::Settings(s) => Some(s),
        Prejudged::Unread => None,
    };
    let parsed: ValidatePayload = match serde_json::from_slice(payload) {
        Ok(p) => p,
        Err(e) => return Verdict::deny(format!("malformed admission request: {e}")),
    };
    let Some(request) = parsed.request else {
        return Verdict::deny("malformed admission request: the payload has no `request`");
    };
    if let Some(settings) = compiled {
        return P::evaluate(&request, &settings, ctx);
    }
    let raw_settings = parsed.settings.as_deref().map(RawValue::get).unwrap_or("");
    match settings::parse::<P::Settings>(raw_settings.as_bytes()) {
        Ok(settings) => P::evaluate(&request, &settings, ctx),
        // policy-server validates settings at boot, so this is a host misconfiguration.
        Err(e) => Verdict::deny_with_code(format!("{}: {e}", P::NAME), 500),
    }
}

/// The reply when the wall clock cannot be read: nothing time-dependent can
/// be judged, so the request is refused with HTTP 500 and the cause, as
/// policy-server answers a policy that cannot run.
pub fn clock_failure<P: Policy>(cause: &dyn std::fmt::Display) -> Vec<u8> {
    Verdict::deny_with_code(
        format!(
            "{}: cannot judge the request without the wall clock: {cause}",
            P::NAME
        ),
        500,
    )
    .to_wire()
}

/// waPC `validate`: payload in, `ValidationResponse` JSON out.
pub fn validate_json<P: Policy>(payload: &[u8], ctx: &Context<'_>) -> Vec<u8> {
    evaluate_payload::<P>(payload, ctx).to_wire()
}

/// [`validate_json`] after [`prejudge`].
pub fn validate_prejudged_json<P: Policy>(
    payload: &[u8],
    prejudged: Prejudged<P::Settings>,
    ctx: &Context<'_>,
) -> Vec<u8> {
    evaluate_prejudged::<P>(payload, prejudged, ctx).to_wire()
}

/// waPC `validate_settings`: settings JSON in, `{"valid", "message"}` out.
pub fn validate_settings_json<P: Policy>(payload: &[u8]) -> Vec<u8> {
    let reply = match settings::parse::<P::Settings>(payload) {
        Ok(_) => serde_json::json!({"valid": true, "message": null}),
        Err(e) => {
            serde_json::json!({"valid": false, "message": crate::names::bounded(&e.to_string())})
        }
    };
    serde_json::to_vec(&reply).unwrap_or_default()
}

/// Settings a host refused, whichever policy's: a
/// [`settings::SettingsError`] of the policy's error type.
pub type SettingsRefused = Box<dyn std::error::Error + Send + Sync>;

/// [`Policy::lookups`] under settings given as JSON; invalid settings are refused.
pub fn lookups_json<P: Policy>(settings: &[u8]) -> Result<Option<Lookups>, SettingsRefused> {
    match settings::parse::<P::Settings>(settings) {
        Ok(s) => Ok(P::lookups(&s)),
        Err(e) => Err(Box::new(e)),
    }
}

/// A policy's entry points as plain function pointers, and the facts it is
/// deployed with, so that hosts serving several policies (the harness, the
/// playground, the generated manifests) can pick one by name.
#[derive(Clone, Copy)]
pub struct Entry {
    pub name: &'static str,
    pub validate: fn(&[u8], &Context<'_>) -> Vec<u8>,
    pub validate_settings: fn(&[u8]) -> Vec<u8>,
    pub lookups: fn(&[u8]) -> Result<Option<Lookups>, SettingsRefused>,
    /// The policy's `metadata.yml`, which kwctl annotates its module with and
    /// its generated ClusterAdmissionPolicy is made from.
    pub metadata: &'static str,
}

impl Entry {
    /// `metadata` is the policy's `metadata.yml`: `include_str!("../metadata.yml")`.
    pub const fn of<P: Policy>(metadata: &'static str) -> Self {
        Self {
            name: P::NAME,
            validate: validate_json::<P>,
            validate_settings: validate_settings_json::<P>,
            lookups: lookups_json::<P>,
            metadata,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_written_out_allow_is_the_verdict_s() {
        assert_eq!(
            crate::Verdict::allow().to_wire(),
            super::ALLOWED_JSON.to_vec()
        );
    }
}

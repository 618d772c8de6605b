//! The texts of findings on an Alert's own metadata.

use guard_core::identity::describe;
use guard_core::names::{quote, shell_quoted};

use super::{control_character, routing_format, routing_purpose, Scene, NOTIFIER};
use crate::alert::FieldError;
use crate::alert_rules::{Field, Finding, SUMMARY_MAX};
use crate::kinds;

fn field_name(field: &Field) -> String {
    match field {
        Field::Summary => "spec.summary".to_string(),
        Field::Metadata(key) => format!("spec.eventMetadata.{key}"),
    }
}

pub(super) fn text(scene: &Scene<'_>, finding: &Finding) -> String {
    match finding {
        Finding::Unreadable(error) => {
            format!("{}: {}.", scene.target.describe(), unreadable(error))
        }
        Finding::BadKey { key, error } => format!(
            "spec.eventMetadata key {} {error}; keys follow annotation-name rules: at most 63 \
             letters, digits, '-', '_' and '.', beginning and ending with a letter or digit.",
            quote(key)
        ),
        Finding::ControlCharacter {
            field,
            value,
            character,
        } => control_character(&field_name(field), value, *character),
        Finding::TooLong { field, length, max } => format!(
            "{} has a value of {length} characters; at most {max} are accepted.",
            field_name(field)
        ),
        Finding::RoutingFormat {
            field,
            value,
            format,
        } => format!(
            "{}={} is not {}.",
            field_name(field),
            quote(value),
            routing_format(*format)
        ),
        Finding::RoutingSetter { key } => format!(
            "spec.eventMetadata.{key} chooses {} for every event of the objects this Alert \
             selects, so only the identities in the policy setting routingKeySetters may set or \
             change it, and {} is not one of them. Leave it to them, or remove it from the Alert.",
            routing_purpose(key),
            describe(&scene.request.user_info)
        ),
        Finding::ControllerKey { key, kind, group } => format!(
            "spec.eventMetadata.{key} competes with {}, which sends its own `{key}` with some \
             {kind} events: there controller metadata takes precedence over an Alert's \
             (RFC-0008), so {NOTIFIER} records a MetadataAppendFailed Warning event on this \
             Alert, while the other events carry the Alert's value instead. Rename or remove \
             the key.",
            kinds::controller_name(group, kind)
        ),
        Finding::SummaryTooLong { length } => format!(
            "spec.summary has {length} characters; {NOTIFIER} accepts at most \
             {SUMMARY_MAX}."
        ),
        Finding::SummaryTwice {
            summary,
            in_metadata,
        } => format!(
            "summary is set twice, as spec.summary={} and spec.eventMetadata.summary={}; \
             spec.summary silently wins and a MetadataAppendFailed Warning event lands on this \
             Alert at every dispatch. Keep one: remove spec.summary (it is deprecated).",
            quote(summary),
            quote(in_metadata)
        ),
        Finding::SummaryDeprecated { summary } => format!(
            "spec.summary is deprecated and will be removed with the Alert v1 API; move it to \
             spec.eventMetadata.summary: `{}`.",
            scene.target.kubectl(
                "patch",
                &["--type=merge", "-p", &shell_quoted(&merge_patch(summary))]
            )
        ),
    }
}

fn unreadable(error: &FieldError) -> String {
    match error {
        FieldError::SummaryNotString { found } => {
            format!("spec.summary must be a string, not {found}")
        }
        FieldError::MetadataNotMap { found } => {
            format!("spec.eventMetadata must be a map of keys to strings, not {found}")
        }
        FieldError::MetadataValueNotString { key, found } => format!(
            "spec.eventMetadata key {} must map to a string, not {found}; quote the value in YAML",
            quote(key)
        ),
    }
}

/// `{"spec":{"summary":null,"eventMetadata":{"summary":"…"}}}`
/// Written out rather than built as a map, so the key order never depends on
/// serde_json's features.
fn merge_patch(summary: &str) -> String {
    let value = serde_json::to_string(summary).unwrap_or_default();
    format!(r#"{{"spec":{{"summary":null,"eventMetadata":{{"summary":{value}}}}}}}"#)
}

//! The texts of findings on an object's event annotations, and on the
//! annotations of a kind that emits no events.

use guard_core::identity::describe;
use guard_core::model::kinds::NOTIFICATION;
use guard_core::names::{quote, shell_word};

use super::{
    control_character, owner, routing_format, routing_purpose, Scene, NOTIFIER,
    TEMPLATE_CONTROLLER, TEMPLATE_FIELD,
};
use crate::conflicts::{self, MAX_ALERTS};
use crate::inert;
use crate::kinds::{self, PREFIX};
use crate::object_rules::{Finding, Problem};
use crate::subject::On;

impl Scene<'_> {
    /// The annotation `key` (the part after the prefix) as messages name it.
    fn field(&self, on: On, key: &str) -> String {
        match on {
            On::Object => format!("annotation {PREFIX}{key}"),
            On::Template => format!("{TEMPLATE_FIELD}[{PREFIX}{key}]"),
        }
    }

    /// What carries the annotations: the object, or the owner's template.
    fn holder(&self, on: On) -> String {
        match on {
            On::Object => self.target.describe(),
            On::Template => format!("{TEMPLATE_FIELD} of {}", self.target.describe()),
        }
    }

    /// How to take the annotation `key` off; `removable`: the stored object
    /// has it, so `kubectl` can remove it.
    fn removal(&self, on: On, key: &str, removable: bool) -> String {
        match on {
            On::Template => format!("remove `{PREFIX}{key}` from {TEMPLATE_FIELD} in the manifest"),
            On::Object if removable => format!(
                "remove it from the manifest, or run `{}`",
                self.target
                    .kubectl("annotate", &[&shell_word(&format!("{PREFIX}{key}-"))])
            ),
            On::Object => format!("remove `{PREFIX}{key}` from the manifest"),
        }
    }
}

pub(super) fn text(scene: &Scene<'_>, finding: &Finding) -> String {
    let on = finding.on;
    let field = |key: &str| scene.field(on, key);
    match &finding.problem {
        Problem::BadKey { key, error } => bad_key(on, key, error),
        Problem::ControlCharacter {
            key,
            value,
            character,
        } => control_character(&field(key), value, *character),
        Problem::TooLong { key, length, max } => format!(
            "{} has a value of {length} characters; at most {max} are accepted, since it is sent \
             with every event of this object.",
            field(key)
        ),
        Problem::ControllerKey {
            key,
            value,
            removable,
        } => controller_key(scene, on, key, value, *removable),
        Problem::Reserved {
            key,
            value,
            removable,
        } => reserved(scene, on, key, value, *removable),
        Problem::Denied { key, removable } => format!(
            "{} is not permitted in this cluster (deniedKeys); {}.",
            field(key),
            scene.removal(on, key, *removable)
        ),
        Problem::NotAllowed { key, removable } => format!(
            "{} is not among the keys permitted in this cluster ({}); use one of them, or {}.",
            field(key),
            list(&scene.settings.allowed_keys),
            scene.removal(on, key, *removable)
        ),
        Problem::RoutingFormat { key, value, format } => format!(
            "{}={} is not {}; {NOTIFIER} uses `{key}` to choose {}.",
            field(key),
            quote(value),
            routing_format(*format),
            routing_purpose(key)
        ),
        Problem::RoutingSetter { key } => format!(
            "{} chooses {}, so only the identities in the policy setting routingKeySetters may set \
             or change it, and {} is not one of them. Leave it to them, or {}.",
            field(key),
            routing_purpose(key),
            describe(&scene.request.user_info),
            scene.removal(on, key, false)
        ),
        Problem::PatternMismatch {
            key,
            value,
            pattern,
        } => format!(
            "{}={} does not match the pattern this cluster requires for `{key}`: {} (the whole \
             value must match).",
            field(key),
            quote(value),
            quote(pattern)
        ),
        Problem::TooMany { count, max } => format!(
            "{} has {count} `{PREFIX}` annotations; at most {max} are accepted, since every one is \
             sent with every event. Remove {} of them.",
            scene.holder(on),
            count.saturating_sub(*max)
        ),
        Problem::Required {
            key,
            pattern,
            exists,
        } => required(scene, on, key, pattern.as_deref(), *exists),
        Problem::RequiredOnGenerated { key } => required_on_generated(scene, on, key),
    }
}

fn bad_key(on: On, key: &str, error: &guard_core::names::NameError) -> String {
    let holder = match on {
        On::Object => "annotation".to_string(),
        On::Template => format!("{TEMPLATE_FIELD} key"),
    };
    format!(
        "{holder} {}: the key after `{PREFIX}` {error}. Keys are annotation names: at most 63 \
         letters, digits, '-', '_' and '.', beginning and ending with a letter or digit.",
        quote(&format!("{PREFIX}{key}"))
    )
}

fn controller_key(scene: &Scene<'_>, on: On, key: &str, value: &str, removable: bool) -> String {
    format!(
        "{} competes with {}, which sends its own `{key}` with some {} events: there controller \
         metadata takes precedence over annotations (RFC-0008), so {} is dropped and \
         {NOTIFIER} records a MetadataAppendFailed Warning event on every Alert \
         that selects this object, while the other events carry {} instead. Choose another \
         key, or {}.",
        scene.field(on, key),
        kinds::controller_name(scene.group(on), scene.subject(on).kind),
        scene.subject(on).kind,
        quote(value),
        quote(value),
        scene.removal(on, key, removable)
    )
}

fn reserved(scene: &Scene<'_>, on: On, key: &str, value: &str, removable: bool) -> String {
    format!(
        "{}: `{key}` is reserved for cluster-level metadata that Alerts set, and an Alert's value \
         takes precedence over an object's annotation, so {} would silently lose. Choose another \
         key, or {}.",
        scene.field(on, key),
        quote(value),
        scene.removal(on, key, removable)
    )
}

fn required(scene: &Scene<'_>, on: On, key: &str, pattern: Option<&str>, exists: bool) -> String {
    let full = format!("{PREFIX}{key}");
    let target = scene.subject(on);
    let shape = pattern
        .map(|source| format!(" matching {}", quote(source)))
        .unwrap_or_default();
    if on == On::Template {
        return format!(
            "every {} must carry the annotation {full} (requiredKeys), with a value{shape}; {} \
             generates {} from {} and copies only {} onto it, so add the key there.",
            target.kind,
            TEMPLATE_CONTROLLER,
            target.describe(),
            scene.target.describe(),
            TEMPLATE_FIELD
        );
    }
    let how = if exists {
        format!(
            "add it to the manifest, or run `{}`",
            target.kubectl("annotate", &[&format!("{}=<value>", shell_word(&full))])
        )
    } else {
        "add it under metadata.annotations in the manifest".to_string()
    };
    format!(
        "every {} must carry the annotation {full} (requiredKeys), with a value{shape}; {how}.",
        target.kind
    )
}

fn required_on_generated(scene: &Scene<'_>, on: On, key: &str) -> String {
    let full = format!("{PREFIX}{key}");
    let target = scene.subject(on).describe();
    let Some(origin) = scene.origin else {
        return format!("{target} lacks the annotation {full} (requiredKeys).");
    };
    format!(
        "{target} lacks the annotation {full} (requiredKeys), but {} generates it from {}, so it \
         is accepted rather than stalling the {}; {} copies only {} of the {} onto it, so add the \
         key there.",
        origin.controller,
        owner(origin),
        origin.owner_kind,
        origin.controller,
        origin.template,
        origin.owner_kind,
    )
}

pub(super) fn conflict(scene: &Scene<'_>, finding: &conflicts::Finding) -> String {
    match finding {
        conflicts::Finding::Overridden {
            on,
            key,
            value,
            alert_namespace,
            alert_name,
            in_summary,
            alert_value,
            removable,
        } => {
            let shown_field = if *in_summary {
                "spec.summary".to_string()
            } else {
                format!("spec.eventMetadata.{key}")
            };
            format!(
                "{}={} is overridden by Alert {alert_namespace}/{alert_name} ({shown_field}={}), \
                 which selects this {}: the Alert's value takes precedence, so notifications carry \
                 {} instead, and {NOTIFIER} records a MetadataAppendFailed Warning \
                 event on that Alert at every dispatch. Choose another key, or {}.",
                scene.field(*on, key),
                quote(value),
                quote(alert_value),
                scene.subject(*on).kind,
                quote(alert_value),
                scene.removal(*on, key, *removable),
            )
        }
        conflicts::Finding::LookupFailed { error, refused } => {
            let consequence = if *refused {
                "the change is refused because the policy setting alertLookupFailure is deny; try \
                 again in a moment"
            } else {
                "the check was skipped"
            };
            format!(
                "could not list the Alerts to look for metadata keys that would override this \
                 object's annotations ({}); {consequence}.",
                quote(error.cause())
            )
        }
        conflicts::Finding::TooManyAlerts { listed } => format!(
            "only the first {MAX_ALERTS} of {listed} Alerts ({NOTIFICATION}) were checked for \
             metadata keys that override this object's annotations."
        ),
    }
}

pub(super) fn inert(scene: &Scene<'_>, finding: &inert::Finding) -> String {
    let mut keys = finding.keys.clone();
    if finding.count > keys.len() {
        keys.push(format!(
            "and {} more",
            finding.count.saturating_sub(keys.len())
        ));
    }
    let hint = if finding.on_alert {
        "; metadata for every notification of this Alert belongs in spec.eventMetadata"
    } else {
        ""
    };
    format!(
        "{} emits no Flux events, so its annotations {} have no effect: put them on the Flux \
         objects whose events should carry them{hint}.",
        scene.target.describe(),
        keys.join(", ")
    )
}

/// A settings list for a message, bounded.
fn list(keys: &[String]) -> String {
    const MAX: usize = 12;
    let mut shown: Vec<&str> = keys.iter().take(MAX).map(String::as_str).collect();
    if keys.len() > MAX {
        shown.push("…");
    }
    shown.join(", ")
}

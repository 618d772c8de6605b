//! Refusal messages: what was refused and the command that does it right.

use guard_core::object::ObjectName;
use guard_core::{duration, identity, names, rfc3339, AdmissionRequest, Verdict};

use super::warnings::unreadable_expiry;
use super::{deciding, honoured_mechanism, inventory, list_identities, mechanisms};
use crate::annotation_only;
use crate::commands;
use crate::decision::{Refusal, WriteRule};
use crate::deletion;
use crate::identity_rules::Act;
use crate::kinds::{Collects, Honours, SUSPEND_ANNOTATION};
use crate::namespace;
use crate::prune::Hazard;
use crate::reason::{self, Problem};
use crate::settings::Settings;
use crate::view::{Found, Malformed, Shape, SpecField, Target, Unreadable, WrongType};
use crate::write::{Change, Origin, Write};

pub(super) fn verdict(
    refusal: &Refusal<'_>,
    request: &AdmissionRequest,
    settings: &Settings,
) -> Verdict {
    match refusal {
        Refusal::Unreadable(e) => Verdict::deny(unreadable(e, request)),
        Refusal::Unwritable(e) => Verdict::deny(format!("malformed object: {e}")),
        Refusal::Write { write, rule } => match rule {
            WriteRule::NotAllowed(act) => not_allowed(*act, &write.target, request, settings),
            WriteRule::Reason(reason::Finding::Missing)
                if write.by_operator_ui && write.change == Change::Enter =>
            {
                Verdict::deny(operator_ui_without_reason(write, settings))
            }
            WriteRule::Reason(reason::Finding::Missing) => {
                Verdict::deny(missing_reason(write, settings))
            }
            WriteRule::Reason(reason::Finding::Refused { value, problem }) => Verdict::deny(
                refused_reason(write, value, &problem_text(problem, settings), settings),
            ),
            WriteRule::Mode(finding) => Verdict::deny(annotation_only(write, *finding, settings)),
        },
        Refusal::Delete(refused) => delete(refused, request, settings),
        Refusal::Namespace(refused) => Verdict::deny(namespace(refused, request, settings)),
    }
}

fn unreadable(e: &Unreadable, request: &AdmissionRequest) -> String {
    match e {
        Unreadable::Missing { which, target } => {
            request.missing_object(*which, &target.object().describe())
        }
        Unreadable::Object(e) => e.to_string(),
        Unreadable::Field { target, error } => format!("{}: {error}", target.object().describe()),
        Unreadable::Options { target, error } => {
            format!("{}: {error}", target.object().describe())
        }
        Unreadable::OldField(e) => format!("malformed oldObject: {e}"),
    }
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (which, shape) = match self {
            Malformed::Read(e) => return e.fmt(f),
            Malformed::Shape { which, shape } => (which, shape),
        };
        write!(f, "malformed {}: ", which.field())?;
        match shape {
            Shape::NoMetadata => f.write_str("it has no metadata"),
            Shape::Metadata => f.write_str("metadata must be an object"),
            Shape::Spec => f.write_str("spec must be an object"),
            Shape::Map { map, found } => {
                write!(f, "metadata.{map} must be a map of strings, found {found}")
            }
            Shape::MapEntry { map, key, found } => write!(
                f,
                "metadata.{map}[{}] must be a string, found {found}",
                names::quote(key)
            ),
            Shape::Status { path, shape, found } => {
                write!(f, "{path} must be {shape}, found {found}")
            }
        }
    }
}

impl std::fmt::Display for WrongType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.field {
            SpecField::Suspend => "spec.suspend must be a boolean (true or false), found ",
            SpecField::Prune => "spec.prune must be a boolean (true or false), found ",
            SpecField::DeletionPolicy => {
                "spec.deletionPolicy must be a string (MirrorPrune, Delete, WaitForTermination \
                 or Orphan), found "
            }
        })?;
        match &*self.found {
            Found::String(s) => {
                f.write_str("the string ")?;
                f.write_str(&names::quote(s))
            }
            Found::Number(n) => {
                f.write_str("the number ")?;
                n.fmt(f)
            }
            Found::Bool(true) => f.write_str("the boolean true"),
            Found::Bool(false) => f.write_str("the boolean false"),
            Found::Null => f.write_str("null"),
            Found::List => f.write_str("a list"),
            Found::Object => f.write_str("an object"),
        }
    }
}

/// `suspenders` and `resumers`: whom to ask instead.
fn not_allowed(
    act: Act,
    target: &Target,
    request: &AdmissionRequest,
    settings: &Settings,
) -> Verdict {
    let user = identity::describe(&request.user_info);
    let list = list_identities(act.listed(settings));
    let target = target.object().describe();
    let message = match act {
        Act::Delete => format!(
            "{user} may not delete {target} while it is suspended: created again without the \
             suspension, it would be resumed, and the flux-suspend policy allows only its \
             resumers ({list}) to resume it. Ask one of them to resume it first, or an \
             administrator to extend the resumers setting."
        ),
        Act::Suspend | Act::ChangeReason | Act::Resume => {
            let (setting, act) = match act {
                Act::Suspend => ("suspenders", "suspend"),
                Act::ChangeReason => ("suspenders", "change the suspension reason of"),
                _ => ("resumers", "resume"),
            };
            format!(
                "{user} may not {act} {target}: the flux-suspend policy allows only its \
                 {setting} ({list}). Ask one of them, or an administrator to extend the \
                 {setting} setting."
            )
        }
    };
    Verdict::deny_with_code(message, 403)
}

/// No annotation where one is required: a reason (`requireReason`), or,
/// without it, the expiry `requireExpiry` or `maxDuration` asks for. The fix
/// depends on how the object got suspended (a manifest, `flux suspend`, or
/// the annotation removed).
fn missing_reason(write: &Write<'_>, settings: &Settings) -> String {
    let (kind, target) = (&write.kind, write.target.object());
    let mechanisms = mechanisms(&write.state, kind);
    let (without, wanted) = if settings.require_reason {
        ("a reason", "one")
    } else {
        ("an expiry", "an until=<RFC 3339 time> expiry")
    };
    if write.origin == Origin::Replay {
        return format!(
            "{} is stored suspended ({mechanisms}) without {without}. This cluster requires \
             {wanted} in annotation {SUSPEND_ANNOTATION}. Add it with:\n  {}\nor resume it \
             with:\n  {}",
            target.describe(),
            commands::suspend(&target, kind, settings, None),
            resume(write, &target, settings)
        );
    }
    if write.origin == Origin::Create {
        return format!(
            "{} is created suspended ({mechanisms}) without {without}. This cluster requires \
             {wanted} in annotation {SUSPEND_ANNOTATION}; add to its manifest:\n{}",
            target.describe(),
            commands::manifest(settings)
        );
    }
    if write.change == Change::Enter {
        // `flux suspend` sets spec.suspend only; the disable annotation of
        // the other kinds is written by hand or by the Flux Operator UI.
        let (how, cannot) = match kind.honours {
            Honours::SpecSuspend => (
                ", as `flux suspend` does",
                ", which `flux suspend` cannot write",
            ),
            Honours::DisableAnnotation(_) => ("", ""),
        };
        return format!(
            "{} is being suspended ({mechanisms}{how}) without {without}. This cluster requires \
             {wanted} in annotation {SUSPEND_ANNOTATION}{cannot}. Suspend it with:\n  {}",
            target.describe(),
            commands::suspend(&target, kind, settings, None)
        );
    }
    format!(
        "Annotation {SUSPEND_ANNOTATION} was removed from {}, which stays suspended ({mechanisms}) \
         without {without}. Keep the annotation, or resume it with:\n  {}",
        target.describe(),
        resume(write, &target, settings)
    )
}

/// The Flux Operator Web UI's Suspend button, which has no field for a
/// reason: what works instead, and the setting that keeps the button working.
fn operator_ui_without_reason(write: &Write<'_>, settings: &Settings) -> String {
    let (kind, target) = (&write.kind, write.target.object());
    format!(
        "{} is being suspended by the Flux Operator Web UI ({}), which has no field for a \
         reason. This cluster requires one in annotation {SUSPEND_ANNOTATION}. Suspend it with:\n  \
         {}\nAn administrator may instead set the flux-suspend policy's setting \
         operatorUiSuspensions to admit: the UI's suspensions are then admitted and the \
         background audit reports each one without a reason until it is given.",
        target.describe(),
        mechanisms(&write.state, kind),
        commands::suspend(&target, kind, settings, None)
    )
}

/// What is wrong with a reason given now.
fn problem_text(problem: &Problem, settings: &Settings) -> String {
    match problem {
        Problem::TooLong => format!(
            "it is longer than maxReasonLength ({} characters)",
            settings.max_reason_length
        ),
        Problem::Expiry(e) => unreadable_expiry(e),
        Problem::Empty => "it is empty; say why reconciliation is stopped".to_string(),
        Problem::Placeholder => {
            "it is a placeholder that says nothing; say why reconciliation is stopped".to_string()
        }
        Problem::TooShort { visible } => format!(
            "it has {visible} visible characters, fewer than minReasonLength ({})",
            settings.min_reason_length
        ),
        Problem::Unmatched => format!(
            "it does not match reasonPattern {}",
            names::quote(&settings.reason_pattern.source)
        ),
        Problem::NoExpiry => {
            "it has no expiry; this cluster requires until=<RFC 3339 time> in the reason"
                .to_string()
        }
        Problem::Expired { at, now } => format!(
            "its expiry until={} has already passed (now is {})",
            rfc3339::format(*at),
            rfc3339::format(*now)
        ),
        Problem::TooFar { at, ahead } => {
            let shown =
                i64::try_from(*ahead).map_or_else(|_| "centuries".to_string(), duration::format);
            let max = settings
                .max_duration
                .as_ref()
                .map_or("", |d| d.text.as_str());
            format!(
                "its expiry until={} is {shown} ahead, more than maxDuration ({max})",
                rfc3339::format(*at)
            )
        }
    }
}

/// A reason the reason rule refused, quoted, with a way to suspend
/// correctly (and, when it was already suspended, to resume instead).
fn refused_reason(write: &Write<'_>, value: &str, why: &str, settings: &Settings) -> String {
    let (kind, target) = (&write.kind, write.target.object());
    let fix = if write.origin == Origin::Create {
        format!(
            "Write a reason in its manifest:\n{}",
            commands::manifest(settings)
        )
    } else if write.change == Change::Enter && write.origin == Origin::Update {
        format!(
            "Suspend it with a reason such as:\n  {}",
            commands::suspend(&target, kind, settings, None)
        )
    } else {
        format!(
            "Suspend it with a reason such as:\n  {}\nor resume it:\n  {}",
            commands::suspend(&target, kind, settings, None),
            resume(write, &target, settings)
        )
    };
    format!(
        "The suspension reason of {} in annotation {SUSPEND_ANNOTATION} is refused: {why}. \
         The value is {}. {fix}",
        target.describe(),
        names::quote(value)
    )
}

/// The modes that do not mirror: the one request that sets both (and, when
/// the request was resuming, the one that removes both).
fn annotation_only(
    write: &Write<'_>,
    finding: annotation_only::Finding,
    settings: &Settings,
) -> String {
    let (kind, target) = (&write.kind, write.target.object());
    let suspend = commands::suspend(&target, kind, settings, write.state.reason.as_deref());
    match finding {
        annotation_only::Finding::PruneHazard(collects) => {
            let mut message = format!(
                "{} would be suspended only by annotation {SUSPEND_ANNOTATION} while {}. \
                 Flux releases that do not implement RFC-0006 keep reconciling it, and deleting \
                 it would {}. Set {} in the same request:\n  {suspend}",
                target.describe(),
                deciding(collects, kind),
                everything(collects),
                match kind.honours {
                    Honours::SpecSuspend => "spec.suspend".to_string(),
                    Honours::DisableAnnotation(_) => honoured_mechanism(kind),
                },
            );
            if write.resuming() {
                message.push_str(&format!(
                    "\nor, to resume it, remove the annotation in the same request:\n  {}",
                    resume(write, &target, settings)
                ));
            }
            message
        }
        annotation_only::Finding::Unhonoured if write.resuming() => format!(
            "Resuming {} leaves annotation {SUSPEND_ANNOTATION} behind: it would still read as \
             suspended while Flux reconciles it. Remove the annotation in the same request:\n  {}",
            target.describe(),
            resume(write, &target, settings)
        ),
        annotation_only::Finding::Unhonoured => format!(
            "{} would be suspended only by annotation {SUSPEND_ANNOTATION}, which no Flux release \
             honours: it would keep reconciling. Set {} in the same request:\n  {suspend}",
            target.describe(),
            honoured_mechanism(kind)
        ),
    }
}

fn delete(refused: &deletion::Refused, request: &AdmissionRequest, settings: &Settings) -> Verdict {
    match refused {
        deletion::Refused::Unreadable(e) => Verdict::deny(unreadable(e, request)),
        deletion::Refused::NotAllowed(target) => {
            not_allowed(Act::Delete, target, request, settings)
        }
        deletion::Refused::Hazard(hazard) => Verdict::deny(garbage_collects(hazard)),
    }
}

/// What deleting it would do to what it manages, as a whole.
fn everything(collects: Collects) -> &'static str {
    match collects {
        Collects::Release => "uninstall its Helm release",
        Collects::Policy(_) | Collects::Inventory => "garbage-collect everything it applied",
    }
}

/// The deletion hazard of a DELETE: both ways out.
fn garbage_collects(hazard: &Hazard) -> String {
    let target = hazard.target.object();
    let verb = match hazard.collects {
        Collects::Release => "uninstall",
        Collects::Policy(_) | Collects::Inventory => "garbage-collect",
    };
    format!(
        "Deleting {} would {verb} {}: {} and it is suspended only by \
         annotation {SUSPEND_ANNOTATION} ({}), which {} does not honour. \
         To delete it and keep its objects, suspend it first:\n  {}\n\
         To delete it and its objects, remove the annotation first:\n  {}",
        target.describe(),
        inventory(hazard.collects, hazard.objects),
        deciding(hazard.collects, &hazard.kind),
        names::quote(&hazard.reason),
        hazard.kind.controller.name,
        commands::honour(&target, &hazard.kind),
        commands::unannotate(&target),
    )
}

fn namespace(
    refused: &namespace::Refused,
    request: &AdmissionRequest,
    settings: &Settings,
) -> String {
    let namespace = request.name.as_str();
    match refused {
        namespace::Refused::Unlisted(kind, e) => format!(
            "Deleting Namespace {namespace} deletes the Flux objects it holds, and its {kind}s \
             cannot be listed to see whether that would delete what they manage{}: {e}",
            if settings.resumers.is_empty() {
                ""
            } else {
                " or end a suspension"
            }
        ),
        namespace::Refused::Unreadable(kind, e) => {
            format!("Deleting Namespace {namespace}: a {kind} it holds cannot be read: {e}")
        }
        namespace::Refused::Deletes(refusals) => format!(
            "Deleting Namespace {namespace} deletes the Flux objects it holds, and the \
             namespace controller's deletes are not judged one by one:\n{}",
            refusals
                .iter()
                .map(|r| delete(r, request, settings).message.unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

/// The resume a refusal offers, for the object it stays as (the stored one
/// when an UPDATE is refused): the command, when the person may resume, or
/// whom to ask (a command they would be refused is no help).
fn resume(write: &Write<'_>, target: &ObjectName<'_>, settings: &Settings) -> String {
    let stays = write.old.as_ref().unwrap_or(&write.state);
    let resumers = &settings.resumers;
    if resumers.is_empty() || resumers.matches(write.user) {
        return commands::resume(target, &write.kind, settings, stays.reason.is_some());
    }
    format!(
        "(only the flux-suspend policy's resumers ({}) may resume it: ask one of them)",
        list_identities(resumers)
    )
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use serde_json::{json, Value};

    #[test]
    fn flux_suspend_without_a_reason_is_refused_with_the_command() {
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({}), json!({"suspend": true})),
            ks(json!({}), json!({})),
        );
        let v = run(&r, "{}");
        assert!(!v.allowed);
        assert_eq!(v.code, Some(400));
        let m = message(&v);
        assert!(m.starts_with("Kustomization flux-system/apps is being suspended (spec.suspend: true, as `flux suspend` does) without a reason"), "{m}");
        assert!(m.contains("kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --overwrite reconcile.fluxcd.io/suspended='<ticket> <why>'"), "{m}");
        assert!(run(&r, r#"{"requireReason":false}"#).allowed);
    }

    #[test]
    fn deny_annotation_only_mode_refuses_the_annotation_alone() {
        let s = r#"{"mode":"deny-annotation-only"}"#;
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            ks(json!({}), json!({})),
        );
        let m = run(&r, s).message.unwrap();
        assert!(
            m.contains("which no Flux release honours") && m.contains(r#""spec":{"suspend":true}"#),
            "{m}"
        );
        let old = ks(
            json!({R: "INC-1 database migration"}),
            json!({"suspend": true}),
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 database migration"}), json!({})),
            old,
        );
        let m = run(&r, s).message.unwrap();
        assert!(
            m.starts_with("Resuming Kustomization flux-system/apps leaves annotation"),
            "{m}"
        );
        let r = request(
            "UPDATE",
            "alice",
            ks(
                json!({R: "INC-1 database migration"}),
                json!({"suspend": true}),
            ),
            ks(json!({}), json!({})),
        );
        let v = run(&r, s);
        assert!(v.allowed && v.mutated_object.is_none());
    }

    #[test]
    fn removing_the_reason_of_a_spec_suspension_is_refused_outside_mirror_mode() {
        let r = reason_removed_by("alice");
        let m = run(&r, r#"{"mode":"annotation-only"}"#).message.unwrap();
        assert!(m.starts_with("Annotation reconcile.fluxcd.io/suspended was removed from Kustomization flux-system/apps, which stays suspended"), "{m}");
        assert!(m.contains(r#""spec":{"suspend":null}"#), "{m}");
    }

    /// The prune hazard of a DELETE names both ways out, ready to paste.
    #[test]
    fn a_delete_that_would_garbage_collect_offers_both_ways_out() {
        let mut old = ks(json!({R: "INC-1 cutover"}), json!({"prune": true}));
        old["status"] =
            json!({"inventory": {"entries": [{"id": "a", "v": "v1"}, {"id": "b", "v": "v1"}]}});
        let v = run(&request("DELETE", "alice", Value::Null, old), "{}");
        let m = message(&v);
        assert!(m.starts_with("Deleting Kustomization flux-system/apps would garbage-collect the 2 objects in its inventory: spec.prune is true and it is suspended only by annotation reconcile.fluxcd.io/suspended (\"INC-1 cutover\")"), "{m}");
        assert!(m.contains(r#"kubectl patch kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --type=merge -p '{"spec":{"suspend":true}}' --field-manager=flux-suspend"#), "{m}");
        assert!(m.ends_with("kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system reconcile.fluxcd.io/suspended- --field-manager=flux-suspend"), "{m}");
    }

    /// Resuming into the hazard: the refusal offers to suspend fully or to
    /// resume fully.
    #[test]
    fn the_hazard_refusal_offers_both_ways_out_when_resuming() {
        let r = request(
            "UPDATE",
            "alice",
            ks(json!({R: "INC-1 x"}), json!({"deletionPolicy": "Delete"})),
            ks(
                json!({R: "INC-1 x"}),
                json!({"suspend": true, "deletionPolicy": "Delete"}),
            ),
        );
        let m = run(&r, r#"{"mode":"annotation-only"}"#).message.unwrap();
        assert!(
            m.contains("while spec.deletionPolicy is Delete")
                && m.contains("\nor, to resume it, remove the annotation in the same request:\n  kubectl patch"),
            "{m}"
        );
    }

    /// A request without the object its operation carries: the one wording.
    #[test]
    fn a_request_without_its_object_is_refused_in_one_wording() {
        let r = request("CREATE", "alice", Value::Null, Value::Null);
        assert_eq!(
            message(&run(&r, "{}")),
            "Kustomization flux-system/apps: the CREATE request carries no object"
        );
        let r = request("DELETE", "alice", Value::Null, Value::Null);
        assert_eq!(
            message(&run(&r, r#"{"resumers":{"groups":["platform"]}}"#)),
            "Kustomization flux-system/apps: the DELETE request carries no oldObject"
        );
    }

    /// What users read of each refused reason.
    #[test]
    fn refused_reasons_say_what_is_wrong() {
        let refused = |reason: &str, settings: &str| {
            let r = request(
                "UPDATE",
                "alice",
                ks(json!({R: reason}), json!({})),
                ks(json!({}), json!({})),
            );
            message(&run(&r, settings)).to_string()
        };
        for (reason, settings, why) in [
            ("db", "{}", "it has 2 visible characters, fewer than minReasonLength (5)"),
            ("n/a", "{}", "it is a placeholder that says nothing; say why reconciliation is stopped"),
            ("cutover", r#"{"reasonPattern":"^[A-Z]+-[0-9]+ "}"#, "it does not match reasonPattern \"^[A-Z]+-[0-9]+ \""),
            ("INC-1 x until=tomorrow", "{}", "until=\"tomorrow\" is not an RFC 3339 time; write it like until=2026-11-22T18:00:00Z"),
            ("INC-1 x until=2026-11-19T10:00:00Z", "{}", "its expiry until=2026-11-19T10:00:00Z has already passed (now is 2026-11-20T10:00:00Z)"),
            ("INC-1 x until=2026-11-23T10:00:01Z", r#"{"maxDuration":"72h"}"#, "its expiry until=2026-11-23T10:00:01Z is 72h0m1s ahead, more than maxDuration (72h)"),
            ("INC-1 migration", r#"{"requireExpiry":true}"#, "it has no expiry; this cluster requires until=<RFC 3339 time> in the reason"),
            (&"x".repeat(2000), "{}", "it is longer than maxReasonLength (1024 characters)"),
        ] {
            let m = refused(reason, settings);
            assert!(
                m.starts_with(&format!("The suspension reason of Kustomization flux-system/apps in annotation reconcile.fluxcd.io/suspended is refused: {why}. The value is ")),
                "{m}"
            );
        }
    }
}

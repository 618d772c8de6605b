//! Every text a user reads: the decision turned into one verdict a person
//! can act on (the refusal, the warnings, the commands that fix them).

mod alert;
mod object;
mod settings;

use std::borrow::Cow;

use guard_core::model::controllers;
use guard_core::model::kinds::SOURCE;
use guard_core::names::quote;
use guard_core::object::ObjectName;
use guard_core::{AdmissionRequest, Verdict, Which};

use crate::annotations::Malformed;
use crate::decision::{Decision, Finding, Review, Target};
use crate::findings::{Accepted, Warning};
use crate::generated::Origin;
use crate::kinds;
use crate::settings::Settings;
use crate::subject::On;
use crate::template::Chart;
use crate::values::{RoutingFormat, CHANGE_REQUEST};

pub(crate) fn verdict(
    decision: &Decision,
    request: &AdmissionRequest,
    settings: &Settings,
) -> Verdict {
    match decision {
        Decision::NotChecked => Verdict::allow(),
        Decision::NoObject => Verdict::deny(
            request.missing_object(Which::Object, &ObjectName::of(request, None).describe()),
        ),
        Decision::Unreadable { which, malformed } => {
            let (kind, name) = (&request.kind.kind, quote(&request.name));
            let subject = match which {
                Which::Object => format!("{kind} {name}"),
                Which::OldObject => format!("stored {kind} {name} (oldObject)"),
            };
            Verdict::deny(unreadable(&subject, "metadata", malformed))
        }
        Decision::UnreadableTemplate {
            release,
            which,
            malformed,
        } => {
            let owner = name(request, release).describe();
            let subject = match which {
                Which::Object => owner,
                Which::OldObject => format!("stored {owner} (oldObject)"),
            };
            Verdict::deny(unreadable(&subject, "spec.chart.metadata", malformed))
        }
        Decision::Reviewed(review) => reviewed(review, request, settings),
    }
}

/// The object under review as messages name it and `kubectl` takes it.
fn name<'a>(request: &'a AdmissionRequest, target: &'a Target) -> ObjectName<'a> {
    let mut name = ObjectName::of(request, None);
    name.namespace = &target.namespace;
    name.name = Cow::Borrowed(&target.name);
    name
}

/// Why the metadata at `path` of `subject` cannot be read.
fn unreadable(subject: &str, path: &str, malformed: &Malformed) -> String {
    let why = match malformed {
        Malformed::NotAMap { found } => format!("{path} must be a map, not {found}"),
        Malformed::NotAString { field, key, found } => format!(
            "{path}.{field}[{}] must be a string, not {found}; quote the value in YAML (e.g. \
             \"true\", \"42\")",
            quote(key)
        ),
        Malformed::NotAMapOfStrings { field, found } => {
            format!("{path}.{field} must be a map of strings, not {found}")
        }
        Malformed::Other(error) => error.to_string(),
    };
    format!("cannot read the {subject}: {why}")
}

/// What the texts of one review are written from.
struct Scene<'a> {
    request: &'a AdmissionRequest,
    settings: &'a Settings,
    target: ObjectName<'a>,
    chart: Option<ObjectName<'a>>,
    origin: Option<&'a Origin>,
}

/// Where a HelmRelease's chart template is, and who copies it (the model's
/// HelmChart generator).
const TEMPLATE_FIELD: &str = "spec.chart.metadata.annotations";
pub(crate) const TEMPLATE_CONTROLLER: &str = controllers::HELM_CONTROLLER.name;
/// The controller that delivers events, as messages name it.
pub(crate) const NOTIFIER: &str = controllers::NOTIFICATION_CONTROLLER.name;

fn reviewed(review: &Review, request: &AdmissionRequest, settings: &Settings) -> Verdict {
    let scene = Scene {
        request,
        settings,
        target: name(request, &review.target),
        chart: review.chart.as_ref().map(Chart::name),
        origin: review.origin.as_ref(),
    };
    let findings = &review.findings;
    let mut warnings: Vec<String> = findings.warnings.iter().map(|w| scene.warning(w)).collect();
    if findings.unshown_warnings > 0 {
        warnings.push(format!(
            "… and {} more warnings like these.",
            findings.unshown_warnings
        ));
    }
    let total = findings.refused();
    let verdict = match findings.refusals.as_slice() {
        [] => Verdict::allow(),
        [only] if total == 1 => Verdict::deny(scene.text(only)),
        all => {
            let mut message = format!(
                "{total} problems with the event metadata of {}:",
                scene.target.describe()
            );
            for (i, finding) in all.iter().enumerate() {
                message.push_str(&format!(
                    " ({}) {}",
                    i.saturating_add(1),
                    scene.text(finding)
                ));
            }
            if findings.unshown_refusals > 0 {
                message.push_str(&format!(" … and {} more.", findings.unshown_refusals));
            }
            Verdict::deny(message)
        }
    };
    verdict.with_warnings(warnings)
}

impl Scene<'_> {
    fn text(&self, finding: &Finding) -> String {
        match finding {
            Finding::Object(f) => object::text(self, f),
            Finding::Conflict(f) => object::conflict(self, f),
            Finding::Alert(f) => alert::text(self, f),
            Finding::Inert(f) => object::inert(self, f),
        }
    }

    fn warning(&self, warning: &Warning<Finding>) -> String {
        let text = self.text(&warning.finding);
        match warning.accepted {
            None => text,
            Some(Accepted::Preexisting) => format!(
                "{text} (The object was already so before this change, so the change is accepted.)"
            ),
            Some(Accepted::Generated) => {
                format!("{text} ({})", self.origin.map(note).unwrap_or_default())
            }
        }
    }

    /// The object whose annotations `on` names.
    fn subject(&self, on: On) -> &ObjectName<'_> {
        match (on, &self.chart) {
            (On::Template, Some(chart)) => chart,
            _ => &self.target,
        }
    }

    /// The group of the object whose annotations `on` names.
    fn group(&self, on: On) -> &str {
        match on {
            On::Object => &self.request.kind.group,
            On::Template => SOURCE,
        }
    }
}

/// Why a problem on a generated object is accepted, and where to fix it.
fn note(origin: &Origin) -> String {
    format!(
        "accepted: {} generates this object from {}, and refusing its write would stall the {}; \
         fix {} there",
        origin.controller,
        owner(origin),
        origin.owner_kind,
        origin.template
    )
}

fn owner(origin: &Origin) -> String {
    format!(
        "{} {}/{}",
        origin.owner_kind, origin.owner_namespace, origin.owner_name
    )
}

/// The rule on invisible characters, as both objects and Alerts read it.
fn control_character(field: &str, value: &str, character: char) -> String {
    if character.is_control() {
        return format!(
            "{field} has the control character {character:?} in its value {}; providers show \
             values verbatim, so write it as one line of printable text.",
            quote(value)
        );
    }
    format!(
        "{field} has the invisible character U+{:04X} in its value {}; providers show values \
         verbatim, where a format character, a bidirectional override, a variation selector or a \
         line separator hides or reorders the text around it, so remove it.",
        u32::from(character),
        quote(value)
    )
}

/// What a routing key's value must look like.
fn routing_format(format: RoutingFormat) -> Cow<'static, str> {
    match format {
        // fluxcd/pkg git v0.52.0 `Hash.Algorithm` (see `values::commit_format_error`).
        RoutingFormat::Sha256 => format!(
            "a Git SHA-1 commit: {NOTIFIER}'s git notifiers know only 40-character SHA-1 hashes \
             (fluxcd/pkg git v0.52.0) and fail on a SHA-256 one at every dispatch"
        )
        .into(),
        RoutingFormat::NotSha1 => "a full Git SHA-1 commit in lower-case hex (40 characters), \
             bare or as a Flux revision (`main@sha1:<sha>`, `sha1:<sha>`, `main/<sha>`)"
            .into(),
        RoutingFormat::NotChangeRequest => {
            "a pull or merge request number: a positive decimal integer without leading zeros"
                .into()
        }
    }
}

/// What a routing key chooses.
fn routing_purpose(key: &str) -> String {
    if key == CHANGE_REQUEST {
        return "which pull request receives the comment".into();
    }
    let before = kinds::commit_keys_before(key);
    if before.is_empty() {
        return "which Git commit receives the commit status".into();
    }
    let before: Vec<String> = before.iter().map(|k| format!("`{k}`")).collect();
    format!(
        "which Git commit receives the commit status of every event that carries no {} \
         (failure events included: no controller sends `{key}` with every event)",
        before.join(" or ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conflicts;
    use crate::findings::Findings;
    use crate::settings::Action;
    use crate::test_support::{
        json_request as request, podinfo, verdict as verdict_on, with_request,
    };
    use guard_core::model::kinds::NOTIFICATION;
    use guard_core::Policy;
    use serde_json::{json, Value};

    fn evaluate(request: Value, settings: Value) -> Verdict {
        with_request(request, settings, crate::FluxEventMetadata::evaluate)
    }

    #[test]
    fn unreadable_objects_name_the_field() {
        for (kind, r) in crate::test_support::unreadable_old_objects() {
            assert_eq!(
                evaluate(r, json!({})).message.unwrap(),
                format!(
                    "cannot read the stored {kind} \"podinfo\" (oldObject): \
                     metadata.annotations[\"example.com/replicas\"] must be a string, not a \
                     number; quote the value in YAML (e.g. \"true\", \"42\")"
                )
            );
        }
        let mut r = request(NOTIFICATION, "Alert", "alerts", "CREATE", json!({}));
        r["object"]["metadata"] = json!(5);
        assert_eq!(
            evaluate(r, json!({})).message.unwrap(),
            "cannot read the Alert \"podinfo\": metadata must be a map, not a number"
        );
    }

    #[test]
    fn a_request_without_its_object_is_refused_in_guard_core_words() {
        let r = crate::test_support::without_object();
        let v = evaluate(r, json!({}));
        assert_eq!(
            v.message.unwrap(),
            "HelmRelease flux-system/podinfo: the CREATE request carries no object"
        );
    }

    #[test]
    fn inert_annotations_are_named() {
        let v = evaluate(crate::test_support::annotated_provider(), json!({}));
        assert!(v.allowed);
        assert_eq!(v.warnings, ["Provider flux-system/podinfo emits no Flux events, so its annotations event.toolkit.fluxcd.io/team have no effect: put them on the Flux objects whose events should carry them."]);
        let annotations: serde_json::Map<String, Value> = (0..7)
            .map(|i| (format!("event.toolkit.fluxcd.io/k{i}"), json!("v")))
            .collect();
        let v = evaluate(
            request(
                NOTIFICATION,
                "Alert",
                "alerts",
                "CREATE",
                Value::Object(annotations),
            ),
            json!({"inertAnnotations": "deny"}),
        );
        assert_eq!(
            v.message.unwrap(),
            "Alert flux-system/podinfo emits no Flux events, so its annotations \
             event.toolkit.fluxcd.io/k0, event.toolkit.fluxcd.io/k1, event.toolkit.fluxcd.io/k2, \
             event.toolkit.fluxcd.io/k3, event.toolkit.fluxcd.io/k4, and 2 more have no effect: \
             put them on the Flux objects whose events should carry them; metadata for every \
             notification of this Alert belongs in spec.eventMetadata."
        );
    }

    fn lookup_failed(i: usize) -> conflicts::Finding {
        conflicts::Finding::LookupFailed {
            error: guard_core::ClusterError(format!("e{i}")),
            refused: true,
        }
    }

    #[test]
    fn many_refusals_are_numbered_and_bounded() {
        let mut f = Findings::new(false);
        for i in 0..10 {
            f.report(Action::Deny, false, || lookup_failed(i));
            f.report(Action::Warn, false, || lookup_failed(i));
        }
        let request = podinfo("alice");
        let v = verdict_on(f, None, &request, &Settings::default());
        let m = v.message.unwrap();
        assert!(
            m.starts_with(
                "10 problems with the event metadata of HelmRelease apps/podinfo: (1) could not \
                 list the Alerts to look for metadata keys that would override this object's \
                 annotations (\"e0\"); the change is refused because the policy setting \
                 alertLookupFailure is deny; try again in a moment. (2) "
            ),
            "{m}"
        );
        assert!(m.ends_with("(\"e7\"); the change is refused because the policy setting alertLookupFailure is deny; try again in a moment. … and 2 more."), "{m}");
        assert_eq!(v.warnings.len(), 9);
        assert_eq!(v.warnings[8], "… and 2 more warnings like these.");
    }

    #[test]
    fn accepted_refusals_say_why() {
        let mut f = Findings::new(true);
        f.report(Action::Deny, false, || conflicts::Finding::TooManyAlerts {
            listed: 5000,
        });
        f.report(Action::Deny, true, || conflicts::Finding::TooManyAlerts {
            listed: 5000,
        });
        let request = podinfo("alice");
        let name = ObjectName::of(&request, None);
        let review = Review {
            target: Target {
                namespace: name.namespace.into(),
                name: name.name.to_string(),
            },
            origin: Some(Origin {
                controller: "helm-controller",
                owner_kind: "HelmRelease",
                owner_namespace: "apps".into(),
                owner_name: "podinfo".into(),
                template: "spec.chart.metadata.annotations",
            }),
            chart: None,
            findings: f,
        };
        let v = verdict(&Decision::Reviewed(review), &request, &Settings::default());
        let text = "only the first 4096 of 5000 Alerts (notification.toolkit.fluxcd.io) were \
                    checked for metadata keys that override this object's annotations.";
        assert!(v.allowed);
        assert_eq!(
            v.warnings,
            [
                format!(
                    "{text} (accepted: helm-controller generates this object from HelmRelease \
                     apps/podinfo, and refusing its write would stall the HelmRelease; fix \
                     spec.chart.metadata.annotations there)"
                ),
                format!(
                    "{text} (The object was already so before this change, so the change is \
                     accepted.)"
                )
            ]
        );
    }
}

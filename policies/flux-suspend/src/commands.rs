//! The exact commands refusals and warnings suggest: the fix, ready to paste.

use guard_core::names::shell_quoted;

use crate::kinds::{Honours, Kind, DISABLED, SUSPEND_ANNOTATION};
use crate::settings::{Mode, Settings};

/// The object a command acts on.
pub struct Target<'a> {
    pub kind: Kind,
    pub name: &'a str,
    pub namespace: &'a str,
}

impl Target<'_> {
    /// `kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system`
    fn object(&self) -> String {
        let ns = if self.namespace.is_empty() {
            String::new()
        } else {
            format!(" -n {}", self.namespace)
        };
        format!("{} {}{ns}", self.kind.resource(), self.name)
    }

    /// `Kustomization flux-system/apps`, how messages name the object.
    pub fn describe(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind.kind, self.namespace, self.name)
        }
    }
}

/// A reason to fill in, shaped by what the settings require: a ticket
/// first, so that it also fits a ticket pattern such as `^[A-Z]+-[0-9]+ `.
pub fn reason_template(settings: &Settings) -> String {
    if settings.expiry_required() {
        "<ticket> <why> until=<RFC 3339 time>".to_string()
    } else {
        "<ticket> <why>".to_string()
    }
}

/// Suspends with `reason` (the one the person gave, or a template to fill
/// in). In mirror mode the annotation alone does it (the policy sets the
/// rest); otherwise one merge patch sets both, so no intermediate state is
/// refused.
pub fn suspend(target: &Target<'_>, settings: &Settings, reason: Option<&str>) -> String {
    let reason = reason.map_or_else(|| reason_template(settings), str::to_string);
    match settings.mode {
        Mode::Mirror => format!(
            "kubectl annotate {} --overwrite {SUSPEND_ANNOTATION}={}",
            target.object(),
            shell_quoted(&reason)
        ),
        Mode::AnnotationOnly | Mode::DenyAnnotationOnly => {
            let json = serde_json::Value::String(reason).to_string();
            merge_patch(target, &json, true)
        }
    }
}

/// Resumes: removes the annotation and the honoured mechanism together.
pub fn resume(target: &Target<'_>, settings: &Settings) -> String {
    match settings.mode {
        Mode::Mirror => unannotate(target),
        Mode::AnnotationOnly | Mode::DenyAnnotationOnly => merge_patch(target, "null", false),
    }
}

/// Removes the annotation alone.
pub fn unannotate(target: &Target<'_>) -> String {
    format!("kubectl annotate {} {SUSPEND_ANNOTATION}-", target.object())
}

/// Sets the honoured mechanism beside the annotation already there.
pub fn honour(target: &Target<'_>) -> String {
    match target.kind.honours {
        Honours::SpecSuspend => format!(
            "kubectl patch {} --type=merge -p '{{\"spec\":{{\"suspend\":true}}}}'",
            target.object()
        ),
        Honours::DisableAnnotation(key) => format!(
            "kubectl annotate {} --overwrite {key}={DISABLED}",
            target.object()
        ),
    }
}

/// The manifest lines a CREATE needs.
pub fn manifest(settings: &Settings) -> String {
    format!(
        "metadata:\n  annotations:\n    {SUSPEND_ANNOTATION}: \"{}\"",
        reason_template(settings)
    )
}

/// One merge patch that sets (or, with `null`, removes) the annotation and
/// the honoured mechanism together.
fn merge_patch(target: &Target<'_>, reason_json: &str, on: bool) -> String {
    let body = match target.kind.honours {
        Honours::SpecSuspend => format!(
            "{{\"metadata\":{{\"annotations\":{{\"{SUSPEND_ANNOTATION}\":{reason_json}}}}},\"spec\":{{\"suspend\":{}}}}}",
            if on { "true" } else { "null" }
        ),
        Honours::DisableAnnotation(key) => format!(
            "{{\"metadata\":{{\"annotations\":{{\"{SUSPEND_ANNOTATION}\":{reason_json},\"{key}\":{}}}}}}}",
            if on { "\"disabled\"" } else { "null" }
        ),
    };
    format!(
        "kubectl patch {} --type=merge -p {}",
        target.object(),
        shell_quoted(&body)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds;

    fn settings(json: &str) -> Settings {
        guard_core::settings::parse::<Settings>(json.as_bytes()).unwrap()
    }

    fn ks() -> Target<'static> {
        Target {
            kind: kinds::find("kustomize.toolkit.fluxcd.io", "Kustomization").unwrap(),
            name: "apps",
            namespace: "flux-system",
        }
    }

    fn rs() -> Target<'static> {
        Target {
            kind: kinds::find("fluxcd.controlplane.io", "ResourceSet").unwrap(),
            name: "tenants",
            namespace: "",
        }
    }

    #[test]
    fn mirror_mode_suspends_and_resumes_with_the_annotation_alone() {
        let s = settings("{}");
        assert_eq!(
            suspend(&ks(), &s, None),
            "kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --overwrite reconcile.fluxcd.io/suspended='<ticket> <why>'"
        );
        assert_eq!(
            resume(&ks(), &s),
            "kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system reconcile.fluxcd.io/suspended-"
        );
        assert!(suspend(&ks(), &settings(r#"{"requireExpiry":true}"#), None)
            .contains("until=<RFC 3339 time>'"));
    }

    #[test]
    fn other_modes_patch_both_in_one_request() {
        let s = settings(r#"{"mode":"deny-annotation-only"}"#);
        assert_eq!(
            suspend(&ks(), &s, None),
            r#"kubectl patch kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --type=merge -p '{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"<ticket> <why>"}},"spec":{"suspend":true}}'"#
        );
        assert_eq!(
            resume(&rs(), &s),
            r#"kubectl patch resourcesets.fluxcd.controlplane.io tenants --type=merge -p '{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":null,"fluxcd.controlplane.io/reconcile":null}}}'"#
        );
    }

    #[test]
    fn given_reasons_are_quoted_for_the_shell_and_json() {
        let s = settings(r#"{"mode":"annotation-only"}"#);
        assert_eq!(
            suspend(&ks(), &s, Some(r#"INC-1 Bob's "fix""#)),
            r#"kubectl patch kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --type=merge -p '{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"INC-1 Bob'\''s \"fix\""}},"spec":{"suspend":true}}'"#
        );
        assert_eq!(
            suspend(&ks(), &settings("{}"), Some("it's INC-2")),
            r#"kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --overwrite reconcile.fluxcd.io/suspended='it'\''s INC-2'"#
        );
    }

    #[test]
    fn honouring_and_manifests() {
        assert_eq!(
            honour(&ks()),
            r#"kubectl patch kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --type=merge -p '{"spec":{"suspend":true}}'"#
        );
        assert_eq!(
            honour(&rs()),
            "kubectl annotate resourcesets.fluxcd.controlplane.io tenants --overwrite fluxcd.controlplane.io/reconcile=disabled"
        );
        assert_eq!(
            manifest(&settings("{}")),
            "metadata:\n  annotations:\n    reconcile.fluxcd.io/suspended: \"<ticket> <why>\""
        );
        assert_eq!(ks().describe(), "Kustomization flux-system/apps");
        assert_eq!(rs().describe(), "ResourceSet tenants");
    }
}

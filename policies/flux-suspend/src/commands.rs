//! The exact commands refusals and warnings suggest: the fix, ready to paste.
//!
//! Every kubectl command names the field manager [`FIELD_MANAGER`], so that
//! its effect survives the next apply of a Flux object's owner. Before each
//! apply, kustomize-controller takes over the fields of managers whose name
//! starts with `kubectl` (and `before-first-apply`, and its own `Update`
//! entries), then its server-side apply removes those absent from Git
//! (fluxcd/kustomize-controller `internal/controller/kustomization_controller.go`
//! `apply`, `ApplyCleanupOptions.FieldManagers`, commit 186fb3b2; fluxcd/pkg
//! `ssa/patch.go` `PatchReplaceFieldsManagers`, prefix match in
//! `matchFieldManager`, commit e2cfd1a2). Flux Operator takes over the same
//! `kubectl` prefix (controlplaneio-fluxcd/flux-operator
//! `internal/controller/common.go` `takeOwnershipFrom`, commit 17c6aead). An
//! annotation set by `kubectl annotate` under its default manager
//! `kubectl-annotate` would be removed at the owner's next reconcile; one set
//! under `flux-suspend` is left alone. `--field-manager` is a flag of both
//! `kubectl annotate` and `kubectl patch` (kubernetes/kubectl
//! `pkg/cmd/util/helpers.go` `AddFieldManagerFlagVar`, commit dee3483a).

use guard_core::names::shell_quoted;
use guard_core::object::ObjectName;

use crate::kinds::{Honours, Kind, DISABLED, SUSPEND_ANNOTATION};
use crate::settings::{Mode, Settings};

/// The field manager every suggested kubectl command names.
pub(crate) const FIELD_MANAGER: &str = "flux-suspend";

/// `--field-manager=flux-suspend`, the last word of every suggested command.
fn manager_flag() -> String {
    format!("--field-manager={FIELD_MANAGER}")
}

/// A reason to fill in, shaped by what the settings require: a ticket
/// first, so that it also fits a ticket pattern such as `^[A-Z]+-[0-9]+ `.
pub(crate) fn reason_template(settings: &Settings) -> String {
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
pub(crate) fn suspend(
    object: &ObjectName<'_>,
    kind: &Kind,
    settings: &Settings,
    reason: Option<&str>,
) -> String {
    let reason = reason.map_or_else(|| reason_template(settings), str::to_string);
    match settings.mode {
        Mode::Mirror => object.kubectl(
            "annotate",
            &[
                "--overwrite",
                &format!("{SUSPEND_ANNOTATION}={}", shell_quoted(&reason)),
                &manager_flag(),
            ],
        ),
        Mode::AnnotationOnly | Mode::DenyAnnotationOnly => {
            let json = serde_json::Value::String(reason).to_string();
            merge_patch(object, kind, &json, true)
        }
    }
}

/// Resumes: removes the annotation and the honoured mechanism together.
/// `annotated` says whether the object the command will act on carries the
/// annotation: in mirror mode removing it is enough (the policy removes the
/// rest), but on an object suspended by the honoured mechanism alone (by
/// `flux suspend` before the policy was installed, or by the Flux Operator
/// UI) removing an absent annotation changes nothing, so the command removes
/// both, as `flux resume` would.
pub(crate) fn resume(
    object: &ObjectName<'_>,
    kind: &Kind,
    settings: &Settings,
    annotated: bool,
) -> String {
    match settings.mode {
        Mode::Mirror if annotated => unannotate(object),
        Mode::Mirror | Mode::AnnotationOnly | Mode::DenyAnnotationOnly => {
            merge_patch(object, kind, "null", false)
        }
    }
}

/// Removes the annotation alone.
pub(crate) fn unannotate(object: &ObjectName<'_>) -> String {
    object.kubectl(
        "annotate",
        &[&format!("{SUSPEND_ANNOTATION}-"), &manager_flag()],
    )
}

/// Sets the honoured mechanism beside the annotation already there.
pub(crate) fn honour(object: &ObjectName<'_>, kind: &Kind) -> String {
    match kind.honours {
        Honours::SpecSuspend => patch(object, r#"{"spec":{"suspend":true}}"#),
        Honours::DisableAnnotation(key) => object.kubectl(
            "annotate",
            &["--overwrite", &format!("{key}={DISABLED}"), &manager_flag()],
        ),
    }
}

/// The manifest lines a CREATE needs.
pub(crate) fn manifest(settings: &Settings) -> String {
    format!(
        "metadata:\n  annotations:\n    {SUSPEND_ANNOTATION}: \"{}\"",
        reason_template(settings)
    )
}

/// One merge patch that sets (or, with `null`, removes) the annotation and
/// the honoured mechanism together.
fn merge_patch(object: &ObjectName<'_>, kind: &Kind, reason_json: &str, on: bool) -> String {
    let body = match kind.honours {
        Honours::SpecSuspend => format!(
            "{{\"metadata\":{{\"annotations\":{{\"{SUSPEND_ANNOTATION}\":{reason_json}}}}},\"spec\":{{\"suspend\":{}}}}}",
            if on { "true" } else { "null" }
        ),
        Honours::DisableAnnotation(key) => format!(
            "{{\"metadata\":{{\"annotations\":{{\"{SUSPEND_ANNOTATION}\":{reason_json},\"{key}\":{}}}}}}}",
            if on { "\"disabled\"" } else { "null" }
        ),
    };
    patch(object, &body)
}

/// `kubectl patch` with this merge patch.
fn patch(object: &ObjectName<'_>, body: &str) -> String {
    object.kubectl(
        "patch",
        &["--type=merge", "-p", &shell_quoted(body), &manager_flag()],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds;

    fn settings(json: &str) -> Settings {
        guard_core::settings::parse::<Settings>(json.as_bytes()).unwrap()
    }

    /// A kind and an object of it, as the request names it.
    fn object(
        group: &str,
        kind: &str,
        namespace: &'static str,
        name: &'static str,
    ) -> (ObjectName<'static>, Kind) {
        let kind = kinds::find(group, kind).unwrap();
        (
            ObjectName::new(kind.kind, kind.resource(), namespace, name),
            kind,
        )
    }

    fn ks() -> (ObjectName<'static>, Kind) {
        object(
            "kustomize.toolkit.fluxcd.io",
            "Kustomization",
            "flux-system",
            "apps",
        )
    }

    fn rs() -> (ObjectName<'static>, Kind) {
        object("fluxcd.controlplane.io", "ResourceSet", "", "tenants")
    }

    #[test]
    fn mirror_mode_suspends_and_resumes_with_the_annotation_alone() {
        let s = settings("{}");
        let (ks, k) = ks();
        assert_eq!(
            suspend(&ks, &k, &s, None),
            "kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --overwrite reconcile.fluxcd.io/suspended='<ticket> <why>' --field-manager=flux-suspend"
        );
        assert_eq!(
            resume(&ks, &k, &s, true),
            "kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system reconcile.fluxcd.io/suspended- --field-manager=flux-suspend"
        );
        // Suspended by spec.suspend alone: removing the absent annotation
        // would change nothing.
        assert_eq!(
            resume(&ks, &k, &s, false),
            r#"kubectl patch kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --type=merge -p '{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":null}},"spec":{"suspend":null}}' --field-manager=flux-suspend"#
        );
        assert!(
            suspend(&ks, &k, &settings(r#"{"requireExpiry":true}"#), None)
                .contains("until=<RFC 3339 time>' --field-manager=flux-suspend")
        );
    }

    #[test]
    fn other_modes_patch_both_in_one_request() {
        let s = settings(r#"{"mode":"deny-annotation-only"}"#);
        let ((ks, k), (rs, r)) = (ks(), rs());
        assert_eq!(
            suspend(&ks, &k, &s, None),
            r#"kubectl patch kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --type=merge -p '{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"<ticket> <why>"}},"spec":{"suspend":true}}' --field-manager=flux-suspend"#
        );
        assert_eq!(
            resume(&rs, &r, &s, true),
            r#"kubectl patch resourcesets.fluxcd.controlplane.io tenants --type=merge -p '{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":null,"fluxcd.controlplane.io/reconcile":null}}}' --field-manager=flux-suspend"#
        );
    }

    #[test]
    fn given_reasons_are_quoted_for_the_shell_and_json() {
        let s = settings(r#"{"mode":"annotation-only"}"#);
        let (ks, k) = ks();
        assert_eq!(
            suspend(&ks, &k, &s, Some(r#"INC-1 Bob's "fix""#)),
            r#"kubectl patch kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --type=merge -p '{"metadata":{"annotations":{"reconcile.fluxcd.io/suspended":"INC-1 Bob'\''s \"fix\""}},"spec":{"suspend":true}}' --field-manager=flux-suspend"#
        );
        assert_eq!(
            suspend(&ks, &k, &settings("{}"), Some("it's INC-2")),
            r#"kubectl annotate kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --overwrite reconcile.fluxcd.io/suspended='it'\''s INC-2' --field-manager=flux-suspend"#
        );
    }

    #[test]
    fn honouring_and_manifests() {
        let ((ks, k), (rs, r)) = (ks(), rs());
        assert_eq!(
            honour(&ks, &k),
            r#"kubectl patch kustomizations.kustomize.toolkit.fluxcd.io apps -n flux-system --type=merge -p '{"spec":{"suspend":true}}' --field-manager=flux-suspend"#
        );
        assert_eq!(
            honour(&rs, &r),
            "kubectl annotate resourcesets.fluxcd.controlplane.io tenants --overwrite fluxcd.controlplane.io/reconcile=disabled --field-manager=flux-suspend"
        );
        assert_eq!(
            manifest(&settings("{}")),
            "metadata:\n  annotations:\n    reconcile.fluxcd.io/suspended: \"<ticket> <why>\""
        );
        assert_eq!(ks.describe(), "Kustomization flux-system/apps");
        assert_eq!(rs.describe(), "ResourceSet tenants");
    }
}

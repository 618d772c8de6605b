//! The Flux objects that apply other objects (Kustomizations and
//! HelmReleases): their kinds, and the owner labels that name them on what
//! they apply.

use guard_core::model::controllers::Controller;
use guard_core::model::kinds::{self, Kind};
use guard_core::object::ObjectName;
use guard_core::StringMap;

/// The labels Flux's controllers put on every object they apply, naming the
/// Kustomization or HelmRelease it comes from (`<group>/name`,
/// `<group>/namespace`): fluxcd/pkg ssa `ResourceManager.SetOwnerLabels`, as
/// kustomize-controller calls it with its API group, and helm-controller's
/// post-renderer `OriginLabels`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FluxOwnerKind {
    Kustomization,
    HelmRelease,
}

guard_core::one_of!(FluxOwnerKind {
    "Kustomization" => FluxOwnerKind::Kustomization,
    "HelmRelease" => FluxOwnerKind::HelmRelease,
});

impl FluxOwnerKind {
    pub fn parse(kind: &str) -> Option<Self> {
        match kind {
            "Kustomization" => Some(FluxOwnerKind::Kustomization),
            "HelmRelease" => Some(FluxOwnerKind::HelmRelease),
            _ => None,
        }
    }

    pub fn kind(self) -> &'static str {
        match self {
            FluxOwnerKind::Kustomization => "Kustomization",
            FluxOwnerKind::HelmRelease => "HelmRelease",
        }
    }

    /// The model's row for it.
    pub fn model(self) -> &'static Kind {
        match self {
            FluxOwnerKind::Kustomization => &kinds::KUSTOMIZATION,
            FluxOwnerKind::HelmRelease => &kinds::HELM_RELEASE,
        }
    }

    /// The controller that applies what it holds.
    pub fn controller(self) -> &'static Controller {
        self.model().controller
    }

    /// The field manager of every apply its controller sends (both
    /// controllers have one; the test below says so).
    pub fn field_manager(self) -> &'static str {
        self.controller().apply_manager().unwrap_or_default()
    }

    /// The version context-aware lookups read it in.
    pub fn api_version(self) -> String {
        self.model().api_version()
    }

    /// The object of this kind `namespace/name`, as messages name it.
    pub fn object<'a>(self, namespace: &'a str, name: &'a str) -> ObjectName<'a> {
        ObjectName::new(self.kind(), self.model().resource(), namespace, name)
    }

    fn group(self) -> &'static str {
        self.model().group
    }

    /// The `(namespace, name)` of the object of this kind that applied an
    /// object with these labels.
    pub fn owner_of(self, labels: &StringMap) -> Option<(&str, &str)> {
        let group = self.group();
        let get = |key: &str| labels.get(&format!("{group}/{key}"));
        Some((get("namespace")?, get("name")?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_kinds_are_the_models() {
        for (kind, resource, manager) in [
            (
                FluxOwnerKind::Kustomization,
                "kustomizations.kustomize.toolkit.fluxcd.io",
                "kustomize-controller",
            ),
            (
                FluxOwnerKind::HelmRelease,
                "helmreleases.helm.toolkit.fluxcd.io",
                "helm-controller",
            ),
        ] {
            let listed = kinds::find(kind.group(), kind.kind()).unwrap();
            assert_eq!(listed.resource(), resource);
            assert_eq!(kind.object("apps", "web").resource, resource);
            assert_eq!(kind.controller().apply_manager(), Some(manager));
        }
    }
}

//! The Flux objects that apply other objects (Kustomizations and
//! HelmReleases): their kinds, and the owner labels that name them on what
//! they apply.

use guard_core::flux;
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

    /// The version context-aware lookups read it in.
    pub fn api_version(self) -> &'static str {
        match self {
            FluxOwnerKind::Kustomization => "kustomize.toolkit.fluxcd.io/v1",
            FluxOwnerKind::HelmRelease => "helm.toolkit.fluxcd.io/v2",
        }
    }

    /// The object of this kind `namespace/name`, as messages name it.
    /// The plurals are written here rather than looked up in guard-core's
    /// table of Flux kinds, which would link the whole table into the module
    /// (1.7 KB) for two names; a test checks that both agree with it.
    pub fn object<'a>(self, namespace: &'a str, name: &'a str) -> ObjectName<'a> {
        let plural = match self {
            FluxOwnerKind::Kustomization => "kustomizations",
            FluxOwnerKind::HelmRelease => "helmreleases",
        };
        let resource = format!("{plural}.{}", self.group());
        ObjectName::new(self.kind(), resource, namespace, name)
    }

    fn group(self) -> &'static str {
        match self {
            FluxOwnerKind::Kustomization => flux::KUSTOMIZE,
            FluxOwnerKind::HelmRelease => flux::HELM,
        }
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
    fn owner_kinds_agree_with_the_flux_kinds_table() {
        for (kind, resource) in [
            (
                FluxOwnerKind::Kustomization,
                "kustomizations.kustomize.toolkit.fluxcd.io",
            ),
            (
                FluxOwnerKind::HelmRelease,
                "helmreleases.helm.toolkit.fluxcd.io",
            ),
        ] {
            let listed = flux::find(kind.group(), kind.kind()).unwrap();
            assert_eq!(listed.resource(), resource);
            assert_eq!(kind.object("apps", "web").resource, resource);
        }
    }
}

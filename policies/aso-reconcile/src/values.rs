//! The annotations this policy reads and the values each accepts.
//!
//! ASO compares `reconcile-policy` case-sensitively and falls back to its
//! default (normally `manage`) on anything it does not know, without an error
//! a user would see. So a value is either exactly right or refused here, with
//! the accepted values and, when the intent is guessable, a suggestion.

pub use guard_core::model::aso::{
    deletes_more, is_aso_group, Removes, ADOPTION_POLICY, FINALIZER, RECONCILE_POLICY,
    RECONCILE_POLICY_IF_EXISTS, RESOURCE_ID,
};

/// The field manager of every suggested command. kustomize-controller's
/// next apply hands the fields of managers named `kubectl*` (and
/// `before-first-apply`) to itself and then drops what Git does not state
/// (fluxcd/kustomize-controller 186fb3b2 `kustomization_controller.go`
/// `apply`, `ApplyCleanupOptions.FieldManagers`), so a detach or confirmation
/// written under kubectl's default `kubectl-annotate` on an object Flux
/// applies is taken back; one under this manager stays. `--field-manager` is
/// a flag of `kubectl annotate` (kubernetes/kubectl dee3483a
/// `pkg/cmd/annotate/annotate.go`).
pub(crate) const FIELD_MANAGER: &str = "aso-reconcile";

/// The annotations whose values this policy judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Annotation {
    ReconcilePolicy,
    IfExists,
    AdoptionPolicy,
}

impl Annotation {
    pub fn key(self) -> &'static str {
        match self {
            Self::ReconcilePolicy => RECONCILE_POLICY,
            Self::IfExists => RECONCILE_POLICY_IF_EXISTS,
            Self::AdoptionPolicy => ADOPTION_POLICY,
        }
    }
}

/// A set of annotation values, compared exactly.
pub trait Vocabulary: Copy + 'static {
    const ALL: &'static [Self];
    fn as_str(self) -> &'static str;
    /// Values of early ASO releases and their modern equivalent.
    fn legacy(_value: &str) -> Option<Self> {
        None
    }

    fn parse(value: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.as_str() == value)
    }
}

/// `reconcile-policy` values, ordered from least to most restrictive, so that
/// "the most restrictive wins" is `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReconcilePolicy {
    Manage,
    DetachOnDelete,
    Skip,
}

guard_core::one_of!(ReconcilePolicy {
    "manage" => ReconcilePolicy::Manage,
    "skip" => ReconcilePolicy::Skip,
    "detach-on-delete" => ReconcilePolicy::DetachOnDelete,
});

impl Vocabulary for ReconcilePolicy {
    const ALL: &'static [Self] = &[Self::Manage, Self::Skip, Self::DetachOnDelete];

    fn as_str(self) -> &'static str {
        match self {
            Self::Manage => "manage",
            Self::DetachOnDelete => "detach-on-delete",
            Self::Skip => "skip",
        }
    }

    fn legacy(value: &str) -> Option<Self> {
        match value {
            "run" => Some(Self::Manage),
            "skip-delete" => Some(Self::DetachOnDelete),
            _ => None,
        }
    }
}

/// `adoption-policy` values (ADR option 4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[expect(clippy::enum_variant_names, reason = "every value ends in -if-exists")]
pub enum AdoptionPolicy {
    AdoptIfExists,
    DetachOnDeleteIfExists,
    SkipIfExists,
}

impl AdoptionPolicy {
    /// What this adoption policy asks for when the resource exists; combined
    /// with `reconcile-policy` by taking the more restrictive.
    pub fn restriction(self) -> ReconcilePolicy {
        match self {
            Self::AdoptIfExists => ReconcilePolicy::Manage,
            Self::DetachOnDeleteIfExists => ReconcilePolicy::DetachOnDelete,
            Self::SkipIfExists => ReconcilePolicy::Skip,
        }
    }
}

impl Vocabulary for AdoptionPolicy {
    const ALL: &'static [Self] = &[
        Self::AdoptIfExists,
        Self::DetachOnDeleteIfExists,
        Self::SkipIfExists,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Self::AdoptIfExists => "adopt-if-exists",
            Self::DetachOnDeleteIfExists => "detach-on-delete-if-exists",
            Self::SkipIfExists => "skip-if-exists",
        }
    }
}

/// A value as read from an annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read<V> {
    Valid(V),
    /// A legacy value let through by `acceptLegacyValues`, with its modern
    /// equivalent; current ASO does not know it and applies its default.
    Legacy(V),
    Invalid,
}

impl<V: Vocabulary> Read<V> {
    pub fn of(value: &str, accept_legacy: bool) -> Self {
        match (V::parse(value), V::legacy(value)) {
            (Some(v), _) => Self::Valid(v),
            (None, Some(v)) if accept_legacy => Self::Legacy(v),
            _ => Self::Invalid,
        }
    }
}

/// The value the writer most likely meant: same after trimming and lower-casing,
/// the ADR form without `-if-exists`, a unique prefix, or a small typo.
pub fn suggest<V: Vocabulary>(value: &str) -> Option<V> {
    const LONGEST: usize = 64; // bounds the edit-distance work on hostile input
    if value.len() > LONGEST {
        return None;
    }
    let norm: String = value
        .trim()
        .chars()
        .map(|c| match c {
            '_' | ' ' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    if norm.is_empty() {
        return None;
    }
    let all = V::ALL.iter().copied();
    let exact = all.clone().find(|v| {
        let s = v.as_str();
        s == norm
            || s.strip_suffix("-if-exists") == Some(norm.as_str())
            || norm.strip_suffix("-if-exists") == Some(s)
    });
    let legacy = || V::legacy(&norm);
    let prefix = || {
        let mut hits = all
            .clone()
            .filter(|v| norm.len() >= 3 && v.as_str().starts_with(&norm));
        match (hits.next(), hits.next()) {
            (Some(v), None) => Some(v),
            _ => None,
        }
    };
    let typo = || {
        all.clone()
            .map(|v| (distance(&norm, v.as_str()), v))
            .filter(|(d, v)| *d <= 2.max(v.as_str().len() / 5))
            .min_by_key(|(d, _)| *d)
            .map(|(_, v)| v)
    };
    exact.or_else(legacy).or_else(prefix).or_else(typo)
}

/// Levenshtein distance over bytes (the vocabularies are ASCII). Every cell
/// is at most the longer length, so saturating adds never saturate.
fn distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diagonal = i;
        let mut left = i.saturating_add(1);
        for (above, cb) in row.iter_mut().skip(1).zip(b) {
            let next = diagonal
                .saturating_add(usize::from(ca != *cb))
                .min(left.saturating_add(1))
                .min(above.saturating_add(1));
            diagonal = *above;
            *above = next;
            left = next;
        }
        if let Some(first) = row.first_mut() {
            *first = i.saturating_add(1);
        }
    }
    row.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ReconcilePolicy::*;

    #[test]
    fn exact_values_only() {
        assert_eq!(
            Read::<ReconcilePolicy>::of("manage", false),
            Read::Valid(Manage)
        );
        assert_eq!(
            Read::<ReconcilePolicy>::of("skip", false),
            Read::Valid(Skip)
        );
        assert_eq!(
            Read::<ReconcilePolicy>::of("detach-on-delete", false),
            Read::Valid(DetachOnDelete)
        );
        for bad in [
            "Manage",
            " skip",
            "skip ",
            "",
            "detach-on-deletee",
            "DETACH-ON-DELETE",
        ] {
            assert_eq!(
                Read::<ReconcilePolicy>::of(bad, true),
                Read::Invalid,
                "{bad:?}"
            );
        }
        assert_eq!(
            Read::<AdoptionPolicy>::of("skip-if-exists", false),
            Read::Valid(AdoptionPolicy::SkipIfExists)
        );
        assert_eq!(Read::<AdoptionPolicy>::of("skip", false), Read::Invalid);
    }

    #[test]
    fn legacy_values_only_when_accepted() {
        assert_eq!(Read::<ReconcilePolicy>::of("run", false), Read::Invalid);
        assert_eq!(
            Read::<ReconcilePolicy>::of("run", true),
            Read::Legacy(Manage)
        );
        assert_eq!(
            Read::<ReconcilePolicy>::of("skip-delete", true),
            Read::Legacy(DetachOnDelete)
        );
        assert_eq!(Read::<AdoptionPolicy>::of("run", true), Read::Invalid);
    }

    #[test]
    fn restrictiveness_order() {
        assert!(Manage < DetachOnDelete && DetachOnDelete < Skip);
    }

    #[test]
    fn suggestions() {
        let s = suggest::<ReconcilePolicy>;
        assert_eq!(s("detach-on-deletee"), Some(DetachOnDelete));
        assert_eq!(s("Detach-On-Delete"), Some(DetachOnDelete));
        assert_eq!(s(" skip\n"), Some(Skip));
        assert_eq!(s("detach_on_delete"), Some(DetachOnDelete));
        assert_eq!(s("detach"), Some(DetachOnDelete));
        assert_eq!(s("mange"), Some(Manage));
        assert_eq!(s("skip-delete"), Some(DetachOnDelete));
        assert_eq!(s("Run"), Some(Manage));
        assert_eq!(s("banana"), None);
        assert_eq!(s(""), None);
        assert_eq!(s("skip-if-exists"), Some(Skip));
        assert_eq!(s(&"x".repeat(100_000)), None);
        let a = suggest::<AdoptionPolicy>;
        assert_eq!(a("skip"), Some(AdoptionPolicy::SkipIfExists));
        assert_eq!(a("adopt-if-exist"), Some(AdoptionPolicy::AdoptIfExists));
        assert_eq!(
            a("detach-on-delete"),
            Some(AdoptionPolicy::DetachOnDeleteIfExists)
        );
    }

    #[test]
    fn edit_distance() {
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("skip", "skip"), 0);
    }
}

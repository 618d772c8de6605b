//! The annotations this policy reads and the values each accepts.
//!
//! ASO compares `reconcile-policy` case-sensitively and falls back to its
//! default (normally `manage`) on anything it does not know, without an error
//! a user would see. So a value is either exactly right or refused here, with
//! the accepted values and, when the intent is guessable, a suggestion.

pub use guard_core::model::aso::{
    deletes_more, is_aso_group, Removes, ADOPTION_POLICY, DELETE_POLLER_ID, FINALIZER,
    POLLER_RESUME_ID, POLLER_RESUME_TOKEN, RECONCILE_POLICY, RECONCILE_POLICY_IF_EXISTS,
    RESOURCE_ID,
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

/// What people paste, folded to the ASCII it was meant to be: trimmed,
/// lower-cased, `_`, spaces and look-alike dashes (en and em dashes, the
/// minus sign, non-breaking and other Unicode spaces, fullwidth hyphen) to
/// `-`, zero-width characters and the byte-order mark dropped.
pub fn fold(text: &str) -> String {
    text.trim()
        .chars()
        .filter(|c| {
            !matches!(
                c,
                '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}'
            )
        })
        .map(|c| match c {
            '_' | ' ' | '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' => '-',
            '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The annotation ASO reads that `key`, not one of them, was most likely
/// meant to be: the same once folded ([`fold`]), the same name with or
/// without its dashes under no prefix or a prefix a few edits from ASO's, or
/// the whole key within three edits. `candidates` counts the keys the edit
/// distance was computed for, which a caller bounds.
pub fn near_miss_key(key: &str, candidates: &mut usize) -> Option<Annotation> {
    const LONGEST: usize = 128;
    const KEYS: [Annotation; 3] = [
        Annotation::ReconcilePolicy,
        Annotation::IfExists,
        Annotation::AdoptionPolicy,
    ];
    if key.len() > LONGEST || KEYS.iter().any(|a| a.key() == key) {
        return None;
    }
    let folded = fold(key);
    let (prefix, name) = folded.rsplit_once('/').unwrap_or(("", folded.as_str()));
    let bare = |n: &str| n.replace('-', "");
    let by_name = KEYS.into_iter().find(|a| {
        let (their_prefix, their_name) = a.key().rsplit_once('/').unwrap_or(("", a.key()));
        bare(name) == bare(their_name) && (prefix.is_empty() || distance(prefix, their_prefix) <= 3)
    });
    if by_name.is_some() {
        return by_name;
    }
    // Only keys that look like one of them are worth the edit distance.
    let plain = bare(&folded);
    if !["reconcil", "polic", "adopt"]
        .iter()
        .any(|w| plain.contains(w))
    {
        return None;
    }
    *candidates = candidates.saturating_add(1);
    KEYS.into_iter()
        .map(|a| (distance(&folded, a.key()), a))
        .filter(|(d, _)| *d <= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

/// The value the writer most likely meant: same after trimming and lower-casing,
/// the ADR form without `-if-exists`, a unique prefix, or a small typo.
pub fn suggest<V: Vocabulary>(value: &str) -> Option<V> {
    const LONGEST: usize = 64; // bounds the edit-distance work on hostile input
    if value.len() > LONGEST {
        return None;
    }
    let norm = fold(value);
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
    fn pasted_look_alikes_get_the_suggestion() {
        for pasted in [
            "detach\u{2013}on\u{2013}delete", // en dash, from a wiki
            "detach\u{2014}on\u{2014}delete",
            "detach\u{2212}on\u{2011}delete",
            "detach\u{00A0}on delete",
            "detach-on-\u{200B}delete",
            "\u{FEFF}Detach-On-Delete",
        ] {
            assert_eq!(
                suggest::<ReconcilePolicy>(pasted),
                Some(DetachOnDelete),
                "{pasted:?}"
            );
            assert_eq!(Read::<ReconcilePolicy>::of(pasted, true), Read::Invalid);
        }
        assert_eq!(
            suggest::<AdoptionPolicy>("skip\u{2013}if\u{2013}exists"),
            Some(AdoptionPolicy::SkipIfExists)
        );
    }

    #[test]
    fn near_misses_of_the_keys() {
        let miss = |key: &str| near_miss_key(key, &mut 0);
        for key in [
            "serviceoperator.azure.com/reconcile_policy",
            "serviceoperator.azure.com/Reconcile-Policy",
            "serviceoperator.azure.com/reconcilepolicy",
            "serviceoperator.azure.com/reconcile\u{2013}policy",
            "serviceoperator.azure.com/reconcile-polcy",
            "serviceoperator.azure.com/ reconcile-policy",
            "serviceoperator.azure.com /reconcile-policy",
            "service-operator.azure.com/reconcile-policy",
            "serviceoperator.azure.io/reconcile-policy",
            "reconcile-policy",
            "reconcile_policy",
            "SERVICEOPERATOR.AZURE.COM/RECONCILE-POLICY",
        ] {
            assert_eq!(miss(key), Some(Annotation::ReconcilePolicy), "{key:?}");
        }
        assert_eq!(
            miss("serviceoperator.azure.com/reconcile-policy-if-exist"),
            Some(Annotation::IfExists)
        );
        assert_eq!(
            miss("serviceoperator.azure.com/adoption_policy"),
            Some(Annotation::AdoptionPolicy)
        );
        for key in [
            RECONCILE_POLICY,
            RECONCILE_POLICY_IF_EXISTS,
            ADOPTION_POLICY,
            "example.com/reconcile-policy",
            "reconcile.fluxcd.io/requestedAt",
            "kustomize.toolkit.fluxcd.io/reconcile",
            "serviceoperator.azure.com/resource-id",
            "serviceoperator.azure.com/operator-namespace",
            "serviceoperator.azure.com/poller-resume-id",
        ] {
            assert_eq!(miss(key), None, "{key:?}");
        }
    }

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

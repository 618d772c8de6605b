//! The words of a settings refusal ([`SettingsError`]), each naming its setting.

use guard_core::names::quote;

use crate::settings::{SettingsError, MAX_LISTED_KINDS};

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Invalid(e) => e.fmt(f),
            Self::ListedKinds(listed) => write!(
                f,
                "deletionProtection.kinds: at most {MAX_LISTED_KINDS} kinds with a version \
                 (found {listed}); each is listed on every protected DELETE"
            ),
            Self::NotAnAsoGroup { index, group } => write!(
                f,
                "deletionProtection.kinds[{index}].group: {} is not an ASO API group; \
                 ASO groups end in .azure.com, e.g. dbforpostgresql.azure.com",
                quote(group)
            ),
            Self::NotAKind { index, kind } => write!(
                f,
                "deletionProtection.kinds[{index}].kind: {} is not a kind; write it as in the \
                 manifest (e.g. FlexibleServer) or * for every kind of the group",
                quote(kind)
            ),
            Self::VersionOfEveryKind { index } => write!(
                f,
                "deletionProtection.kinds[{index}].version: a version needs one kind to \
                 list, not *"
            ),
            Self::Version {
                index,
                version,
                why,
            } => write!(
                f,
                "deletionProtection.kinds[{index}].version: {} {why}; write a version the \
                 CRD serves, e.g. v1api20230601preview",
                quote(version)
            ),
            Self::ConfirmationAnnotation { key, why } => write!(
                f,
                "deletionProtection.confirmationAnnotation: {} is not an annotation key: {why}",
                quote(key)
            ),
            Self::ExplicitDefaultsKey { key, why } => write!(
                f,
                "explicitDefaults: key {} {why}; keys are namespace names or *",
                quote(key)
            ),
        }
    }
}

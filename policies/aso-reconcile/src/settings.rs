//! Settings: every rule is on by default except deletion protection and the
//! explicit-defaults mutation, which need the cluster's own choices.

use std::collections::BTreeMap;

use guard_core::identity::Identities;
use guard_core::names::{check_dns1123_label, check_qualified_name, NameError, QualifiedNameError};
use guard_core::request::null_default;
use guard_core::selector::LabelSelector;
use guard_core::settings::{Invalid, LookupFailure, Why};
use serde::Deserialize;

use guard_core::model::controllers;

use crate::values::ReconcilePolicy;

/// The annotation that confirms the deletion of a protected resource.
pub const CONFIRMATION_ANNOTATION: &str = "reconcile-guard.io/confirm-delete";

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct Settings {
    /// Mirror of ASO's `DEFAULT_RECONCILE_POLICY` (secret `aso-controller-settings`).
    pub default_reconcile_policy: ReconcilePolicy,
    /// Accept `run` and `skip-delete` (early ASO releases) with a warning.
    pub accept_legacy_values: bool,
    /// Who may set `reconcile-policy` and `reconcile-policy-if-exists` together
    /// before the finalizer: the operator itself.
    pub operator_identities: Identities,
    /// What to do when `reconcile-policy-if-exists` changes after the finalizer.
    pub if_exists_change_after_finalizer: Enforcement,
    /// What to do when the Namespace cannot be read: `deny` refuses, naming
    /// the error (the effective policy cannot be known); `allow` goes on as
    /// if the Namespace had no annotation, with a warning.
    pub namespace_lookup_failure: LookupFailure,
    #[serde(deserialize_with = "null_default")]
    pub deletion_protection: DeletionProtection,
    /// Namespace (or `*` for every other namespace) to the reconcile policy
    /// written on CREATE when nothing else decides it.
    #[serde(deserialize_with = "null_default")]
    pub explicit_defaults: BTreeMap<String, ReconcilePolicy>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            default_reconcile_policy: ReconcilePolicy::Manage,
            accept_legacy_values: false,
            operator_identities: Identities {
                service_accounts: vec![controllers::ASO.username()],
                ..Identities::default()
            },
            if_exists_change_after_finalizer: Enforcement::Warn,
            namespace_lookup_failure: LookupFailure::Deny,
            deletion_protection: DeletionProtection::default(),
            explicit_defaults: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    Warn,
    Deny,
}

guard_core::one_of!(Enforcement { "warn" => Enforcement::Warn, "deny" => Enforcement::Deny });

/// Which resources may not be deleted while ASO would delete them in Azure.
/// Each given criterion must hold; with none given, nothing is protected.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct DeletionProtection {
    #[serde(deserialize_with = "null_default")]
    pub kinds: Vec<ProtectedKind>,
    #[serde(deserialize_with = "null_default")]
    pub namespaces: Vec<String>,
    #[serde(deserialize_with = "null_default")]
    pub label_selector: Option<LabelSelector>,
    pub confirmation_annotation: String,
}

impl Default for DeletionProtection {
    fn default() -> Self {
        Self {
            kinds: Vec::new(),
            namespaces: Vec::new(),
            label_selector: None,
            confirmation_annotation: CONFIRMATION_ANNOTATION.to_string(),
        }
    }
}

impl DeletionProtection {
    pub fn is_enabled(&self) -> bool {
        !self.kinds.is_empty() || !self.namespaces.is_empty() || self.label_selector.is_some()
    }

    /// The label keys the selector reads: the only labels of an object
    /// worth copying out of its text.
    pub(crate) fn label_keys(&self) -> Vec<&str> {
        let Some(selector) = &self.label_selector else {
            return Vec::new();
        };
        let labels = selector.match_labels.keys().map(String::as_str);
        labels
            .chain(selector.match_expressions.iter().map(|r| r.key.as_str()))
            .collect()
    }
}

/// An ASO kind by API group and kind; kind `*` is every kind of the group.
/// With a `version` (any version the CRD serves), the kind's objects are also
/// looked up when an owner of theirs is deleted.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtectedKind {
    pub group: String,
    pub kind: String,
    #[serde(default, deserialize_with = "null_default")]
    pub version: Option<String>,
}

/// Kinds with a `version` each cost a list on every protected DELETE, and
/// policy-server keeps a watch per listed kind and namespace; this bounds both.
pub const MAX_LISTED_KINDS: usize = 32;

impl ProtectedKind {
    pub fn matches(&self, group: &str, kind: &str) -> bool {
        self.group == group && (self.kind == "*" || self.kind == kind)
    }

    /// `group/version`, when this kind's objects can be listed.
    pub fn api_version(&self) -> Option<String> {
        self.version
            .as_ref()
            .filter(|_| self.kind != "*")
            .map(|v| format!("{}/{v}", self.group))
    }
}

/// Why settings are refused: the setting at fault and what is wrong with
/// it, as values; the words are in `render`. Returned boxed, one word to
/// move however large the refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsError {
    /// `operatorIdentities`, `deletionProtection.namespaces` or its
    /// `labelSelector`.
    Invalid(Invalid),
    /// More than [`MAX_LISTED_KINDS`] kinds with a version.
    ListedKinds(usize),
    /// `deletionProtection.kinds[index].group` is not an ASO group.
    NotAnAsoGroup { index: usize, group: String },
    /// `deletionProtection.kinds[index].kind` is not a kind nor `*`.
    NotAKind { index: usize, kind: String },
    /// `deletionProtection.kinds[index].version` given for kind `*`.
    VersionOfEveryKind { index: usize },
    /// `deletionProtection.kinds[index].version` is not a version.
    Version {
        index: usize,
        version: String,
        why: NameError,
    },
    /// `deletionProtection.confirmationAnnotation` is not an annotation key.
    ConfirmationAnnotation {
        key: String,
        why: QualifiedNameError,
    },
    /// A key of `explicitDefaults` is neither a namespace name nor `*`.
    ExplicitDefaultsKey { key: String, why: NameError },
}

impl From<Invalid> for Box<SettingsError> {
    fn from(invalid: Invalid) -> Self {
        Box::new(SettingsError::Invalid(invalid))
    }
}

impl std::error::Error for SettingsError {}

impl guard_core::Settings for Settings {
    type Document = Self;
    type Error = Box<SettingsError>;

    /// Checks values that types alone cannot, naming the setting at fault.
    fn compile(settings: Self) -> Result<Self, Box<SettingsError>> {
        settings
            .operator_identities
            .validate("operatorIdentities")?;
        let p = &settings.deletion_protection;
        let listed = p.kinds.iter().filter(|k| k.version.is_some()).count();
        if listed > MAX_LISTED_KINDS {
            return Err(Box::new(SettingsError::ListedKinds(listed)));
        }
        for (index, k) in p.kinds.iter().enumerate() {
            if !k.group.ends_with(".azure.com") {
                return Err(Box::new(SettingsError::NotAnAsoGroup {
                    index,
                    group: k.group.clone(),
                }));
            }
            let kind_ok = k.kind == "*"
                || k.kind
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_uppercase())
                    && k.kind.bytes().all(|b| b.is_ascii_alphanumeric());
            if !kind_ok {
                return Err(Box::new(SettingsError::NotAKind {
                    index,
                    kind: k.kind.clone(),
                }));
            }
            if let Some(v) = &k.version {
                if k.kind == "*" {
                    return Err(Box::new(SettingsError::VersionOfEveryKind { index }));
                }
                check_dns1123_label(v).map_err(|why| {
                    Box::new(SettingsError::Version {
                        index,
                        version: v.clone(),
                        why,
                    })
                })?;
            }
        }
        for (i, ns) in p.namespaces.iter().enumerate() {
            check_dns1123_label(ns).map_err(|why| Invalid {
                setting: format!("deletionProtection.namespaces[{i}]"),
                why: Why::Name {
                    value: ns.clone(),
                    why,
                },
            })?;
        }
        if let Some(selector) = &p.label_selector {
            selector.validate("deletionProtection.labelSelector")?;
        }
        check_qualified_name(&p.confirmation_annotation).map_err(|why| {
            Box::new(SettingsError::ConfirmationAnnotation {
                key: p.confirmation_annotation.clone(),
                why,
            })
        })?;
        for ns in settings.explicit_defaults.keys().filter(|k| *k != "*") {
            check_dns1123_label(ns).map_err(|why| {
                Box::new(SettingsError::ExplicitDefaultsKey {
                    key: ns.clone(),
                    why,
                })
            })?;
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::settings::parse;

    fn err(json: &str) -> String {
        parse::<Settings>(json.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_safe_and_useful() {
        let s = parse::<Settings>(b"{}").unwrap();
        assert_eq!(s, Settings::default());
        assert_eq!(parse::<Settings>(b"null").unwrap(), Settings::default());
        assert_eq!(s.default_reconcile_policy, ReconcilePolicy::Manage);
        assert_eq!(
            s.operator_identities.service_accounts,
            vec![controllers::ASO.username()]
        );
        assert_eq!(s.if_exists_change_after_finalizer, Enforcement::Warn);
        assert_eq!(s.namespace_lookup_failure, LookupFailure::Deny);
        assert!(!s.deletion_protection.is_enabled());
        assert_eq!(
            s.deletion_protection.confirmation_annotation,
            CONFIRMATION_ANNOTATION
        );
        assert!(s.explicit_defaults.is_empty());
        assert!(!s.accept_legacy_values);
    }

    #[test]
    fn listed_kinds_are_bounded() {
        let kinds = |n: usize, version: bool| {
            let kinds: Vec<String> = (0..n)
                .map(|i| {
                    let v = if version { r#","version":"v1""# } else { "" };
                    format!(r#"{{"group":"g{i}.azure.com","kind":"K"{v}}}"#)
                })
                .collect();
            format!(
                r#"{{"deletionProtection":{{"kinds":[{}]}}}}"#,
                kinds.join(",")
            )
        };
        assert!(parse::<Settings>(kinds(MAX_LISTED_KINDS, true).as_bytes()).is_ok());
        let e = err(&kinds(MAX_LISTED_KINDS + 1, true));
        assert!(
            e.contains("deletionProtection.kinds: at most 32 kinds with a version (found 33)"),
            "{e}"
        );
        // Kinds without a version are never listed, so they are not counted.
        assert!(parse::<Settings>(kinds(MAX_LISTED_KINDS + 1, false).as_bytes()).is_ok());
    }

    #[test]
    fn a_full_configuration_parses() {
        let s = parse::<Settings>(
            br#"{"defaultReconcilePolicy":"detach-on-delete","acceptLegacyValues":true,
                "operatorIdentities":{"serviceAccounts":["aso:controller"]},
                "ifExistsChangeAfterFinalizer":"deny","namespaceLookupFailure":"allow",
                "deletionProtection":{"kinds":[{"group":"dbforpostgresql.azure.com","kind":"FlexibleServer"},
                  {"group":"keyvault.azure.com","kind":"*"}],"namespaces":["prod"],
                  "labelSelector":{"matchLabels":{"tier":"data"}},"confirmationAnnotation":"example.com/delete"},
                "explicitDefaults":{"prod":"detach-on-delete","*":"manage"}}"#,
        )
        .unwrap();
        assert_eq!(s.default_reconcile_policy, ReconcilePolicy::DetachOnDelete);
        assert_eq!(s.if_exists_change_after_finalizer, Enforcement::Deny);
        assert_eq!(s.namespace_lookup_failure, LookupFailure::Allow);
        assert!(s.deletion_protection.is_enabled());
        assert!(s.deletion_protection.kinds[1].matches("keyvault.azure.com", "Vault"));
        assert!(!s.deletion_protection.kinds[0]
            .matches("dbforpostgresql.azure.com", "FlexibleServersDatabase"));
        assert_eq!(s.explicit_defaults.get("*"), Some(&ReconcilePolicy::Manage));
        assert_eq!(s.deletion_protection.kinds[1].api_version(), None);
        let s = parse::<Settings>(
            br#"{"deletionProtection":{"kinds":[{"group":"storage.azure.com","kind":"StorageAccount","version":"v1api20230101"}]}}"#,
        )
        .unwrap();
        assert_eq!(
            s.deletion_protection.kinds[0].api_version().as_deref(),
            Some("storage.azure.com/v1api20230101")
        );
    }

    #[test]
    fn unknown_fields_are_errors() {
        assert!(err(r#"{"defaultReconcilePolcy":"skip"}"#).contains("unknown field"));
        assert!(err(r#"{"deletionProtection":{"kind":[]}}"#).contains("unknown field"));
    }

    #[test]
    fn enumerated_settings_name_the_setting_and_the_values() {
        for (json, said) in [
            (
                r#"{"defaultReconcilePolicy":"Skip"}"#,
                "invalid settings: defaultReconcilePolicy: \"Skip\" is not accepted; use one of: \
                 manage, skip, detach-on-delete at line 1 column 32",
            ),
            (
                r#"{"ifExistsChangeAfterFinalizer":"refuse"}"#,
                "invalid settings: ifExistsChangeAfterFinalizer: \"refuse\" is not accepted; use \
                 one of: warn, deny at line 1 column 40",
            ),
            (
                r#"{"namespaceLookupFailure":"ignore"}"#,
                "invalid settings: namespaceLookupFailure: \"ignore\" is not accepted; use one of: \
                 deny, allow at line 1 column 34",
            ),
            (
                r#"{"explicitDefaults":{"prod":"keep"}}"#,
                "invalid settings: explicitDefaults.prod: \"keep\" is not accepted; use one of: \
                 manage, skip, detach-on-delete at line 1 column 34",
            ),
            (
                r#"{"deletionProtection":{"kinds":[{"group":"a.azure.com","kind":7}]}}"#,
                "invalid settings: deletionProtection.kinds[0].kind: invalid type: integer `7`, \
                 expected a string at line 1 column 63",
            ),
        ] {
            assert_eq!(err(json), said);
        }
    }

    #[test]
    fn values_checked_by_validate_name_their_path() {
        let e = err(r#"{"operatorIdentities":{"serviceAccounts":["aso"]}}"#);
        assert!(e.contains("operatorIdentities.serviceAccounts"), "{e}");
        let e = err(r#"{"deletionProtection":{"kinds":[{"group":"apps","kind":"Deployment"}]}}"#);
        assert!(
            e.contains("deletionProtection.kinds[0].group: \"apps\""),
            "{e}"
        );
        let e = err(
            r#"{"deletionProtection":{"kinds":[{"group":"storage.azure.com","kind":"storage account"}]}}"#,
        );
        assert!(e.contains("deletionProtection.kinds[0].kind"), "{e}");
        let e = err(r#"{"deletionProtection":{"kinds":[{"group":"storage.azure.com"}]}}"#);
        assert!(e.contains("missing field `kind`"), "{e}");
        let e = err(
            r#"{"deletionProtection":{"kinds":[{"group":"storage.azure.com","kind":"*","version":"v1"}]}}"#,
        );
        assert!(e.contains("deletionProtection.kinds[0].version"), "{e}");
        let e = err(
            r#"{"deletionProtection":{"kinds":[{"group":"storage.azure.com","kind":"StorageAccount","version":"V 1"}]}}"#,
        );
        assert!(
            e.contains("deletionProtection.kinds[0].version: \"V 1\""),
            "{e}"
        );
        let e = err(r#"{"deletionProtection":{"namespaces":["Prod"]}}"#);
        assert!(
            e.contains("deletionProtection.namespaces[0]: \"Prod\""),
            "{e}"
        );
        let e = err(
            r#"{"deletionProtection":{"labelSelector":{"matchExpressions":[{"key":"a","operator":"In"}]}}}"#,
        );
        assert!(e.contains("deletionProtection.labelSelector"), "{e}");
        let e = err(r#"{"deletionProtection":{"confirmationAnnotation":"confirm delete"}}"#);
        assert!(
            e.contains("deletionProtection.confirmationAnnotation"),
            "{e}"
        );
        let e = err(r#"{"deletionProtection":{"confirmationAnnotation":""}}"#);
        assert!(
            e.contains("deletionProtection.confirmationAnnotation"),
            "{e}"
        );
        let e = err(r#"{"explicitDefaults":{"Team_A":"skip"}}"#);
        assert!(e.contains("explicitDefaults: key \"Team_A\""), "{e}");
    }

    #[test]
    fn nulls_read_as_defaults() {
        let s = parse::<Settings>(
            br#"{"deletionProtection":{"kinds":null,"namespaces":null,"labelSelector":null},"explicitDefaults":null}"#,
        )
        .unwrap();
        assert!(!s.deletion_protection.is_enabled());
        assert!(s.explicit_defaults.is_empty());
    }
}

//! Who sent a request, matched exactly against settings lists.
//!
//! Kubernetes RBAC cannot restrict a single annotation or field; these lists
//! can. Matching is exact: no prefixes, no globs, so a list says precisely who.

use serde::Deserialize;

use crate::request::{null_default, UserInfo};
use crate::settings::{Invalid, Why};

/// Users, groups and service accounts, as a settings block.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Identities {
    /// Exact usernames, e.g. `alice@example.com`.
    #[serde(default, deserialize_with = "null_default")]
    pub users: Vec<String>,
    /// Exact group names, e.g. `sre`, `system:masters`.
    #[serde(default, deserialize_with = "null_default")]
    pub groups: Vec<String>,
    /// Service accounts as `namespace:name` or the full
    /// `system:serviceaccount:namespace:name` username.
    #[serde(default, deserialize_with = "null_default")]
    pub service_accounts: Vec<String>,
}

const SA_PREFIX: &str = "system:serviceaccount:";

impl Identities {
    pub fn is_empty(&self) -> bool {
        self.users.is_empty() && self.groups.is_empty() && self.service_accounts.is_empty()
    }

    /// Does the request's user match any entry?
    pub fn matches(&self, user: &UserInfo) -> bool {
        self.users.contains(&user.username)
            || self.groups.iter().any(|g| user.groups.contains(g))
            || self.service_accounts.iter().any(|sa| {
                let full = sa.strip_prefix(SA_PREFIX).unwrap_or(sa);
                user.username.strip_prefix(SA_PREFIX) == Some(full)
            })
    }

    /// Checks entries, naming the setting (e.g. `suspenders`) at fault.
    pub fn validate(&self, setting: &str) -> Result<(), Invalid> {
        for (field, list) in [("users", &self.users), ("groups", &self.groups)] {
            if list.iter().any(|v| v.trim().is_empty()) {
                return Err(Invalid {
                    setting: format!("{setting}.{field}"),
                    why: Why::EmptyEntry,
                });
            }
        }
        for sa in &self.service_accounts {
            let short = sa.strip_prefix(SA_PREFIX).unwrap_or(sa);
            let mut parts = short.split(':');
            let ok = matches!(
                (parts.next(), parts.next(), parts.next()),
                (Some(ns), Some(name), None) if !ns.is_empty() && !name.is_empty()
            );
            if !ok {
                return Err(Invalid {
                    setting: format!("{setting}.serviceAccounts"),
                    why: Why::NotAServiceAccount(sa.clone()),
                });
            }
        }
        Ok(())
    }
}

/// How a user is named in messages and audit annotations.
pub fn describe(user: &UserInfo) -> String {
    if user.username.is_empty() {
        "an anonymous user".to_string()
    } else {
        user.username.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            username: name.into(),
            uid: String::new(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    #[test]
    fn exact_matches_only() {
        let ids = Identities {
            users: vec!["alice".into()],
            groups: vec!["sre".into()],
            service_accounts: vec!["flux-system:kustomize-controller".into()],
        };
        assert!(ids.matches(&user("alice", &[])));
        assert!(!ids.matches(&user("alice2", &[])));
        assert!(ids.matches(&user("bob", &["dev", "sre"])));
        assert!(!ids.matches(&user("bob", &["sre-team"])));
        assert!(ids.matches(&user(
            "system:serviceaccount:flux-system:kustomize-controller",
            &[]
        )));
        assert!(!ids.matches(&user(
            "system:serviceaccount:flux-system:helm-controller",
            &[]
        )));
    }

    #[test]
    fn service_account_forms() {
        let full = Identities {
            service_accounts: vec!["system:serviceaccount:a:b".into()],
            ..Default::default()
        };
        assert!(full.matches(&user("system:serviceaccount:a:b", &[])));
        assert!(full.validate("x").is_ok());
        let bad = Identities {
            service_accounts: vec!["just-a-name".into()],
            ..Default::default()
        };
        assert_eq!(
            bad.validate("suspenders").unwrap_err().to_string(),
            "suspenders.serviceAccounts: \"just-a-name\" is not a service account; \
             write `namespace:name` or `system:serviceaccount:namespace:name`"
        );
        let empty = Identities {
            groups: vec![" ".into()],
            ..Default::default()
        };
        assert_eq!(
            empty.validate("a").unwrap_err(),
            Invalid {
                setting: "a.groups".into(),
                why: Why::EmptyEntry
            }
        );
    }
}

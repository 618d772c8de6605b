//! The ecosystem the policies judge, as data: every kind a policy or `check`
//! reasons about, every controller that writes them (identity, field
//! managers, impersonation), every other client that writes them, what
//! suspends each kind and what deleting it deletes. Each row cites where it
//! was read (repository, file, function, commit).
//!
//! Policies ask the model; they keep no list of groups, kinds, field
//! managers or identities of their own (`host-test/tests/layout.rs` fails
//! when one does), and the writers tables of the policies' READMEs are
//! checked against it (`host-test/tests/writers_tables.rs`).
//!
//! - [`kinds`]: groups, kinds, versions, scope, suspension, deletion, events.
//! - [`controllers`]: who reconciles them, as kube-apiserver sees its writes.
//! - [`clients`]: every other writer (the flux CLI, Flux Operator's Web UI,
//!   CLI and MCP server, kubectl, Helm, the audit scanner).
//! - [`events`]: who sends the events about each kind, with which keys.
//! - [`keys`]: the annotations and labels whose meaning a controller defines.
//! - [`aso`]: Azure Service Operator's groups and annotations.
//! - [`stops`]: the `spec` fields that stop a kind's controller (suspend,
//!   a Deployment's pause).
//! - [`cleanup`]: the field managers a Flux applier's managedFields cleanup
//!   takes over before each apply from Git.
//!
//! Completeness is tested against upstream lists recorded under
//! `policies/guard-core/upstream/` (each file names its repository, commit
//! and the command that produced it); `upstream/README.md` says how to
//! refresh them. A new fact goes here first, then into the policy that
//! needs it.

pub mod aso;
pub mod cleanup;
pub mod clients;
pub mod controllers;
pub mod events;
pub mod keys;
pub mod kinds;
pub mod stops;
#[cfg(test)]
mod upstream;

/// Where a row's facts were read. The text is kept natively (tests, the
/// README tables, `check`); a policy module carries none of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    #[cfg(not(target_family = "wasm"))]
    text: &'static str,
}

impl Source {
    pub const fn new(text: &'static str) -> Self {
        #[cfg(target_family = "wasm")]
        let _ = text;
        Source {
            #[cfg(not(target_family = "wasm"))]
            text,
        }
    }

    /// The citation: repository, file, function, commit.
    #[cfg(not(target_family = "wasm"))]
    pub fn text(&self) -> &'static str {
        self.text
    }
}

/// `system:serviceaccount:`, the prefix kube-apiserver gives every service
/// account's username (k8s.io/apiserver `pkg/authentication/serviceaccount/util.go`
/// `ServiceAccountUsernamePrefix`).
pub const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// A service account by namespace and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceAccount {
    pub namespace: &'static str,
    pub name: &'static str,
}

impl ServiceAccount {
    /// Its username as kube-apiserver authenticates it.
    pub fn username(&self) -> String {
        format!("{SERVICE_ACCOUNT_PREFIX}{}:{}", self.namespace, self.name)
    }

    /// `namespace:name`, as the `serviceAccounts` of a settings block write it.
    pub fn short(&self) -> String {
        format!("{}:{}", self.namespace, self.name)
    }

    /// Is `username` this service account, in `namespace` (the namespace
    /// its controller was installed in, which settings may change)?
    pub fn is(&self, username: &str, namespace: &str) -> bool {
        username
            .strip_prefix(SERVICE_ACCOUNT_PREFIX)
            .and_then(|rest| rest.strip_prefix(namespace))
            .and_then(|rest| rest.strip_prefix(':'))
            == Some(self.name)
    }
}

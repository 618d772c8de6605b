//! What could not be read or looked up, so that a rule cannot answer: the
//! refusal names it (render words it). The errors carried are the
//! cluster's ([`ClusterError`]) and the readers' ([`ReadError`],
//! [`ShapeError`]), as values.

use guard_core::context::ShapeError;
use guard_core::request::ReadError;
use guard_core::ClusterError;

/// Which protected objects a failed list was looking for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Search {
    /// Those inside a deleted ASO resource.
    Inside,
    /// Those in a Namespace (deleted, or switched to `manage`).
    InNamespace,
}

/// Why a Namespace's `reconcile-policy` could not be read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NamespaceError {
    /// The lookup failed.
    Lookup(ClusterError),
    /// The Namespace looked up does not read.
    Unreadable(ShapeError),
}

/// Why a list gave no answer: the cluster's error, or an object listed that
/// does not read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LookupError {
    Cluster(ClusterError),
    Shape(ShapeError),
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The Namespace could not be read and `namespaceLookupFailure` is `deny`.
    NamespaceLookup {
        namespace: String,
        error: NamespaceError,
    },
    /// The Namespace looked up does not read.
    UnreadableNamespace(ShapeError),
    /// A list of a protected kind failed, or answered what does not read.
    List {
        api_version: String,
        kind: String,
        namespace: Option<String>,
        search: Search,
        error: LookupError,
    },
    /// A listed object's labels do not read.
    Labels { name: String, error: ShapeError },
    /// The stored object has no usable `metadata.uid`.
    NoUid,
    /// `metadata.uid` of the stored object is of this JSON type.
    UidType(&'static str),
    /// The stored object does not read, or is not JSON a `Value` could
    /// hold (the reader's error).
    Malformed(ReadError),
}

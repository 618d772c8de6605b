//! What could not be read or looked up, so that a rule cannot answer: the
//! refusal names it (render words it). The strings carried are errors as the
//! cluster or the JSON reader gave them.

/// Which protected objects a failed list was looking for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Search {
    /// Those inside a deleted ASO resource.
    Inside,
    /// Those in a Namespace (deleted, or switched to `manage`).
    InNamespace,
}

/// Why a Namespace's `reconcile-policy` could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NamespaceError {
    /// The lookup failed.
    Lookup(String),
    /// The Namespace looked up does not read.
    Unreadable(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The Namespace could not be read and `namespaceLookupFailure` is `deny`.
    NamespaceLookup {
        namespace: String,
        error: NamespaceError,
    },
    /// The Namespace looked up does not read.
    UnreadableNamespace(String),
    /// A list of a protected kind failed, or answered what does not read.
    List {
        api_version: String,
        kind: String,
        namespace: Option<String>,
        search: Search,
        error: String,
    },
    /// A listed object's labels do not read.
    Labels { name: String, error: String },
    /// The stored object has no usable `metadata.uid`.
    NoUid,
    /// `metadata.uid` of the stored object is of this JSON type.
    UidType(&'static str),
    /// The stored object is not JSON a `Value` could hold (the reader's error).
    OldObjectNotJson(String),
    /// The stored object does not read (guard-core's wording, carried through).
    Malformed(String),
}

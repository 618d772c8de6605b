//! An object that emits events, as the annotation rules read it: its
//! annotations before and after the change, and whether they are the
//! object's own or a template a controller copies onto the object it
//! generates.

use guard_core::object::ObjectName;
use guard_core::Metadata;

/// Whose annotations a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum On {
    /// The object under review.
    Object,
    /// The HelmChart template of a HelmRelease (`spec.chart.metadata`),
    /// checked on the release's write for the HelmChart helm-controller
    /// generates from it.
    Template,
}

pub(crate) struct Subject<'a> {
    pub(crate) group: &'a str,
    pub(crate) target: ObjectName<'a>,
    pub(crate) meta: &'a Metadata,
    /// The stored object of an UPDATE.
    pub(crate) old: Option<&'a Metadata>,
    /// A Flux controller generated the object from its owner's template.
    pub(crate) generated: bool,
    /// The kind of its source (`spec.sourceRef.kind`), which decides some
    /// keys a Kustomization's controller sends.
    pub(crate) source_kind: Option<&'a str>,
    pub(crate) on: On,
}

impl Subject<'_> {
    /// The object exists already, so a `kubectl annotate` can fix it.
    pub(crate) fn exists(&self) -> bool {
        self.old.is_some()
    }

    /// The stored object has the annotation `key` (the part after the
    /// prefix), so `kubectl annotate` can take it off.
    pub(crate) fn stored(&self, key: &str) -> bool {
        self.old.is_some_and(|o| {
            o.annotations
                .contains_key(&format!("{}{key}", crate::kinds::PREFIX))
        })
    }
}

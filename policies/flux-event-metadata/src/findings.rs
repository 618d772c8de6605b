//! Collecting what the rules found, as the settings' actions say: refused,
//! warned about, or left out. Each rule reports its own finding type; the
//! collector keeps at most [`SHOWN`] of each kind, so a flood of annotations
//! or Alerts does not become a flood of text in `kubectl`'s output.

use crate::settings::Action;

/// At most this many refusals and warnings are kept, and spelled out.
pub(crate) const SHOWN: usize = 8;

/// The findings of one request: `F` is the decision's finding type, which
/// every rule's own finding type converts into.
#[derive(Debug, PartialEq)]
pub(crate) struct Findings<F> {
    pub(crate) refusals: Vec<F>,
    pub(crate) warnings: Vec<Warning<F>>,
    pub(crate) unshown_refusals: usize,
    pub(crate) unshown_warnings: usize,
    /// Set for an object a Flux controller generates: nothing is refused.
    generated: bool,
}

/// A finding accepted with a warning, and why a refusal became one.
#[derive(Debug, PartialEq)]
pub(crate) struct Warning<F> {
    pub(crate) finding: F,
    pub(crate) accepted: Option<Accepted>,
}

/// Why a finding whose action is `deny` was accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Accepted {
    /// The object already had it before this change.
    Preexisting,
    /// A Flux controller generates the object from its owner's template.
    Generated,
}

impl<F> Findings<F> {
    /// `generated`: the object is one a Flux controller generates from its
    /// owner's template. Refusing its write would stall the owner and reach
    /// no person; the owner's write is where the author hears of a problem.
    pub(crate) fn new(generated: bool) -> Self {
        Self {
            refusals: Vec::new(),
            warnings: Vec::new(),
            unshown_refusals: 0,
            unshown_warnings: 0,
            generated,
        }
    }

    /// Records what a rule found, as its `action` says. A refusal of
    /// something the object already had before this change becomes a
    /// warning: refusing it would block every later edit, including the
    /// controllers' own (finalizers, suspend), until someone fixes it.
    /// A finding that will not be kept is not built: an Alert check can find
    /// tens of thousands, and only [`SHOWN`] are kept.
    pub(crate) fn report<T: Into<F>>(
        &mut self,
        action: Action,
        preexisting: bool,
        finding: impl FnOnce() -> T,
    ) {
        match action {
            Action::Ignore => {}
            Action::Warn => self.warn_as(None, finding),
            Action::Deny if preexisting => self.warn_as(Some(Accepted::Preexisting), finding),
            Action::Deny if self.generated => self.warn_as(Some(Accepted::Generated), finding),
            Action::Deny => self.refuse(finding),
        }
    }

    fn refuse<T: Into<F>>(&mut self, finding: impl FnOnce() -> T) {
        if self.refusals.len() < SHOWN {
            self.refusals.push(finding().into());
        } else {
            self.unshown_refusals = self.unshown_refusals.saturating_add(1);
        }
    }

    /// A finding that is only ever a warning.
    pub(crate) fn warn<T: Into<F>>(&mut self, finding: impl FnOnce() -> T) {
        self.warn_as(None, finding);
    }

    fn warn_as<T: Into<F>>(&mut self, accepted: Option<Accepted>, finding: impl FnOnce() -> T) {
        if self.warnings.len() < SHOWN {
            self.warnings.push(Warning {
                finding: finding().into(),
                accepted,
            });
        } else {
            self.unshown_warnings = self.unshown_warnings.saturating_add(1);
        }
    }

    /// An empty collection for the same object, to be [`Findings::append`]ed.
    pub(crate) fn fresh(&self) -> Self {
        Self::new(self.generated)
    }

    /// Adds what `later` found after what this holds, as if reported here in
    /// the same order: the first of its findings fill what is left of
    /// [`SHOWN`], the rest are counted.
    pub(crate) fn append(&mut self, later: Findings<F>) {
        for refusal in later.refusals {
            self.refuse(|| refusal);
        }
        for warning in later.warnings {
            self.warn_as(warning.accepted, || warning.finding);
        }
        self.unshown_refusals = self.unshown_refusals.saturating_add(later.unshown_refusals);
        self.unshown_warnings = self.unshown_warnings.saturating_add(later.unshown_warnings);
    }

    /// The number of refusals, shown or not.
    pub(crate) fn refused(&self) -> usize {
        self.refusals.len().saturating_add(self.unshown_refusals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(f: &Findings<u32>) -> Vec<(u32, Option<Accepted>)> {
        f.warnings.iter().map(|w| (w.finding, w.accepted)).collect()
    }

    #[test]
    fn actions_decide_between_refusal_warning_and_silence() {
        let mut f = Findings::<u32>::new(false);
        let built = std::cell::Cell::new(false);
        f.report(Action::Ignore, false, || {
            built.set(true);
            0u32
        });
        assert!(!built.get(), "ignored findings are never built");
        f.report(Action::Warn, false, || 1u32);
        f.report(Action::Deny, false, || 2u32);
        f.report(Action::Deny, true, || 3u32);
        assert_eq!(f.refusals, [2]);
        assert_eq!(accepted(&f), [(1, None), (3, Some(Accepted::Preexisting))]);
    }

    #[test]
    fn generated_objects_are_never_refused() {
        let mut f = Findings::<u32>::new(true);
        f.report(Action::Deny, false, || 1u32);
        f.report(Action::Deny, true, || 2u32);
        assert!(f.refusals.is_empty());
        assert_eq!(
            accepted(&f),
            [
                (1, Some(Accepted::Generated)),
                (2, Some(Accepted::Preexisting))
            ]
        );
    }

    #[test]
    fn only_the_first_are_kept_and_the_rest_counted() {
        let mut f = Findings::<u32>::new(false);
        for i in 0..10u32 {
            f.report(Action::Deny, false, || i);
            f.warn(|| i);
        }
        assert_eq!(f.refusals, (0..8).collect::<Vec<u32>>());
        assert_eq!((f.unshown_refusals, f.refused()), (2, 10));
        assert_eq!((f.warnings.len(), f.unshown_warnings), (8, 2));
    }
}

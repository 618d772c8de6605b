//! Turning what the rules found into one verdict a person can act on.

use guard_core::object::ObjectName;
use guard_core::Verdict;

use crate::settings::Action;

/// At most this many refusals and warnings are spelled out; a flood of
/// annotations must not become a flood of text in `kubectl`'s output.
const SHOWN: usize = 8;

#[derive(Default)]
pub struct Findings {
    refusals: Vec<String>,
    warnings: Vec<String>,
    unshown_refusals: usize,
    unshown_warnings: usize,
    /// Set for an object a Flux controller generates: nothing is refused,
    /// every refusal becomes a warning ending with this note.
    generated: Option<String>,
}

impl Findings {
    /// Findings on an object a Flux controller generates from its owner's
    /// template. Refusing its write would stall the owner and reach no
    /// person; the owner's write is where the author hears of a problem.
    pub fn for_generated(note: String) -> Self {
        Self {
            generated: Some(note),
            ..Self::default()
        }
    }

    /// Records what a rule found, as its `action` says. A refusal of
    /// something the object already had before this change becomes a
    /// warning: refusing it would block every later edit, including the
    /// controllers' own (finalizers, suspend), until someone fixes it.
    pub fn report(&mut self, action: Action, preexisting: bool, text: impl FnOnce() -> String) {
        match action {
            Action::Ignore => {}
            // A text that will not be shown is not built: an Alert check can
            // find tens of thousands of warnings, and only SHOWN are spelled out.
            Action::Warn => self.warn_with(text),
            Action::Deny if preexisting => self.warn_with(|| {
                format!(
                    "{} (The object was already so before this change, so the change is accepted.)",
                    text()
                )
            }),
            Action::Deny if self.generated.is_some() => {
                // Taken out for the closure's borrow, put back after.
                let note = self.generated.take().unwrap_or_default();
                self.warn_with(|| format!("{} ({note})", text()));
                self.generated = Some(note);
            }
            Action::Deny => {
                if self.refusals.len() < SHOWN {
                    self.refusals.push(text());
                } else {
                    self.unshown_refusals = self.unshown_refusals.saturating_add(1);
                }
            }
        }
    }

    pub fn warn(&mut self, text: String) {
        self.warn_with(|| text);
    }

    /// [`Findings::warn`], building the text only when it is shown.
    fn warn_with(&mut self, text: impl FnOnce() -> String) {
        if self.warnings.len() < SHOWN {
            self.warnings.push(text());
        } else {
            self.unshown_warnings = self.unshown_warnings.saturating_add(1);
        }
    }

    pub fn into_verdict(mut self, target: &ObjectName<'_>) -> Verdict {
        if self.unshown_warnings > 0 {
            self.warnings.push(format!(
                "… and {} more warnings like these.",
                self.unshown_warnings
            ));
        }
        let total = self.refusals.len().saturating_add(self.unshown_refusals);
        let verdict = match self.refusals.as_slice() {
            [] => Verdict::allow(),
            [only] if total == 1 => Verdict::deny(only.clone()),
            all => {
                let mut message = format!(
                    "{total} problems with the event metadata of {}:",
                    target.describe()
                );
                for (i, text) in all.iter().enumerate() {
                    message.push_str(&format!(" ({}) {text}", i.saturating_add(1)));
                }
                if self.unshown_refusals > 0 {
                    message.push_str(&format!(" … and {} more.", self.unshown_refusals));
                }
                Verdict::deny(message)
            }
        };
        verdict.with_warnings(self.warnings)
    }
}

/// The object the unit tests review: HelmRelease `apps/podinfo`.
#[cfg(test)]
pub(crate) fn podinfo() -> ObjectName<'static> {
    ObjectName::new(
        "HelmRelease",
        "helmreleases.helm.toolkit.fluxcd.io",
        "apps",
        "podinfo",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_decide_between_refusal_warning_and_silence() {
        let mut f = Findings::default();
        let formatted = std::cell::Cell::new(false);
        f.report(Action::Ignore, false, || {
            formatted.set(true);
            String::new()
        });
        assert!(!formatted.get(), "ignored findings are never formatted");
        f.report(Action::Warn, false, || "w".into());
        let v = f.into_verdict(&podinfo());
        assert!(v.allowed);
        assert_eq!(v.warnings, ["w"]);

        let mut f = Findings::default();
        f.report(Action::Deny, false, || "refused".into());
        let v = f.into_verdict(&podinfo());
        assert_eq!(v.message.as_deref(), Some("refused"));
        assert_eq!(v.code, Some(400));
    }

    #[test]
    fn preexisting_problems_only_warn() {
        let mut f = Findings::default();
        f.report(Action::Deny, true, || "old problem.".into());
        let v = f.into_verdict(&podinfo());
        assert!(v.allowed);
        assert!(v.warnings[0].starts_with("old problem. (The object was already so"));
    }

    #[test]
    fn generated_objects_are_never_refused() {
        let mut f = Findings::for_generated("fix it in the owner".into());
        f.report(Action::Deny, false, || "bad key.".into());
        f.report(Action::Warn, false, || "w".into());
        let v = f.into_verdict(&podinfo());
        assert!(v.allowed);
        assert_eq!(v.warnings, ["bad key. (fix it in the owner)", "w"]);
    }

    #[test]
    fn many_refusals_are_numbered_and_bounded() {
        let mut f = Findings::default();
        for i in 0..10 {
            f.report(Action::Deny, false, || format!("p{i}."));
        }
        for i in 0..10 {
            f.warn(format!("w{i}"));
        }
        let v = f.into_verdict(&podinfo());
        let m = v.message.unwrap();
        assert!(
            m.starts_with(
                "10 problems with the event metadata of HelmRelease apps/podinfo: (1) p0. (2) p1."
            ),
            "{m}"
        );
        assert!(m.ends_with("(8) p7. … and 2 more."), "{m}");
        assert_eq!(v.warnings.len(), 9);
        assert_eq!(v.warnings[8], "… and 2 more warnings like these.");
    }
}

//! When a set of gates is next open all at once.
//!
//! The search steps from one possible state change to the next (firings,
//! window ends, freeze bounds, request expiries), never minute by minute, and
//! stops at a step bound and a ten-year horizon so a pathological schedule
//! cannot stall an admission request.

use jiff::{SignedDuration, Timestamp};

use crate::gate::{earliest, Gate};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// All gates are open from this instant.
    At(Timestamp),
    /// No gate changes again while one stays closed.
    Never,
    /// Not found up to this instant (step bound or horizon reached).
    NotBefore(Timestamp),
}

const MAX_STEPS: usize = 2000;
const HORIZON: SignedDuration = SignedDuration::from_hours(10 * 8766);

/// The first instant after `now` at which every gate is open.
pub fn next_opening(gates: &[Gate<'_>], now: Timestamp) -> Opening {
    let horizon = now.checked_add(HORIZON).unwrap_or(Timestamp::MAX);
    let mut t = now;
    for _ in 0..MAX_STEPS {
        // A gate that stays closed forever keeps them all closed.
        let mut next = None;
        for gate in gates {
            let change = gate.next_change_after(t);
            if change.is_none() && !gate.is_open(t) {
                return Opening::Never;
            }
            next = earliest(next, change);
        }
        let Some(next) = next else {
            // Nothing changes any more, and not all are open (or we would have
            // stopped): closed for good.
            return Opening::Never;
        };
        if next > horizon {
            return Opening::NotBefore(horizon);
        }
        t = next;
        if gates.iter().all(|g| g.is_open(t)) {
            return Opening::At(t);
        }
    }
    Opening::NotBefore(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::tests::{no_deploy_friday, schedule, ts};
    use crate::gate::{Action, DeclaredGate, ObjectGate};

    #[test]
    fn single_gate_opens_at_its_window_end() {
        let g = no_deploy_friday("America/Los_Angeles");
        assert_eq!(
            next_opening(&[Gate::Declared(&g)], ts("2026-11-20T08:00:00Z")),
            Opening::At(ts("2026-11-21T08:00:00Z"))
        );
    }

    #[test]
    fn two_gates_open_when_both_are() {
        let friday = no_deploy_friday("Europe/Berlin");
        let office = DeclaredGate {
            name: "office-hours".into(),
            default_open: false,
            schedules: vec![schedule(
                "0 9 * * MON-FRI",
                "Europe/Berlin",
                "8h",
                Action::Open,
            )],
            freezes: vec![],
        };
        // Friday 10:00 Berlin: Friday is closed; office hours resume Monday 09:00.
        assert_eq!(
            next_opening(
                &[Gate::Declared(&friday), Gate::Declared(&office)],
                ts("2026-11-20T09:00:00Z")
            ),
            Opening::At(ts("2026-11-23T08:00:00Z"))
        );
    }

    #[test]
    fn leap_day_only_opening_is_found_years_ahead() {
        let g = DeclaredGate {
            name: "leap".into(),
            default_open: false,
            schedules: vec![schedule("0 9 29 2 *", "UTC", "8h", Action::Open)],
            freezes: vec![],
        };
        assert_eq!(
            next_opening(&[Gate::Declared(&g)], ts("2026-11-20T00:00:00Z")),
            Opening::At(ts("2028-02-29T09:00:00Z"))
        );
    }

    #[test]
    fn never_and_not_before() {
        let closed = ObjectGate {
            namespace: "flux-system".into(),
            name: "sre-approval".into(),
            default_open: false,
            window: SignedDuration::from_hours(1),
            open_at: Some(ts("2026-11-20T08:00:00Z")),
            close_at: None,
        };
        assert_eq!(
            next_opening(&[Gate::Object(closed)], ts("2026-11-20T10:00:00Z")),
            Opening::Never
        );
        // Mondays only, and not on Mondays: never at once; the search gives up.
        let monday = DeclaredGate {
            name: "monday".into(),
            default_open: false,
            schedules: vec![schedule("0 0 * * MON", "UTC", "24h", Action::Open)],
            freezes: vec![],
        };
        let not_monday = DeclaredGate {
            name: "not-monday".into(),
            default_open: true,
            schedules: vec![schedule("0 0 * * MON", "UTC", "24h", Action::Close)],
            freezes: vec![],
        };
        let found = next_opening(
            &[Gate::Declared(&monday), Gate::Declared(&not_monday)],
            ts("2026-11-20T00:00:00Z"),
        );
        assert!(matches!(found, Opening::NotBefore(_)), "{found:?}");
    }
}

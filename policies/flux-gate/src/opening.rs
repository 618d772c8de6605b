//! When a set of gates is next open all at once, exactly.
//!
//! Each gate answers "the first instant at or after t at which I am open",
//! jumping over whole closed stretches (a freeze to its end, a close window
//! to its end, a closed-by-default gate to its next open firing). The search
//! moves t to the latest of those answers until every gate answers t itself:
//! then all are open at t, and no earlier instant has them all open.
//!
//! Bounds keep a pathological combination (gates that are never open
//! together, minute by minute) from stalling an admission request: a horizon
//! of [`HORIZON`], [`MAX_JUMPS`] jumps and [`MAX_SEARCHES`] cron searches.
//! When one stops the search the answer says up to which instant the gates
//! are known not to be open together.

use jiff::{SignedDuration, Timestamp};

use crate::gate::{Gate, Next, Search};

pub use crate::gate::Next as Opening;

/// How far ahead the search looks: five years, so that even a gate open
/// only on February 29 is found.
pub const HORIZON: SignedDuration = SignedDuration::from_hours(5 * 8766);
/// Closed stretches the search may jump over, all gates together.
pub const MAX_JUMPS: usize = 2000;
/// Cron searches (firings not known yet) the search may run.
pub const MAX_SEARCHES: usize = 2000;

/// The first instant at or after `now` at which every gate is open.
pub fn next_opening(gates: &[Gate<'_>], now: Timestamp) -> Opening {
    let horizon = now.checked_add(HORIZON).unwrap_or(Timestamp::MAX);
    let search = Search::new(horizon, MAX_JUMPS, MAX_SEARCHES);
    let mut t = now;
    loop {
        let mut moved = false;
        for gate in gates {
            match gate.open_from(t, &search) {
                Next::At(at) if at > t => {
                    t = at;
                    moved = true;
                }
                Next::At(_) => {}
                stop => return stop,
            }
        }
        if !moved {
            return Next::At(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::tests::{no_deploy_friday, schedule, ts};
    use crate::gate::{Action, DeclaredGate, Freeze, ObjectGate};

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
            skew: SignedDuration::ZERO,
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
        let now = ts("2026-11-20T00:00:00Z");
        let found = next_opening(&[Gate::Declared(&monday), Gate::Declared(&not_monday)], now);
        assert_eq!(found, Opening::NotBefore(now.checked_add(HORIZON).unwrap()));
    }

    #[test]
    fn a_freeze_is_jumped_over_whatever_the_other_gates_do() {
        // A year-end freeze, and ten-minute slots open
        // every ten minutes for five minutes.
        let freeze = DeclaredGate {
            name: "change-freeze".into(),
            default_open: true,
            schedules: vec![],
            freezes: vec![Freeze {
                start: ts("2026-12-18T17:00:00Z"),
                end: ts("2027-01-04T07:03:00Z"),
                reason: String::new(),
            }],
        };
        let slots = DeclaredGate {
            name: "slots".into(),
            default_open: false,
            schedules: vec![schedule(
                "*/10 * * * *",
                "Europe/Berlin",
                "5m",
                Action::Open,
            )],
            freezes: vec![],
        };
        assert_eq!(
            next_opening(
                &[Gate::Declared(&slots), Gate::Declared(&freeze)],
                ts("2026-12-21T10:00:00Z")
            ),
            Opening::At(ts("2027-01-04T07:03:00Z"))
        );
        assert_eq!(
            next_opening(
                &[Gate::Declared(&slots), Gate::Declared(&freeze)],
                ts("2027-01-04T07:06:00Z")
            ),
            Opening::At(ts("2027-01-04T07:10:00Z"))
        );
    }

    /// Property: the answer is the first minute at which a minute-by-minute
    /// scan finds every gate open (all changes fall on whole minutes here).
    #[expect(
        clippy::too_many_lines,
        reason = "a property test: the generated gates and the minute scan they are held against"
    )]
    #[test]
    fn agrees_with_a_minute_scan() {
        let mut rng = guard_core::testing::Rng::new(3);
        let crons = [
            "0 9 * * MON-FRI",
            "*/10 * * * *",
            "30 2 * * *",
            "0 0 * * FRI",
            "15 */6 * * *",
            "0 12 1 * *",
        ];
        let zones = ["UTC", "Europe/Berlin", "America/Los_Angeles"];
        let pick = |rng: &mut guard_core::testing::Rng, n: usize| rng.below(n);
        for round in 0..60 {
            let gates: Vec<DeclaredGate> = (0..1 + pick(&mut rng, 3))
                .map(|i| {
                    let schedules = (0..pick(&mut rng, 3))
                        .map(|_| {
                            let window = format!("{}m", 5 * (1 + rng.below(300)));
                            let action = if rng.below(2) == 0 {
                                Action::Open
                            } else {
                                Action::Close
                            };
                            schedule(
                                crons[pick(&mut rng, crons.len())],
                                zones[pick(&mut rng, zones.len())],
                                &window,
                                action,
                            )
                        })
                        .collect();
                    let start = ts("2026-11-20T00:00:00Z")
                        .checked_add(SignedDuration::from_mins(
                            i64::try_from(rng.below(20 * 1440)).unwrap(),
                        ))
                        .unwrap();
                    let freezes = (rng.below(2) == 0)
                        .then(|| Freeze {
                            start,
                            end: start
                                .checked_add(SignedDuration::from_mins(
                                    i64::try_from(1 + rng.below(10 * 1440)).unwrap(),
                                ))
                                .unwrap(),
                            reason: String::new(),
                        })
                        .into_iter()
                        .collect();
                    DeclaredGate {
                        name: format!("g{i}"),
                        default_open: rng.below(2) == 0,
                        schedules,
                        freezes,
                    }
                })
                .collect();
            let refs: Vec<Gate<'_>> = gates.iter().map(Gate::Declared).collect();
            let now = ts("2026-11-20T00:00:00Z")
                .checked_add(SignedDuration::from_mins(
                    i64::try_from(rng.below(30 * 1440)).unwrap(),
                ))
                .unwrap();
            let limit = now
                .checked_add(SignedDuration::from_hours(60 * 24))
                .unwrap();
            let mut t = now;
            let scanned = loop {
                if refs.iter().all(|g| g.is_open(t)) {
                    break Some(t);
                }
                t = t.checked_add(SignedDuration::from_mins(1)).unwrap();
                if t > limit {
                    break None;
                }
            };
            let found = next_opening(&refs, now);
            match scanned {
                Some(at) => assert_eq!(found, Opening::At(at), "round {round}: {gates:?}"),
                None => assert!(
                    !matches!(found, Opening::At(at) if at <= limit),
                    "round {round}: {found:?}"
                ),
            }
        }
    }
}

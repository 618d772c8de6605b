//! Gates and their state at an instant.
//!
//! A gate's state is a pure function of its definition and the instant, so
//! the policy needs no controller: a gate declared in settings is its
//! `default` unless a schedule or freeze is active; a Gate object follows the
//! RFC, its latest open or close request holding for `spec.window`.

use std::cell::Cell;

use guard_core::object::ObjectName;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

use crate::cron::Cron;
use crate::firing::Memo;
use crate::gating::{GATE_KIND, GATING_GROUP};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Open,
    Close,
}

guard_core::one_of!(Action { "open" => Action::Open, "close" => Action::Close });

impl Action {
    /// The annotation that requests it.
    pub fn annotation(self) -> &'static str {
        match self {
            Action::Open => crate::gating::OPEN_ANNOTATION,
            Action::Close => crate::gating::CLOSE_ANNOTATION,
        }
    }
}

/// An IANA time zone with the name the user wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Zone {
    pub name: String,
    pub tz: TimeZone,
}

impl Zone {
    pub fn utc() -> Self {
        Zone {
            name: "UTC".into(),
            tz: TimeZone::UTC,
        }
    }
}

/// A recurring period: active from each firing, for `window` of elapsed time.
#[derive(Debug, Clone)]
pub struct Schedule {
    pub cron_text: String,
    pub cron: Cron,
    pub zone: Zone,
    pub window: SignedDuration,
    pub action: Action,
    /// Answers for "the first firing after t - window" and "after t".
    active: Memo,
    next: Memo,
}

impl Schedule {
    pub fn new(
        cron_text: String,
        cron: Cron,
        zone: Zone,
        window: SignedDuration,
        action: Action,
    ) -> Self {
        Schedule {
            cron_text,
            cron,
            zone,
            window,
            action,
            active: Memo::default(),
            next: Memo::default(),
        }
    }

    /// The firing whose window holds `t` (start inclusive, end exclusive).
    /// The earliest such firing: its window ends first.
    fn active_since(&self, t: Timestamp, searches: &Cell<usize>) -> Option<Timestamp> {
        let from = minus(t, self.window)?;
        let fired = self
            .active
            .next_after(&self.cron, &self.zone.tz, from, searches)?;
        (fired <= t).then_some(fired)
    }

    /// The end of the window holding `t`, if one does.
    fn active_until(&self, t: Timestamp, searches: &Cell<usize>) -> Option<Timestamp> {
        self.active_since(t, searches)
            .map(|f| plus(f, self.window).unwrap_or(Timestamp::MAX))
    }

    fn next_firing_after(&self, t: Timestamp, searches: &Cell<usize>) -> Option<Timestamp> {
        self.next.next_after(&self.cron, &self.zone.tz, t, searches)
    }
}

/// `t + d`, as `Timestamp::checked_add` computes it for a `SignedDuration`
/// (jiff reaches that through its general arithmetic, a cost at every jump
/// of the search for an opening).
fn plus(t: Timestamp, d: SignedDuration) -> Option<Timestamp> {
    Timestamp::from_duration(t.as_duration().checked_add(d)?).ok()
}

/// `t - d`, as `Timestamp::checked_sub` computes it.
fn minus(t: Timestamp, d: SignedDuration) -> Option<Timestamp> {
    Timestamp::from_duration(t.as_duration().checked_sub(d)?).ok()
}

/// A one-off closed period, `[start, end)`.
#[derive(Debug, Clone)]
pub struct Freeze {
    pub start: Timestamp,
    pub end: Timestamp,
    pub reason: String,
}

/// A gate declared in the policy settings.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredGate {
    pub name: String,
    pub default_open: bool,
    pub schedules: Vec<Schedule>,
    pub freezes: Vec<Freeze>,
}

/// A `gating.toolkit.fluxcd.io/v1alpha1` Gate read from the cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectGate {
    pub namespace: String,
    pub name: String,
    pub default_open: bool,
    pub window: SignedDuration,
    pub open_at: Option<Timestamp>,
    pub close_at: Option<Timestamp>,
    /// How far ahead of the policy's clock a request may be and still count
    /// as made now (`clockSkewTolerance`: a workstation clock running fast
    /// writes a requestedAt slightly in the future, and the Gate write
    /// accepts it, so it must take effect).
    pub skew: SignedDuration,
}

/// Why a gate is in the state it is.
#[derive(Debug, Clone, PartialEq)]
pub enum Why<'a> {
    /// No period is active (settings gate), or no request is in effect (Gate object).
    Default,
    Schedule {
        schedule: &'a Schedule,
        fired: Timestamp,
    },
    Freeze(&'a Freeze),
    /// A Gate object's open or close request, holding until `until`.
    Request {
        action: Action,
        at: Timestamp,
        until: Timestamp,
    },
}

impl PartialEq for Schedule {
    fn eq(&self, other: &Self) -> bool {
        self.cron_text == other.cron_text
            && self.zone.name == other.zone.name
            && self.window == other.window
            && self.action == other.action
    }
}

impl PartialEq for Freeze {
    fn eq(&self, other: &Self) -> bool {
        (self.start, self.end, &self.reason) == (other.start, other.end, &other.reason)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct State<'a> {
    pub open: bool,
    pub why: Why<'a>,
}

impl DeclaredGate {
    pub fn state_at(&self, t: Timestamp) -> State<'_> {
        if let Some(freeze) = self.freezes.iter().find(|f| f.start <= t && t < f.end) {
            return State {
                open: false,
                why: Why::Freeze(freeze),
            };
        }
        let mut opened = None;
        for schedule in &self.schedules {
            let Some(fired) = schedule.active_since(t, &Cell::new(0)) else {
                continue;
            };
            let why = Why::Schedule { schedule, fired };
            // Close beats open, as deny beats allow in Argo CD sync windows.
            match schedule.action {
                Action::Close => return State { open: false, why },
                Action::Open => opened = opened.or(Some(why)),
            }
        }
        match opened {
            Some(why) => State { open: true, why },
            None => State {
                open: self.default_open,
                why: Why::Default,
            },
        }
    }

    /// The first instant at or after `t` at which the gate is open. Each
    /// turn jumps over a whole closed stretch: to the end of the freezes and
    /// close windows holding `t`, or, closed by default, to the next firing
    /// of an open schedule.
    fn open_from(&self, mut t: Timestamp, search: &Search) -> Next {
        loop {
            let frozen = self
                .freezes
                .iter()
                .filter(|f| f.start <= t && t < f.end)
                .map(|f| f.end);
            let closing = self
                .schedules
                .iter()
                .filter(|s| s.action == Action::Close)
                .filter_map(|s| s.active_until(t, &search.searches));
            let opens = self.schedules.iter().filter(|s| s.action == Action::Open);
            t = match frozen.chain(closing).max() {
                Some(end) => end,
                None if self.default_open
                    || opens
                        .clone()
                        .any(|s| s.active_since(t, &search.searches).is_some()) =>
                {
                    return Next::At(t)
                }
                None => match opens
                    .filter_map(|s| s.next_firing_after(t, &search.searches))
                    .min()
                {
                    Some(next) => next,
                    None => return Next::Never,
                },
            };
            if let Some(stop) = search.jump(t) {
                return stop;
            }
        }
    }
}

impl ObjectGate {
    /// The Gate as messages name it and `kubectl` takes it.
    pub fn object(&self) -> ObjectName<'_> {
        ObjectName::new(
            GATE_KIND,
            format!("gates.{GATING_GROUP}"),
            &self.namespace,
            &self.name,
        )
    }

    /// The request in effect: the latest one made by `t` (a close wins a
    /// tie), if its window still holds. A request up to `skew` ahead of `t`
    /// is made already; its window still runs from its own instant.
    pub fn state_at(&self, t: Timestamp) -> State<'static> {
        let mut latest: Option<(Timestamp, Action)> = None;
        for (at, action) in [(self.close_at, Action::Close), (self.open_at, Action::Open)] {
            let Some(at) = at.filter(|a| self.takes_effect(*a) <= t) else {
                continue;
            };
            if latest.is_none_or(|(l, _)| at > l) {
                latest = Some((at, action));
            }
        }
        if let Some((at, action)) = latest {
            if let Some(until) = plus(at, self.window) {
                if t < until {
                    let why = Why::Request { action, at, until };
                    return State {
                        open: action == Action::Open,
                        why,
                    };
                }
            }
        }
        State {
            open: self.default_open,
            why: Why::Default,
        }
    }

    /// The first instant at or after `t` at which the gate is open.
    fn open_from(&self, mut t: Timestamp, search: &Search) -> Next {
        loop {
            if self.state_at(t).open {
                return Next::At(t);
            }
            match self.next_change_after(t) {
                Some(next) => t = next,
                None => return Next::Never,
            }
            if let Some(stop) = search.jump(t) {
                return stop;
            }
        }
    }

    /// When a request made at `at` takes effect: `skew` earlier.
    pub fn takes_effect(&self, at: Timestamp) -> Timestamp {
        minus(at, self.skew).unwrap_or(Timestamp::MIN)
    }

    /// The next instant after `t` at which a request takes or loses effect.
    pub fn next_change_after(&self, t: Timestamp) -> Option<Timestamp> {
        [self.open_at, self.close_at]
            .into_iter()
            .flatten()
            .flat_map(|at| [Some(self.takes_effect(at)), plus(at, self.window)])
            .flatten()
            .filter(|x| *x > t)
            .min()
    }

    /// `namespace/name`, as the RFC's messages write it.
    pub fn label(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// A gate a request is bound to.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate<'a> {
    Declared(&'a DeclaredGate),
    Object(ObjectGate),
}

impl<'a> Gate<'a> {
    pub fn label(&self) -> String {
        match self {
            Gate::Declared(g) => g.name.clone(),
            Gate::Object(g) => g.label(),
        }
    }

    pub fn state_at(&self, t: Timestamp) -> State<'_> {
        match self {
            Gate::Declared(g) => g.state_at(t),
            Gate::Object(g) => g.state_at(t),
        }
    }

    pub fn is_open(&self, t: Timestamp) -> bool {
        self.state_at(t).open
    }

    /// The first instant at or after `t` at which the gate is open.
    pub fn open_from(&self, t: Timestamp, search: &Search) -> Next {
        match self {
            Gate::Declared(g) => g.open_from(t, search),
            Gate::Object(g) => g.open_from(t, search),
        }
    }

    /// The zones its times are best read in (UTC for Gate objects and freezes).
    pub fn zones(&self) -> Vec<&'a Zone> {
        match self {
            Gate::Declared(g) => g.schedules.iter().map(|s| &s.zone).collect(),
            Gate::Object(_) => Vec::new(),
        }
    }
}

/// When a gate (or a set of gates) is next open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Open at this instant.
    At(Timestamp),
    /// Closed from here on, for good.
    Never,
    /// Not open anywhere before this instant; the search stopped there.
    NotBefore(Timestamp),
}

/// The bounds every search for an opening shares: a horizon in time, and
/// the work it may do (jumps, and cron searches the memos could not spare).
pub struct Search {
    horizon: Timestamp,
    jumps: Cell<usize>,
    max_jumps: usize,
    searches: Cell<usize>,
    max_searches: usize,
}

impl Search {
    pub fn new(horizon: Timestamp, max_jumps: usize, max_searches: usize) -> Self {
        Search {
            horizon,
            jumps: Cell::new(0),
            max_jumps,
            searches: Cell::new(0),
            max_searches,
        }
    }

    /// Counts one jump to `t`; says where to stop when a bound is reached.
    fn jump(&self, t: Timestamp) -> Option<Next> {
        if t > self.horizon {
            return Some(Next::NotBefore(self.horizon));
        }
        self.jumps.set(self.jumps.get().saturating_add(1));
        (self.jumps.get() > self.max_jumps || self.searches.get() > self.max_searches)
            .then_some(Next::NotBefore(t))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    pub fn schedule(cron: &str, zone: &str, window: &str, action: Action) -> Schedule {
        Schedule::new(
            cron.into(),
            Cron::parse(cron).unwrap(),
            Zone {
                name: zone.into(),
                tz: crate::zones::get(zone).unwrap(),
            },
            SignedDuration::from_nanos(guard_core::duration::parse(window).unwrap()),
            action,
        )
    }

    pub fn search() -> Search {
        Search::new(ts("2040-01-01T00:00:00Z"), 10_000, 10_000)
    }

    #[test]
    fn plus_and_minus_are_jiffs_arithmetic() {
        let times = [
            Timestamp::MIN,
            Timestamp::MAX,
            Timestamp::UNIX_EPOCH,
            ts("2026-11-20T10:00:30.5Z"),
            ts("1900-01-01T00:00:00.000000001Z"),
        ];
        let durations = [
            SignedDuration::ZERO,
            SignedDuration::MIN,
            SignedDuration::MAX,
            SignedDuration::from_secs(1),
            SignedDuration::from_nanos(-1),
            SignedDuration::from_hours(5 * 8766),
            SignedDuration::new(i64::MAX / 2, 999_999_999),
        ];
        for t in times {
            for d in durations {
                assert_eq!(plus(t, d), t.checked_add(d).ok(), "{t} + {d:?}");
                assert_eq!(minus(t, d), t.checked_sub(d).ok(), "{t} - {d:?}");
            }
        }
    }

    pub fn no_deploy_friday(zone: &str) -> DeclaredGate {
        DeclaredGate {
            name: "no-deploy-friday".into(),
            default_open: true,
            schedules: vec![schedule("0 0 * * FRI", zone, "24h", Action::Close)],
            freezes: vec![],
        }
    }

    #[test]
    fn close_schedule_window_is_start_inclusive_end_exclusive() {
        let g = no_deploy_friday("America/Los_Angeles");
        assert!(g.state_at(ts("2026-11-20T07:59:59Z")).open);
        let s = g.state_at(ts("2026-11-20T08:00:00Z"));
        assert!(!s.open);
        assert!(
            matches!(s.why, Why::Schedule { fired, .. } if fired == ts("2026-11-20T08:00:00Z"))
        );
        assert!(!g.state_at(ts("2026-11-21T07:59:59.999Z")).open);
        assert!(g.state_at(ts("2026-11-21T08:00:00Z")).open);
        assert_eq!(g.state_at(ts("2026-11-21T08:00:00Z")).why, Why::Default);
    }

    #[test]
    fn windows_are_elapsed_time_across_dst() {
        // Opens at 02:30 Berlin for 1h, as robfig/cron fires it: not on the
        // spring-forward night (02:30 does not exist), at both 02:30s of the
        // fall-back night, each for 1h of elapsed time.
        let g = DeclaredGate {
            name: "night".into(),
            default_open: false,
            schedules: vec![schedule("30 2 * * *", "Europe/Berlin", "1h", Action::Open)],
            freezes: vec![],
        };
        assert!(!g.state_at(ts("2026-03-29T01:00:00Z")).open);
        assert!(!g.state_at(ts("2026-03-29T01:30:00Z")).open);
        assert!(g.state_at(ts("2026-03-30T00:30:00Z")).open);
        // Fall back: 02:30 CEST (00:30Z) and 02:30 CET (01:30Z).
        assert!(g.state_at(ts("2026-10-25T00:30:00Z")).open);
        assert!(g.state_at(ts("2026-10-25T01:29:59Z")).open);
        assert!(g.state_at(ts("2026-10-25T02:29:59Z")).open);
        assert!(!g.state_at(ts("2026-10-25T02:30:00Z")).open);
    }

    #[test]
    fn close_beats_open_and_freezes_close() {
        let g = DeclaredGate {
            name: "g".into(),
            default_open: false,
            schedules: vec![
                schedule("0 8 * * MON-FRI", "UTC", "10h", Action::Open),
                schedule("0 12 * * *", "UTC", "1h", Action::Close),
            ],
            freezes: vec![Freeze {
                start: ts("2026-12-24T00:00:00Z"),
                end: ts("2026-12-27T00:00:00Z"),
                reason: "holidays".into(),
            }],
        };
        assert!(g.state_at(ts("2026-11-19T09:00:00Z")).open);
        assert!(!g.state_at(ts("2026-11-19T12:30:00Z")).open);
        assert!(g.state_at(ts("2026-11-19T13:00:00Z")).open);
        assert!(matches!(
            g.state_at(ts("2026-12-24T09:00:00Z")).why,
            Why::Freeze(_)
        ));
        assert!(g.state_at(ts("2026-12-28T09:00:00Z")).open);
        assert_eq!(
            Gate::Declared(&g).open_from(ts("2026-11-19T12:30:00Z"), &search()),
            Next::At(ts("2026-11-19T13:00:00Z"))
        );
        // Over the freeze, then to the next weekday morning.
        assert_eq!(
            Gate::Declared(&g).open_from(ts("2026-12-24T09:00:00Z"), &search()),
            Next::At(ts("2026-12-28T08:00:00Z"))
        );
    }

    #[test]
    fn a_gate_object_follows_its_latest_request() {
        let mut g = ObjectGate {
            namespace: "flux-system".into(),
            name: "sre-approval".into(),
            default_open: false,
            window: SignedDuration::from_hours(1),
            open_at: Some(ts("2026-03-26T10:00:00Z")),
            close_at: None,
            skew: SignedDuration::ZERO,
        };
        assert!(!g.state_at(ts("2026-03-26T09:59:59Z")).open);
        assert!(g.state_at(ts("2026-03-26T10:00:00Z")).open);
        assert!(!g.state_at(ts("2026-03-26T11:00:00Z")).open);
        // Closed ahead of schedule: the later request wins.
        g.close_at = Some(ts("2026-03-26T10:10:00Z"));
        let s = g.state_at(ts("2026-03-26T10:20:00Z"));
        assert!(!s.open);
        assert!(matches!(
            s.why,
            Why::Request {
                action: Action::Close,
                ..
            }
        ));
        // A tie goes to close.
        g.close_at = g.open_at;
        assert!(!g.state_at(ts("2026-03-26T10:20:00Z")).open);
        // Maintenance: opened by default, closed for 24h.
        let m = ObjectGate {
            default_open: true,
            window: SignedDuration::from_hours(24),
            open_at: None,
            close_at: Some(ts("2026-03-26T10:00:00Z")),
            skew: SignedDuration::ZERO,
            ..g
        };
        assert!(!m.state_at(ts("2026-03-27T09:59:59Z")).open);
        assert!(m.state_at(ts("2026-03-27T10:00:00Z")).open);
        assert_eq!(
            m.next_change_after(ts("2026-03-26T12:00:00Z")),
            Some(ts("2026-03-27T10:00:00Z"))
        );
        assert_eq!(m.next_change_after(ts("2026-03-27T10:00:00Z")), None);
    }

    #[test]
    fn a_gate_closed_by_default_without_open_schedules_never_changes() {
        let g = DeclaredGate {
            name: "freeze".into(),
            default_open: false,
            schedules: vec![schedule("0 0 * * *", "UTC", "1h", Action::Close)],
            freezes: vec![],
        };
        assert_eq!(
            Gate::Declared(&g).open_from(ts("2026-01-01T00:30:00Z"), &search()),
            Next::Never
        );
    }
}

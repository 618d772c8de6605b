//! When a cron schedule fires, as instants, in an IANA time zone: the
//! instants robfig/cron v3.0.1's `SpecSchedule.Next` gives (`spec.go`), the
//! search Flux Operator and the Kubernetes CronJob controller run.
//!
//! `Next` walks from the second after the question: months with
//! `AddDate(0, 1, 0)`, days with `AddDate(0, 0, 1)` (and a one-hour nudge
//! back to midnight when a transition moved it), hours with `Add(1h)`,
//! minutes with `Add(1m)`, starting a field over at its first value
//! (`time.Date`) the first time it has to move, and beginning again from the
//! month whenever a field wraps; it gives up after five years. Hours and
//! minutes advance in elapsed time, so across daylight saving time:
//!
//! - a wall time in a spring-forward gap never fires that day (02:30 in
//!   Berlin on the last Sunday of March: 01:59 CET plus a minute is 03:00 CEST);
//! - a wall time in a fall-back overlap fires at both occurrences (02:30 CEST
//!   and 02:30 CET);
//! - where the clocks move by 30 minutes (Australia/Lord_Howe), the hour the
//!   search steps into after the change starts at minute 30 and its first
//!   half is skipped, as is every step that follows from it.
//!
//! [`next_after`] is that search, step for step, except that it crosses
//! whole runs of hours or minutes at once where the zone has no transition
//! in between (there each step adds one to the field, so the run ends where
//! the steps would). `robfig_reference` checks it against the search taken
//! one step at a time.

use std::cell::Cell;

use jiff::tz::TimeZone;
use jiff::Timestamp;

use crate::cron::Cron;
use crate::go_time::{add_date, date, steady, wall, Wall};

/// A guard on the search's restarts; a search that fires at all restarts a
/// few times per day it passes, about 2,000 times in five years.
const MAX_RESTARTS: usize = 10_000;

/// The first firing strictly after `after`, or `None` when there is none
/// within robfig's five years.
pub fn next_after(cron: &Cron, tz: &TimeZone, after: Timestamp) -> Option<Timestamp> {
    // `t.Add(1*time.Second - t.Nanosecond())`: the next whole second.
    let second = after
        .as_second()
        .checked_sub(i64::from(after.subsec_nanosecond() < 0))?;
    let mut search = Search {
        cron,
        tz,
        t: second.checked_add(1)?,
        added: false,
    };
    let year_limit = wall(tz, search.t)?.year.checked_add(5)?;
    for _ in 0..MAX_RESTARTS {
        if wall(tz, search.t)?.year > year_limit {
            return None;
        }
        let fires = search.month()?
            && search.day()?
            && search.clock(Clock::Hour)?
            && search.clock(Clock::Minute)?
            && search.second()?;
        if fires {
            return Timestamp::from_second(search.t).ok();
        }
    }
    None
}

/// The search's state: the instant it is at, and whether a field has moved
/// (robfig's `added`: only the first move starts a field over).
struct Search<'a> {
    cron: &'a Cron,
    tz: &'a TimeZone,
    t: i64,
    added: bool,
}

/// Each field's loop answers `Some(true)` when the field matches, `Some(false)`
/// when it wrapped (the search begins again), `None` past jiff's range.
impl Search<'_> {
    fn month(&mut self) -> Option<bool> {
        loop {
            let w = wall(self.tz, self.t)?;
            if self.cron.month(w.month) {
                return Some(true);
            }
            if !self.added {
                self.added = true;
                self.t = date(self.tz, w.year, w.month.into(), 1, 0, 0, 0)?;
            }
            self.t = add_date(self.tz, self.t, 1, 0)?;
            if wall(self.tz, self.t)?.month == 1 {
                return Some(false);
            }
        }
    }

    fn day(&mut self) -> Option<bool> {
        loop {
            let w = wall(self.tz, self.t)?;
            if self.cron.day(w.day, w.weekday) {
                return Some(true);
            }
            if !self.added {
                self.added = true;
                self.t = date(self.tz, w.year, w.month.into(), w.day.into(), 0, 0, 0)?;
            }
            self.t = add_date(self.tz, self.t, 0, 1)?;
            // Midnight moved by a transition: back (or on) to the hour.
            let hour = wall(self.tz, self.t)?.hour;
            if hour > 12 {
                self.t = self.t.checked_add(hours(24u8.saturating_sub(hour)))?;
            } else {
                self.t = self.t.checked_sub(hours(hour))?;
            }
            if wall(self.tz, self.t)?.day == 1 {
                return Some(false);
            }
        }
    }

    /// Hours or minutes: counted up in elapsed time (`Add`).
    fn clock(&mut self, field: Clock) -> Option<bool> {
        loop {
            let w = wall(self.tz, self.t)?;
            if field.allowed(self.cron, field.read(&w)) {
                return Some(true);
            }
            if !self.added {
                self.added = true;
                self.t = match field {
                    Clock::Hour => {
                        let (y, m, d) = (w.year, w.month.into(), w.day.into());
                        date(self.tz, y, m, d, w.hour.into(), 0, 0)?
                    }
                    // `Truncate(time.Minute)`: Go's zero time is a whole minute.
                    Clock::Minute => self.t.checked_sub(self.t.rem_euclid(60))?,
                };
            }
            let value = field.read(&wall(self.tz, self.t)?);
            let run = field
                .after(self.cron, value)
                .unwrap_or(field.end())
                .saturating_sub(value);
            self.t = self.advance(i64::from(run), field.unit())?;
            if field.read(&wall(self.tz, self.t)?) == 0 {
                return Some(false);
            }
        }
    }

    /// Only second 0 fires: any other second runs to the next minute, and
    /// the search begins again there.
    fn second(&mut self) -> Option<bool> {
        loop {
            let second = wall(self.tz, self.t)?.second;
            if second == 0 {
                return Some(true);
            }
            // `Truncate(time.Second)` is a no-op: the search is in whole seconds.
            self.added = true;
            self.t = self.advance(i64::from(60u8.saturating_sub(second)), 1)?;
            if wall(self.tz, self.t)?.second == 0 {
                return Some(false);
            }
        }
    }

    /// `t` after `steps` steps of `unit` seconds, or after one step when the
    /// zone changes offset within the run (the steps' fields then do not
    /// simply count up).
    fn advance(&self, steps: i64, unit: i64) -> Option<i64> {
        let end = self.t.checked_add(steps.checked_mul(unit)?)?;
        if steady(self.tz, self.t, end) {
            Some(end)
        } else {
            self.t.checked_add(unit)
        }
    }
}

/// The fields `Next` counts up in elapsed time.
#[derive(Clone, Copy)]
enum Clock {
    Hour,
    Minute,
}

impl Clock {
    fn read(self, w: &Wall) -> u8 {
        match self {
            Clock::Hour => w.hour,
            Clock::Minute => w.minute,
        }
    }

    fn allowed(self, cron: &Cron, value: u8) -> bool {
        match self {
            Clock::Hour => cron.hour(value),
            Clock::Minute => cron.minute(value),
        }
    }

    fn after(self, cron: &Cron, value: u8) -> Option<u8> {
        match self {
            Clock::Hour => cron.hour_after(value),
            Clock::Minute => cron.minute_after(value),
        }
    }

    /// Where the field wraps to 0.
    fn end(self) -> u8 {
        match self {
            Clock::Hour => 24,
            Clock::Minute => 60,
        }
    }

    /// One step, in seconds.
    fn unit(self) -> i64 {
        match self {
            Clock::Hour => 3600,
            Clock::Minute => 60,
        }
    }
}

/// `n` hours in seconds.
fn hours(n: u8) -> i64 {
    i64::from(n).saturating_mul(3600)
}

/// The last answer of [`next_after`] for one schedule, reused while it still
/// holds: if the first firing after `q0` is `a`, it is also the first firing
/// after any `q` in `[q0, a)`, provided the zone keeps one offset from a
/// month before `q0` (where the search may start a field over) to a day after
/// `a` (where `time.Date` may look): there the search is a plain walk over
/// wall times. Searches move forward in time, so most questions during one
/// evaluation are answered without a cron search.
#[derive(Debug, Clone, Default)]
pub struct Memo(Cell<Option<(Timestamp, Timestamp)>>);

/// How far before a question and after its answer the zone must not change.
const STEADY_BEFORE: i64 = 33 * 86_400;
const STEADY_AFTER: i64 = 86_400;

impl Memo {
    /// The first firing strictly after `q`, as [`next_after`] gives it;
    /// `searches` counts the cron searches it could not spare.
    pub fn next_after(
        &self,
        cron: &Cron,
        tz: &TimeZone,
        q: Timestamp,
        searches: &Cell<usize>,
    ) -> Option<Timestamp> {
        if let Some((q0, answer)) = self.0.get() {
            if q0 <= q && q < answer {
                return Some(answer);
            }
        }
        searches.set(searches.get().saturating_add(1));
        let answer = next_after(cron, tz, q);
        if let Some(a) = answer {
            let from = q.as_second().saturating_sub(STEADY_BEFORE);
            let to = a.as_second().saturating_add(STEADY_AFTER);
            if steady(tz, from, to) {
                self.0.set(Some((q, a)));
            }
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn cron(expr: &str) -> Cron {
        Cron::parse(expr).unwrap()
    }

    /// The first `n` firings after `after`.
    fn firings(expr: &str, zone: &str, after: &str, n: usize) -> Vec<String> {
        let tz = TimeZone::get(zone).unwrap();
        let cron = cron(expr);
        let mut t = ts(after);
        (0..n)
            .map(|_| {
                t = next_after(&cron, &tz, t).unwrap();
                t.to_string()
            })
            .collect()
    }

    fn next(expr: &str, zone: &str, after: &str) -> String {
        firings(expr, zone, after, 1).remove(0)
    }

    #[test]
    fn no_deploy_friday_in_two_zones() {
        assert_eq!(
            next("0 0 * * FRI", "America/Los_Angeles", "2026-11-19T12:00:00Z"),
            "2026-11-20T08:00:00Z"
        );
        assert_eq!(
            next("0 0 * * FRI", "Europe/Berlin", "2026-11-19T12:00:00Z"),
            "2026-11-19T23:00:00Z"
        );
        // Strictly after: a firing at the instant itself is not "next".
        assert_eq!(
            next("0 0 * * FRI", "UTC", "2026-11-20T00:00:00Z"),
            "2026-11-27T00:00:00Z"
        );
        assert_eq!(
            next("0 0 * * FRI", "UTC", "2026-11-19T23:59:59.999Z"),
            "2026-11-20T00:00:00Z"
        );
    }

    #[test]
    fn a_wall_time_in_a_spring_forward_gap_does_not_fire() {
        // Berlin, 2026-03-29: 02:00 CET jumps to 03:00 CEST (01:00Z); no 02:30
        // that night, 02:30 CEST the night after.
        assert_eq!(
            firings("30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 2),
            ["2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"]
        );
        // New York, 2026-03-08 (02:00 EST to 03:00 EDT, 07:00Z): the same.
        assert_eq!(
            next("30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z"),
            "2026-03-09T06:30:00Z"
        );
        // The hours around the gap fire as usual: 01:59 EST, then 03:00 EDT.
        assert_eq!(
            next("59 1 * * *", "America/New_York", "2026-03-08T00:00:00Z"),
            "2026-03-08T06:59:00Z"
        );
        assert_eq!(
            next("0 3 * * *", "America/New_York", "2026-03-08T06:59:00Z"),
            "2026-03-08T07:00:00Z"
        );
    }

    #[test]
    fn a_wall_time_in_a_fall_back_overlap_fires_at_both_occurrences() {
        // Berlin, 2026-10-25: 03:00 CEST (01:00Z) goes back to 02:00 CET.
        assert_eq!(
            firings("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", 3),
            [
                "2026-10-25T00:30:00Z",
                "2026-10-25T01:30:00Z",
                "2026-10-26T01:30:00Z"
            ]
        );
        // Every 20 minutes through the overlap: 02:00-02:40 CEST, then CET.
        assert_eq!(
            firings("*/20 2 * * *", "Europe/Berlin", "2026-10-24T23:50:00Z", 7),
            [
                "2026-10-25T00:00:00Z",
                "2026-10-25T00:20:00Z",
                "2026-10-25T00:40:00Z",
                "2026-10-25T01:00:00Z",
                "2026-10-25T01:20:00Z",
                "2026-10-25T01:40:00Z",
                "2026-10-26T01:00:00Z"
            ]
        );
    }

    /// Lord Howe moves its clocks by 30 minutes (02:00 LHST to 02:30 LHDT on
    /// the first Sunday of October, 2026-10-04, 15:30Z the day before). Asked
    /// before the change, robfig steps from 01:00 by an hour to 02:30 LHDT
    /// and on to 03:30: 03:15 does not fire that day. Asked at 03:05, it
    /// fires at 03:15.
    #[test]
    fn lord_howe_half_hour_change_as_in_robfig() {
        let zone = "Australia/Lord_Howe";
        assert_eq!(
            next("15 3 * * *", zone, "2026-10-03T14:00:00Z"),
            "2026-10-04T16:15:00Z"
        );
        assert_eq!(
            next("15 3 * * *", zone, "2026-10-03T16:05:00Z"),
            "2026-10-03T16:15:00Z"
        );
    }

    #[test]
    fn the_memo_answers_like_the_search() {
        for (zone, expr, from) in [
            ("Europe/Berlin", "*/20 1-3 * * *", "2026-10-20T00:00:00Z"),
            (
                "Australia/Lord_Howe",
                "15 0-4 * * *",
                "2026-09-30T00:00:00Z",
            ),
            ("UTC", "0 9 * * MON-FRI", "2026-10-20T00:00:00Z"),
        ] {
            let tz = TimeZone::get(zone).unwrap();
            let cron = cron(expr);
            let memo = Memo::default();
            let searches = Cell::new(0);
            let mut rng = guard_core::testing::Rng::new(5);
            let mut t = ts(from);
            for _ in 0..400 {
                // Mostly forward, sometimes back, as the searches ask.
                let step = i64::try_from(rng.below(4 * 3600)).unwrap() - 1800;
                t = t
                    .checked_add(jiff::SignedDuration::from_secs(step))
                    .unwrap();
                assert_eq!(
                    memo.next_after(&cron, &tz, t, &searches),
                    next_after(&cron, &tz, t),
                    "{zone} {expr} after {t}"
                );
            }
            assert!(searches.get() < 400, "{zone}: {}", searches.get());
        }
    }

    #[test]
    fn leap_day_in_a_zone() {
        assert_eq!(
            next("0 9 29 2 *", "Asia/Tokyo", "2026-03-01T00:00:00Z"),
            "2028-02-29T00:00:00Z"
        );
    }

    /// robfig gives up five years after the question: February 29 skips 2100.
    #[test]
    fn nothing_after_five_years() {
        let tz = TimeZone::UTC;
        let cron = cron("0 0 29 2 *");
        assert_eq!(next_after(&cron, &tz, ts("2096-03-01T00:00:00Z")), None);
        assert_eq!(
            next_after(&cron, &tz, ts("2099-03-01T00:00:00Z")).map(|t| t.to_string()),
            Some("2104-02-29T00:00:00Z".into())
        );
    }
}

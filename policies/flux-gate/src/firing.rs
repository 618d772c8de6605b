//! When a cron schedule fires, as instants, in an IANA time zone.
//!
//! Cron speaks wall-clock time; a gate needs instants. Across daylight saving
//! transitions the usual cron convention applies: a wall time that falls in a
//! spring-forward gap fires at the first instant after the gap (02:30 on the
//! last Sunday of March in Berlin fires at 03:00 CEST); a wall time that occurs
//! twice in a fall-back overlap fires once, at its first occurrence (02:30
//! CEST, not again at 02:30 CET). Wall time to instant is therefore monotonic,
//! which is what lets [`next_after`] search wall times in order.

use std::cell::Cell;

use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::Timestamp;

use crate::cron::Cron;

/// The instant a cron wall time fires at in `tz`.
pub fn fire_instant(tz: &TimeZone, wall: DateTime) -> Option<Timestamp> {
    match tz.to_ambiguous_timestamp(wall).offset() {
        AmbiguousOffset::Unambiguous { offset } => offset.to_timestamp(wall).ok(),
        AmbiguousOffset::Fold { before, .. } => before.to_timestamp(wall).ok(),
        AmbiguousOffset::Gap { after, .. } => {
            // Read with the offset after the gap, the wall time lands before
            // the transition; the transition itself is the first instant after the gap.
            let before_gap = after.to_timestamp(wall).ok()?;
            tz.following(before_gap).next().map(|t| t.timestamp())
        }
    }
}

/// The first firing strictly after `after`.
pub fn next_after(cron: &Cron, tz: &TimeZone, after: Timestamp) -> Option<Timestamp> {
    // No wall time before the minute holding `after` can fire after it
    // (monotonicity); inside a fall-back overlap a few matching minutes may
    // still map to earlier instants, hence the loop. An overlap lasts hours
    // at most, so the bound is never reached by a valid zone.
    let mut wall = cron.next_match(tz.to_datetime(after))?;
    for _ in 0..1000 {
        let at = fire_instant(tz, wall)?;
        if at > after {
            return Some(at);
        }
        wall = cron.next_match_after(wall)?;
    }
    None
}

/// The last answer of [`next_after`] for one schedule, reused while it still
/// holds: if the first firing after `q0` is `a`, it is also the first firing
/// after any `q` in `[q0, a)`. Searches move forward in time, so most
/// questions during one evaluation are answered without a cron search.
#[derive(Debug, Clone, Default)]
pub struct Memo(Cell<Option<(Timestamp, Option<Timestamp>)>>);

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
            if q0 <= q && answer.is_none_or(|a| q < a) {
                return answer;
            }
        }
        searches.set(searches.get().saturating_add(1));
        let answer = next_after(cron, tz, q);
        self.0.set(Some((q, answer)));
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Span;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn next(expr: &str, zone: &str, after: &str) -> String {
        let tz = TimeZone::get(zone).unwrap();
        next_after(&Cron::parse(expr).unwrap(), &tz, ts(after))
            .unwrap()
            .to_string()
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
    fn spring_forward_gap_fires_at_the_end_of_the_gap() {
        // Berlin, 2026-03-29: 02:00 CET jumps to 03:00 CEST (01:00Z).
        assert_eq!(
            next("30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z"),
            "2026-03-29T01:00:00Z"
        );
        // Two wall times in the gap fire once, together.
        let tz = TimeZone::get("Europe/Berlin").unwrap();
        let cron = Cron::parse("0,30 2 * * *").unwrap();
        let first = next_after(&cron, &tz, ts("2026-03-28T12:00:00Z")).unwrap();
        assert_eq!(first.to_string(), "2026-03-29T01:00:00Z");
        assert_eq!(
            next_after(&cron, &tz, first).unwrap().to_string(),
            "2026-03-30T00:00:00Z"
        );
        // The day after, 02:30 CEST again.
        assert_eq!(
            next("30 2 * * *", "Europe/Berlin", "2026-03-29T01:00:00Z"),
            "2026-03-30T00:30:00Z"
        );
    }

    #[test]
    fn fall_back_overlap_fires_once_at_the_first_occurrence() {
        // Berlin, 2026-10-25: 03:00 CEST (01:00Z) goes back to 02:00 CET.
        assert_eq!(
            next("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z"),
            "2026-10-25T00:30:00Z"
        );
        // Not again at 02:30 CET (01:30Z): the next is the following day.
        assert_eq!(
            next("30 2 * * *", "Europe/Berlin", "2026-10-25T00:30:00Z"),
            "2026-10-26T01:30:00Z"
        );
        // Every 20 minutes through the overlap: 02:00, 02:20, 02:40 CEST, then 03:00 CET.
        let tz = TimeZone::get("Europe/Berlin").unwrap();
        let cron = Cron::parse("*/20 * * * *").unwrap();
        let mut t = ts("2026-10-24T23:50:00Z");
        let mut seen = Vec::new();
        for _ in 0..5 {
            t = next_after(&cron, &tz, t).unwrap();
            seen.push(t.to_string());
        }
        assert_eq!(
            seen,
            [
                "2026-10-25T00:00:00Z",
                "2026-10-25T00:20:00Z",
                "2026-10-25T00:40:00Z",
                "2026-10-25T02:00:00Z",
                "2026-10-25T02:20:00Z"
            ]
        );
    }

    #[test]
    fn the_memo_answers_like_the_search() {
        let tz = TimeZone::get("Europe/Berlin").unwrap();
        let cron = Cron::parse("*/20 1-3 * * *").unwrap();
        let memo = Memo::default();
        let searches = Cell::new(0);
        let mut rng = crate::testrand::Rng::new(5);
        let mut t = ts("2026-10-24T00:00:00Z");
        for _ in 0..300 {
            // Mostly forward, sometimes back, as the searches ask.
            let step = i64::try_from(rng.below(4 * 3600)).unwrap() - 1800;
            t = t
                .checked_add(jiff::SignedDuration::from_secs(step))
                .unwrap();
            assert_eq!(
                memo.next_after(&cron, &tz, t, &searches),
                next_after(&cron, &tz, t),
                "{t}"
            );
        }
        assert!(searches.get() < 300, "{}", searches.get());
    }

    #[test]
    fn leap_day_in_a_zone() {
        assert_eq!(
            next("0 9 29 2 *", "Asia/Tokyo", "2026-03-01T00:00:00Z"),
            "2028-02-29T00:00:00Z"
        );
    }

    /// Property: firings are strictly increasing, each fires at an instant whose
    /// wall time matches (or ends a gap), and nothing fires in between, checked
    /// against a scan of every minute.
    #[test]
    fn firings_agree_with_a_minute_scan_in_dst_zones() {
        let mut rng = crate::testrand::Rng::new(11);
        let zones = [
            "Europe/Berlin",
            "America/Los_Angeles",
            "Australia/Lord_Howe",
            "UTC",
        ];
        let exprs = [
            "30 2 * * *",
            "*/20 1-3 * * *",
            "0 0 * * FRI",
            "15 2 * 3,10 SUN",
        ];
        for zone in zones {
            let tz = TimeZone::get(zone).unwrap();
            for expr in exprs {
                let cron = Cron::parse(expr).unwrap();
                for _ in 0..6 {
                    // Around the transitions of 2026 and 2027 in either hemisphere.
                    let start = rng.timestamp(2026, 2028);
                    let got = next_after(&cron, &tz, start).unwrap();
                    assert!(got > start);
                    assert_eq!(
                        scan(&cron, &tz, start, got),
                        got,
                        "{zone} {expr} after {start}"
                    );
                }
            }
        }
    }

    /// The first minute-scan firing after `start`, looking no further than `limit`.
    fn scan(cron: &Cron, tz: &TimeZone, start: Timestamp, limit: Timestamp) -> Timestamp {
        let mut wall = tz
            .to_datetime(start)
            .with()
            .second(0)
            .subsec_nanosecond(0)
            .build()
            .unwrap();
        loop {
            if cron.next_match(wall) == Some(wall) {
                let at = fire_instant(tz, wall).unwrap();
                if at > start {
                    return at;
                }
            }
            wall += Span::new().minutes(1);
            assert!(
                fire_instant(tz, wall).unwrap() <= limit + Span::new().hours(3),
                "scan overran"
            );
        }
    }
}

//! Go's `time` arithmetic in a zone, to the second, as robfig/cron's `Next`
//! relies on it: which wall time an instant shows, `time.Date` (a wall time
//! to an instant, gaps and folds included) and `Time.AddDate`.
//!
//! golang/go `src/time/time.go` `Date`: the wall time is read as if it were
//! UTC (`w`), the zone's offset `o` at that instant is tried, and if `w - o`
//! lies outside the zone period `o` came from, the offset at `w - o` is used
//! instead. In a spring-forward gap this gives the wall time read with the
//! offset before the gap east of Greenwich (02:30 in Berlin is 03:30 CEST)
//! and with the offset after it west of Greenwich (02:30 in New York is
//! 01:30 EST); in a fall-back fold, the occurrence whose offset holds at
//! `w`. Both cases reduce to `w - offset(w - offset(w))`. `AddDate` is `Date`
//! of the wall time with the years, months and days added (Go normalizes
//! January 32 to February 1, month 13 to January).

use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;

/// An instant's wall time in a zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wall {
    pub year: i64,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    /// Sunday = 0.
    pub weekday: u8,
}

/// The zone's offset in seconds at a Unix second; `None` outside jiff's range.
fn offset(tz: &TimeZone, unix: i64) -> Option<i64> {
    let t = Timestamp::from_second(unix).ok()?;
    Some(i64::from(tz.to_offset(t).seconds()))
}

/// The wall time `unix` shows in `tz`.
pub(crate) fn wall(tz: &TimeZone, unix: i64) -> Option<Wall> {
    let c = tz.to_datetime(Timestamp::from_second(unix).ok()?);
    Some(Wall {
        year: c.year().into(),
        month: u8::try_from(c.month()).ok()?,
        day: u8::try_from(c.day()).ok()?,
        hour: u8::try_from(c.hour()).ok()?,
        minute: u8::try_from(c.minute()).ok()?,
        second: u8::try_from(c.second()).ok()?,
        weekday: u8::try_from(c.weekday().to_sunday_zero_offset()).ok()?,
    })
}

/// Go's `time.Date(year, month, day, hour, min, sec, 0, tz)` as a Unix second;
/// out-of-range fields carry over as in Go. `None` outside jiff's years.
pub(crate) fn date(
    tz: &TimeZone,
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
) -> Option<i64> {
    let m0 = month.checked_sub(1)?;
    let year = i16::try_from(year.checked_add(m0.div_euclid(12))?).ok()?;
    let month = i8::try_from(m0.rem_euclid(12).checked_add(1)?).ok()?;
    let first = jiff::civil::Date::new(year, month, 1)
        .ok()?
        .to_datetime(jiff::civil::Time::midnight());
    // The wall time read as if it were UTC; days past the month's first
    // carry over as 24 hours each.
    let w = Offset::UTC
        .to_timestamp(first)
        .ok()?
        .as_second()
        .checked_add(day.checked_sub(1)?.checked_mul(86_400)?)?
        .checked_add(hour.checked_mul(3600)?)?
        .checked_add(minute.checked_mul(60)?)?
        .checked_add(second)?;
    let first = offset(tz, w)?;
    w.checked_sub(offset(tz, w.checked_sub(first)?)?)
}

/// Go's `t.AddDate(0, months, days)` for `t` at `unix` in `tz`.
pub(crate) fn add_date(tz: &TimeZone, unix: i64, months: i64, days: i64) -> Option<i64> {
    let w = wall(tz, unix)?;
    date(
        tz,
        w.year,
        i64::from(w.month).checked_add(months)?,
        i64::from(w.day).checked_add(days)?,
        i64::from(w.hour),
        i64::from(w.minute),
        i64::from(w.second),
    )
}

/// Whether `tz` keeps one offset through `(from, to]`.
pub(crate) fn steady(tz: &TimeZone, from: i64, to: i64) -> bool {
    Timestamp::from_second(from).is_ok_and(|t| {
        tz.following(t)
            .next()
            .is_none_or(|tr| tr.timestamp().as_second() > to)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tz(name: &str) -> TimeZone {
        TimeZone::get(name).unwrap()
    }

    fn at(unix: i64) -> String {
        Timestamp::from_second(unix).unwrap().to_string()
    }

    #[test]
    fn date_in_gaps_and_folds_as_go() {
        let berlin = tz("Europe/Berlin");
        let new_york = tz("America/New_York");
        for (zone, wall, instant) in [
            // Gap: east of Greenwich forward (03:30 CEST), west of it back (01:30 EST).
            (&berlin, (2026, 3, 29, 2), "2026-03-29T01:30:00Z"),
            (&new_york, (2026, 3, 8, 2), "2026-03-08T06:30:00Z"),
            // Fold: Berlin's second occurrence (CET), New York's first (EDT).
            (&berlin, (2026, 10, 25, 2), "2026-10-25T01:30:00Z"),
            (&new_york, (2026, 11, 1, 1), "2026-11-01T05:30:00Z"),
        ] {
            let (y, m, d, h) = wall;
            assert_eq!(
                at(date(zone, y, m, d, h, 30, 0).unwrap()),
                instant,
                "{wall:?}"
            );
        }
        // Carries: January 32 is February 1; month 13 is next January.
        assert_eq!(
            date(&berlin, 2026, 1, 32, 0, 0, 0),
            date(&berlin, 2026, 2, 1, 0, 0, 0)
        );
        assert_eq!(
            date(&berlin, 2026, 13, 1, 0, 0, 0),
            date(&berlin, 2027, 1, 1, 0, 0, 0)
        );
    }

    #[test]
    fn wall_fields() {
        let w = wall(&tz("Australia/Lord_Howe"), 1_790_000_000).unwrap();
        let civil =
            tz("Australia/Lord_Howe").to_datetime(Timestamp::from_second(1_790_000_000).unwrap());
        assert_eq!(
            (w.year, w.month, w.day, w.hour, w.minute, w.second),
            (
                i64::from(civil.year()),
                civil.month() as u8,
                civil.day() as u8,
                civil.hour() as u8,
                civil.minute() as u8,
                civil.second() as u8
            )
        );
        assert_eq!(
            i32::from(w.weekday),
            civil.weekday().to_sunday_zero_offset() as i32
        );
    }
}

//! Five-field cron expressions (`minute hour day-of-month month day-of-week`)
//! and the next matching wall-clock minute.
//!
//! The grammar is Vixie cron's: numbers, names (`JAN`-`DEC`, `SUN`-`SAT`,
//! any case), `*` (and `?`, read as `*` like robfig/cron v3 does), ranges
//! `a-b`, steps `*/n`, `a-b/n` and `a/n` (from `a` to the field's end), lists
//! `a,b-c`, day of week 0-7 with both 0 and 7 meaning Sunday, and the
//! `@yearly`, `@monthly`, `@weekly`, `@daily`, `@hourly` shorthands.
//!
//! Day of month and day of week combine as in Vixie cron: when both are
//! restricted (neither field starts with `*` or `?`), a day matches if either
//! matches; otherwise both must match. robfig/cron v3 (parser.go `getRange`,
//! spec.go `dayMatches`, v3.0.1) differs: a step above 1 (`*/10`) makes its
//! field restricted, so `0 0 */10 * FRI` fires on the 1st, 11th, 21st and 31st
//! and on Fridays there, on Fridays that are one of those days here; it also
//! refuses day of week 7 and accepts shorthands in lower case only.
//!
//! [`Cron::next_match`] jumps field by field (month, day, hour, minute), so a
//! schedule that fires once every four years (`0 0 29 2 *`) costs a few dozen
//! steps, not two million minutes.

use jiff::civil::DateTime;

/// A parsed cron expression: one bit per allowed value of each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    minutes: u64,
    hours: u32,
    /// Bits 1..=31.
    days: u32,
    /// Bits 1..=12.
    months: u16,
    /// Bits 0..=6, Sunday = 0.
    weekdays: u8,
    /// Both day fields restricted: a day matches if either does.
    days_or: bool,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

struct Field {
    what: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
    /// The value of the first name (`JAN` = 1, `SUN` = 0).
    names_from: u32,
}

const FIELDS: [Field; 5] = [
    Field {
        what: "minute",
        min: 0,
        max: 59,
        names: &[],
        names_from: 0,
    },
    Field {
        what: "hour",
        min: 0,
        max: 23,
        names: &[],
        names_from: 0,
    },
    Field {
        what: "day of month",
        min: 1,
        max: 31,
        names: &[],
        names_from: 0,
    },
    Field {
        what: "month",
        min: 1,
        max: 12,
        names: &MONTHS,
        names_from: 1,
    },
    Field {
        what: "day of week",
        min: 0,
        max: 7,
        names: &WEEKDAYS,
        names_from: 0,
    },
];

/// Longer expressions are refused before any parsing: no real schedule needs it.
const MAX_LEN: usize = 200;

impl Cron {
    /// Parses an expression; the error says which field is wrong and what it accepts.
    pub fn parse(text: &str) -> Result<Cron, String> {
        if text.len() > MAX_LEN {
            return Err(format!("is longer than {MAX_LEN} characters"));
        }
        let text = text.trim();
        let expanded = match text.to_ascii_lowercase().as_str() {
            "@yearly" | "@annually" => "0 0 1 1 *",
            "@monthly" => "0 0 1 * *",
            "@weekly" => "0 0 * * 0",
            "@daily" | "@midnight" => "0 0 * * *",
            "@hourly" => "0 * * * *",
            s if s.starts_with('@') => {
                return Err(
                    "unknown shorthand; use @yearly, @monthly, @weekly, @daily or @hourly".into(),
                )
            }
            _ => text,
        };
        let parts: Vec<&str> = expanded.split_whitespace().collect();
        let [minute, hour, dom, month, dow] = parts.as_slice() else {
            return Err(format!(
                "has {} fields; write 5: minute hour day-of-month month day-of-week, e.g. \"0 0 * * FRI\"",
                parts.len()
            ));
        };
        let [f_min, f_hour, f_dom, f_month, f_dow] = &FIELDS;
        let weekdays = parse_field(dow, f_dow)?;
        // Day of week 7 is Sunday, like 0.
        let weekdays = ((weekdays | (weekdays >> 7)) & 0x7f) as u8;
        let cron = Cron {
            minutes: parse_field(minute, f_min)?,
            hours: narrow(parse_field(hour, f_hour)?)?,
            days: narrow(parse_field(dom, f_dom)?)?,
            months: narrow(parse_field(month, f_month)?)?,
            weekdays,
            days_or: !unrestricted(dom) && !unrestricted(dow),
        };
        if !cron.ever_fires() {
            return Err(
                "never fires: no month it allows has the day of month it asks for (e.g. 31 in February)"
                    .into(),
            );
        }
        Ok(cron)
    }

    /// Whether some day of some year matches. Only a day-of-month restriction
    /// combined with the month (and an unrestricted day of week) can rule out
    /// every day; February 29 counts, leap years exist.
    fn ever_fires(&self) -> bool {
        if self.days_or {
            return true;
        }
        (1..=12u8).any(|m| {
            self.months & (1 << m) != 0
                && days_in_month(2028, m)
                    .is_some_and(|last| (1..=last).any(|d| self.days & (1 << d) != 0))
        })
    }

    /// Whether a civil date is one of the schedule's days.
    fn day_matches(&self, year: i32, month: u8, day: u8) -> bool {
        let dom = self.days & (1 << day) != 0;
        let dow = weekday(year, month, day).is_some_and(|w| self.weekdays & (1 << w) != 0);
        if self.days_or {
            dom || dow
        } else {
            dom && dow
        }
    }

    /// The first wall-clock minute at or after `from` (seconds are ignored)
    /// that the expression matches, within the next ten years.
    pub fn next_match(&self, from: DateTime) -> Option<DateTime> {
        self.search(from, 0)
    }

    /// The first matching minute after the one holding `wall`.
    pub fn next_match_after(&self, wall: DateTime) -> Option<DateTime> {
        self.search(wall, 1)
    }

    fn search(&self, from: DateTime, skip_minutes: u8) -> Option<DateTime> {
        let mut y = i32::from(from.year());
        let mut mo = u8::try_from(from.month()).ok()?;
        let mut d = u8::try_from(from.day()).ok()?;
        let mut h = u8::try_from(from.hour()).ok()?;
        // Minute 60 carries into the next hour below.
        let mut mi = u8::try_from(from.minute())
            .ok()?
            .checked_add(skip_minutes)?;
        // February 29 of a schedule like `0 0 29 2 MON` may be decades away;
        // ten years covers every schedule that fires within a human horizon.
        let last_year = y.checked_add(10)?;
        // Each turn moves at least one hour forward, and skips whole months
        // and days where it can; the bound is a guard, not a limit in practice.
        for _ in 0..4096 {
            if y > last_year {
                return None;
            }
            match next_bit(u64::from(self.months), mo, 12) {
                Some(m) if m == mo => {}
                Some(m) => (mo, d, h, mi) = (m, 1, 0, 0),
                None => {
                    (y, mo, d, h, mi) = (y.checked_add(1)?, 1, 1, 0, 0);
                    continue;
                }
            }
            // Past jiff's last year (9999) there is no next match to give.
            let last_day = days_in_month(y, mo)?;
            match (d..=last_day).find(|&day| self.day_matches(y, mo, day)) {
                Some(day) if day == d => {}
                Some(day) => (d, h, mi) = (day, 0, 0),
                None => {
                    (mo, d, h, mi) = (mo.checked_add(1)?, 1, 0, 0);
                    if mo > 12 {
                        (y, mo) = (y.checked_add(1)?, 1);
                    }
                    continue;
                }
            }
            match next_bit(u64::from(self.hours), h, 23) {
                Some(hour) if hour == h => {}
                Some(hour) => (h, mi) = (hour, 0),
                None => {
                    (d, h, mi) = (d.checked_add(1)?, 0, 0);
                    continue;
                }
            }
            match next_bit(self.minutes, mi, 59) {
                Some(minute) => {
                    let year = i16::try_from(y).ok()?;
                    return DateTime::new(
                        year,
                        i8::try_from(mo).ok()?,
                        i8::try_from(d).ok()?,
                        i8::try_from(h).ok()?,
                        i8::try_from(minute).ok()?,
                        0,
                        0,
                    )
                    .ok();
                }
                None => {
                    (h, mi) = (h.checked_add(1)?, 0);
                    if h > 23 {
                        (d, h) = (d.checked_add(1)?, 0);
                    }
                }
            }
        }
        None
    }
}

/// Vixie cron's test for a day field that does not restrict: it starts with
/// `*` (`*/2` included); `?` is `*`.
fn unrestricted(field: &str) -> bool {
    field.starts_with('*') || field.starts_with('?')
}

/// The lowest set bit at or above `from`, up to `max`.
fn next_bit(bits: u64, from: u8, max: u8) -> Option<u8> {
    (from..=max).find(|&b| bits & (1 << b) != 0)
}

/// A civil date on jiff's proleptic Gregorian calendar; `None` outside it.
fn date(year: i32, month: u8, day: u8) -> Option<jiff::civil::Date> {
    jiff::civil::Date::new(
        i16::try_from(year).ok()?,
        i8::try_from(month).ok()?,
        i8::try_from(day).ok()?,
    )
    .ok()
}

fn days_in_month(year: i32, month: u8) -> Option<u8> {
    u8::try_from(date(year, month, 1)?.days_in_month()).ok()
}

/// Day of the week, Sunday = 0.
fn weekday(year: i32, month: u8, day: u8) -> Option<u8> {
    u8::try_from(date(year, month, day)?.weekday().to_sunday_zero_offset()).ok()
}

/// A field's bits in the narrower type its range fits (hours 0-23, days
/// 1-31, months 1-12).
fn narrow<T: TryFrom<u64>>(bits: u64) -> Result<T, String> {
    T::try_from(bits).map_err(|_| "a value is out of the field's range".to_string())
}

fn parse_field(text: &str, field: &Field) -> Result<u64, String> {
    let mut bits = 0u64;
    for item in text.split(',') {
        bits |=
            parse_item(item, field).map_err(|e| format!("{} field {:?}: {e}", field.what, text))?;
    }
    Ok(bits)
}

fn parse_item(item: &str, field: &Field) -> Result<u64, String> {
    let (range, step) = match item.split_once('/') {
        Some((range, step)) => {
            let step = parse_number(step)
                .filter(|s| (1..=field.max).contains(s))
                .ok_or_else(|| format!("step {step:?} must be a number from 1 to {}", field.max))?;
            (range, Some(step))
        }
        None => (item, None),
    };
    // `?` is `*`, as robfig/cron v3 reads it (parser.go, getRange).
    let (lo, hi) = if range == "*" || range == "?" {
        (field.min, field.max)
    } else if let Some((a, b)) = range.split_once('-') {
        let (lo, hi) = (parse_value(a, field)?, parse_value(b, field)?);
        if lo > hi {
            return Err(format!(
                "range {range:?} runs backwards; write the smaller value first"
            ));
        }
        (lo, hi)
    } else {
        let v = parse_value(range, field)?;
        // `a/n` runs from `a` to the end of the field.
        (v, if step.is_some() { field.max } else { v })
    };
    let step = step.unwrap_or(1);
    let mut bits = 0u64;
    let mut v = lo;
    while v <= hi {
        bits |= 1 << v;
        // Past u32::MAX is past every field's end.
        let Some(next) = v.checked_add(step) else {
            break;
        };
        v = next;
    }
    Ok(bits)
}

fn parse_value(text: &str, field: &Field) -> Result<u32, String> {
    let accepted = || {
        let names = match (field.names.first(), field.names.last()) {
            (Some(a), Some(b)) => format!(" or {a}-{b}"),
            _ => String::new(),
        };
        format!("{}-{}{names}", field.min, field.max)
    };
    if let Some(v) = parse_number(text) {
        return if (field.min..=field.max).contains(&v) {
            Ok(v)
        } else {
            Err(format!("{v} is out of range; use {}", accepted()))
        };
    }
    let upper = text.to_ascii_uppercase();
    field
        .names
        .iter()
        .position(|n| *n == upper)
        .and_then(|i| u32::try_from(i).ok())
        .and_then(|i| i.checked_add(field.names_from))
        .ok_or_else(|| format!("{text:?} is not a value; use {}", accepted()))
}

fn parse_number(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 3 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> DateTime {
        s.parse().unwrap()
    }

    fn next(expr: &str, from: &str) -> String {
        Cron::parse(expr)
            .unwrap()
            .next_match(dt(from))
            .unwrap()
            .to_string()
    }

    #[test]
    fn names_ranges_steps_and_lists() {
        assert_eq!(
            next("0 0 * * FRI", "2026-11-16T10:00"),
            "2026-11-20T00:00:00"
        );
        assert_eq!(
            next("0 8 * * MON-THU", "2026-11-19T08:01"),
            "2026-11-23T08:00:00"
        );
        assert_eq!(
            next("*/15 * * * *", "2026-11-19T08:01"),
            "2026-11-19T08:15:00"
        );
        assert_eq!(
            next("5/20 * * * *", "2026-11-19T08:26"),
            "2026-11-19T08:45:00"
        );
        assert_eq!(
            next("0 9-17/4 * * *", "2026-11-19T10:00"),
            "2026-11-19T13:00:00"
        );
        assert_eq!(
            next("0 0 1,15 * *", "2026-11-02T00:00"),
            "2026-11-15T00:00:00"
        );
        assert_eq!(
            next("0 0 1 jan,Jul *", "2026-02-01T00:00"),
            "2026-07-01T00:00:00"
        );
        assert_eq!(
            next("0 12 * * 7", "2026-11-19T00:00"),
            "2026-11-22T12:00:00"
        );
        assert_eq!(
            next("0 12 * * 5-7", "2026-11-21T13:00"),
            "2026-11-22T12:00:00"
        );
        assert_eq!(next("@weekly", "2026-11-19T00:00"), "2026-11-22T00:00:00");
        assert_eq!(next("@yearly", "2026-11-19T00:00"), "2027-01-01T00:00:00");
        assert_eq!(next("@hourly", "2026-11-19T00:00"), "2026-11-19T00:00:00");
    }

    #[test]
    fn the_start_minute_itself_matches() {
        assert_eq!(
            next("0 0 * * FRI", "2026-11-20T00:00"),
            "2026-11-20T00:00:00"
        );
        assert_eq!(
            next("0 0 * * FRI", "2026-11-20T00:00:30"),
            "2026-11-20T00:00:00"
        );
    }

    #[test]
    fn vixie_day_rule() {
        // Both restricted: the 13th or any Friday.
        assert_eq!(
            next("0 0 13 * FRI", "2026-11-01T00:00"),
            "2026-11-06T00:00:00"
        );
        assert_eq!(
            next("0 0 13 * FRI", "2026-11-07T00:00"),
            "2026-11-13T00:00:00"
        );
        // Day of week unrestricted: only the 13th.
        assert_eq!(
            next("0 0 13 * *", "2026-11-01T00:00"),
            "2026-11-13T00:00:00"
        );
        // A field starting with `*` counts as unrestricted, as in Vixie cron:
        // both must match (the 1st, 11th, 21st or 31st, and a Friday).
        assert_eq!(
            next("0 0 */10 * FRI", "2026-11-01T00:00"),
            "2026-12-11T00:00:00"
        );
        assert_eq!(
            next("0 0 13 * */7", "2026-11-01T00:00"),
            "2026-12-13T00:00:00"
        );
    }

    #[test]
    fn a_question_mark_is_a_star() {
        assert_eq!(Cron::parse("0 0 ? * FRI"), Cron::parse("0 0 * * FRI"));
        assert_eq!(Cron::parse("0 0 13 * ?"), Cron::parse("0 0 13 * *"));
        assert_eq!(Cron::parse("? ? ? ? ?"), Cron::parse("* * * * *"));
        assert_eq!(Cron::parse("0 0 ?/10 * FRI"), Cron::parse("0 0 */10 * FRI"));
        assert!(Cron::parse("0 0 ?-3 * *").is_err());
    }

    #[test]
    fn leap_days_and_year_ends() {
        assert_eq!(
            next("0 0 29 2 *", "2026-03-01T00:00"),
            "2028-02-29T00:00:00"
        );
        assert_eq!(
            next("0 0 29 2 *", "2096-03-01T00:00"),
            "2104-02-29T00:00:00"
        );
        assert_eq!(
            next("59 23 31 12 *", "2026-12-31T23:59"),
            "2026-12-31T23:59:00"
        );
        assert_eq!(next("0 0 * * *", "2026-12-31T23:59"), "2027-01-01T00:00:00");
        assert_eq!(
            next("0 0 31 * *", "2026-04-01T00:00"),
            "2026-05-31T00:00:00"
        );
    }

    #[test]
    fn far_and_never() {
        // Both day fields restricted (OR rule): February 29 or any Monday of
        // February; the month still restricts.
        assert_eq!(
            next("0 0 29 2 MON", "2026-03-01T00:00"),
            "2027-02-01T00:00:00"
        );
        for never in ["0 0 31 2 *", "0 0 30,31 2 *", "0 0 31 4,6,9,11 *"] {
            let err = Cron::parse(never).unwrap_err();
            assert!(err.contains("never fires"), "{never}: {err}");
        }
    }

    #[test]
    fn refusals_name_the_field_and_the_accepted_values() {
        let cases = [
            ("0 0 * *", "has 4 fields"),
            ("0 0 * * * *", "has 6 fields"),
            (
                "60 0 * * *",
                "minute field \"60\": 60 is out of range; use 0-59",
            ),
            ("0 24 * * *", "hour field"),
            (
                "0 0 0 * *",
                "day of month field \"0\": 0 is out of range; use 1-31",
            ),
            ("0 0 * 13 *", "use 1-12 or JAN-DEC"),
            ("0 0 * * FRY", "\"FRY\" is not a value; use 0-7 or SUN-SAT"),
            ("0 0 * * FRI-MON", "runs backwards"),
            ("*/0 * * * *", "step \"0\" must be a number from 1 to 59"),
            ("*/x * * * *", "step \"x\""),
            ("1-2-3 * * * *", "is not a value"),
            ("0 0 * * 1,", "\"\" is not a value"),
            ("@reboot", "unknown shorthand"),
            ("-1 * * * *", "is not a value"),
            ("99999999999 * * * *", "is not a value"),
        ];
        for (expr, want) in cases {
            let err = Cron::parse(expr).unwrap_err();
            assert!(err.contains(want), "{expr}: {err}");
        }
        assert!(Cron::parse(&"1,".repeat(150))
            .unwrap_err()
            .contains("longer than"));
    }

    /// Property: the field-jumping search agrees with a minute-by-minute scan.
    #[test]
    fn jumping_agrees_with_scanning() {
        let exprs = [
            "*/7 3-5 * * *",
            "0 0 13 * FRI",
            "30 2 * * 0",
            "15 */6 1-7 * MON",
            "59 23 * FEB *",
            "0 12 */3 * *",
            "*/20 * * * 2-3",
        ];
        let mut rng = crate::testrand::Rng::new(7);
        for expr in exprs {
            let Ok(cron) = Cron::parse(expr) else {
                continue;
            };
            for _ in 0..40 {
                let start = rng.datetime(2026, 2029).with().second(0).build().unwrap();
                let mut scan = start;
                let expected = loop {
                    if cron_matches_slow(&cron, scan) {
                        break scan;
                    }
                    scan += jiff::Span::new().minutes(1);
                };
                assert_eq!(
                    cron.next_match(start),
                    Some(expected),
                    "{expr} from {start}"
                );
            }
        }
    }

    fn cron_matches_slow(cron: &Cron, t: DateTime) -> bool {
        cron.minutes & (1 << t.minute()) != 0
            && cron.hours & (1 << t.hour()) != 0
            && cron.months & (1 << t.month()) != 0
            && cron.day_matches(i32::from(t.year()), t.month() as u8, t.day() as u8)
    }
}

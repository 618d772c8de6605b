//! robfig/cron v3.0.1 as the reference for `cron` and `firing`: its parser
//! (`parser.go` `Parse` with `ParseStandard`'s options, `getField`,
//! `getRange`, `parseIntOrName`, `mustParseInt`, `parseDescriptor`) and
//! `spec.go` `Next` and `dayMatches`, written out line for line over Go's
//! `time` rules (golang/go `src/time/time.go` `Date`, `AddDate`, `Add`,
//! `Truncate`; `zoneinfo.go` `lookup`), one step at a time, sharing no code
//! with the module it checks. Go cannot run here, so this transcription is
//! what the differential tests below compare `firing::next_after` with, on
//! generated expressions and instants, daylight saving nights included.

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Span, Timestamp};

use crate::cron::{Cron, CronError};
use crate::firing::next_after;

const STAR: u64 = 1 << 63;

struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const SECONDS: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// `SpecSchedule`: six bit sets, the star bit on top.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    second: u64,
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
}

/// `Parser.Parse` with `Minute | Hour | Dom | Month | Dow | Descriptor`, for
/// specs without a `TZ=` prefix; `Err` is any error robfig returns.
pub fn parse(spec: &str) -> Result<Spec, ()> {
    if spec.is_empty() {
        return Err(());
    }
    if spec.starts_with('@') {
        return descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(());
    }
    Ok(Spec {
        second: get_field("0", &SECONDS)?,
        minute: get_field(fields[0], &MINUTES)?,
        hour: get_field(fields[1], &HOURS)?,
        dom: get_field(fields[2], &DOM)?,
        month: get_field(fields[3], &MONTHS)?,
        dow: get_field(fields[4], &DOW)?,
    })
}

fn get_field(field: &str, r: &Bounds) -> Result<u64, ()> {
    let mut bits = 0;
    for expr in field.split(',').filter(|s| !s.is_empty()) {
        bits |= get_range(expr, r)?;
    }
    Ok(bits)
}

fn get_range(expr: &str, r: &Bounds) -> Result<u64, ()> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single_digit = low_and_high.len() == 1;
    let (start, mut end, mut extra);
    if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (start, end, extra) = (r.min, r.max, STAR);
    } else {
        start = parse_int_or_name(low_and_high[0], r)?;
        end = match low_and_high.len() {
            1 => start,
            2 => parse_int_or_name(low_and_high[1], r)?,
            _ => return Err(()),
        };
        extra = 0;
    }
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(range_and_step[1])?;
            if single_digit {
                end = r.max;
            }
            if step > 1 {
                extra = 0;
            }
            step
        }
        _ => return Err(()),
    };
    if start < r.min || end > r.max || start > end || step == 0 {
        return Err(());
    }
    let mut bits = 0;
    let mut i = start;
    while i <= end {
        bits |= 1 << i;
        i = i.saturating_add(step);
    }
    Ok(bits | extra)
}

fn parse_int_or_name(expr: &str, r: &Bounds) -> Result<u64, ()> {
    let lower = expr.to_lowercase();
    match r.names.iter().find(|(n, _)| *n == lower) {
        Some((_, v)) => Ok(*v),
        None => must_parse_int(expr),
    }
}

/// `strconv.Atoi` (sign, decimal digits, int64), then negative refused.
fn must_parse_int(expr: &str) -> Result<u64, ()> {
    let num: i64 = expr.parse().map_err(|_| ())?;
    u64::try_from(num).map_err(|_| ())
}

fn descriptor(spec: &str) -> Result<Spec, ()> {
    let all = |r: &Bounds| get_range("*", r).unwrap();
    let (hour, dom, month, dow) = match spec {
        "@yearly" | "@annually" => (1, 1 << 1, 1 << 1, all(&DOW)),
        "@monthly" => (1, 1 << 1, all(&MONTHS), all(&DOW)),
        "@weekly" => (1, all(&DOM), all(&MONTHS), 1),
        "@daily" | "@midnight" => (1, all(&DOM), all(&MONTHS), all(&DOW)),
        "@hourly" => (all(&HOURS), all(&DOM), all(&MONTHS), all(&DOW)),
        _ => return Err(()),
    };
    Ok(Spec {
        second: 1,
        minute: 1,
        hour,
        dom,
        month,
        dow,
    })
}

/// Go's `Time` in a `Location`: an instant and the zone it shows.
#[derive(Clone, Copy)]
struct GoTime<'a> {
    at: Timestamp,
    loc: &'a TimeZone,
}

impl<'a> GoTime<'a> {
    fn civil(self) -> DateTime {
        self.loc.to_datetime(self.at)
    }

    fn year(self) -> i64 {
        self.civil().year().into()
    }
    fn month(self) -> u32 {
        self.civil().month() as u32
    }
    fn day(self) -> u32 {
        self.civil().day() as u32
    }
    fn hour(self) -> u32 {
        self.civil().hour() as u32
    }
    fn minute(self) -> u32 {
        self.civil().minute() as u32
    }
    fn second(self) -> u32 {
        self.civil().second() as u32
    }
    fn weekday(self) -> u32 {
        self.civil().weekday().to_sunday_zero_offset() as u32
    }

    fn add(self, d: SignedDuration) -> Self {
        GoTime {
            at: self.at.checked_add(d).unwrap(),
            ..self
        }
    }

    /// `Truncate`: down to a multiple of `d` since Go's zero time (0001-01-01 UTC).
    fn truncate(self, secs: i64) -> Self {
        let since_zero = self.at.as_second() + 62_135_596_800;
        let at = Timestamp::from_second(self.at.as_second() - since_zero.rem_euclid(secs)).unwrap();
        GoTime { at, ..self }
    }

    fn add_date(self, months: i64, days: i64) -> Self {
        let c = self.civil();
        date(
            c.year().into(),
            i64::from(c.month()) + months,
            i64::from(c.day()) + days,
            c.hour().into(),
            c.minute().into(),
            c.second().into(),
            self.loc,
        )
    }
}

/// `time.Date`: normalize, read the wall time as UTC, then `lookup` twice.
fn date(
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    min: i64,
    sec: i64,
    loc: &TimeZone,
) -> GoTime<'_> {
    let first = jiff::civil::date(year as i16, 1, 1)
        .checked_add(Span::new().months(month - 1))
        .unwrap()
        .checked_add(Span::new().days(day - 1))
        .unwrap();
    let unix = first
        .to_datetime(jiff::civil::time(0, 0, 0, 0))
        .to_zoned(TimeZone::UTC)
        .unwrap()
        .timestamp()
        + SignedDuration::from_secs(hour * 3600 + min * 60 + sec);
    let (offset, start, end) = lookup(loc, unix);
    let mut offset = offset;
    if offset != 0 {
        let utc = unix - SignedDuration::from_secs(offset);
        if start.is_some_and(|s| utc < s) || end.is_some_and(|e| utc >= e) {
            offset = lookup(loc, utc).0;
        }
    }
    GoTime {
        at: unix - SignedDuration::from_secs(offset),
        loc,
    }
}

/// `Location.lookup`: the offset at an instant and the bounds of its period.
fn lookup(loc: &TimeZone, at: Timestamp) -> (i64, Option<Timestamp>, Option<Timestamp>) {
    let offset = loc.to_offset(at).seconds().into();
    let start = loc
        .preceding(at.checked_add(SignedDuration::from_nanos(1)).unwrap())
        .next()
        .map(|t| t.timestamp());
    let end = loc.following(at).next().map(|t| t.timestamp());
    (offset, start, end)
}

fn day_matches(s: &Spec, t: GoTime<'_>) -> bool {
    let dom_match = 1 << t.day() & s.dom > 0;
    let dow_match = 1 << t.weekday() & s.dow > 0;
    if s.dom & STAR > 0 || s.dow & STAR > 0 {
        dom_match && dow_match
    } else {
        dom_match || dow_match
    }
}

/// `SpecSchedule.Next` in `loc` (a `CRON_TZ=` schedule).
pub fn next(s: &Spec, loc: &TimeZone, after: Timestamp) -> Option<Timestamp> {
    let t = GoTime { at: after, loc };
    let nanos = i64::from(t.at.subsec_nanosecond().rem_euclid(1_000_000_000));
    let mut t = t.add(SignedDuration::from_secs(1) - SignedDuration::from_nanos(nanos));
    let mut added = false;
    let year_limit = t.year() + 5;
    'wrap: loop {
        if t.year() > year_limit {
            return None;
        }
        while 1 << t.month() & s.month == 0 {
            if !added {
                added = true;
                t = date(t.year(), t.month().into(), 1, 0, 0, 0, loc);
            }
            t = t.add_date(1, 0);
            if t.month() == 1 {
                continue 'wrap;
            }
        }
        while !day_matches(s, t) {
            if !added {
                added = true;
                t = date(t.year(), t.month().into(), t.day().into(), 0, 0, 0, loc);
            }
            t = t.add_date(0, 1);
            if t.hour() != 0 {
                if t.hour() > 12 {
                    t = t.add(SignedDuration::from_hours(24 - i64::from(t.hour())));
                } else {
                    t = t.add(SignedDuration::from_hours(-i64::from(t.hour())));
                }
            }
            if t.day() == 1 {
                continue 'wrap;
            }
        }
        while 1 << t.hour() & s.hour == 0 {
            if !added {
                added = true;
                t = date(
                    t.year(),
                    t.month().into(),
                    t.day().into(),
                    t.hour().into(),
                    0,
                    0,
                    loc,
                );
            }
            t = t.add(SignedDuration::from_hours(1));
            if t.hour() == 0 {
                continue 'wrap;
            }
        }
        while 1 << t.minute() & s.minute == 0 {
            if !added {
                added = true;
                t = t.truncate(60);
            }
            t = t.add(SignedDuration::from_mins(1));
            if t.minute() == 0 {
                continue 'wrap;
            }
        }
        while 1 << t.second() & s.second == 0 {
            if !added {
                added = true;
                t = t.truncate(1);
            }
            t = t.add(SignedDuration::from_secs(1));
            if t.second() == 0 {
                continue 'wrap;
            }
        }
        return Some(t.at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use guard_core::testing::Rng;

    /// Zones with every kind of transition the tz database has from 2026 on:
    /// none, one hour either side of Greenwich, 30 minutes (Lord Howe), two
    /// hours (Troll), at midnight (Cairo, Havana, Santiago), with 45-minute
    /// offsets (Chatham), an offset that is not whole hours (St Johns), a
    /// negative DST rule (Dublin) and Morocco's Ramadan changes.
    const ZONES: [&str; 14] = [
        "UTC",
        "America/New_York",
        "America/Los_Angeles",
        "Europe/Berlin",
        "Australia/Lord_Howe",
        "Antarctica/Troll",
        "Africa/Cairo",
        "America/Havana",
        "America/Santiago",
        "Pacific/Chatham",
        "America/St_Johns",
        "Europe/Dublin",
        "Africa/Casablanca",
        "Asia/Kolkata",
    ];

    /// Firings compared in a row from each start: each one is the next start.
    const CHAIN: usize = 4;

    #[derive(Clone, Copy)]
    enum Kind {
        Minute,
        Hour,
        Dom,
        Month,
        Dow,
    }

    impl Kind {
        fn bounds(self) -> (usize, usize) {
            match self {
                Kind::Minute => (0, 59),
                Kind::Hour => (0, 23),
                Kind::Dom => (1, 31),
                Kind::Month => (1, 12),
                Kind::Dow => (0, 6),
            }
        }
    }

    const MONTH_NAMES: [&str; 12] = [
        "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
    ];
    const DAY_NAMES: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

    /// A value as text: a number (now and then zero-padded or with a `+`)
    /// or, for month and day of week, a name in a random case.
    fn value(rng: &mut Rng, kind: Kind, v: usize) -> String {
        let name = match kind {
            Kind::Month => Some(MONTH_NAMES[v - 1]),
            Kind::Dow => Some(DAY_NAMES[v]),
            _ => None,
        };
        match (name, rng.range(0, 19)) {
            (Some(name), 0..=5) => match rng.range(0, 2) {
                0 => name.to_string(),
                1 => name.to_ascii_lowercase(),
                _ => format!("{}{}", &name[..1], name[1..].to_ascii_lowercase()),
            },
            (_, 6) => format!("{v:02}"),
            (_, 7) => format!("+{v}"),
            _ => v.to_string(),
        }
    }

    fn step(rng: &mut Rng, kind: Kind) -> usize {
        let (_, max) = kind.bounds();
        match rng.range(0, 19) {
            0 => rng.range(max, 99),
            1 => 1,
            2..=4 => rng.range(1, max),
            _ => rng.range(2, 7),
        }
    }

    /// One list item, mostly what robfig accepts, now and then what it refuses.
    fn item(rng: &mut Rng, kind: Kind) -> String {
        let (min, max) = kind.bounds();
        let star = if rng.chance(0.2) { "?" } else { "*" };
        // Now and then what robfig refuses: backwards, out of range, a zero
        // step, junk.
        if rng.chance(0.03) {
            return match rng.range(0, 3) {
                0 => format!("{}-{}", max, min),
                // Past the end (day of week 7 is flux-gate's extension).
                1 => format!("{}", max + 2),
                2 => format!("{star}/0"),
                _ => "1-2-3".into(),
            };
        }
        match rng.range(0, 20) {
            0..=7 => {
                let v = rng.range(min, max);
                value(rng, kind, v)
            }
            8..=10 => {
                let a = rng.range(min, max);
                let b = rng.range(a, max);
                format!("{}-{}", value(rng, kind, a), value(rng, kind, b))
            }
            11 | 12 => {
                let a = rng.range(min, max);
                let b = rng.range(a, max);
                let n = step(rng, kind);
                format!("{}-{}/{n}", value(rng, kind, a), value(rng, kind, b))
            }
            13..=15 => {
                let a = rng.range(min, max);
                let n = step(rng, kind);
                format!("{}/{n}", value(rng, kind, a))
            }
            16..=18 => format!("{star}/{}", step(rng, kind)),
            19 => star.to_string(),
            // robfig reads nothing after `*-`.
            _ => format!("{star}-{}", rng.range(0, 99)),
        }
    }

    fn field(rng: &mut Rng, kind: Kind) -> String {
        if rng.chance(match kind {
            Kind::Minute => 0.10,
            Kind::Hour => 0.25,
            Kind::Month => 0.55,
            Kind::Dom | Kind::Dow => 0.40,
        }) {
            return if rng.chance(0.15) { "?" } else { "*" }.into();
        }
        let items = [1, 1, 1, 1, 2, 2, 3][rng.below(7)];
        let mut out: Vec<String> = (0..items).map(|_| item(rng, kind)).collect();
        // `getField` drops empty items.
        if rng.chance(0.04) {
            out.push(String::new());
        }
        out.join(",")
    }

    fn expression(rng: &mut Rng, hour: Option<String>) -> String {
        if rng.chance(0.02) {
            return rng
                .pick(&[
                    "@yearly",
                    "@annually",
                    "@monthly",
                    "@weekly",
                    "@daily",
                    "@midnight",
                    "@hourly",
                ])
                .unwrap()
                .to_string();
        }
        let minute = field(rng, Kind::Minute);
        let hour = hour.unwrap_or_else(|| field(rng, Kind::Hour));
        let dom = field(rng, Kind::Dom);
        let month = field(rng, Kind::Month);
        let dow = field(rng, Kind::Dow);
        let sep = if rng.chance(0.1) { " \t " } else { " " };
        [minute, hour, dom, month, dow].join(sep)
    }

    /// An hour field near the small hours, where the transitions are.
    fn night_hours(rng: &mut Rng) -> String {
        rng.pick(&[
            "0", "1", "2", "3", "1-3", "2,3", "*/2", "1/2", "0-4", "*", "23,0-2", "2-2",
        ])
        .unwrap()
        .to_string()
    }

    /// An instant between the starts of two years (UTC), to the second.
    fn timestamp(rng: &mut Rng, from_year: i16, to_year: i16) -> Timestamp {
        let start = |year| {
            jiff::civil::date(year, 1, 1)
                .to_zoned(TimeZone::UTC)
                .unwrap()
                .timestamp()
        };
        let (lo, hi) = (start(from_year), start(to_year));
        let span = usize::try_from(hi.as_second() - lo.as_second()).unwrap();
        lo + SignedDuration::from_secs(i64::try_from(rng.below(span)).unwrap())
    }

    /// Compares a chain of firings from `start`; `None` ends it on both sides.
    fn compare(
        expr: &str,
        cron: &Cron,
        spec: &Spec,
        zone: &str,
        start: Timestamp,
    ) -> Result<Vec<Timestamp>, String> {
        let ours_tz = crate::zones::get(zone).unwrap();
        let theirs_tz = TimeZone::get(zone).unwrap();
        let (mut a, mut b) = (Some(start), Some(start));
        let mut fired = Vec::new();
        for _ in 0..CHAIN {
            let (Some(qa), Some(qb)) = (a, b) else { break };
            a = next_after(cron, &ours_tz, qa);
            b = next(spec, &theirs_tz, qb);
            if a != b {
                return Err(format!(
                    "{expr:?} in {zone} after {qa}: firing {a:?}, robfig {b:?} (chain from {start})"
                ));
            }
            fired.extend(a);
        }
        Ok(fired)
    }

    struct Tally {
        compared: usize,
        refused_by_both: usize,
        never: usize,
        failures: Vec<String>,
    }

    impl Tally {
        fn new() -> Self {
            Tally {
                compared: 0,
                refused_by_both: 0,
                never: 0,
                failures: Vec::new(),
            }
        }

        /// Parses with both; `Some` when both accept and the firings are to be compared.
        fn parse(&mut self, expr: &str) -> Option<(Cron, Spec)> {
            match (Cron::parse(expr), parse(expr)) {
                (Ok(cron), Ok(spec)) => {
                    self.compared += 1;
                    Some((cron, spec))
                }
                (Err(_), Err(())) => {
                    self.refused_by_both += 1;
                    None
                }
                (Err(CronError::NeverFires), Ok(_)) => {
                    self.never += 1;
                    None
                }
                (Err(e), Ok(_)) => {
                    self.failures
                        .push(format!("{expr:?}: robfig accepts it, refused: {e}"));
                    None
                }
                (Ok(_), Err(())) => {
                    self.failures
                        .push(format!("{expr:?}: robfig refuses it, accepted"));
                    None
                }
            }
        }

        fn check(&self, what: &str, min_compared: usize) {
            eprintln!(
                "{what}: {} compared, {} refused by both, {} never fire",
                self.compared, self.refused_by_both, self.never
            );
            assert!(
                self.compared >= min_compared,
                "only {} compared",
                self.compared
            );
            assert!(
                self.failures.is_empty(),
                "{} disagreements, the first ones:\n{}",
                self.failures.len(),
                self.failures
                    .iter()
                    .take(15)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }

    #[test]
    fn generated_expressions_fire_as_in_robfig() {
        let mut rng = Rng::new(0x0520_bf1c);
        let mut tally = Tally::new();
        for _ in 0..3000 {
            let expr = expression(&mut rng, None);
            let Some((cron, spec)) = tally.parse(&expr) else {
                continue;
            };
            for _ in 0..2 {
                let zone = *rng.pick(&ZONES).unwrap();
                let start = timestamp(&mut rng, 2026, 2036);
                if let Err(e) = compare(&expr, &cron, &spec, zone, start) {
                    tally.failures.push(e);
                }
            }
        }
        tally.check("generated", 2000);
    }

    /// Starts from a day before a transition to a few hours after it, with
    /// schedules that fire in the small hours.
    #[test]
    fn daylight_saving_nights_fire_as_in_robfig() {
        let mut rng = Rng::new(0xd57);
        let mut tally = Tally::new();
        let (mut transitions, mut near_transition) = (0, 0);
        for _ in 0..2000 {
            let hours = night_hours(&mut rng);
            // Mostly every day, so that the transition's night is one of them.
            let expr = if rng.chance(0.6) {
                format!("{} {hours} * * *", field(&mut rng, Kind::Minute))
            } else {
                expression(&mut rng, Some(hours))
            };
            let Some((cron, spec)) = tally.parse(&expr) else {
                continue;
            };
            let zone = *rng.pick(&ZONES[1..ZONES.len() - 1]).unwrap();
            let tz = TimeZone::get(zone).unwrap();
            let Some(transition) = tz.following(timestamp(&mut rng, 2026, 2036)).next() else {
                continue;
            };
            transitions += 1;
            let span = if rng.chance(0.5) { 10 } else { 30 };
            let before = i64::try_from(rng.below(span * 3600)).unwrap() - 2 * 3600;
            let at = transition.timestamp();
            let start = at - SignedDuration::from_secs(before);
            match compare(&expr, &cron, &spec, zone, start) {
                Ok(fired) => {
                    let near =
                        |t: &Timestamp| t.duration_since(at).abs() <= SignedDuration::from_hours(3);
                    near_transition += usize::from(fired.iter().any(near));
                }
                Err(e) => tally.failures.push(e),
            }
        }
        eprintln!("{near_transition} chains fired within 3h of the transition");
        assert!(transitions >= 1200, "{transitions}");
        assert!(near_transition >= 800, "{near_transition}");
        tally.check("DST nights", 1200);
    }
}

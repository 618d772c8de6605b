//! Five-field cron expressions (`minute hour day-of-month month day-of-week`),
//! read as robfig/cron v3.0.1 reads them, so that a schedule means here what
//! it means to Flux Operator and to a Kubernetes CronJob.
//!
//! Flux Operator parses `spec.schedule[].cron` with
//! `cron.NewParser(Minute | Hour | Dom | Month | Dow | Descriptor)`, always
//! behind a `CRON_TZ=<timeZone>` prefix (controlplaneio-fluxcd/flux-operator
//! `fccb0170`, `internal/schedule/scheduler.go` `Parse`; `timeZone` defaults
//! to `UTC` in `api/v1/schedule_types.go`); Kubernetes' CronJob controller
//! uses `cron.ParseStandard`, the same options. The grammar below is robfig's
//! (`parser.go`, v3.0.1): `Parse` splits on white space (`strings.Fields`),
//! `getField` splits a field on commas and drops empty items
//! (`strings.FieldsFunc`), and `getRange` reads each item:
//!
//! - `*` or `?` (the whole range, with the star bit), followed by anything
//!   after a `-`, which robfig never reads (`*-5` is `*`);
//! - a number (`strconv.Atoi`: an optional sign, decimal digits; negative
//!   refused) or, in month and day of week, a name in any case;
//! - `a-b`; `a/n` runs from `a` to the field's maximum (day of week: 6);
//!   `x/n` with any step above 0, even one past the field's end;
//! - a step above 1 clears the star bit: `*/2` restricts its day field.
//!
//! A day matches when both day fields match if either has the star bit, and
//! when either matches otherwise (`spec.go` `dayMatches`).
//!
//! The extensions, each where robfig refuses the expression: day of week 7
//! is Sunday (robfig's maximum is 6), and the shorthands are read in any
//! case and with white space around them. Refused although robfig accepts:
//! `@every` (it counts from the previous run, which a gate does not have), a
//! `TZ=`/`CRON_TZ=` prefix (the zone is `timeZone`; Flux Operator adds its
//! own prefix, so it refuses a second), an expression that never fires, and
//! one longer than 200 characters.

use std::fmt;

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
    /// robfig's star bit on either day field: a day must match both fields.
    days_and: bool,
}

/// Why an expression is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CronError {
    TooLong,
    ZonePrefix,
    Every,
    UnknownShorthand,
    FieldCount(usize),
    Field {
        what: &'static str,
        accepts: &'static str,
        text: String,
        problem: ItemError,
    },
    NeverFires,
}

/// What is wrong with one comma-separated item of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemError {
    NotAValue(String),
    Negative(String),
    TooManyHyphens(String),
    TooManySlashes(String),
    BelowMinimum(u64),
    AboveMaximum(u64),
    Backwards(String),
    ZeroStep(String),
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

struct Field {
    what: &'static str,
    /// robfig's bounds: what `*` and `a/n` span.
    min: u64,
    max: u64,
    /// The largest value written out: 7 for day of week (Sunday), else `max`.
    max_value: u64,
    names: &'static [&'static str],
    /// The value of the first name (`JAN` = 1, `SUN` = 0).
    names_from: u64,
    /// What a refusal says the field accepts.
    accepts: &'static str,
}

const fn field(what: &'static str, min: u64, max: u64, accepts: &'static str) -> Field {
    Field {
        what,
        min,
        max,
        max_value: max,
        names: &[],
        names_from: 0,
        accepts,
    }
}

const MINUTE: Field = field("minute", 0, 59, "0-59");
const HOUR: Field = field("hour", 0, 23, "0-23");
const DAY_OF_MONTH: Field = field("day of month", 1, 31, "1-31");
const MONTH: Field = Field {
    names: &MONTHS,
    names_from: 1,
    ..field("month", 1, 12, "1-12 or JAN-DEC")
};
const DAY_OF_WEEK: Field = Field {
    max_value: 7,
    names: &WEEKDAYS,
    names_from: 0,
    ..field("day of week", 0, 6, "0-7 or SUN-SAT")
};

/// Longer expressions are refused before any parsing: no real schedule needs it.
const MAX_LEN: usize = 200;

/// A field's bits and whether robfig's star bit is set.
#[derive(Clone, Copy, Default)]
struct Bits {
    bits: u64,
    star: bool,
}

impl Cron {
    /// Parses an expression; the error says which field is wrong and what it accepts.
    pub fn parse(text: &str) -> Result<Cron, CronError> {
        if text.len() > MAX_LEN {
            return Err(CronError::TooLong);
        }
        if text.starts_with("TZ=") || text.starts_with("CRON_TZ=") {
            return Err(CronError::ZonePrefix);
        }
        let cron = match shorthand(text.trim())? {
            Some(cron) => cron,
            None => Cron::fields(text)?,
        };
        if !cron.ever_fires() {
            return Err(CronError::NeverFires);
        }
        Ok(cron)
    }

    fn fields(text: &str) -> Result<Cron, CronError> {
        let parts: Vec<&str> = text.split_whitespace().collect();
        let [minute, hour, dom, month, dow] = parts.as_slice() else {
            return Err(CronError::FieldCount(parts.len()));
        };
        let weekdays = parse_field(dow, &DAY_OF_WEEK)?;
        let days = parse_field(dom, &DAY_OF_MONTH)?;
        Ok(Cron {
            minutes: parse_field(minute, &MINUTE)?.bits,
            hours: narrow(parse_field(hour, &HOUR)?.bits),
            days: narrow(days.bits),
            months: narrow(parse_field(month, &MONTH)?.bits),
            // Day of week 7 is Sunday, like 0.
            weekdays: narrow((weekdays.bits | (weekdays.bits >> 7)) & 0x7f),
            days_and: days.star || weekdays.star,
        })
    }

    /// Whether some minute of some day matches. A field of commas alone
    /// allows nothing; a day of month can be ruled out by the months (30 in
    /// February). February 29 counts: leap years exist.
    fn ever_fires(&self) -> bool {
        let some_day = (1..=12u8).any(|m| {
            self.month(m) && (1..=days_in_month(2028, m)).any(|d| self.days & (1 << d) != 0)
        });
        let days = if self.days_and {
            some_day && self.weekdays != 0
        } else {
            some_day || self.weekdays != 0
        };
        self.minutes != 0 && self.hours != 0 && days
    }

    pub(crate) fn month(&self, month: u8) -> bool {
        self.months & (1 << month) != 0
    }

    pub(crate) fn hour(&self, hour: u8) -> bool {
        self.hours & (1 << hour) != 0
    }

    pub(crate) fn minute(&self, minute: u8) -> bool {
        self.minutes & (1 << minute) != 0
    }

    /// robfig's `dayMatches` for a day of the month and its weekday (Sunday = 0).
    pub(crate) fn day(&self, day: u8, weekday: u8) -> bool {
        let dom = self.days & (1 << day) != 0;
        let dow = self.weekdays & (1 << weekday) != 0;
        if self.days_and {
            dom && dow
        } else {
            dom || dow
        }
    }

    /// The first allowed hour after `hour`, if one is left in the day.
    pub(crate) fn hour_after(&self, hour: u8) -> Option<u8> {
        (hour.saturating_add(1)..24).find(|&h| self.hour(h))
    }

    /// The first allowed minute after `minute`, if one is left in the hour.
    pub(crate) fn minute_after(&self, minute: u8) -> Option<u8> {
        (minute.saturating_add(1)..60).find(|&m| self.minute(m))
    }
}

/// The shorthands (`parser.go` `parseDescriptor`), in any case; `None` when
/// `text` is not one.
fn shorthand(text: &str) -> Result<Option<Cron>, CronError> {
    if !text.starts_with('@') {
        return Ok(None);
    }
    let all = |f: &Field| Bits {
        bits: (f.min..=f.max).fold(0, |b, v| b | (1 << v)),
        star: true,
    };
    let one = |v: u64| Bits {
        bits: 1 << v,
        star: false,
    };
    let (hours, days, months, weekdays) = match text.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => (one(0), one(1), one(1), all(&DAY_OF_WEEK)),
        "@monthly" => (one(0), one(1), all(&MONTH), all(&DAY_OF_WEEK)),
        "@weekly" => (one(0), all(&DAY_OF_MONTH), all(&MONTH), one(0)),
        "@daily" | "@midnight" => (one(0), all(&DAY_OF_MONTH), all(&MONTH), all(&DAY_OF_WEEK)),
        "@hourly" => (
            all(&HOUR),
            all(&DAY_OF_MONTH),
            all(&MONTH),
            all(&DAY_OF_WEEK),
        ),
        s if s.starts_with("@every") => return Err(CronError::Every),
        _ => return Err(CronError::UnknownShorthand),
    };
    Ok(Some(Cron {
        minutes: 1,
        hours: narrow(hours.bits),
        days: narrow(days.bits),
        months: narrow(months.bits),
        weekdays: narrow(weekdays.bits),
        days_and: days.star || weekdays.star,
    }))
}

fn days_in_month(year: i16, month: u8) -> u8 {
    let days = i8::try_from(month)
        .ok()
        .and_then(|m| jiff::civil::Date::new(year, m, 1).ok())
        .map_or(0, |d| d.days_in_month());
    u8::try_from(days).unwrap_or(0)
}

/// A field's bits in the narrower type its range fits (hours 0-23, days
/// 1-31, months 1-12, weekdays 0-6): parsing never sets a bit above them.
fn narrow<T: TryFrom<u64> + Default>(bits: u64) -> T {
    T::try_from(bits).unwrap_or_default()
}

/// `getField`: the union of the comma-separated items, empty items dropped.
fn parse_field(text: &str, field: &Field) -> Result<Bits, CronError> {
    let mut all = Bits::default();
    for item in text.split(',').filter(|i| !i.is_empty()) {
        let bits = parse_item(item, field).map_err(|problem| CronError::Field {
            what: field.what,
            accepts: field.accepts,
            text: text.to_string(),
            problem,
        })?;
        all.bits |= bits.bits;
        all.star |= bits.star;
    }
    Ok(all)
}

/// `getRange`, in its order of checks.
fn parse_item(item: &str, field: &Field) -> Result<Bits, ItemError> {
    let mut slashes = item.split('/');
    let range = slashes.next().unwrap_or_default();
    let step = slashes.next();
    if slashes.next().is_some() {
        return Err(ItemError::TooManySlashes(item.into()));
    }
    let mut ends = range.split('-');
    let low = ends.next().unwrap_or_default();
    let high = ends.next();
    let (start, mut end, mut star) = if low == "*" || low == "?" {
        (field.min, field.max, true)
    } else {
        let start = parse_value(low, field)?;
        let end = match high {
            None => start,
            Some(high) if ends.next().is_none() => parse_value(high, field)?,
            Some(_) => return Err(ItemError::TooManyHyphens(item.into())),
        };
        (start, end, false)
    };
    let step = match step {
        None => 1,
        Some(step) => {
            let step = parse_number(step)?;
            if high.is_none() {
                end = field.max;
            }
            star &= step <= 1;
            step
        }
    };
    if start < field.min {
        return Err(ItemError::BelowMinimum(start));
    }
    if end > field.max_value {
        return Err(ItemError::AboveMaximum(end));
    }
    if start > end {
        return Err(ItemError::Backwards(item.into()));
    }
    if step == 0 {
        return Err(ItemError::ZeroStep(item.into()));
    }
    let mut bits = 0u64;
    let mut v = start;
    while v <= end {
        bits |= 1 << v;
        // Past u64::MAX is past every field's end.
        let Some(next) = v.checked_add(step) else {
            break;
        };
        v = next;
    }
    Ok(Bits { bits, star })
}

/// `parseIntOrName`: a name of the field in any case, or a number.
fn parse_value(text: &str, field: &Field) -> Result<u64, ItemError> {
    let upper = text.to_ascii_uppercase();
    if let Some(i) = field.names.iter().position(|n| *n == upper) {
        return Ok(field.names_from.saturating_add(i as u64));
    }
    parse_number(text)
}

/// `mustParseInt`: Go's `strconv.Atoi` (an optional sign, decimal digits,
/// within int64), then negative numbers refused.
fn parse_number(text: &str) -> Result<u64, ItemError> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..).unwrap_or_default()),
        Some(b'+') => (false, text.get(1..).unwrap_or_default()),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ItemError::NotAValue(text.into()));
    }
    let magnitude: i128 = digits
        .parse()
        .map_err(|_| ItemError::NotAValue(text.into()))?;
    let value = if negative {
        magnitude.checked_neg()
    } else {
        Some(magnitude)
    };
    let Some(value) = value.filter(|v| i64::try_from(*v).is_ok()) else {
        return Err(ItemError::NotAValue(text.into()));
    };
    u64::try_from(value).map_err(|_| ItemError::Negative(text.into()))
}

impl fmt::Display for CronError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CronError::TooLong => write!(f, "is longer than {MAX_LEN} characters"),
            CronError::ZonePrefix => f.write_str(
                "starts with a TZ= or CRON_TZ= prefix; write the zone in timeZone instead",
            ),
            CronError::Every => f.write_str(
                "@every counts from the previous run, which a gate does not have; \
                 write a cron expression (e.g. \"0 * * * *\" for every hour)",
            ),
            CronError::UnknownShorthand => f.write_str(
                "unknown shorthand; use @yearly, @monthly, @weekly, @daily or @hourly",
            ),
            CronError::FieldCount(n) => write!(
                f,
                "has {n} fields; write 5: minute hour day-of-month month day-of-week, e.g. \"0 0 * * FRI\""
            ),
            CronError::Field {
                what,
                accepts,
                text,
                problem,
            } => write!(f, "{what} field {text:?}: {}", Problem(problem, accepts)),
            CronError::NeverFires => f.write_str(
                "never fires: no month it allows has the day of month it asks for \
                 (e.g. 31 in February), or a field allows no value",
            ),
        }
    }
}

/// An item's problem, with the values its field accepts.
struct Problem<'a>(&'a ItemError, &'a str);

impl fmt::Display for Problem<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let accepted = self.1;
        match self.0 {
            ItemError::NotAValue(v) => write!(f, "{v:?} is not a value; use {accepted}"),
            ItemError::Negative(v) => write!(f, "{v:?} is negative; use {accepted}"),
            ItemError::TooManyHyphens(i) => write!(f, "{i:?} has more than one '-'"),
            ItemError::TooManySlashes(i) => write!(f, "{i:?} has more than one '/'"),
            ItemError::BelowMinimum(v) | ItemError::AboveMaximum(v) => {
                write!(f, "{v} is out of range; use {accepted}")
            }
            ItemError::Backwards(i) => {
                write!(
                    f,
                    "range {i:?} runs backwards; write the smaller value first"
                )
            }
            ItemError::ZeroStep(i) => write!(f, "{i:?}: a step must be 1 or more"),
        }
    }
}

#[cfg(test)]
mod tests;

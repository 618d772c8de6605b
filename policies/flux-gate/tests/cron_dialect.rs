#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed unwrap or index is a failed test"
)]
//! `flux_gate::cron` cross-checked against an independent implementation,
//! croner 4.0.3 (a dev-dependency: it never reaches the module).
//!
//! croner is read with 5 fields only (no seconds, no year) and with
//! `sloppy_ranges`, which is how it accepts `a/n` (from `a` to the field's
//! end, as cron.rs reads it). Its default day rule is Vixie's OR: when both
//! day fields are restricted a day matches if either does, otherwise both
//! must.
//!
//! Where the two dialects differ, so that the generator below never writes
//! the construct (cron.rs's reading is Vixie cron's in each case):
//!
//! - **Which day field is restricted.** cron.rs, like Vixie cron
//!   (`DOM_STAR`/`DOW_STAR`, set when the field's first character is `*`),
//!   counts a field that *starts* with `*` or `?` as unrestricted: `*/10`,
//!   `*/2,5` and `?/3` are, and the AND rule applies. croner counts only a
//!   field that *is* `*` (or `?`), so `0 0 */10 * FRI` is "the 1st, 11th,
//!   21st, 31st or a Friday" there and "a Friday that is one of those days"
//!   here (see [`documented_difference_star_step_in_a_day_field`]). The
//!   generator writes a day field that starts with `*`/`?` but is not exactly
//!   `*`/`?` only when the other day field is exactly `*` or `?`; then both
//!   implementations reduce to the starred field alone.
//! - **A range ending in the name `SUN`.** croner turns names into numbers by
//!   text substitution and rewrites `-SUN` to `-7`, so `SUN-SUN` is every day
//!   (0-7) there; cron.rs (and Vixie: `SUN` is 0) reads `SUN-SUN` as Sunday
//!   and refuses `MON-SUN` as a backwards range. The generator never writes
//!   `SUN` after a `-`.
//! - **`*` inside a list.** cron.rs accepts `*,5` (and, in a day field,
//!   counts it unrestricted, as Vixie does); croner refuses a bare `*` that
//!   is not the whole field. A list item may be `*/n`, never `*`.
//! - **`?` outside the day fields.** cron.rs reads `?` as `*` in every field
//!   (as robfig/cron v3 does); croner only in day of month and day of week.
//! - **`@midnight`.** cron.rs accepts it (= `@daily`); croner does not.
//! - Constructs only one side has, never generated: croner's `L`, `W`, `#`,
//!   the `+` day-of-week prefix, seconds and year fields, `/n` without a
//!   start, empty list items (`1,,2`) and steps above the field's maximum;
//!   cron.rs refuses all of them.
//!
//! Everything else is the common dialect: numbers (leading zeros included),
//! month and weekday names in any case, day of week 0-7 (0 and 7 Sunday),
//! ranges `a-b`, steps `*/n`, `a-b/n` and `a/n`, lists, `*`, `?` as the whole
//! day field or before a step, and the OR rule.

use croner::parser::{CronParser, Seconds, Year};
use croner::Direction;
use flux_gate::cron::Cron;
use jiff::civil::DateTime;

/// Matches compared from each start.
const MATCHES: usize = 5;
const EXPRESSIONS: usize = 4000;
const STARTS: usize = 4;

/// SplitMix64: a fixed sequence, the same on every run and platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform enough in `lo..=hi` for a test generator.
    fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next() % u64::from(hi - lo + 1)) as u32
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Minute,
    Hour,
    Dom,
    Month,
    Dow,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

impl Kind {
    fn bounds(self) -> (u32, u32) {
        match self {
            Kind::Minute => (0, 59),
            Kind::Hour => (0, 23),
            Kind::Dom => (1, 31),
            Kind::Month => (1, 12),
            Kind::Dow => (0, 7),
        }
    }

    fn is_day(self) -> bool {
        matches!(self, Kind::Dom | Kind::Dow)
    }
}

/// A value of the field as text: a number (sometimes zero-padded) or, for
/// month and day of week, sometimes a name in a random case. `SUN` is never
/// written as a range end (`-SUN`, see the module docs).
fn value(rng: &mut Rng, kind: Kind, v: u32, range_end: bool) -> String {
    let name = match kind {
        Kind::Month => Some(MONTHS[(v - 1) as usize]),
        Kind::Dow if v < 7 && !(range_end && v == 0) => Some(WEEKDAYS[v as usize]),
        _ => None,
    };
    if let Some(name) = name {
        if rng.chance(40) {
            return match rng.range(0, 2) {
                0 => name.to_string(),
                1 => name.to_ascii_lowercase(),
                _ => {
                    let mut s = name.to_ascii_lowercase();
                    s.replace_range(0..1, &name[0..1]);
                    s
                }
            };
        }
    }
    if rng.chance(8) {
        format!("{v:02}")
    } else {
        v.to_string()
    }
}

fn step(rng: &mut Rng, kind: Kind) -> u32 {
    let (_, max) = kind.bounds();
    // Small steps mostly; now and then any step cron.rs allows (1..=max).
    if rng.chance(75) {
        rng.range(1, max.min(12))
    } else {
        rng.range(1, max)
    }
}

/// One list item: never a bare `*` (croner refuses it inside a list).
fn item(rng: &mut Rng, kind: Kind, first: bool) -> String {
    let (min, max) = kind.bounds();
    let star = if kind.is_day() && first && rng.chance(20) {
        "?"
    } else {
        "*"
    };
    match rng.range(0, 9) {
        0..=3 => {
            let v = rng.range(min, max);
            value(rng, kind, v, false)
        }
        4 | 5 => {
            let a = rng.range(min, max);
            let b = rng.range(a, max);
            format!(
                "{}-{}",
                value(rng, kind, a, false),
                value(rng, kind, b, true)
            )
        }
        6 => {
            let a = rng.range(min, max);
            let b = rng.range(a, max);
            let n = step(rng, kind);
            format!(
                "{}-{}/{n}",
                value(rng, kind, a, false),
                value(rng, kind, b, true)
            )
        }
        7 => {
            let a = rng.range(min, max);
            let n = step(rng, kind);
            format!("{}/{n}", value(rng, kind, a, false))
        }
        _ => format!("{star}/{}", step(rng, kind)),
    }
}

fn field(rng: &mut Rng, kind: Kind) -> String {
    // `*` often enough that both the AND and the OR day rule get exercised,
    // and single values often enough that matches lie hours or days apart.
    let star = match kind {
        Kind::Minute => 10,
        Kind::Hour => 30,
        Kind::Dom | Kind::Dow => 40,
        Kind::Month => 55,
    };
    if rng.chance(star) {
        return if kind.is_day() && rng.chance(20) {
            "?".into()
        } else {
            "*".into()
        };
    }
    let items = match rng.range(0, 9) {
        0..=5 => 1,
        6 | 7 => 2,
        8 => 3,
        _ => 4,
    };
    (0..items)
        .map(|i| item(rng, kind, i == 0))
        .collect::<Vec<_>>()
        .join(",")
}

fn bare_star(field: &str) -> bool {
    field == "*" || field == "?"
}

/// Starts with `*`/`?` but is more than that: restricted for croner,
/// unrestricted for Vixie cron and cron.rs.
fn starred_restriction(field: &str) -> bool {
    (field.starts_with('*') || field.starts_with('?')) && !bare_star(field)
}

fn expression(rng: &mut Rng) -> String {
    let minute = field(rng, Kind::Minute);
    let hour = field(rng, Kind::Hour);
    let mut dom = field(rng, Kind::Dom);
    let month = field(rng, Kind::Month);
    let mut dow = field(rng, Kind::Dow);
    // Keep to the common dialect: a starred restriction in one day field
    // only beside a bare `*`/`?` in the other.
    if starred_restriction(&dom) && !bare_star(&dow) {
        if rng.chance(50) {
            dow = "*".into();
        } else {
            dom = field(rng, Kind::Dom).replace(['*', '?'], "1");
        }
    }
    if starred_restriction(&dow) && !bare_star(&dom) {
        if rng.chance(50) {
            dom = "*".into();
        } else {
            dow = field(rng, Kind::Dow).replace(['*', '?'], "1");
        }
    }
    let sep = |rng: &mut Rng| if rng.chance(10) { "  " } else { " " };
    format!(
        "{minute}{}{hour}{}{dom}{}{month}{}{dow}",
        sep(rng),
        sep(rng),
        sep(rng),
        sep(rng)
    )
}

fn days_in_month(year: i16, month: i8) -> i8 {
    jiff::civil::date(year, month, 1).days_in_month()
}

/// A civil minute in 1995-2095, a quarter of them near the end of a month
/// or a year, where carries happen.
fn start(rng: &mut Rng) -> DateTime {
    let year = rng.range(1995, 2095) as i16;
    let edge = rng.chance(25);
    let month = if edge && rng.chance(30) {
        12
    } else {
        rng.range(1, 12) as i8
    };
    let last = days_in_month(year, month);
    let day = if edge {
        last - rng.range(0, 1) as i8
    } else {
        rng.range(1, last as u32) as i8
    };
    let hour = if edge { 23 } else { rng.range(0, 23) as i8 };
    let minute = if edge {
        rng.range(55, 59) as i8
    } else {
        rng.range(0, 59) as i8
    };
    jiff::civil::datetime(year, month, day, hour, minute, 0, 0)
}

fn croner_parser() -> CronParser {
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .sloppy_ranges(true)
        .build()
}

/// The first `MATCHES` minutes at or after `from` by cron.rs.
fn ours(cron: &Cron, from: DateTime) -> Vec<DateTime> {
    let mut out = Vec::with_capacity(MATCHES);
    let mut next = cron.next_match(from);
    while let Some(t) = next {
        out.push(t);
        if out.len() == MATCHES {
            break;
        }
        next = cron.next_match_after(t);
    }
    out
}

/// The first `MATCHES` minutes at or after `from` by croner.
fn theirs(cron: &croner::Cron, from: DateTime) -> Vec<DateTime> {
    cron.iter_from(from, Direction::Forward)
        .take(MATCHES)
        .collect()
}

fn both(expr: &str, from: &str) -> (Vec<DateTime>, Vec<DateTime>) {
    let from: DateTime = from.parse().unwrap();
    let ours = ours(&Cron::parse(expr).unwrap(), from);
    let theirs = theirs(&croner_parser().parse(expr).unwrap(), from);
    (ours, theirs)
}

fn strings(times: &[DateTime]) -> Vec<String> {
    times.iter().map(|t| t.to_string()).collect()
}

#[test]
fn generated_expressions_agree_with_croner() {
    let parser = croner_parser();
    let mut rng = Rng(0x0000_C0FF_EEF1_0C47);
    let mut failures = Vec::new();
    let (mut compared, mut never, mut starts) = (0, 0, 0);
    // What the generator covered: the OR rule, a starred restriction beside
    // a bare `*`, names, `?`, `a/n`.
    let (mut or_rule, mut starred, mut named, mut question, mut from_a) = (0, 0, 0, 0, 0);
    for _ in 0..EXPRESSIONS {
        let expr = expression(&mut rng);
        let fields: Vec<&str> = expr.split_whitespace().collect();
        let (dom, dow) = (fields[2], fields[4]);
        let starts_starred = |f: &str| f.starts_with('*') || f.starts_with('?');
        or_rule += usize::from(!starts_starred(dom) && !starts_starred(dow));
        starred += usize::from(starred_restriction(dom) || starred_restriction(dow));
        named += usize::from(expr.bytes().any(|b| b.is_ascii_alphabetic()));
        question += usize::from(expr.contains('?'));
        from_a += usize::from(fields.iter().any(|f| {
            f.split(',').any(|i| {
                i.split_once('/')
                    .is_some_and(|(r, _)| !r.contains('-') && !starts_starred(r))
            })
        }));
        let ours_cron = match Cron::parse(&expr) {
            Ok(cron) => cron,
            // Only "never fires" is expected (e.g. `0 0 30 FEB *`); croner
            // would search to its year 5000 limit for those.
            Err(e) if e.contains("never fires") => {
                never += 1;
                continue;
            }
            Err(e) => panic!("the generator wrote {expr:?}, which cron.rs refuses: {e}"),
        };
        let theirs_cron = match parser.parse(&expr) {
            Ok(cron) => cron,
            Err(e) => {
                failures.push(format!("{expr:?}: croner refuses it: {e}"));
                continue;
            }
        };
        compared += 1;
        for _ in 0..STARTS {
            let from = start(&mut rng);
            starts += 1;
            let a = ours(&ours_cron, from);
            let b = theirs(&theirs_cron, from);
            if a != b {
                failures.push(format!(
                    "{expr:?} from {from}: cron.rs {:?}, croner {:?}",
                    strings(&a),
                    strings(&b)
                ));
            }
        }
    }
    eprintln!(
        "{compared} expressions compared from {starts} starts, {MATCHES} matches each; \
         {never} never fire and were skipped; generated: {or_rule} under the OR rule, \
         {starred} with a starred restriction, {named} with names, {question} with `?`, \
         {from_a} with `a/n`"
    );
    assert!(compared >= EXPRESSIONS * 9 / 10, "only {compared} compared");
    for (what, count) in [
        ("the OR rule", or_rule),
        ("a starred restriction", starred),
        ("names", named),
        ("`?`", question),
        ("`a/n`", from_a),
    ] {
        assert!(
            count >= EXPRESSIONS / 20,
            "only {count} expressions with {what}"
        );
    }
    assert!(
        failures.is_empty(),
        "{} disagreements, the first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Classic schedules, both implementations and the answer by hand.
#[test]
fn classic_cases() {
    let cases: [(&str, &str, &[&str]); 8] = [
        (
            "0 0 29 2 *",
            "2026-03-01T00:00",
            &[
                "2028-02-29T00:00:00",
                "2032-02-29T00:00:00",
                "2036-02-29T00:00:00",
                "2040-02-29T00:00:00",
                "2044-02-29T00:00:00",
            ],
        ),
        // 2100 is no leap year.
        (
            "0 0 29 2 *",
            "2096-03-01T00:00",
            &[
                "2104-02-29T00:00:00",
                "2108-02-29T00:00:00",
                "2112-02-29T00:00:00",
                "2116-02-29T00:00:00",
                "2120-02-29T00:00:00",
            ],
        ),
        // Friday 2026-11-20 17:45 is the week's last; then Monday 09:00.
        (
            "*/15 9-17 * * MON-FRI",
            "2026-11-20T17:31",
            &[
                "2026-11-20T17:45:00",
                "2026-11-23T09:00:00",
                "2026-11-23T09:15:00",
                "2026-11-23T09:30:00",
                "2026-11-23T09:45:00",
            ],
        ),
        // The OR rule: the 1st, the 15th, or a Friday (2026-11-01 is a Sunday).
        (
            "0 0 1,15 * 5",
            "2026-11-01T00:00",
            &[
                "2026-11-01T00:00:00",
                "2026-11-06T00:00:00",
                "2026-11-13T00:00:00",
                "2026-11-15T00:00:00",
                "2026-11-20T00:00:00",
            ],
        ),
        // Day of week `*`: only the 13th; `?` is `*`.
        (
            "0 0 13 * ?",
            "2026-11-14T00:00",
            &[
                "2026-12-13T00:00:00",
                "2027-01-13T00:00:00",
                "2027-02-13T00:00:00",
                "2027-03-13T00:00:00",
                "2027-04-13T00:00:00",
            ],
        ),
        // 7 and 0 are both Sunday; 2026-11-22 is one.
        (
            "0 12 * * 5-7",
            "2026-11-21T13:00",
            &[
                "2026-11-22T12:00:00",
                "2026-11-27T12:00:00",
                "2026-11-28T12:00:00",
                "2026-11-29T12:00:00",
                "2026-12-04T12:00:00",
            ],
        ),
        // `a/n` runs to the field's end; names in any case.
        (
            "5/20 22-23 31 dec,Jan *",
            "2026-12-31T22:30",
            &[
                "2026-12-31T22:45:00",
                "2026-12-31T23:05:00",
                "2026-12-31T23:25:00",
                "2026-12-31T23:45:00",
                "2027-01-31T22:05:00",
            ],
        ),
        // The start minute itself matches.
        (
            "59 23 31 12 *",
            "2026-12-31T23:59",
            &[
                "2026-12-31T23:59:00",
                "2027-12-31T23:59:00",
                "2028-12-31T23:59:00",
                "2029-12-31T23:59:00",
                "2030-12-31T23:59:00",
            ],
        ),
    ];
    for (expr, from, want) in cases {
        let (ours, theirs) = both(expr, from);
        assert_eq!(strings(&ours), want, "cron.rs: {expr} from {from}");
        assert_eq!(strings(&theirs), want, "croner: {expr} from {from}");
    }
}

#[test]
fn shorthands_agree() {
    // `@midnight` is cron.rs's only: croner does not know it.
    for expr in [
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@hourly",
        "@WEEKLY",
    ] {
        for from in ["2026-11-19T10:17", "2028-02-29T23:59", "2099-12-31T23:00"] {
            let (ours, theirs) = both(expr, from);
            assert_eq!(ours, theirs, "{expr} from {from}");
            assert_eq!(ours.len(), MATCHES, "{expr} from {from}");
        }
    }
}

/// `0 0 */10 * FRI`: Vixie cron, and cron.rs, count a day field starting
/// with `*` as unrestricted, so both day fields must match: a Friday that is
/// the 1st, 11th, 21st or 31st. croner (like robfig/cron v3) counts `*/10`
/// as restricted and applies the OR rule: it reads the expression as cron.rs
/// reads `0 0 1-31/10 * FRI`.
#[test]
fn documented_difference_star_step_in_a_day_field() {
    let from = "2026-11-01T00:00";
    let (ours, theirs) = both("0 0 */10 * FRI", from);
    assert_eq!(
        strings(&ours),
        [
            "2026-12-11T00:00:00",
            "2027-01-01T00:00:00",
            "2027-05-21T00:00:00",
            "2027-06-11T00:00:00",
            "2027-10-01T00:00:00",
        ]
    );
    let (or_rule, _) = both("0 0 1-31/10 * FRI", from);
    assert_eq!(theirs, or_rule);
    assert_eq!(
        strings(&or_rule[..3]),
        [
            "2026-11-01T00:00:00",
            "2026-11-06T00:00:00",
            "2026-11-11T00:00:00"
        ]
    );
}

//! The odd values the mutator puts in: Unicode that breaks naive string
//! handling, numbers at the edges of every integer and float type, instants
//! and RFC 3339 texts at the edges of what parsers accept, and the domain
//! strings (durations, cron expressions, time zones) the policies parse.

use guard_core::Timestamp;
use serde_json::{json, Value};

use guard_core::testing::Rng;

/// Pieces of text that are valid UTF-8 but unkind to string code.
pub const ODD_PIECES: &[&str] = &[
    "\u{0301}",                  // combining acute
    "e\u{0301}\u{0302}\u{0303}", // stacked marks
    "\u{202E}",                  // RTL override
    "\u{200F}",                  // RTL mark
    "\u{202D}abc\u{202C}",
    "\u{0}",
    "\u{FFFF}",
    "\u{FFFE}",
    "\u{FEFF}",
    "\u{10FFFF}",
    "\u{1F600}",
    "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}",
    "\u{1F1FA}\u{1F1F8}",
    "\u{200B}",
    "\u{2028}",
    "\u{2029}",
    "\u{85}",
    "\u{A0}",
    "\u{3000}",
    "\u{1b}[31m",
    "\u{7f}",
    "\t\r\n",
    "\\ud800",
    "\\u0000",
    "\u{130}", // İ: lowercases to two chars
    "\u{DF}",  // ß: uppercases to two chars
    "\u{FB03}",
    "\u{0130}\u{0131}",
    "\u{D7FF}",
    "\u{E000}",
    "\u{FDD0}",
    "\u{1D11E}",
    "\u{0640}",
    "\u{05D0}\u{05D1}",
    "\u{0627}\u{0644}",
    "\u{AC00}",
    "\u{FF21}", // fullwidth A
    "\u{2126}", // Ohm sign
    "%00",
    "%2F",
    "../",
    "\"",
    "\\",
    "'",
    "=",
    ",",
    ":",
    "/",
    "*",
    "$",
    "{{",
    "<script>",
];

/// A string of odd pieces, or an ordinary string with one put in.
pub fn odd_string(rng: &mut Rng, base: Option<&str>) -> String {
    let piece = rng.pick(ODD_PIECES).copied().unwrap_or("\u{0}");
    match (base, rng.below(5)) {
        (Some(base), 0 | 1) => {
            let boundaries: Vec<usize> = base
                .char_indices()
                .map(|(i, _)| i)
                .chain(std::iter::once(base.len()))
                .collect();
            let at = rng.pick(&boundaries).copied().unwrap_or(0);
            let mut s = String::with_capacity(base.len() + piece.len());
            s.push_str(base.get(..at).unwrap_or(""));
            s.push_str(piece);
            s.push_str(base.get(at..).unwrap_or(""));
            s
        }
        (Some(base), 2) => format!("{base}{piece}"),
        (_, 3) => {
            // Zalgo: one letter under many combining marks.
            let mut s = String::from("a");
            for _ in 0..rng.range(10, 2000) {
                s.push(char::from_u32(0x300 + rng.below(0x70) as u32).unwrap_or('\u{301}'));
            }
            s
        }
        _ => (0..rng.range(1, 6))
            .map(|_| rng.pick(ODD_PIECES).copied().unwrap_or(""))
            .collect(),
    }
}

pub fn extreme_number(rng: &mut Rng) -> Value {
    let choices = [
        json!(i64::MIN),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(i64::MIN + 1),
        json!(i32::MIN),
        json!(i32::MAX),
        json!(u32::MAX),
        json!(u32::MAX as u64 + 1),
        json!(u16::MAX),
        json!(u16::MAX as u64 + 1),
        json!(i16::MIN),
        json!(255),
        json!(256),
        json!(-1),
        json!(0),
        json!(1),
        json!(-0.0),
        json!(0.5),
        json!(-0.5),
        json!(1.0),
        json!(1e308),
        json!(-1e308),
        json!(f64::MAX),
        json!(f64::MIN_POSITIVE),
        json!(5e-324),
        json!(9007199254740993u64),
        json!(9007199254740993.0),
        json!(1e21),
        json!(262145),
        json!(1_000_000_000),
    ];
    rng.pick(&choices).cloned().unwrap_or(Value::Null)
}

/// RFC 3339 texts at and past the edges of the format.
pub const ODD_INSTANTS: &[&str] = &[
    "0001-01-01T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999999Z",
    "9999-12-31T23:59:59Z",
    "9999-12-31T23:59:59-23:59",
    "0001-01-01T00:00:00+23:59",
    "2016-12-31T23:59:60Z",
    "2026-06-30T23:59:60+00:00",
    "2026-11-20T09:00:00+23:59",
    "2026-11-20T09:00:00-23:59",
    "2026-11-20T09:00:00+24:00",
    "2026-11-20T09:00:00+00:60",
    "2026-11-20T09:00:00-00:00",
    "2026-02-29T00:00:00Z",
    "2024-02-29T23:59:59.999999999Z",
    "2026-02-30T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-11-20T24:00:00Z",
    "2026-11-20T09:00:00",
    "2026-11-20",
    "2026-11-20t09:00:00z",
    "2026-11-20 09:00:00Z",
    "2026-11-20T09:00:00.Z",
    "2026-11-20T09:00:00.1234567891234Z",
    "2026-11-20T09:00:00,5Z",
    "+002026-11-20T09:00:00Z",
    "-000001-01-01T00:00:00Z",
    "10000-01-01T00:00:00Z",
    "1970-01-01T00:00:00Z",
    "1969-12-31T23:59:59.999999999Z",
    "2038-01-19T03:14:08Z",
    "2262-04-11T23:47:16.854775808Z",
    "2026-11-20T09:00:00Z[America/New_York]",
    "2026-11-20T09:00Z",
    "2026-W47-5T09:00:00Z",
    "99999999999999999999",
    "T",
    "Z",
    "",
];

/// An instant at or past the edge of what jiff and the policies' arithmetic
/// handle, or one near an instant the corpus mentions.
pub fn extreme_now(rng: &mut Rng, near: &[Timestamp], seed_now: Timestamp) -> Timestamp {
    let base = match rng.below(3) {
        0 => seed_now,
        _ => rng.pick(near).copied().unwrap_or(seed_now),
    };
    let offset_ns: i128 = match rng.below(8) {
        0 => 0,
        1 => -1,
        2 => 1,
        3 => {
            if rng.chance(0.5) {
                -1_000_000_000
            } else {
                1_000_000_000
            }
        }
        4 => (rng.below(200_000) as i128 - 100_000) * 1_000_000_000,
        5 => (rng.below(800) as i128 - 400) * 86_400 * 1_000_000_000,
        _ => {
            return match rng.below(10) {
                0 => Timestamp::MIN,
                1 => Timestamp::MAX,
                2 => Timestamp::UNIX_EPOCH,
                3 => parse_or("0001-01-01T00:00:00Z", seed_now),
                4 => parse_or("9999-12-31T23:59:59.999999999Z", seed_now),
                5 => parse_or("2016-12-31T23:59:59.999999999Z", seed_now),
                6 => parse_or("2038-01-19T03:14:08Z", seed_now),
                7 => parse_or("1969-12-31T23:59:59.999999999Z", seed_now),
                8 => parse_or("2262-04-11T23:47:16.854775807Z", seed_now),
                _ => latest_clock(),
            }
        }
    };
    Timestamp::from_nanosecond(base.as_nanosecond().saturating_add(offset_ns)).unwrap_or(base)
}

/// The latest instant the WASI clock (nanoseconds since 1970 in a u64) shows.
pub fn latest_clock() -> Timestamp {
    Timestamp::from_nanosecond(i128::from(u64::MAX)).unwrap_or(Timestamp::MAX)
}

/// An instant policy-server's clock could show: from 1970 to the end of the
/// WASI clock's range. Earlier and later ones reach no deployed policy.
pub fn extreme_clock(rng: &mut Rng, near: &[Timestamp], seed_now: Timestamp) -> Timestamp {
    extreme_now(rng, near, seed_now).clamp(Timestamp::UNIX_EPOCH, latest_clock())
}

fn parse_or(text: &str, fallback: Timestamp) -> Timestamp {
    text.parse().unwrap_or(fallback)
}

/// An RFC 3339 text: an odd one, or a corpus instant moved a little and
/// written with an offset.
pub fn instant_text(rng: &mut Rng, near: &[Timestamp], seed_now: Timestamp) -> String {
    if rng.chance(0.5) {
        return rng.pick(ODD_INSTANTS).copied().unwrap_or("").to_string();
    }
    let t = extreme_now(rng, near, seed_now);
    match rng.below(4) {
        0 => t.to_string(),
        1 => {
            let offsets = ["+23:59", "-23:59", "+14:00", "-12:00", "+05:45", "+00:00"];
            let offset = rng.pick(&offsets).copied().unwrap_or("+00:00");
            let hours: i32 = offset.get(1..3).and_then(|h| h.parse().ok()).unwrap_or(0);
            let mins: i32 = offset.get(4..6).and_then(|m| m.parse().ok()).unwrap_or(0);
            let secs = (hours * 3600 + mins * 60) * if offset.starts_with('-') { -1 } else { 1 };
            match jiff::tz::Offset::from_seconds(secs) {
                Ok(o) => {
                    let dt = o.to_datetime(t);
                    match jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%S%.f", dt) {
                        Ok(text) => format!("{text}{offset}"),
                        Err(_) => t.to_string(),
                    }
                }
                Err(_) => t.to_string(),
            }
        }
        2 => jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%S.%9fZ", t)
            .unwrap_or_else(|_| t.to_string()),
        _ => jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%SZ", t).unwrap_or_else(|_| t.to_string()),
    }
}

pub const DURATIONS: &[&str] = &[
    "1h",
    "0s",
    "0",
    "-1h",
    "1h30m",
    "1.5h",
    ".5h",
    "5.h",
    "1e3h",
    "h",
    "1",
    "9223372036854775807ns",
    "9223372036854775808ns",
    "2562047h47m16.854775807s",
    "2562048h",
    "9999999999999999999h",
    "1h1h",
    "1µs",
    "1μs",
    "1us",
    "300ms",
    "24h",
    "24h0m1s",
    "168h",
    "8760h",
    "00000000000000000001s",
    "1d",
    "1w",
    "P1D",
    "PT1H",
    " 1h",
    "1h ",
    "1H",
    "+1h",
    "1h-1m",
    "0.000000001ns",
];

pub const CRONS: &[&str] = &[
    "* * * * *",
    "0 0 * * FRI",
    "0 0 29 2 *",
    "0 0 30 2 *",
    "0 0 31 * *",
    "59 23 31 12 *",
    "0 0 * * 7",
    "0 0 * * 0-7",
    "*/0 * * * *",
    "*/1 * * * *",
    "0-59/1 * * * *",
    "59-0 * * * *",
    "0 0 1-31/1000 * *",
    "0 0 * * MON-SUN",
    "0 0 * * SUN-MON",
    "0 2 * * *",
    "30 2 * * *",
    "0 1 * * SUN",
    "0 0 L * *",
    "0 0 ? * *",
    "@yearly",
    "@every 1h",
    "60 24 32 13 8",
    "-1 * * * *",
    "0 0 * *",
    "0 0 * * * *",
    "0,0,0,0,0,0,0,0,0,0 * * * *",
    "0 0 1 1 *",
    "0 0 13 * FRI",
    "0 0 * JAN-DEC MON-FRI",
    "0 0 * FEB *",
    "",
    "     ",
];

pub const TIME_ZONES: &[&str] = &[
    "UTC",
    "Local",
    "local",
    "America/Los_Angeles",
    "Europe/Berlin",
    "Australia/Lord_Howe",
    "Pacific/Kiritimati",
    "Pacific/Apia",
    "Pacific/Chatham",
    "Asia/Kathmandu",
    "Antarctica/Troll",
    "America/Sao_Paulo",
    "America/Santiago",
    "Africa/Casablanca",
    "Asia/Tehran",
    "Etc/GMT+12",
    "Etc/GMT-14",
    "EST5EDT",
    "EST",
    "utc",
    "europe/berlin",
    "Mars/Olympus",
    "../../etc/passwd",
    "/usr/share/zoneinfo/UTC",
    "",
    "UTC+1",
    "+01:00",
];

pub const OPERATIONS: &[&str] = &[
    "CREATE", "UPDATE", "DELETE", "CONNECT", "create", "", "PATCH",
];

pub const SUB_RESOURCES: &[&str] = &["status", "scale", "finalize", "", "exec", "status/x"];

/// Any scalar or small container, of a random type.
pub fn random_value(rng: &mut Rng, dict: &[String]) -> Value {
    match rng.below(8) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(0.5)),
        2 => extreme_number(rng),
        3 => json!(rng.below(100)),
        4 => Value::String(rng.pick(dict).cloned().unwrap_or_default()),
        5 => Value::String(odd_string(rng, None)),
        6 => json!([]),
        _ => json!({}),
    }
}

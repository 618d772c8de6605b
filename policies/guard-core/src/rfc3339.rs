//! RFC 3339 instants, parsed and printed without jiff's general-purpose
//! parser and printer (which, with their error messages, would add more than
//! 100 KB to every module that reads a timestamp).

use jiff::Timestamp;

/// Parses `2026-11-20T10:00:00Z`, `2026-11-20t10:00:00.5+01:00` and the like:
/// RFC 3339's `date-time`, with `T`/`t` (or a space) and `Z`/`z` or a numeric offset.
pub fn parse(text: &str) -> Result<Timestamp, String> {
    let err = || {
        format!(
            "{} is not an RFC 3339 instant such as 2026-11-20T10:00:00Z",
            crate::names::quote(text)
        )
    };
    let b = text.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = b.get(range)?;
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        digits
            .iter()
            .try_fold(0i64, |acc, d| Some(acc * 10 + i64::from(d - b'0')))
    };
    let sep = |i: usize, allowed: &[u8]| b.get(i).is_some_and(|c| allowed.contains(c));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return Err(err());
    }
    let (year, month, day) = (
        num(0..4).ok_or_else(err)?,
        num(5..7).ok_or_else(err)?,
        num(8..10).ok_or_else(err)?,
    );
    let (hour, minute, second) = (
        num(11..13).ok_or_else(err)?,
        num(14..16).ok_or_else(err)?,
        num(17..19).ok_or_else(err)?,
    );
    let mut i = 19;
    let mut nanos: i64 = 0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        let len = b
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if len == 0 {
            return Err(err());
        }
        for (k, d) in b
            .get(start..start + len)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            if k < 9 {
                nanos += i64::from(d - b'0') * 10i64.pow(8 - k as u32);
            }
        }
        i = start + len;
    }
    let offset_secs = match b.get(i..) {
        Some([b'Z' | b'z']) => 0,
        Some([sign @ (b'+' | b'-'), _, _, b':', _, _]) => {
            let (h, m) = (
                num(i + 1..i + 3).ok_or_else(err)?,
                num(i + 4..i + 6).ok_or_else(err)?,
            );
            if h > 23 || m > 59 {
                return Err(err());
            }
            let s = h * 3600 + m * 60;
            if *sign == b'-' {
                -s
            } else {
                s
            }
        }
        _ => return Err(err()),
    };
    // Leap seconds (:60) are accepted by RFC 3339 and folded into the next second.
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(err());
    }
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        - offset_secs;
    let nanos = i32::try_from(nanos).map_err(|_| err())?;
    Timestamp::new(secs, nanos).map_err(|_| err())
}

/// Prints `2026-11-20T10:00:00Z` (fractional seconds only when present).
pub fn format(t: Timestamp) -> String {
    let secs = t.as_second();
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    let nanos = t.subsec_nanosecond();
    let frac = if nanos == 0 {
        String::new()
    } else {
        format!(".{:09}", nanos.unsigned_abs())
            .trim_end_matches('0')
            .to_string()
    };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}{frac}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jiff(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn agrees_with_jiff() {
        for s in [
            "2026-11-20T10:00:00Z",
            "2028-02-29T23:59:59Z",
            "1970-01-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
            "2026-03-29T01:30:00+02:00",
            "2026-10-25T02:30:00.25-07:30",
            "2000-02-29T12:00:00.123456789Z",
        ] {
            assert_eq!(parse(s).unwrap(), jiff(s), "{s}");
            assert_eq!(format(parse(s).unwrap()), jiff(s).to_string(), "{s}");
        }
        assert_eq!(
            parse("2026-11-20t10:00:00z").unwrap(),
            jiff("2026-11-20T10:00:00Z")
        );
        assert_eq!(
            parse("2026-11-20 10:00:00Z").unwrap(),
            jiff("2026-11-20T10:00:00Z")
        );
    }

    #[test]
    fn refuses_what_is_not_an_instant() {
        for bad in [
            "",
            "2026-11-20",
            "2026-11-20T10:00:00",
            "2026-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-11-20T24:00:00Z",
            "2026-11-20T10:00:00.Z",
            "2026-11-20T10:00:00+0100",
            "tomorrow",
            "2026-11-20T10:00:00Z ",
            "２026-11-20T10:00:00Z",
            "2026-11-20T10:00:00+24:00",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn every_day_round_trips() {
        let mut t = jiff("1999-12-25T06:07:08Z");
        for _ in 0..3000 {
            assert_eq!(parse(&format(t)).unwrap(), t);
            assert_eq!(format(t), t.to_string());
            t = Timestamp::new(t.as_second() + 86_400 + 3_601, 0).unwrap();
        }
    }
}

//! RFC 3339 instants, parsed and printed without jiff's general-purpose
//! parser and printer (which, with their error messages, would add more than
//! 100 KB to every module that reads a timestamp).

use jiff::tz::Offset;
use jiff::Timestamp;

/// Parses `2026-11-20T10:00:00Z`, `2026-11-20t10:00:00.5+01:00` and the like:
/// RFC 3339's `date-time`, with `T`/`t` (or a space) and `Z`/`z` or a numeric offset.
/// Calendar arithmetic is jiff's, which checks every step.
pub fn parse(text: &str) -> Result<Timestamp, NotAnInstant> {
    instant(text.as_bytes()).ok_or_else(|| NotAnInstant(text.to_string()))
}

/// A text that is not an RFC 3339 instant; its words are in `Display`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAnInstant(pub String);

impl std::fmt::Display for NotAnInstant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is not an RFC 3339 instant such as 2026-11-20T10:00:00Z",
            crate::names::quote(&self.0)
        )
    }
}

/// A setting written as an RFC 3339 instant: the text as written, for
/// messages, and the instant, parsed once when the settings are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instant {
    pub text: String,
    pub at: Timestamp,
}

impl<'de> serde::Deserialize<'de> for Instant {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::text_setting::from_text(d, "an RFC 3339 instant", |text| {
            Ok::<_, NotAnInstant>(Self {
                at: parse(text)?,
                text: text.to_string(),
            })
        })
    }
}

fn instant(b: &[u8]) -> Option<Timestamp> {
    let [y0, y1, y2, y3, b'-', mo0, mo1, b'-', d0, d1, b'T' | b't' | b' ', h0, h1, b':', mi0, mi1, b':', s0, s1, rest @ ..] =
        b
    else {
        return None;
    };
    let year = i16::try_from(number(&[*y0, *y1, *y2, *y3])?).ok()?;
    let month = i8::try_from(number(&[*mo0, *mo1])?).ok()?;
    let day = i8::try_from(number(&[*d0, *d1])?).ok()?;
    let hour = i8::try_from(number(&[*h0, *h1])?).ok()?;
    let minute = i8::try_from(number(&[*mi0, *mi1])?).ok()?;
    let second = i8::try_from(number(&[*s0, *s1])?).ok()?;
    let (nanos, rest) = match rest {
        [b'.', fraction @ ..] => {
            let len = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
            let (digits, rest) = fraction.split_at_checked(len)?;
            (nanoseconds(digits)?, rest)
        }
        _ => (0, rest),
    };
    let offset_seconds = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h0, h1, b':', m0, m1] => {
            let (h, m) = (number(&[*h0, *h1])?, number(&[*m0, *m1])?);
            if h > 23 || m > 59 {
                return None;
            }
            let seconds =
                i32::try_from(h.checked_mul(3600)?.checked_add(m.checked_mul(60)?)?).ok()?;
            if *sign == b'-' {
                seconds.checked_neg()?
            } else {
                seconds
            }
        }
        _ => return None,
    };
    // RFC 3339 allows a leap second (:60); it is folded into the next second.
    let leap = second == 60;
    let datetime = jiff::civil::DateTime::new(
        year,
        month,
        day,
        hour,
        minute,
        if leap { 59 } else { second },
        nanos,
    )
    .ok()?;
    let t = Offset::from_seconds(offset_seconds)
        .ok()?
        .to_timestamp(datetime)
        .ok()?;
    if leap {
        t.checked_add(jiff::SignedDuration::from_secs(1)).ok()
    } else {
        Some(t)
    }
}

/// The value of a run of ASCII digits (at most four here, so no overflow).
fn number(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || digits.len() > 9 {
        return None;
    }
    digits.iter().try_fold(0u32, |acc, d| {
        let digit = u32::from(d.checked_sub(b'0').filter(|v| *v <= 9)?);
        acc.checked_mul(10)?.checked_add(digit)
    })
}

/// A fraction of a second in nanoseconds; digits past the ninth are dropped.
fn nanoseconds(digits: &[u8]) -> Option<i32> {
    if digits.is_empty() {
        return None;
    }
    let kept = digits.get(..9).unwrap_or(digits);
    let value = number(kept)?;
    let missing = u32::try_from(9usize.checked_sub(kept.len())?).ok()?;
    i32::try_from(value.checked_mul(10u32.checked_pow(missing)?)?).ok()
}

/// Prints `2026-11-20T10:00:00Z` (fractional seconds only when present).
pub fn format(t: Timestamp) -> String {
    let dt = Offset::UTC.to_datetime(t);
    let nanos = dt.subsec_nanosecond();
    let frac = if nanos == 0 {
        String::new()
    } else {
        format!(".{:09}", nanos.unsigned_abs())
            .trim_end_matches('0')
            .to_string()
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{frac}Z",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
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
    fn folds_a_leap_second_and_refuses_what_jiff_cannot_hold() {
        assert_eq!(
            parse("2026-12-31T23:59:60Z").unwrap(),
            jiff("2027-01-01T00:00:00Z")
        );
        assert_eq!(
            parse("0000-01-01T00:00:00.0000000001+23:59").unwrap(),
            jiff("-000001-12-31T00:01:00Z")
        );
        for bad in ["9999-12-31T23:59:60Z", "9999-12-31T23:59:59-23:59"] {
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

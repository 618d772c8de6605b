//! Go durations (`time.ParseDuration`), the syntax Flux and Kubernetes users
//! write windows and intervals in: `1h30m`, `500ms`, `1.5h`, `-2m`, `0`.

/// Parses a Go duration into nanoseconds, with Go's exact grammar:
/// `[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+` or a bare `0`.
pub fn parse(text: &str) -> Result<i64, DurationError> {
    let err = || invalid(text);
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..).unwrap_or("")),
        Some(b'+') => (false, text.get(1..).unwrap_or("")),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(err());
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let (value, after) = component(rest, text)?;
        total = total.checked_add(value).ok_or_else(err)?;
        // Go's range: -9223372036854775808ns to 9223372036854775807ns.
        if total > u128::from(i64::MAX.unsigned_abs()).saturating_add(u128::from(negative)) {
            return Err(DurationError::new(text, Why::OutOfRange));
        }
        rest = after;
    }
    let total = i128::try_from(total).map_err(|_| err())?;
    let signed = if negative {
        total.checked_neg()
    } else {
        Some(total)
    };
    signed.and_then(|n| i64::try_from(n).ok()).ok_or_else(err)
}

/// The refusal of a duration that does not follow the grammar.
fn invalid(text: &str) -> DurationError {
    DurationError::new(text, Why::Syntax)
}

/// Why a text is not a Go duration; its words are in `Display`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DurationError {
    /// The text as it was given.
    pub text: String,
    pub why: Why,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// Not Go's syntax.
    Syntax,
    /// More nanoseconds than an `i64` holds.
    OutOfRange,
    /// A number without its unit.
    MissingUnit,
    /// A unit Go does not know.
    UnknownUnit(String),
}

impl DurationError {
    fn new(text: &str, why: Why) -> Self {
        Self {
            text: text.to_string(),
            why,
        }
    }
}

impl std::fmt::Display for DurationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = crate::names::quote(&self.text);
        match &self.why {
            Why::Syntax => write!(
                f,
                "invalid duration {text}: use Go syntax such as 90s, 1h30m or 1.5h"
            ),
            Why::OutOfRange => write!(f, "invalid duration {text}: out of range"),
            Why::MissingUnit => write!(
                f,
                "invalid duration {text}: missing unit (ns, us, ms, s, m, h)"
            ),
            Why::UnknownUnit(unit) => write!(
                f,
                "invalid duration {text}: unknown unit {} (use ns, us, ms, s, m or h)",
                crate::names::quote(unit)
            ),
        }
    }
}

/// The first `<number><unit>` of `rest` (a part of the duration `text`): its
/// nanoseconds, and what follows it.
fn component<'a>(rest: &'a str, text: &str) -> Result<(u128, &'a str), DurationError> {
    let err = || invalid(text);
    let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (int_part, after) = rest.split_at(int_len);
    let (frac_part, after) = match after.strip_prefix('.') {
        Some(f) => {
            let n = f.bytes().take_while(u8::is_ascii_digit).count();
            f.split_at(n)
        }
        None => ("", after),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(err());
    }
    let unit_len = after
        .char_indices()
        .find(|(_, c)| *c == '.' || c.is_ascii_digit())
        .map_or(after.len(), |(i, _)| i);
    let (unit, after) = after.split_at(unit_len);
    let scale = unit_scale(unit, text)?;
    let int: u128 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| err())?
    };
    let mut value = int.checked_mul(scale).ok_or_else(err)?;
    // The fraction, truncated to the nanosecond as Go does.
    let mut frac_scale = scale;
    for digit in frac_part.bytes() {
        frac_scale /= 10;
        if frac_scale == 0 {
            break;
        }
        let digit = u128::from(digit.wrapping_sub(b'0'));
        value = digit
            .checked_mul(frac_scale)
            .and_then(|d| value.checked_add(d))
            .ok_or_else(err)?;
    }
    Ok((value, after))
}

/// The nanoseconds in one `unit` of the duration `text`.
fn unit_scale(unit: &str, text: &str) -> Result<u128, DurationError> {
    Ok(match unit {
        "ns" => 1,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "" => return Err(DurationError::new(text, Why::MissingUnit)),
        other => {
            return Err(DurationError::new(
                text,
                Why::UnknownUnit(other.to_string()),
            ))
        }
    })
}

/// Formats nanoseconds the way Go's `Duration.String` does for whole seconds
/// and up (`1h30m0s`), falling back to smaller units below a second.
pub fn format(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".to_string();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    if n < 1_000 {
        return format!("{sign}{n}ns");
    }
    if n < 1_000_000 {
        return format!("{sign}{}us", trim(n, 1_000));
    }
    if n < 1_000_000_000 {
        return format!("{sign}{}ms", trim(n, 1_000_000));
    }
    let secs = n / 1_000_000_000;
    let (h, m) = (secs / 3600, (secs % 3600) / 60);
    let s = trim(n % 60_000_000_000, 1_000_000_000);
    match (h, m) {
        (0, 0) => format!("{sign}{s}s"),
        (0, m) => format!("{sign}{m}m{s}s"),
        (h, m) => format!("{sign}{h}h{m}m{s}s"),
    }
}

/// `n / unit` with its fraction, without trailing zeros.
#[expect(
    clippy::arithmetic_side_effects,
    reason = "unit is 1_000, 1_000_000 or 1_000_000_000 (see `format`), never zero"
)]
fn trim(n: u64, unit: u64) -> String {
    let whole = n / unit;
    let frac = n % unit;
    if frac == 0 {
        return whole.to_string();
    }
    let width = unit.ilog10() as usize;
    let digits = format!("{frac:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

use serde::Deserialize as _;

/// A setting written as a Go duration: the text as written, for messages,
/// and its value, parsed once when the settings are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoDuration {
    pub text: String,
    pub nanos: i64,
}

impl GoDuration {
    pub fn new(text: &str) -> Result<Self, DurationError> {
        Ok(Self {
            nanos: parse(text)?,
            text: text.to_string(),
        })
    }

    pub fn signed(&self) -> jiff::SignedDuration {
        jiff::SignedDuration::from_nanos(self.nanos)
    }
}

/// For `deserialize_with`: a duration setting that may be left out, `null`
/// or empty (`""`), each meaning none.
pub fn optional<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<GoDuration>, D::Error> {
    struct MaybeEmpty(Option<GoDuration>);
    impl<'de> serde::Deserialize<'de> for MaybeEmpty {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            crate::text_setting::from_text(d, EXPECTING, |text| match text {
                "" => Ok(MaybeEmpty(None)),
                text => GoDuration::new(text).map(|d| MaybeEmpty(Some(d))),
            })
        }
    }
    Ok(Option::<MaybeEmpty>::deserialize(d)?.and_then(|m| m.0))
}

const EXPECTING: &str = "a Go duration such as 90s, 1h30m or 1.5h";

impl<'de> serde::Deserialize<'de> for GoDuration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::text_setting::from_text(d, EXPECTING, Self::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    #[test]
    fn accepts_go_syntax() {
        assert_eq!(parse("0"), Ok(0));
        assert_eq!(parse("1h30m"), Ok(5400 * S));
        assert_eq!(parse("1.5h"), Ok(5400 * S));
        assert_eq!(parse("500ms"), Ok(S / 2));
        assert_eq!(parse("-2m"), Ok(-120 * S));
        assert_eq!(parse("+3s"), Ok(3 * S));
        assert_eq!(parse(".5s"), Ok(S / 2));
        assert_eq!(parse("1.s"), Ok(S));
        assert_eq!(parse("1\u{b5}s"), Ok(1_000));
        assert_eq!(parse("1\u{3bc}s"), Ok(1_000));
        assert_eq!(parse("2h45m10.5s"), Ok(9910 * S + S / 2));
        assert_eq!(parse("1.0000000001s"), Ok(S));
    }

    #[test]
    fn refuses_what_go_refuses() {
        for bad in [
            "", "-", "1", "h", ".s", "1d", "1 h", "1h ", "1H", "3000000h", "1h-1m", "--1s", "1e3s",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn max_and_overflow() {
        assert_eq!(parse("9223372036854775807ns"), Ok(i64::MAX));
        assert!(parse("9223372036854775808ns").is_err());
        assert_eq!(parse("-9223372036854775808ns"), Ok(i64::MIN));
        assert!(parse("99999999999999999999999999999999999999h").is_err());
    }

    #[test]
    fn formats_like_go() {
        assert_eq!(format(5400 * S), "1h30m0s");
        assert_eq!(format(90 * S), "1m30s");
        assert_eq!(format(S / 2), "500ms");
        assert_eq!(format(S + S / 2), "1.5s");
        assert_eq!(format(0), "0s");
        assert_eq!(format(-S), "-1s");
    }
}

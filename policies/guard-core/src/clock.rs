//! The wall clock as the waPC adapter reads it, WASI's `clock_time_get`.
//!
//! Rust's `SystemTime::now()` panics (a trap, so an HTTP 500 without a
//! reason) when the host answers with an error, and a fallback instant would
//! judge the request at the wrong time. A failed read is a refusal naming
//! the cause ([`crate::policy::clock_failure`]).

use jiff::Timestamp;

/// WASI preview 1's `errno` values a wall clock read can return, named.
fn errno_name(errno: u16) -> &'static str {
    match errno {
        8 => "badf: no such clock",
        28 => "inval: invalid argument",
        58 => "notsup: not supported",
        61 => "overflow: the time does not fit in 64-bit nanoseconds",
        _ => "unknown error",
    }
}

/// The instant `clock_time_get(realtime)` answered: `errno` 0 and the
/// nanoseconds since the Unix epoch, or the reason there is none.
pub fn from_wasi(errno: u16, nanos: u64) -> Result<Timestamp, ClockError> {
    if errno != 0 {
        return Err(ClockError::Errno(errno));
    }
    Timestamp::from_nanosecond(i128::from(nanos)).map_err(|_| ClockError::PastYear9999(nanos))
}

/// Why the host's clock gave no instant; its words are in `Display`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClockError {
    /// `clock_time_get` answered this WASI errno.
    Errno(u16),
    /// It answered these nanoseconds since 1970, past what an instant holds.
    PastYear9999(u64),
}

impl std::fmt::Display for ClockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Errno(errno) => write!(
                f,
                "the host's clock_time_get failed with WASI errno {errno} ({})",
                errno_name(*errno)
            ),
            Self::PastYear9999(nanos) => write!(
                f,
                "the host's clock reads {nanos} ns since 1970, past year 9999"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_instant_or_names_the_failure() {
        assert_eq!(
            from_wasi(0, 1_795_168_800_500_000_000),
            Ok("2026-11-20T10:00:00.5Z".parse().unwrap())
        );
        assert_eq!(
            from_wasi(61, 0).unwrap_err().to_string(),
            "the host's clock_time_get failed with WASI errno 61 \
             (overflow: the time does not fit in 64-bit nanoseconds)"
        );
        assert!(from_wasi(0, u64::MAX).is_ok(), "year 2554 fits jiff");
    }
}

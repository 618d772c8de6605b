//! Pins the real-time clock of an unmodified `kwctl` or `policy-server` to the
//! instant written in the file that `RECONCILE_GUARD_NOW_FILE` names (decimal
//! nanoseconds since the Unix epoch), so that the real engines judge a corpus
//! case at the case's `now`. Loaded with `LD_PRELOAD`; Linux only.
//!
//! Why not Debian's libfaketime: policy-server links jemalloc, whose
//! initialisation reads the clock while libfaketime's constructor is still
//! resolving symbols, and libfaketime 0.9.10's failed `dlsym` allocates:
//! policy-server deadlocks before `main`. This library resolves nothing and
//! allocates nothing: it reads the file and asks the kernel.
//!
//! Only the wall clock is pinned, and it stands still: the monotonic clocks
//! that tokio and wasmtime's epoch deadline use run as usual, so the engines
//! work normally while every reading of "now" is the case's instant. The file
//! is read at every call, so the conformance run moves the clock between
//! cases by rewriting it. An unreadable file fails the call (`EIO`) rather
//! than fall back to the real time.
//!
//! For checking answers, not for timing them: every reading costs a few
//! system calls, and a timed wait on an absolute wall-clock deadline (the
//! default clock of `pthread_cond_timedwait`) computed from a pinned instant
//! in the past returns at once, so threads that would sleep spin instead.
//! `make bench` and `make load` run the engines on the real clock.
#![expect(
    unsafe_code,
    reason = "an LD_PRELOAD library replaces libc's clock functions"
)]

use libc::{c_int, c_void, clockid_t, time_t, timespec, timeval};

const NOW_FILE: &[u8] = b"RECONCILE_GUARD_NOW_FILE\0";

enum Pinned {
    /// The variable is not set: the real clock.
    Off,
    Nanos(i128),
    Unreadable,
}

/// Reads the pinned instant with raw system calls: no allocation, no locks.
fn pinned() -> Pinned {
    // SAFETY: getenv returns a pointer into the environment or null.
    let path = unsafe { libc::getenv(NOW_FILE.as_ptr().cast()) };
    if path.is_null() {
        return Pinned::Off;
    }
    let mut buf = [0u8; 48];
    // SAFETY: `path` is a NUL-terminated string from the environment; `buf`
    // outlives the read, whose length is the buffer's.
    let read = unsafe {
        let fd = libc::open(path, libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Pinned::Unreadable;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast::<c_void>(), buf.len());
        libc::close(fd);
        n
    };
    let Ok(len) = usize::try_from(read) else {
        return Pinned::Unreadable;
    };
    match buf.get(..len).and_then(parse_nanos) {
        Some(n) => Pinned::Nanos(n),
        None => Pinned::Unreadable,
    }
}

/// `-?[0-9]+`, surrounding whitespace allowed.
fn parse_nanos(text: &[u8]) -> Option<i128> {
    let text = text.trim_ascii();
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i128 = 0;
    for d in digits {
        let digit = d.is_ascii_digit().then(|| i128::from(d - b'0'))?;
        value = value.checked_mul(10)?.checked_add(digit)?;
    }
    Some(if negative { -value } else { value })
}

fn split(nanos: i128) -> Option<(time_t, i64)> {
    let secs = time_t::try_from(nanos.div_euclid(1_000_000_000)).ok()?;
    let sub = i64::try_from(nanos.rem_euclid(1_000_000_000)).ok()?;
    Some((secs, sub))
}

fn fail() -> c_int {
    // SAFETY: errno is thread-local and always writable.
    unsafe { *libc::__errno_location() = libc::EIO };
    -1
}

/// # Safety
/// `ts` must be valid for writes, as libc's `clock_gettime` requires.
#[no_mangle]
pub unsafe extern "C" fn clock_gettime(id: clockid_t, ts: *mut timespec) -> c_int {
    if id == libc::CLOCK_REALTIME || id == libc::CLOCK_REALTIME_COARSE {
        match pinned() {
            Pinned::Off => {}
            Pinned::Nanos(n) => {
                let Some((secs, sub)) = split(n) else {
                    return fail();
                };
                // SAFETY: the caller passes a writable timespec.
                unsafe {
                    (*ts).tv_sec = secs;
                    (*ts).tv_nsec = sub;
                }
                return 0;
            }
            Pinned::Unreadable => return fail(),
        }
    }
    // SAFETY: the kernel's clock_gettime with the caller's arguments.
    let r = unsafe { libc::syscall(libc::SYS_clock_gettime, id, ts) };
    c_int::try_from(r).unwrap_or(-1)
}

/// # Safety
/// `tv` must be null or valid for writes; `tz` is passed on.
#[no_mangle]
pub unsafe extern "C" fn gettimeofday(tv: *mut timeval, tz: *mut c_void) -> c_int {
    match pinned() {
        Pinned::Off => {
            // SAFETY: the kernel's gettimeofday with the caller's arguments.
            let r = unsafe { libc::syscall(libc::SYS_gettimeofday, tv, tz) };
            c_int::try_from(r).unwrap_or(-1)
        }
        Pinned::Nanos(n) => {
            let Some((secs, sub)) = split(n) else {
                return fail();
            };
            if !tv.is_null() {
                // SAFETY: a non-null `tv` is writable.
                unsafe {
                    (*tv).tv_sec = secs;
                    (*tv).tv_usec = sub / 1000;
                }
            }
            0
        }
        Pinned::Unreadable => fail(),
    }
}

/// # Safety
/// `t` must be null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn time(t: *mut time_t) -> time_t {
    let mut ts = timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a local timespec.
    if unsafe { clock_gettime(libc::CLOCK_REALTIME, &mut ts) } != 0 {
        return -1;
    }
    if !t.is_null() {
        // SAFETY: a non-null `t` is writable.
        unsafe { *t = ts.tv_sec };
    }
    ts.tv_sec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_signed_nanoseconds() {
        assert_eq!(
            parse_nanos(b"1763632800000000000\n"),
            Some(1_763_632_800_000_000_000)
        );
        assert_eq!(parse_nanos(b"-5"), Some(-5));
        assert_eq!(parse_nanos(b""), None);
        assert_eq!(parse_nanos(b"12x"), None);
        assert_eq!(split(-1), Some((-1, 999_999_999)));
    }
}

//! The words for gates: which gate, why it is closed, and when it opens,
//! in UTC and in the gates' own time zones; the commands that open them.

use guard_core::duration;
use guard_core::object::ObjectName;
use jiff::{SignedDuration, Timestamp};

use crate::gate::{Action, Gate, State, Why, Zone};
use crate::opening::Opening;

fn weekday(day: jiff::civil::Weekday) -> &'static str {
    use jiff::civil::Weekday::*;
    match day {
        Sunday => "Sun",
        Monday => "Mon",
        Tuesday => "Tue",
        Wednesday => "Wed",
        Thursday => "Thu",
        Friday => "Fri",
        Saturday => "Sat",
    }
}

/// `2026-11-21T08:00:00Z (Sat 00:00 PST)`: RFC 3339 UTC, then the local time
/// in each zone (UTC when none is given), each distinct reading once.
pub(super) fn instant(t: Timestamp, zones: &[&Zone]) -> String {
    let utc = Zone::utc();
    let mut local: Vec<String> = Vec::new();
    for zone in zones
        .iter()
        .copied()
        .chain(zones.is_empty().then_some(&utc))
    {
        let wall = zone.tz.to_datetime(t);
        let info = zone.tz.to_offset_info(t);
        let reading = format!(
            "{} {:02}:{:02} {}",
            weekday(wall.weekday()),
            wall.hour(),
            wall.minute(),
            info.abbreviation()
        );
        if !local.contains(&reading) {
            local.push(reading);
        }
    }
    format!("{t} ({})", local.join(", "))
}

pub(super) fn window(d: SignedDuration) -> String {
    duration::format(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// Why a closed gate is closed at `now`, after "gate 'x' is closed: ".
pub(super) fn why_closed(gate: &Gate<'_>, state: &State<'_>, now: Timestamp) -> String {
    match (&state.why, gate) {
        (Why::Schedule { schedule, fired }, _) => format!(
            "schedule {:?} ({}) closed it at {} for {}",
            schedule.cron_text,
            schedule.zone.name,
            instant(*fired, &[&schedule.zone]),
            window(schedule.window)
        ),
        (Why::Freeze(f), _) if f.reason.is_empty() => {
            format!("frozen from {} until {}", f.start, f.end)
        }
        (Why::Freeze(f), _) => format!(
            "frozen from {} until {} ({})",
            guard_core::rfc3339::format(f.start),
            guard_core::rfc3339::format(f.end),
            guard_core::names::quote(&f.reason)
        ),
        (Why::Request { action, at, until }, _) => format!(
            "{} {} holds until {}",
            action.annotation(),
            guard_core::rfc3339::format(*at),
            guard_core::rfc3339::format(*until)
        ),
        (Why::Default, Gate::Declared(g))
            if g.schedules.iter().any(|s| s.action == Action::Open) =>
        {
            "closed by default, and no open schedule is active".into()
        }
        (Why::Default, Gate::Declared(_)) => "closed by default".into(),
        (Why::Default, Gate::Object(g)) => {
            let at = |t: Timestamp| guard_core::rfc3339::format(t);
            match (g.open_at, g.close_at) {
                (None, _) => "spec.default is closed and no open request is in effect".into(),
                // Ahead of the clock by more than the tolerance: not made yet.
                (Some(open), _) if g.takes_effect(open) > now => format!(
                    "spec.default is closed; the open request of {} is {} ahead of the policy's \
                     clock ({}) and takes effect at {} (clockSkewTolerance {})",
                    at(open),
                    window(open.duration_since(now)),
                    at(now),
                    at(g.takes_effect(open)),
                    window(g.skew)
                ),
                // A later close replaced it; that close's window is over.
                (Some(open), Some(close)) if close >= open => format!(
                    "spec.default is closed; the close request of {} replaced the open request of {}",
                    at(close),
                    at(open)
                ),
                (Some(open), _) => match open.checked_add(g.window) {
                    Ok(until) => format!(
                        "spec.default is closed; the open request of {} expired at {}",
                        at(open),
                        at(until)
                    ),
                    Err(_) => "spec.default is closed and no open request is in effect".into(),
                },
            }
        }
    }
}

/// When the gates open, as a sentence.
pub(super) fn opening(opening: Opening, zones: &[&Zone], several: bool) -> String {
    match (opening, several) {
        (Opening::At(t), false) => format!("It opens next at {}.", instant(t, zones)),
        (Opening::At(t), true) => format!("They are all open next at {}.", instant(t, zones)),
        (Opening::Never, false) => "It does not open on its own.".into(),
        (Opening::Never, true) => "They are not all open again on their own.".into(),
        (Opening::NotBefore(t), false) => format!(
            "It is not open before {} (the search looks no further).",
            instant(t, zones)
        ),
        (Opening::NotBefore(t), true) => format!(
            "They are not all open at once before {} (the search looks no further).",
            instant(t, zones)
        ),
    }
}

/// `--field-manager`: what a command writes must outlast the next apply of
/// a Gate applied from Git, whose cleanup takes over kubectl's own managers.
fn field_manager() -> String {
    format!("--field-manager={}", crate::gating::COMMAND_FIELD_MANAGER)
}

/// The RFC's command to open or close a Gate object now: `key` set to the
/// current time, which the shell writes (`$(date …)` inside double quotes).
pub(super) fn request_now(gate: &ObjectName<'_>, key: &str) -> String {
    gate.kubectl(
        "annotate",
        &[
            &field_manager(),
            "--overwrite",
            &format!("{key}=\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""),
        ],
    )
}

/// The same command with the instant `t` written out, for when the clock
/// `$(date)` would read is the one at fault.
pub(super) fn request_at(gate: &ObjectName<'_>, key: &str, t: Timestamp) -> String {
    gate.kubectl(
        "annotate",
        &[
            &field_manager(),
            "--overwrite",
            &format!("{key}={}", guard_core::rfc3339::format(t)),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::tests::{no_deploy_friday, ts};
    use crate::gate::ObjectGate;

    fn zone(name: &str) -> Zone {
        Zone {
            name: name.into(),
            tz: jiff::tz::TimeZone::get(name).unwrap(),
        }
    }

    #[test]
    fn instants_in_utc_and_local_zones() {
        let t = ts("2026-11-21T08:00:00Z");
        assert_eq!(instant(t, &[]), "2026-11-21T08:00:00Z (Sat 08:00 UTC)");
        let (la, berlin) = (zone("America/Los_Angeles"), zone("Europe/Berlin"));
        assert_eq!(
            instant(t, &[&la, &berlin, &la]),
            "2026-11-21T08:00:00Z (Sat 00:00 PST, Sat 09:00 CET)"
        );
        assert_eq!(
            instant(ts("2026-03-29T01:00:00Z"), &[&berlin]),
            "2026-03-29T01:00:00Z (Sun 03:00 CEST)"
        );
        // A zone without letters in its abbreviation.
        assert_eq!(
            instant(t, &[&zone("America/Sao_Paulo")]),
            "2026-11-21T08:00:00Z (Sat 05:00 -03)"
        );
    }

    #[test]
    fn reasons() {
        let g = no_deploy_friday("America/Los_Angeles");
        let gate = Gate::Declared(&g);
        let s = gate.state_at(ts("2026-11-20T09:00:00Z"));
        assert_eq!(
            why_closed(&gate, &s, ts("2026-11-20T10:00:00Z")),
            "schedule \"0 0 * * FRI\" (America/Los_Angeles) closed it at 2026-11-20T08:00:00Z (Fri 00:00 PST) for 24h0m0s"
        );
        let o = ObjectGate {
            namespace: "flux-system".into(),
            name: "sre-approval".into(),
            default_open: false,
            window: SignedDuration::from_hours(1),
            open_at: Some(ts("2026-11-20T08:00:00Z")),
            close_at: None,
            skew: SignedDuration::ZERO,
        };
        let gate = Gate::Object(o.clone());
        let s = gate.state_at(ts("2026-11-20T10:00:00Z"));
        assert_eq!(
            why_closed(&gate, &s, ts("2026-11-20T10:00:00Z")),
            "spec.default is closed; the open request of 2026-11-20T08:00:00Z expired at 2026-11-20T09:00:00Z"
        );
        // Replaced by a later close whose window is over.
        let replaced = Gate::Object(ObjectGate {
            close_at: Some(ts("2026-11-20T08:10:00Z")),
            window: SignedDuration::from_mins(30),
            ..o.clone()
        });
        let now = ts("2026-11-20T08:50:00Z");
        assert_eq!(
            why_closed(&replaced, &replaced.state_at(now), now),
            "spec.default is closed; the close request of 2026-11-20T08:10:00Z replaced the open request of 2026-11-20T08:00:00Z"
        );
        // Further ahead than the tolerance: not made yet, and said so.
        let ahead = Gate::Object(ObjectGate {
            open_at: Some(ts("2026-11-20T10:20:00Z")),
            skew: SignedDuration::from_mins(5),
            ..o.clone()
        });
        let now = ts("2026-11-20T10:00:00Z");
        assert_eq!(
            why_closed(&ahead, &ahead.state_at(now), now),
            "spec.default is closed; the open request of 2026-11-20T10:20:00Z is 20m0s ahead of the policy's \
             clock (2026-11-20T10:00:00Z) and takes effect at 2026-11-20T10:15:00Z (clockSkewTolerance 5m0s)"
        );
        assert_eq!(
            request_at(&o.object(), crate::gating::OPEN_ANNOTATION, now),
            "kubectl annotate gates.gating.toolkit.fluxcd.io sre-approval -n flux-system \
             --field-manager=flux-gate --overwrite open.gate.fluxcd.io/requestedAt=2026-11-20T10:00:00Z"
        );
        assert_eq!(
            opening(Opening::Never, &[], false),
            "It does not open on its own."
        );
        assert_eq!(
            request_now(&o.object(), crate::gating::OPEN_ANNOTATION),
            "kubectl annotate gates.gating.toolkit.fluxcd.io sre-approval -n flux-system \
             --field-manager=flux-gate --overwrite open.gate.fluxcd.io/requestedAt=\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\""
        );
    }
}

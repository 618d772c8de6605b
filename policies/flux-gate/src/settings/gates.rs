//! The gates the settings declare, compiled: cron expressions, time zones,
//! durations and instants are parsed once per evaluation, before any rule
//! runs (the `validate` payload carries the settings: a cost of every request).

use guard_core::names;
use jiff::SignedDuration;

use crate::cron::Cron;
use crate::gate::{DeclaredGate, Freeze, Schedule, Zone};

use super::limits::{MAX_FREEZES, MAX_SCHEDULES};
use super::{
    name_error, FreezeSettings, GateDefault, GateSettings, Rule, ScheduleSettings, SettingsError,
};

/// The refusal of the entry at `at` by `rule`.
fn broken(at: &str, rule: Rule) -> Box<SettingsError> {
    Box::new(SettingsError::Rule {
        at: at.to_string(),
        rule,
    })
}

const MAX_WINDOW: SignedDuration = SignedDuration::from_hours(8784);

/// Zones read once per settings, however many schedules name them.
#[derive(Default)]
pub(super) struct ZoneCache(Vec<Zone>);

impl ZoneCache {
    fn get(&mut self, name: &str) -> Option<Zone> {
        if let Some(z) = self.0.iter().find(|z| z.name == name) {
            return Some(z.clone());
        }
        let zone = Zone {
            name: name.to_string(),
            tz: crate::zones::get(name)?,
        };
        self.0.push(zone.clone());
        Some(zone)
    }
}

pub(super) fn compile_gate(
    path: &str,
    g: &GateSettings,
    zones: &mut ZoneCache,
) -> Result<DeclaredGate, Box<SettingsError>> {
    if g.name.contains('/') {
        return Err(Box::new(SettingsError::NameWithSlash {
            at: path.to_string(),
            name: g.name.clone(),
        }));
    }
    names::check_dns1123_subdomain(&g.name)
        .map_err(|why| name_error(format!("{path}.name"), &g.name, why))?;
    let default_open = g.default == GateDefault::Opened;
    if g.schedules.len() > MAX_SCHEDULES {
        return Err(broken(path, Rule::Schedules));
    }
    if g.freezes.len() > MAX_FREEZES {
        return Err(broken(path, Rule::Freezes));
    }
    let schedules = g
        .schedules
        .iter()
        .enumerate()
        .map(|(i, s)| compile_schedule(&format!("{path}.schedules[{i}]"), s, zones))
        .collect::<Result<Vec<_>, _>>()?;
    let freezes = g
        .freezes
        .iter()
        .enumerate()
        .map(|(i, f)| compile_freeze(&format!("{path}.freezes[{i}]"), f))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DeclaredGate {
        name: g.name.clone(),
        default_open,
        schedules,
        freezes,
    })
}

fn compile_schedule(
    path: &str,
    s: &ScheduleSettings,
    zones: &mut ZoneCache,
) -> Result<Schedule, Box<SettingsError>> {
    let cron = Cron::parse(&s.cron).map_err(|why| {
        Box::new(SettingsError::Cron {
            at: path.to_string(),
            cron: s.cron.clone(),
            why,
        })
    })?;
    let zone = zones.get(&s.time_zone).ok_or_else(|| {
        Box::new(SettingsError::TimeZone {
            at: path.to_string(),
            zone: s.time_zone.clone(),
        })
    })?;
    let Some(window_setting) = &s.window else {
        return Err(broken(path, Rule::WindowRequired));
    };
    let window = window_setting.signed();
    if !window.is_positive() || window > MAX_WINDOW {
        return Err(Box::new(SettingsError::Window {
            at: path.to_string(),
            window: window_setting.text.clone(),
        }));
    }
    let action = s.action.ok_or_else(|| broken(path, Rule::ActionRequired))?;
    Ok(Schedule::new(
        s.cron.trim().to_string(),
        cron,
        zone,
        window,
        action,
    ))
}

fn compile_freeze(path: &str, f: &FreezeSettings) -> Result<Freeze, Box<SettingsError>> {
    let start = f
        .start
        .as_ref()
        .ok_or_else(|| broken(path, Rule::StartRequired))?;
    let end = f
        .end
        .as_ref()
        .ok_or_else(|| broken(path, Rule::EndRequired))?;
    if end.at <= start.at {
        return Err(Box::new(SettingsError::FreezeOrder {
            at: path.to_string(),
            end: end.text.clone(),
            start: start.text.clone(),
        }));
    }
    Ok(Freeze {
        start: start.at,
        end: end.at,
        reason: f.reason.clone(),
    })
}

#[cfg(test)]
mod tests {
    use crate::test_support::{assert_errors, gate_doc, sched_doc};

    #[test]
    fn every_gate_error_names_the_setting_and_the_accepted_values() {
        #[rustfmt::skip]
        let cases: Vec<(String, &str)> = vec![
            (r#"{"gates":[{"name":""}]}"#.into(), "gates[0].name: \"\" must not be empty"),
            (r#"{"gates":[{"name":"a/b"}]}"#.into(), "gates[0].name: \"a/b\" must not contain '/'"),
            (r#"{"gates":[{"name":"Big"}]}"#.into(), "gates[0].name: \"Big\" must begin and end"),
            (gate_doc(r#""default":"open""#), "gates[0].default: \"open\" is not accepted; use one of: opened, closed"),
            (sched_doc(r#""cron":"0 0 31 2 *""#), "gates[0].schedules[0].cron: \"0 0 31 2 *\" never fires"),
            (sched_doc(r#""cron":"0 0 * * FRY""#), "gates[0].schedules[0].cron: \"0 0 * * FRY\" day of week field"),
            (sched_doc(r#""timeZone":"Europe/Berln""#), "gates[0].schedules[0].timeZone: \"Europe/Berln\" is not a known IANA time zone"),
            (sched_doc(r#""window":"""#), "gates[0].schedules[0].window: required"),
            (sched_doc(r#""window":"1d""#), "gates[0].schedules[0].window: invalid duration \"1d\""),
            (sched_doc(r#""window":"-1h""#), "gates[0].schedules[0].window: \"-1h\" must be more than 0s and at most 8784h"),
            (sched_doc(r#""window":"0s""#), "must be more than 0s"),
            (sched_doc(r#""window":"9000h""#), "at most 8784h"),
            (sched_doc(r#""action":"""#), "gates[0].schedules[0].action: \"\" is not accepted; use one of: open, close"),
            (sched_doc(r#""action":"deny""#), "gates[0].schedules[0].action: \"deny\" is not accepted; use one of: open, close"),
            (sched_doc(r#""windows":"1h""#), "unknown field `windows`"),
            (gate_doc(r#""freezes":[{"start":"2026-12-24","end":"2026-12-27T00:00:00Z"}]"#), "gates[0].freezes[0].start: \"2026-12-24\" is not an RFC 3339 instant"),
            (gate_doc(r#""freezes":[{"start":"2026-12-24T00:00:00Z","end":"2026-12-23T00:00:00Z"}]"#), "gates[0].freezes[0].end: \"2026-12-23T00:00:00Z\" must be after start \"2026-12-24T00:00:00Z\""),
        ];
        assert_errors(cases);
    }
}

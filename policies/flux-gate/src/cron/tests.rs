use super::*;
use crate::robfig_reference;

fn cron(expr: &str) -> Cron {
    Cron::parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}"))
}

fn weekdays(expr: &str) -> u8 {
    cron(expr).weekdays
}

/// robfig's reading, pinned: the bits and the day rule.
#[test]
fn fields_read_as_robfig_reads_them() {
    // A step runs to robfig's maximum of the field: day of week 6.
    assert_eq!(weekdays("0 0 * * 1/2"), 0b010_1010);
    assert_eq!(weekdays("0 0 * * */2"), 0b101_0101);
    assert_eq!(cron("0 0 * * MON/2"), cron("0 0 * * 1,3,5"));
    // A step above 1 clears the star bit: both day fields restricted, so
    // either matches (`0 0 */10 * FRI`: the 1st, 11th, 21st, 31st or a Friday).
    assert!(!cron("0 0 */10 * FRI").days_and);
    assert!(cron("0 0 */1 * FRI").days_and);
    assert!(cron("0 0 *,5 * FRI").days_and);
    assert!(cron("0 0 13 * ?").days_and);
    assert!(!cron("0 0 13 * FRI").days_and);
    // `?` is `*` in any field; robfig reads nothing after `*-`.
    assert_eq!(cron("? ? ? ? ?"), cron("* * * * *"));
    assert_eq!(cron("*-5 0 * * *"), cron("* 0 * * *"));
    // strconv.Atoi: a sign, leading zeros; steps past the field's end.
    assert_eq!(cron("+5 007 * * *"), cron("5 7 * * *"));
    assert_eq!(cron("*/100 0 * * *"), cron("0 0 * * *"));
}

#[test]
fn empty_list_items_are_dropped() {
    assert_eq!(cron("1,,2 0 * * *"), cron("1,2 0 * * *"));
    assert_eq!(cron("5, 0 * * *"), cron("5 0 * * *"));
}

#[test]
fn names_in_any_case() {
    assert_eq!(cron("0 0 1 jan,Jul *"), cron("0 0 1 1,7 *"));
    assert_eq!(cron("0 8 * * mOn-THU"), cron("0 8 * * 1-4"));
}

#[test]
fn refusals_name_the_field_and_the_accepted_values() {
    let cases = [
        ("0 0 * *", "has 4 fields"),
        ("0 0 * * * *", "has 6 fields"),
        ("", "has 0 fields"),
        (
            "60 0 * * *",
            "minute field \"60\": 60 is out of range; use 0-59",
        ),
        ("0 24 * * *", "hour field"),
        (
            "0 0 0 * *",
            "day of month field \"0\": 0 is out of range; use 1-31",
        ),
        ("0 0 * 13 *", "use 1-12 or JAN-DEC"),
        ("0 0 * * FRY", "\"FRY\" is not a value; use 0-7 or SUN-SAT"),
        ("0 0 * * 8", "8 is out of range; use 0-7 or SUN-SAT"),
        ("0 0 * * FRI-MON", "runs backwards"),
        ("*/0 * * * *", "a step must be 1 or more"),
        ("*/x * * * *", "\"x\" is not a value"),
        ("1-2-3 * * * *", "more than one '-'"),
        ("1/2/3 * * * *", "more than one '/'"),
        ("-1 * * * *", "\"\" is not a value"),
        ("5/-1 * * * *", "\"-1\" is negative"),
        ("99999999999999999999 * * * *", "is not a value"),
        ("@reboot", "unknown shorthand"),
    ];
    for (expr, want) in cases {
        let err = Cron::parse(expr).unwrap_err().to_string();
        assert!(err.contains(want), "{expr}: {err}");
        assert!(
            robfig_reference::parse(expr).is_err(),
            "robfig accepts {expr}"
        );
    }
}

// One test per row of the README's dialect table: what flux-gate reads
// beyond robfig, and what it refuses although robfig accepts it. Each also
// asserts robfig's side, through the reference transcription.

/// Extension: day of week 7 is Sunday, where robfig refuses 7.
#[test]
fn extension_day_of_week_7_is_sunday() {
    for (ours, same) in [
        ("0 12 * * 7", "0 12 * * 0"),
        ("0 12 * * 5-7", "0 12 * * 0,5,6"),
        ("0 12 * * 1-7/2", "0 12 * * 1,3,5,0"),
    ] {
        assert_eq!(cron(ours), cron(same), "{ours}");
        assert!(robfig_reference::parse(ours).is_err(), "{ours}");
    }
    // Only written out: `*` and `a/n` end at 6, as in robfig.
    assert_eq!(weekdays("0 0 * * 0/1"), 0x7f);
    assert!(Cron::parse("0 0 * * 7/2").is_err());
}

/// Extension: shorthands in any case and with white space around them,
/// where robfig refuses all but the exact lower-case word.
#[test]
fn extension_shorthands_in_any_case() {
    for (ours, same) in [
        ("@Daily", "@daily"),
        ("@WEEKLY", "@weekly"),
        (" @hourly ", "@hourly"),
        ("@Midnight", "@midnight"),
    ] {
        assert_eq!(cron(ours), cron(same), "{ours}");
        assert!(robfig_reference::parse(ours).is_err(), "{ours}");
        assert!(robfig_reference::parse(same).is_ok(), "{same}");
    }
}

/// Refused: `@every`, which counts from the previous run.
#[test]
fn refused_every() {
    let err = Cron::parse("@every 1h").unwrap_err();
    assert_eq!(err, CronError::Every);
    assert!(err.to_string().contains("previous run"), "{err}");
}

/// Refused: a zone prefix; the zone is `timeZone`.
#[test]
fn refused_zone_prefix() {
    for expr in ["TZ=Europe/Berlin 0 9 * * *", "CRON_TZ=UTC @daily"] {
        let err = Cron::parse(expr).unwrap_err();
        assert_eq!(err, CronError::ZonePrefix, "{expr}");
        assert!(err.to_string().contains("timeZone"), "{err}");
    }
}

/// Refused: an expression that never fires, which robfig accepts and
/// answers with no time at all.
#[test]
fn refused_never_fires() {
    for never in [
        "0 0 31 2 *",
        "0 0 30,31 2 *",
        "0 0 31 4,6,9,11 *",
        ", 0 * * *",
        "0 0 , * *",
    ] {
        assert_eq!(Cron::parse(never), Err(CronError::NeverFires), "{never}");
        assert!(robfig_reference::parse(never).is_ok(), "{never}");
    }
    // Either day field may fire alone when both are restricted.
    assert!(Cron::parse("0 0 31 2 MON").is_ok());
    assert!(Cron::parse("0 0 29 2 *").is_ok());
}

/// Refused: more than 200 characters.
#[test]
fn refused_too_long() {
    let long = format!("{} * * * *", "1,".repeat(100) + "1");
    assert_eq!(Cron::parse(&long), Err(CronError::TooLong));
    assert!(robfig_reference::parse(&long).is_ok());
}

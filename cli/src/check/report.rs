//! A check's findings for people and for CI systems: text lines, GitHub
//! Actions workflow commands, JUnit XML and SARIF 2.1.0.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};

use super::identity::Identity;
use super::{Checked, Finding, Level, Report};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Github,
    Junit,
    Sarif,
}

/// A policy as the report describes it.
#[derive(Debug, Clone)]
pub struct PolicyInfo {
    pub name: String,
    pub description: String,
}

pub fn render(report: &Report, format: Format, warnings_as_errors: bool) -> String {
    match format {
        Format::Text => text(report, warnings_as_errors),
        Format::Github => github(report),
        Format::Junit => junit(report, warnings_as_errors),
        Format::Sarif => sarif(report, warnings_as_errors),
    }
}

/// Every finding, those on unchanged objects too: what is counted.
fn findings(report: &Report) -> impl Iterator<Item = (&Checked, &Finding)> {
    report
        .checked
        .iter()
        .flat_map(|c| c.findings.iter().map(move |f| (c, f)))
}

/// The findings a report repeats: not those on objects the change leaves as
/// they were (the cluster has them already; a run without a base shows them).
fn shown(report: &Report) -> impl Iterator<Item = (&Checked, &Finding)> {
    findings(report).filter(|(c, _)| !c.unchanged)
}

/// An object as reports name it: `Kind namespace/name`, the kind as
/// `Kind.group` (as Kubernetes writes a GroupKind) where the objects read
/// hold that kind name in more than one group.
fn object_name(report: &Report, id: &Identity) -> String {
    let shared = report.kinds.get(&id.kind).is_some_and(|g| g.len() > 1);
    if !shared || id.group.is_empty() {
        return id.to_string();
    }
    let kind = format!("{}.{}", id.kind, id.group);
    match &id.namespace {
        Some(ns) => format!("{kind} {ns}/{}", id.name),
        None => format!("{kind} {}", id.name),
    }
}

/// The one-line summary: how many objects, evaluations and findings of each
/// kind, and how many of them are on objects the change leaves as they were.
pub fn summary(report: &Report) -> String {
    let count = |level: Level| findings(report).filter(|(_, f)| f.level == level).count();
    let not_applied = count(Level::NotApplied);
    let mut line = format!(
        "{} objects, {} evaluations: {} refused, {} failed, {} undecided, {} warnings, {} changed",
        report.objects,
        report.checked.len() - not_applied,
        count(Level::Refusal),
        count(Level::Failure),
        count(Level::Undecided),
        count(Level::Warning),
        count(Level::Mutation),
    );
    // Counted by kind: a Kustomization's build and a ResourceSet's.
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for (c, _) in findings(report).filter(|(_, f)| f.level == Level::NotApplied) {
        *by_kind.entry(c.object.kind.as_str()).or_default() += 1;
    }
    for (kind, n) in by_kind {
        let plural = if n == 1 { "" } else { "s" };
        let _ = write!(line, ", {n} {kind}{plural} not applied (build failed)");
    }
    let unchanged = findings(report).count() - shown(report).count();
    if unchanged > 0 {
        let _ = write!(
            line,
            " ({unchanged} on objects this change leaves as they were, not repeated)"
        );
    }
    line
}

/// Whether the check fails.
pub fn fails(report: &Report, warnings_as_errors: bool) -> bool {
    findings(report).any(|(_, f)| f.level.fails(warnings_as_errors))
}

/// `FILE:LINE (document N): OBJECT: OPERATION LEVEL by POLICY: MESSAGE`, one per finding.
fn text(report: &Report, warnings_as_errors: bool) -> String {
    let mut out = String::new();
    for (c, f) in shown(report) {
        let _ = writeln!(
            out,
            "{}: {}: {} {} by {}: {}",
            c.origin,
            object_name(report, &c.object),
            c.operation.as_str(),
            f.level.name(),
            c.policy,
            f.message
        );
    }
    let _ = writeln!(
        out,
        "{}{}",
        summary(report),
        if fails(report, warnings_as_errors) {
            ""
        } else {
            " (passed)"
        }
    );
    out
}

/// Workflow-command data escaped as `@actions/core` escapes it
/// (actions/toolkit, `packages/core/src/command.ts`, `escapeData`).
fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow-command property (`escapeProperty`).
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The annotations GitHub shows of each level in one step: ten errors and
/// ten warnings (GitHub REST API, checks runs, "GitHub Actions are limited
/// to 10 warning annotations and 10 error annotations per step"); the rest
/// stay in the log only.
const ANNOTATIONS_SHOWN: usize = 10;

fn command(level: Level) -> &'static str {
    match level {
        Level::Refusal | Level::Failure | Level::Undecided | Level::NotApplied => "error",
        Level::Warning => "warning",
        Level::Mutation => "notice",
    }
}

/// GitHub Actions workflow commands (`::error file=…,line=…,title=…::message`).
/// A DELETE points at the file that held the object in the base. Where a
/// level has more annotations than GitHub shows, a notice says so and
/// where the others are.
fn github(report: &Report) -> String {
    let mut out = String::new();
    let mut per_level: BTreeMap<&str, usize> = BTreeMap::new();
    for (c, f) in shown(report) {
        let command = command(f.level);
        *per_level.entry(command).or_default() += 1;
        let title = format!(
            "{} {} {}: {}",
            c.policy,
            f.level.name(),
            c.operation.as_str(),
            object_name(report, &c.object)
        );
        let _ = write!(out, "::{command} ");
        if c.origin.file != "-" {
            let _ = write!(
                out,
                "file={},line={},",
                property(&c.origin.file),
                c.origin.line
            );
        }
        let _ = writeln!(out, "title={}::{}", property(&title), data(&f.message));
    }
    let over: Vec<String> = per_level
        .iter()
        .filter(|(_, n)| **n > ANNOTATIONS_SHOWN)
        .map(|(command, n)| format!("{n} {command}s"))
        .collect();
    if !over.is_empty() {
        let _ = writeln!(
            out,
            "::notice title=reconcile-guard check::{}",
            data(&format!(
                "{}: GitHub shows {ANNOTATIONS_SHOWN} annotations of each level per step; every finding is in this step's log and in the job summary",
                over.join(" and ")
            ))
        );
    }
    out
}

/// The most a step summary may hold (github/docs, `workflow-commands.md`,
/// "Step isolation and limits": 1 MiB per step, else the upload fails),
/// less room for the closing line.
const STEP_SUMMARY_BYTES: usize = 1024 * 1024 - 4096;

/// Markdown for `$GITHUB_STEP_SUMMARY`: the summary line and every finding
/// repeated, so that a reviewer sees all of them where annotations stop.
pub fn step_summary(report: &Report, warnings_as_errors: bool) -> String {
    let mut out = String::from("### reconcile-guard check\n\n");
    let verdict = if fails(report, warnings_as_errors) {
        "failed"
    } else {
        "passed"
    };
    let _ = writeln!(out, "{} ({verdict})\n", markdown(&summary(report)));
    let all: Vec<(&Checked, &Finding)> = shown(report).collect();
    for (i, (c, f)) in all.iter().enumerate() {
        let item = format!(
            "- **{}** {} {} by {} at `{}`: {}\n",
            f.level.name(),
            c.operation.as_str(),
            markdown(&object_name(report, &c.object)),
            markdown(&c.policy),
            c.origin.to_string().replace('`', "'"),
            markdown(&f.message).replace('\n', "<br>"),
        );
        if out.len() + item.len() > STEP_SUMMARY_BYTES {
            let _ = writeln!(
                out,
                "\n{} more findings are in the step's log (a step summary holds 1 MiB).",
                all.len() - i
            );
            break;
        }
        out.push_str(&item);
    }
    out
}

/// Text in Markdown where HTML would be read: `<`, `>` and `&` escaped.
fn markdown(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The report of a run that judged nothing because of `message` (exit 2):
/// in the requested format, so that a CI step reading it shows why.
pub fn error(format: Format, message: &str) -> String {
    match format {
        Format::Text => format!("error: {message}\n"),
        Format::Github => format!(
            "::error title=reconcile-guard check could not run::{}\n",
            data(message)
        ),
        Format::Junit => format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"reconcile-guard check\" tests=\"1\" failures=\"0\" errors=\"1\">\n  <testsuite name=\"check\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n    <testcase classname=\"check\" name=\"read the manifests\">\n      <error message=\"{0}\">{0}</error>\n    </testcase>\n  </testsuite>\n</testsuites>\n",
            xml(message)
        ),
        // A run that could not judge: an invocation that did not succeed,
        // with the reason as its notification (SARIF 2.1.0 `invocation`,
        // `executionSuccessful`, `toolExecutionNotifications`).
        Format::Sarif => sarif_log(
            Vec::new(),
            Vec::new(),
            Some(json!({
                "executionSuccessful": false,
                "toolExecutionNotifications": [{
                    "level": "error",
                    "message": {"text": message},
                }],
            })),
        ),
    }
}

/// XML 1.0 text: markup escaped, characters XML cannot hold replaced.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML as CI systems read it: one test suite per policy, one test case
/// per evaluation, a `failure` per failing finding, warnings and changes in
/// `system-out`.
fn junit(report: &Report, warnings_as_errors: bool) -> String {
    let mut suites: Vec<(&str, Vec<&Checked>)> = Vec::new();
    for policy in &report.policies {
        let name = policy.name.as_str();
        let cases: Vec<&Checked> = report.checked.iter().filter(|c| c.policy == name).collect();
        suites.push((name, cases));
    }
    let failing = |c: &Checked| c.findings.iter().any(|f| f.level.fails(warnings_as_errors));
    let total: usize = suites.iter().map(|(_, c)| c.len()).sum();
    let failures: usize = suites
        .iter()
        .flat_map(|(_, c)| c)
        .filter(|c| failing(c))
        .count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"reconcile-guard check\" tests=\"{total}\" failures=\"{failures}\" errors=\"0\">"
    );
    for (name, cases) in suites {
        let failed = cases.iter().filter(|c| failing(c)).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" errors=\"0\" skipped=\"0\">",
            xml(name),
            cases.len()
        );
        for c in cases {
            let _ = write!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" line=\"{}\"",
                xml(name),
                xml(&format!(
                    "{} {} ({})",
                    c.operation.as_str(),
                    object_name(report, &c.object),
                    c.origin
                )),
                xml(&c.origin.file),
                c.origin.line
            );
            if c.findings.is_empty() {
                out.push_str("/>\n");
                continue;
            }
            out.push_str(">\n");
            let mut other = Vec::new();
            for f in &c.findings {
                if f.level.fails(warnings_as_errors) {
                    let _ = writeln!(
                        out,
                        "      <failure type=\"{}\" message=\"{}\">{}</failure>",
                        f.level.name(),
                        xml(&f.message),
                        xml(&f.message)
                    );
                } else {
                    other.push(format!("{}: {}", f.level.name(), f.message));
                }
            }
            if !other.is_empty() {
                let _ = writeln!(
                    out,
                    "      <system-out>{}</system-out>",
                    xml(&other.join("\n"))
                );
            }
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// SARIF 2.1.0 (OASIS), one rule per policy and one result per finding.
fn sarif(report: &Report, warnings_as_errors: bool) -> String {
    let policies = &report.policies;
    let rules: Vec<Value> = policies
        .iter()
        .map(|p| {
            json!({
                "id": p.name,
                "name": p.name,
                "shortDescription": {"text": p.description},
            })
        })
        .collect();
    let results: Vec<Value> = findings(report)
        .map(|(c, f)| {
            let object = object_name(report, &c.object);
            let level = match f.level {
                Level::Warning if warnings_as_errors => "error",
                Level::Warning => "warning",
                Level::Mutation => "note",
                Level::Refusal | Level::Failure | Level::Undecided | Level::NotApplied => "error",
            };
            let logical = json!([{
                "fullyQualifiedName": object,
                "kind": "object",
            }]);
            // A DELETE's file is the one that held the object in the base.
            let location = if c.origin.file != "-" {
                json!({
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri(&c.origin.file)},
                        "region": {"startLine": c.origin.line},
                    },
                    "logicalLocations": logical,
                })
            } else {
                json!({"logicalLocations": logical})
            };
            let mut result = json!({
                "ruleId": c.policy,
                "ruleIndex": policies.iter().position(|p| p.name == c.policy),
                "level": level,
                "message": {"text": format!("{} {object}: {}", c.operation.as_str(), f.message)},
                "locations": [location],
                "properties": {
                    "finding": f.level.name(),
                    "operation": c.operation.as_str(),
                    "document": c.origin.document,
                },
            });
            if let Some(map) = result.as_object_mut() {
                // An object the change leaves as it was: SARIF's own word
                // for a result the baseline has too (SARIF 2.1.0,
                // `result.baselineState`).
                if c.unchanged {
                    map.insert("baselineState".into(), json!("unchanged"));
                }
                if let Some(rev) = &c.origin.revision {
                    if let Some(p) = map.get_mut("properties").and_then(Value::as_object_mut) {
                        p.insert("revision".into(), json!(rev));
                    }
                }
            }
            result
        })
        .collect();
    sarif_log(rules, results, None)
}

/// A SARIF 2.1.0 log of one run of reconcile-guard.
fn sarif_log(rules: Vec<Value>, results: Vec<Value>, invocation: Option<Value>) -> String {
    let mut run = json!({
        "tool": {"driver": {
            "name": "reconcile-guard",
            "version": env!("CARGO_PKG_VERSION"),
            "informationUri": env!("CARGO_PKG_REPOSITORY"),
            "rules": rules,
        }},
        "results": results,
    });
    if let (Some(invocation), Some(map)) = (invocation, run.as_object_mut()) {
        map.insert("invocations".into(), json!([invocation]));
    }
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    });
    serde_json::to_string_pretty(&log).unwrap_or_default() + "\n"
}

/// A relative path as a URI reference: every byte outside RFC 3986's
/// unreserved set and `/` percent-encoded.
fn uri(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_hold() {
        assert_eq!(
            xml("a<b & \"c\"\u{1}"),
            "a&lt;b &amp; &quot;c&quot;\u{FFFD}"
        );
        assert_eq!(
            uri("clusters/prod app/x.yaml"),
            "clusters/prod%20app/x.yaml"
        );
    }

    /// `count` refusals of Namespaces, `group`'s or the core one's.
    fn refusals(count: usize, group: &str) -> Vec<Checked> {
        (0..count)
            .map(|i| Checked {
                origin: super::super::manifests::Origin {
                    file: "ns.yaml".into(),
                    revision: None,
                    document: i + 1,
                    line: i + 1,
                    item: None,
                },
                object: Identity {
                    group: group.into(),
                    version: "v1".into(),
                    kind: "Namespace".into(),
                    namespace: (!group.is_empty()).then(|| "opal".into()),
                    name: format!("n{i}"),
                },
                operation: guard_core::Operation::Create,
                policy: "p".into(),
                findings: vec![Finding {
                    level: Level::Refusal,
                    message: "no <why>".into(),
                }],
                unchanged: false,
            })
            .collect()
    }

    #[test]
    fn past_ten_annotations_of_a_level_a_notice_says_where_the_rest_are() {
        let mut report = Report {
            checked: refusals(11, ""),
            ..Report::default()
        };
        let out = github(&report);
        assert_eq!(
            out.lines().filter(|l| l.starts_with("::error ")).count(),
            11
        );
        let last = out.lines().last().unwrap_or_default();
        assert!(last.starts_with("::notice title=reconcile-guard check::11 errors: GitHub shows 10 annotations of each level per step"), "{out}");
        report.checked.truncate(10);
        assert!(!github(&report).contains("::notice"));
        let markdown = step_summary(&report, false);
        assert_eq!(
            markdown
                .matches("\n- **refused** CREATE Namespace n")
                .count(),
            10,
            "{markdown}"
        );
        assert!(markdown.contains("no &lt;why&gt;"), "{markdown}");
    }

    #[test]
    fn a_kind_two_groups_share_is_named_with_its_group() {
        let mut report = Report {
            checked: refusals(1, "servicebus.azure.com"),
            ..Report::default()
        };
        report.kinds.insert(
            "Namespace".into(),
            ["servicebus.azure.com".to_string()].into(),
        );
        assert!(text(&report, false).contains("ns.yaml:1 (document 1): Namespace opal/n0: CREATE"));
        report.kinds.insert(
            "Namespace".into(),
            ["".to_string(), "servicebus.azure.com".to_string()].into(),
        );
        assert!(text(&report, false).contains(": Namespace.servicebus.azure.com opal/n0: CREATE"));
        report.checked.extend(refusals(1, ""));
        assert!(text(&report, false).contains(": Namespace n0: CREATE"));
    }
}

//! A check's findings for people and for CI systems: text lines, GitHub
//! Actions workflow commands, JUnit XML and SARIF 2.1.0.

use std::fmt::Write as _;

use serde_json::{json, Value};

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

fn findings(report: &Report) -> impl Iterator<Item = (&Checked, &Finding)> {
    report
        .checked
        .iter()
        .flat_map(|c| c.findings.iter().map(move |f| (c, f)))
}

/// The one-line summary: how many objects, evaluations and findings of each kind.
pub fn summary(report: &Report) -> String {
    let count = |level: Level| findings(report).filter(|(_, f)| f.level == level).count();
    format!(
        "{} objects, {} evaluations: {} refused, {} failed, {} undecided, {} warnings, {} changed",
        report.objects,
        report.checked.len(),
        count(Level::Refusal),
        count(Level::Failure),
        count(Level::Undecided),
        count(Level::Warning),
        count(Level::Mutation),
    )
}

/// Whether the check fails.
pub fn fails(report: &Report, warnings_as_errors: bool) -> bool {
    findings(report).any(|(_, f)| f.level.fails(warnings_as_errors))
}

/// `FILE:LINE (document N): OBJECT: OPERATION LEVEL by POLICY: MESSAGE`, one per finding.
fn text(report: &Report, warnings_as_errors: bool) -> String {
    let mut out = String::new();
    for (c, f) in findings(report) {
        let _ = writeln!(
            out,
            "{}: {}: {} {} by {}: {}",
            c.origin,
            c.object,
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

/// GitHub Actions workflow commands (`::error file=…,line=…,title=…::message`),
/// escaped as `@actions/core` escapes them (actions/toolkit,
/// `packages/core/src/command.ts`, `escapeData`, `escapeProperty`).
fn github(report: &Report) -> String {
    let data = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let property = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
    let mut out = String::new();
    for (c, f) in findings(report) {
        let command = match f.level {
            Level::Refusal | Level::Failure | Level::Undecided => "error",
            Level::Warning => "warning",
            Level::Mutation => "notice",
        };
        let title = format!(
            "{} {} {}: {}",
            c.policy,
            f.level.name(),
            c.operation.as_str(),
            c.object
        );
        let _ = write!(out, "::{command} ");
        if c.origin.revision.is_none() && c.origin.file != "-" {
            let _ = write!(
                out,
                "file={},line={},",
                property(&c.origin.file),
                c.origin.line
            );
        }
        let _ = writeln!(out, "title={}::{}", property(&title), data(&f.message));
    }
    out
}

/// The report of a run that judged nothing because of `message` (exit 2):
/// in the requested format, so that a CI step reading it shows why.
pub fn error(format: Format, message: &str) -> String {
    match format {
        Format::Text => format!("error: {message}\n"),
        Format::Github => {
            let data = message
                .replace('%', "%25")
                .replace('\r', "%0D")
                .replace('\n', "%0A");
            format!("::error title=reconcile-guard check could not run::{data}\n")
        }
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
                    c.object,
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
            let level = match f.level {
                Level::Warning if warnings_as_errors => "error",
                Level::Warning => "warning",
                Level::Mutation => "note",
                Level::Refusal | Level::Failure | Level::Undecided => "error",
            };
            let logical = json!([{
                "fullyQualifiedName": c.object.to_string(),
                "kind": "object",
            }]);
            let location = if c.origin.revision.is_none() && c.origin.file != "-" {
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
            json!({
                "ruleId": c.policy,
                "ruleIndex": policies.iter().position(|p| p.name == c.policy),
                "level": level,
                "message": {"text": format!("{} {}: {}", c.operation.as_str(), c.object, f.message)},
                "locations": [location],
                "properties": {
                    "finding": f.level.name(),
                    "operation": c.operation.as_str(),
                    "document": c.origin.document,
                },
            })
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
}

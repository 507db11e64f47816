//! The JUnit XML report of `harness check` (`--format junit`), for the test views of CI
//! systems: one test suite for the path that VS Code takes, one test case per check of the
//! catalog (its id is the name, so a CI system follows each check from run to run). A case
//! fails on a blocker that is neither expected nor allowed, and on an `--expect-fail` that found
//! nothing; it is skipped when its blockers are allowed; warnings and expected problems pass,
//! with their messages in `system-out`. The report through the bridge of an older server is
//! not in it (it does not decide the exit code; the JSON has it).
use std::fmt::Write as _;

use super::catalog::{self, Check};
use super::render::{status_name, whose};
use super::{Problem, Report, Status};

/// Text for XML content and attributes: the five escapes, and no character that XML 1.0 does
/// not allow (control characters of a server's message become U+FFFD).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

enum Outcome {
    Pass,
    Failure(String, String),
    Skipped(String),
}

fn line(p: &Problem) -> String {
    format!("{}: {}{}", status_name(p.status), whose(p), p.message)
}

fn outcome(report: &Report, check: &Check, problems: &[&Problem]) -> Outcome {
    if report.missing.contains(&check) {
        return Outcome::Failure(
            "expected-failure-absent".into(),
            format!(
                "--expect-fail {}: the server has no problem of this check any more",
                check.id
            ),
        );
    }
    let blocking: Vec<&&Problem> = problems
        .iter()
        .filter(|p| p.status == Status::Blocking)
        .collect();
    if let Some(first) = blocking.first() {
        return Outcome::Failure("blocker".into(), first.message.clone());
    }
    if problems.iter().any(|p| p.status == Status::Allowed) {
        return Outcome::Skipped(format!("--allow {}: its blockers are allowed", check.id));
    }
    Outcome::Pass
}

/// The JUnit XML document.
pub fn render(report: &Report) -> String {
    let all: Vec<&Problem> = report
        .problems
        .iter()
        .chain(report.tools.iter().flat_map(|t| t.problems.iter()))
        .collect();
    let mut cases = String::new();
    let (mut failures, mut skipped) = (0, 0);
    for check in catalog::ALL {
        let mine: Vec<&Problem> = all.iter().copied().filter(|p| p.check == *check).collect();
        let mut inner = Vec::new();
        match outcome(report, check, &mine) {
            Outcome::Pass => {}
            Outcome::Failure(kind, message) => {
                failures += 1;
                let lines: Vec<String> = mine.iter().map(|p| line(p)).collect();
                inner.push(format!(
                    "<failure type=\"{kind}\" message=\"{}\">{}</failure>",
                    escape(&message),
                    escape(&lines.join("\n"))
                ));
            }
            Outcome::Skipped(message) => {
                skipped += 1;
                inner.push(format!("<skipped message=\"{}\"/>", escape(&message)));
            }
        }
        if !mine.is_empty() {
            let lines: Vec<String> = mine.iter().map(|p| line(p)).collect();
            inner.push(format!(
                "<system-out>{}</system-out>",
                escape(&lines.join("\n"))
            ));
        }
        let open = format!(
            "    <testcase classname=\"mcp-bridge-harness.check.{}\" name=\"{}\" time=\"0\"",
            check.client.name(),
            escape(check.id)
        );
        if inner.is_empty() {
            let _ = writeln!(cases, "{open}/>");
        } else {
            let _ = writeln!(cases, "{open}>");
            for part in inner {
                let _ = writeln!(cases, "      {part}");
            }
            let _ = writeln!(cases, "    </testcase>");
        }
    }
    let tests = catalog::ALL.len();
    let time = format!("{:.3}", report.total_ms as f64 / 1000.0);
    let name = escape(&format!("harness check: {}", report.target));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"harness check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time}\">"
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{name}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time}\">"
    );
    let _ = writeln!(out, "    <properties>");
    let mut properties = vec![
        ("target".to_string(), report.target.clone()),
        (
            "path".to_string(),
            super::render::path_name(report.path).to_string(),
        ),
        ("path_reason".to_string(), report.path_reason.clone()),
        ("exit_code".to_string(), report.exit_code().to_string()),
    ];
    // Which client can use the server as it is, and which needs the bridge.
    for v in &report.verdicts {
        properties.push((format!("client.{}", v.client), v.text()));
    }
    for start in &report.starts {
        properties.push((
            format!("copilot.start.{}", start.n),
            super::starts::line(start, &report.runtime),
        ));
    }
    for (k, v) in properties {
        let _ = writeln!(
            out,
            "      <property name=\"{k}\" value=\"{}\"/>",
            escape(&v)
        );
    }
    let _ = writeln!(out, "    </properties>");
    out.push_str(&cases);
    out.push_str("  </testsuite>\n</testsuites>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_control_characters_are_escaped() {
        assert_eq!(
            escape("a<b>&\"'\u{1}\tz"),
            "a&lt;b&gt;&amp;&quot;&apos;\u{FFFD}\tz"
        );
    }
}

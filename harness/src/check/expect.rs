//! `--expect-fail ID`, `--allow ID` and `--expectations FILE`: a server author's known
//! problems. A problem whose check is expected or allowed does not block; an expected check that
//! the server no longer has fails the run (exit 3), so that the expectation goes when the
//! problem is fixed. Ids are those of the catalog (catalog.rs); an unknown id is a usage error,
//! so a typo never hides a problem.
use std::path::Path;

use super::catalog::{self, Check};
use super::{Report, Severity, Status};

/// The checks named on the command line and in the file.
#[derive(Debug, Default)]
pub struct Expectations {
    pub expect_fail: Vec<&'static Check>,
    pub allow: Vec<&'static Check>,
}

fn known(id: &str, whence: &str) -> Result<&'static Check, String> {
    catalog::find(id).ok_or_else(|| {
        format!("{whence}: no check '{id}' (the ids are in docs/harness.md, \"What it reports\")")
    })
}

/// The expectations of `--expect-fail`, `--allow` and the file of `--expectations`: one line
/// each, `expect-fail ID` or `allow ID`; blank lines and lines from `#` on are skipped.
pub fn parse(
    expect_fail: &[String],
    allow: &[String],
    file: Option<&Path>,
) -> Result<Expectations, String> {
    let mut e = Expectations::default();
    for id in expect_fail {
        e.expect_fail.push(known(id, "--expect-fail")?);
    }
    for id in allow {
        e.allow.push(known(id, "--allow")?);
    }
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|err| format!("--expectations {}: {err}", path.display()))?;
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let whence = format!("{}:{}", path.display(), n + 1);
            match line.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["expect-fail", id] => e.expect_fail.push(known(id, &whence)?),
                ["allow", id] => e.allow.push(known(id, &whence)?),
                _ => {
                    return Err(format!(
                        "{whence}: '{line}' is neither 'expect-fail ID' nor 'allow ID'"
                    ));
                }
            }
        }
    }
    if let Some(c) = e.expect_fail.iter().find(|c| e.allow.contains(c)) {
        return Err(format!(
            "'{}' is both expected to fail and allowed: name it once",
            c.id
        ));
    }
    e.expect_fail.dedup();
    e.allow.dedup();
    Ok(e)
}

/// Sets the status of every problem of `report` (and of its report through the bridge) and
/// records the expected checks that it lacks. Through the bridge nothing is missing: only the
/// path that VS Code takes decides the exit code, and the bridge repairs some problems.
pub fn apply(report: &mut Report, e: &Expectations) {
    statuses(report, e);
    if let Some(b) = report.bridged.as_deref_mut() {
        statuses(b, e);
        b.missing.clear();
    }
}

fn statuses(report: &mut Report, e: &Expectations) {
    let problems = report
        .problems
        .iter_mut()
        .chain(report.tools.iter_mut().flat_map(|t| t.problems.iter_mut()));
    let mut seen: Vec<&'static Check> = Vec::new();
    for p in problems {
        seen.push(p.check);
        p.status = if e.expect_fail.contains(&p.check) {
            Status::Expected
        } else if p.severity == Severity::Warning {
            Status::Warning
        } else if e.allow.contains(&p.check) {
            Status::Allowed
        } else {
            Status::Blocking
        };
    }
    report.missing = e
        .expect_fail
        .iter()
        .copied()
        .filter(|c| !seen.contains(c))
        .collect();
    report.expectations = (e.expect_fail.clone(), e.allow.clone());
}

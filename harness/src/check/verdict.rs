//! An author's first question: which of VS Code's clients can use the server as it is, and
//! which need the bridge in front (docs/harness.md, "Which client needs the bridge"). One
//! verdict per client of the check: `works as it is`, `needs the bridge: <why>`, or `does not
//! work: <why>` when the bridge's path blocks too; and what the bridge's path gives.
use serde_json::{Value, json};

use super::{Path, Problem, Report, Severity, Status};

/// What the check knows of the server without the bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direct {
    /// It answered a 2025-11-25 `initialize` itself (`--via auto`).
    Initializes,
    /// It did not (an error, no answer, a closed stdout): VS Code's Local harness cannot start
    /// it without the bridge.
    DoesNotInitialize,
    /// Not probed (`--via bridge`, `--via direct`, a URL).
    Unknown,
}

/// The verdict for one client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub client: &'static str,
    /// `works as it is`, `needs the bridge`, `does not work` or `not checked directly`.
    pub verdict: &'static str,
    pub why: Option<String>,
    /// Through the bridge: `works` or `does not work: <ids>` (None: the bridge was not run).
    pub through_bridge: Option<String>,
}

impl Verdict {
    /// The verdict as one sentence (the table, JUnit).
    pub fn text(&self) -> String {
        let mut out = self.verdict.to_string();
        if let Some(why) = &self.why {
            out.push_str(&format!(": {why}"));
        }
        if let Some(b) = &self.through_bridge {
            out.push_str(&format!("; through the bridge: {b}"));
        }
        out
    }

    pub fn json(&self) -> Value {
        json!({"client": self.client, "verdict": self.verdict, "why": self.why,
            "through_bridge": self.through_bridge, "text": self.text()})
    }
}

fn concerns(p: &Problem, client: &str) -> bool {
    p.severity == Severity::Blocker && matches!(p.client(), c if c == client || c == "both")
}

/// The blocking ids of `client` among `problems` (an expected or allowed blocker counts: the
/// verdict says what the client does, not what the run tolerates).
fn blockers<'a>(problems: impl Iterator<Item = &'a Problem>, client: &str) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for p in problems.filter(|p| concerns(p, client) && p.status != Status::Warning) {
        let id = p.check.id.to_string();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

fn all(report: &Report) -> impl Iterator<Item = &Problem> {
    report
        .problems
        .iter()
        .chain(report.tools.iter().flat_map(|t| t.problems.iter()))
}

/// The first message of the blockers of `client` with `id` among the direct starts.
fn first_message(report: &Report, client: &str, id: &str) -> Option<String> {
    report
        .problems
        .iter()
        .find(|p| p.direct && concerns(p, client) && p.check.id == id)
        .map(|p| p.message.clone())
}

/// One verdict per profile of the report.
pub fn clients(report: &Report, direct: Direct) -> Vec<Verdict> {
    let bridge_report = match report.path {
        Path::Bridge => Some(report),
        Path::Direct => report.bridged.as_deref(),
    };
    report
        .runs
        .iter()
        .map(|r| super::probe::profile_name(r.profile))
        .map(|client| {
            let through = bridge_report.map(|b| {
                let ids = blockers(all(b).filter(|p| !p.direct), client);
                if ids.is_empty() {
                    "works".to_string()
                } else {
                    format!("does not work: {}", ids.join(", "))
                }
            });
            let (verdict, why) = as_it_is(report, direct, client);
            // The bridge does not help a server that blocks on its path too.
            let blocked_there = through.as_deref().is_some_and(|t| t != "works");
            let verdict = if verdict == "needs the bridge" && blocked_there {
                "does not work"
            } else {
                verdict
            };
            Verdict {
                client,
                verdict,
                why,
                through_bridge: through,
            }
        })
        .collect()
}

/// What `client` does with the server without the bridge.
fn as_it_is(report: &Report, direct: Direct, client: &str) -> (&'static str, Option<String>) {
    let started = blockers(report.problems.iter().filter(|p| p.direct), client);
    if let Some(id) = started.first() {
        let why = first_message(report, client, id).unwrap_or_default();
        return ("needs the bridge", Some(format!("{id}: {why}")));
    }
    match (report.path, direct) {
        (Path::Direct, _) => {
            let ids = blockers(all(report).filter(|p| !p.direct), client);
            if ids.is_empty() {
                ("works as it is", None)
            } else {
                ("needs the bridge", Some(ids.join(", ")))
            }
        }
        (Path::Bridge, Direct::DoesNotInitialize) if client == "local" => {
            ("needs the bridge", Some(report.path_reason.clone()))
        }
        (Path::Bridge, Direct::Unknown) => ("not checked directly", None),
        (Path::Bridge, _) if !report.repairs.is_empty() => (
            "needs the bridge",
            Some(format!(
                "schema.items: {} array schemas without items, which the bridge completes",
                report.repairs.len()
            )),
        ),
        // The Copilot runtime's starts (none blocked) took the server as it is; the Local
        // harness's initialize was answered.
        (Path::Bridge, _) if client == "copilot" && report.starts.is_empty() => {
            ("not checked directly", None)
        }
        (Path::Bridge, _) => ("works as it is", None),
    }
}

//! The report of `harness check`: a table for people, one JSON object for programs (README.md,
//! "For MCP server authors", names every member).
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::probe::{Run, profile_name};
use super::{Path, Problem, Report, Severity, Status};

/// `[tool t, profile] ` of a problem, or nothing.
pub fn whose(p: &Problem) -> String {
    let mut whose = Vec::new();
    if let Some(t) = &p.tool {
        whose.push(format!("tool {t}"));
    }
    if let Some(pr) = p.profile {
        whose.push(pr.to_string());
    }
    if whose.is_empty() {
        String::new()
    } else {
        format!("[{}] ", whose.join(", "))
    }
}

/// The name of a status in the reports.
pub fn status_name(s: Status) -> &'static str {
    match s {
        Status::Blocking => "blocking",
        Status::Warning => "warning",
        Status::Expected => "expected",
        Status::Allowed => "allowed",
    }
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Blocker => "blocker",
        Severity::Warning => "warning",
    }
}

pub fn path_name(p: Path) -> &'static str {
    match p {
        Path::Direct => "direct",
        Path::Bridge => "bridge",
    }
}

fn problem_json(p: &Problem) -> Value {
    let mut o = Map::new();
    o.insert("id".into(), json!(p.check.id));
    o.insert("severity".into(), json!(severity(p.severity)));
    o.insert("client".into(), json!(p.client()));
    o.insert("status".into(), json!(status_name(p.status)));
    // The older name of the id.
    o.insert("rule".into(), json!(p.check.id));
    o.insert("message".into(), json!(p.message));
    if let Some(t) = &p.tool {
        o.insert("tool".into(), json!(t));
    }
    if let Some(pr) = p.profile {
        o.insert("profile".into(), json!(pr));
    }
    Value::Object(o)
}

/// The run that gave the server's description: the first that initialized.
fn first(report: &Report) -> Option<&Run> {
    report.runs.iter().find(|r| r.init.is_some())
}

fn server(report: &Report) -> Value {
    let Some(init) = first(report).and_then(|r| r.init.as_ref()) else {
        return json!({"name": null, "version": null, "revision": null});
    };
    let info = init.get("serverInfo").cloned().unwrap_or_default();
    let revision = match report.path {
        Path::Bridge => json!(report.upstream_revision.as_deref().unwrap_or("2026-07-28")),
        Path::Direct => init.get("protocolVersion").cloned().unwrap_or(Value::Null),
    };
    json!({
        "name": info.get("name"),
        "title": info.get("title"),
        "version": info.get("version"),
        "revision": revision,
        "instructions": init.get("instructions"),
        "capabilities": init.get("capabilities"),
    })
}

/// What VS Code does with the capabilities: list changes followed, subscriptions, logging.
fn support(report: &Report) -> Value {
    let caps = first(report)
        .and_then(|r| r.init.as_ref())
        .and_then(|i| i.get("capabilities"))
        .cloned()
        .unwrap_or_default();
    let yes = |p: &str| caps.pointer(p) == Some(&json!(true));
    json!({
        "tools": caps.get("tools").is_some(),
        "prompts": caps.get("prompts").is_some(),
        "resources": caps.get("resources").is_some(),
        "tools_list_changed": yes("/tools/listChanged"),
        "prompts_list_changed": yes("/prompts/listChanged"),
        "resources_list_changed": yes("/resources/listChanged"),
        "resources_subscribe": yes("/resources/subscribe"),
        "logging": caps.get("logging").is_some(),
        "completions": caps.get("completions").is_some(),
    })
}

fn items(report: &Report, label: &str, keys: &[&str]) -> Value {
    let list = first(report).map(|r| r.list(label)).unwrap_or(&[]);
    Value::Array(
        list.iter()
            .map(|i| {
                let mut o = Map::new();
                for k in keys {
                    if let Some(v) = i.get(*k) {
                        o.insert((*k).into(), v.clone());
                    }
                }
                Value::Object(o)
            })
            .collect(),
    )
}

fn all_problems(report: &Report) -> Vec<&Problem> {
    let mut all: Vec<&Problem> = report
        .tools
        .iter()
        .flat_map(|t| t.problems.iter())
        .chain(report.problems.iter())
        .collect();
    all.sort_by_key(|p| p.severity != Severity::Blocker);
    all
}

/// The JSON report.
pub fn json(report: &Report) -> Value {
    let mut timings = Map::new();
    timings.insert("total_ms".into(), json!(report.total_ms as u64));
    for r in &report.runs {
        timings.insert(
            profile_name(r.profile).into(),
            Value::Object(r.timings.clone()),
        );
    }
    let tools: Vec<Value> = report
        .tools
        .iter()
        .map(|t| {
            json!({"name": t.name, "vscode_id": t.vscode_id,
                "problems": t.problems.iter().map(problem_json).collect::<Vec<_>>()})
        })
        .collect();
    let calls: Vec<Value> = report
        .runs
        .iter()
        .filter_map(|r| {
            r.call.as_ref().map(|c| {
                json!({"profile": profile_name(r.profile), "tool": c.tool, "ms": c.ms as u64,
                    "response": c.response, "error": c.error})
            })
        })
        .collect();
    let problems = all_problems(report);
    json!({
        "target": report.target,
        "server": server(report),
        "path": path_name(report.path),
        "path_reason": report.path_reason,
        "profiles": report.runs.iter().map(|r| profile_name(r.profile)).collect::<Vec<_>>(),
        "support": support(report),
        "tools": tools,
        "prompts": items(report, "prompts", &["name", "title"]),
        "resources": items(report, "resources", &["uri", "name", "mimeType"]),
        "templates": items(report, "templates", &["uriTemplate", "name"]),
        "calls": calls,
        "problems": problems.iter().map(|p| problem_json(p)).collect::<Vec<_>>(),
        "blockers": problems.iter().filter(|p| p.severity == Severity::Blocker).count(),
        "warnings": problems.iter().filter(|p| p.severity == Severity::Warning).count(),
        "timings": timings,
        "repairs": report.repairs.iter().map(|(tool, pointer)| json!({"tool": tool, "pointer": pointer})).collect::<Vec<_>>(),
        "through_bridge": report.bridged.as_deref().map(json),
        "discover": report.runs.iter().find_map(|r| r.discover.clone()),
        "expected_failures": report.expectations.0.iter().map(|c| json!({"id": c.id, "present": !report.missing.contains(c)})).collect::<Vec<_>>(),
        "allowed": report.expectations.1.iter().map(|c| c.id).collect::<Vec<_>>(),
        "exit_code": report.exit_code(),
        "copilot_runtime": {
            "version": report.runtime.version.name(),
            "window_ms": report.runtime.window.as_millis() as u64,
            "budget_ms": report.runtime.budget.as_millis() as u64,
        },
        "starts": report.starts.iter().map(|s| super::starts::json(s, &report.runtime)).collect::<Vec<_>>(),
        "clients": report.verdicts.iter().map(super::verdict::Verdict::json).collect::<Vec<_>>(),
    })
}

fn str_of(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// The table for people.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    let s = server(report);
    let _ = writeln!(out, "harness check: {}", report.target);
    let _ = writeln!(
        out,
        "path:       {} ({})",
        path_name(report.path),
        report.path_reason
    );
    if s["name"].is_null() {
        let _ = writeln!(out, "server:     did not start");
    } else {
        let title = s["title"]
            .as_str()
            .map(|t| format!(" \"{t}\""))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "server:     {}{title} {}, revision {}",
            str_of(&s["name"]),
            str_of(&s["version"]),
            str_of(&s["revision"])
        );
        let instructions = match s["instructions"].as_str() {
            Some(i) => format!("{} characters: {:?}", i.chars().count(), clip(i, 60)),
            None => "none".into(),
        };
        let _ = writeln!(out, "instructions: {instructions}");
        let sup = support(report);
        let flags: Vec<&str> = [
            ("tools_list_changed", "tools list changes"),
            ("prompts_list_changed", "prompts list changes"),
            ("resources_list_changed", "resources list changes"),
            ("resources_subscribe", "resource subscriptions"),
            ("logging", "logging"),
            ("completions", "completions"),
        ]
        .iter()
        .filter(|(k, _)| sup[*k] == json!(true))
        .map(|(_, label)| *label)
        .collect();
        let flags = if flags.is_empty() {
            "none".to_string()
        } else {
            flags.join(", ")
        };
        let _ = writeln!(out, "supports:   {flags}");
    }
    for r in &report.runs {
        let t = &r.timings;
        let get = |k: &str| {
            t.get(k)
                .and_then(Value::as_u64)
                .map_or("-".into(), |v| format!("{v} ms"))
        };
        let _ = writeln!(
            out,
            "timings:    {:<8} initialize {}, tools listed {} after the start, stop {}",
            profile_name(r.profile),
            get("initialize_ms"),
            get("ready_ms"),
            get("stop_ms")
        );
    }
    for start in &report.starts {
        let _ = writeln!(
            out,
            "copilot:    {} (runtime {})",
            super::starts::line(start, &report.runtime),
            report.runtime.version.name()
        );
    }
    for v in &report.verdicts {
        let _ = writeln!(out, "client:     {:<8} {}", v.client, v.text());
    }
    let _ = writeln!(out);
    let width = report
        .tools
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(4)
        .clamp(4, 40)
        + 2;
    let id_width = report
        .tools
        .iter()
        .map(|t| t.vscode_id.len())
        .max()
        .unwrap_or(10)
        .clamp(10, 64);
    let _ = writeln!(
        out,
        "{:<w$}{:<id_width$}  problems",
        format!("tools ({})", report.tools.len()),
        "VS Code id",
        w = width + 2
    );
    for t in &report.tools {
        let probs = if t.problems.is_empty() {
            "-".to_string()
        } else {
            t.problems
                .iter()
                .map(|p| format!("{} {}", severity(p.severity), p.check.id))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "  {:<w$}{:<id_width$}  {probs}",
            t.name,
            t.vscode_id,
            w = width
        );
    }
    for (label, key) in [
        ("prompts", "name"),
        ("resources", "uri"),
        ("templates", "uriTemplate"),
    ] {
        let list = first(report).map(|r| r.list(label)).unwrap_or(&[]);
        let names: Vec<String> = list.iter().map(|i| str_of(&i[key])).collect();
        let _ = writeln!(
            out,
            "{label} ({}): {}",
            names.len(),
            clip(&names.join(", "), 200)
        );
    }
    for r in &report.runs {
        if let Some(c) = &r.call {
            let what = match (&c.response, &c.error) {
                (_, Some(e)) => e.clone(),
                (Some(resp), None) => clip(
                    &resp
                        .get("result")
                        .or(resp.get("error"))
                        .map(Value::to_string)
                        .unwrap_or_default(),
                    160,
                ),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "call:       {} {} ({} ms): {what}",
                profile_name(r.profile),
                c.tool,
                c.ms
            );
        }
    }
    let problems = all_problems(report);
    let blockers = problems
        .iter()
        .filter(|p| p.severity == Severity::Blocker)
        .count();
    let _ = writeln!(
        out,
        "\nproblems: {blockers} blocking, {} warnings",
        problems.len() - blockers
    );
    for p in &problems {
        let whose = whose(p);
        let mark = match p.status {
            Status::Expected | Status::Allowed => format!(" ({})", status_name(p.status)),
            Status::Blocking | Status::Warning => String::new(),
        };
        let _ = writeln!(
            out,
            "  {:<8} {:<18} {whose}{}{mark}",
            severity(p.severity),
            p.check.id,
            p.message
        );
    }
    for c in &report.missing {
        let _ = writeln!(
            out,
            "  missing  {:<18} --expect-fail {} found no problem: the server no longer fails it",
            c.id, c.id
        );
    }
    let verdict = match report.exit_code() {
        1 => "something blocks (exit 1)",
        3 => "nothing blocks, but an expected failure is absent (exit 3)",
        _ => "nothing blocks (exit 0)",
    };
    let _ = write!(out, "result:     {verdict}, {} ms", report.total_ms);
    if let Some(bridged) = &report.bridged {
        let _ = writeln!(
            out,
            "\n\nthrough the bridge (mcp-bridge-vscode -- <command>):"
        );
        for (tool, pointer) in &bridged.repairs {
            let _ = writeln!(
                out,
                "  repair   [tool {tool}] added items: {{}} at '{pointer}'"
            );
        }
        let _ = write!(out, "{}", table(bridged));
    }
    out
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() > max {
        format!("{}…", s.chars().take(max).collect::<String>())
    } else {
        s.to_string()
    }
}

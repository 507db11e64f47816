//! The problems that VS Code and the Copilot harness would meet, found in what the check saw:
//! the tool ids (vscode.rs), the input schemas, the capabilities, the icons, the inputs that a
//! harness cannot give, the start-up time, and what the bridge says on stderr.
use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;

use super::probe::{Run, profile_name};
use super::{Path, Problem, Severity, catalog};
use crate::format::Profile;
use crate::vscode;

/// The depth limit of the schema walk (the bridge's own, R6).
const MAX_DEPTH: usize = 64;
/// VS Code's chat gives a model at most this many tools in one request.
const MANY_TOOLS: usize = 128;
/// VS Code logs "Waiting for server to respond to `initialize` request..." every 5 s.
const SLOW_START_MS: u64 = 5000;

/// One tool as VS Code sees it.
#[derive(Debug, Clone)]
pub struct ToolView {
    pub name: String,
    pub vscode_id: String,
    pub problems: Vec<Problem>,
}

/// The tools with their ids and their own problems.
pub fn tools(run: &Run, path: Path, bridge_repairs: &[(String, String)]) -> Vec<ToolView> {
    let info = run
        .init
        .as_ref()
        .and_then(|r| r.get("serverInfo"))
        .cloned()
        .unwrap_or_default();
    let prefix = vscode::prefix(&vscode::preferred_name(&info), 1);
    let listed = run.list("tools");
    let mut views: Vec<ToolView> = listed
        .iter()
        .map(|t| {
            let name = t
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            ToolView {
                vscode_id: vscode::tool_id(&prefix, &name),
                name,
                problems: Vec::new(),
            }
        })
        .collect();
    let mut by_id: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, v) in views.iter().enumerate() {
        by_id.entry(v.vscode_id.clone()).or_default().push(i);
    }
    for (i, tool) in listed.iter().enumerate() {
        let v = &mut views[i];
        let name = v.name.clone();
        let tp = |sev, check, m: String| Problem::new(sev, check, m).tool(&name);
        if name.is_empty() {
            v.problems.push(tp(
                Severity::Blocker,
                &catalog::TOOL_NAME,
                "a tool without a name".into(),
            ));
        }
        if name
            .chars()
            .any(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        {
            v.problems.push(tp(
                Severity::Warning,
                &catalog::TOOL_ID_CHARACTERS,
                format!(
                    "the name has characters outside [A-Za-z0-9_-]: VS Code logs a warning and \
                     shows the tool as {}",
                    v.vscode_id
                ),
            ));
        }
        if prefix.len() + name.len() > 64 {
            v.problems.push(tp(
                Severity::Warning,
                &catalog::TOOL_ID_LENGTH,
                format!("the id is cut to 64 characters: {}", v.vscode_id),
            ));
        }
        let same = &by_id[&v.vscode_id];
        if same.len() > 1 && same[0] != i {
            v.problems.push(tp(
                Severity::Blocker,
                &catalog::TOOL_ID_COLLISION,
                format!(
                    "the id {} is also the id of the tool {:?}: VS Code cannot tell them apart",
                    v.vscode_id, listed[same[0]]["name"]
                ),
            ));
        }
        schema_problems(tool, path, &name, bridge_repairs, &mut v.problems);
    }
    views
}

fn schema_problems(
    tool: &Value,
    path: Path,
    name: &str,
    repairs: &[(String, String)],
    out: &mut Vec<Problem>,
) {
    let tp = |sev, check, m: String| Problem::new(sev, check, m).tool(name);
    let Some(schema) = tool.get("inputSchema") else {
        out.push(tp(
            Severity::Blocker,
            &catalog::SCHEMA_DRAFT_07,
            "no inputSchema: VS Code omits the tool (R6 a)".into(),
        ));
        return;
    };
    if let Err(e) = jsonschema::draft7::meta::validate(schema) {
        out.push(tp(
            Severity::Blocker,
            &catalog::SCHEMA_DRAFT_07,
            format!("the inputSchema is not a valid draft-07 schema, so VS Code omits the tool (R6 a): {e}"),
        ));
    } else if let Err(e) = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(schema)
    {
        out.push(tp(
            Severity::Blocker,
            &catalog::SCHEMA_DRAFT_07,
            format!("the inputSchema does not compile as draft-07, so VS Code omits the tool (R6 a): {e}"),
        ));
    }
    if let Err(e) = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
    {
        out.push(tp(
            Severity::Blocker,
            &catalog::SCHEMA_2020_12,
            format!("the inputSchema does not compile as 2020-12, the dialect of MCP schemas: {e}"),
        ));
    }
    if schema.get("type") != Some(&Value::String("object".into())) {
        out.push(tp(
            Severity::Warning,
            &catalog::SCHEMA_TYPE,
            "the inputSchema's root is not type \"object\"".into(),
        ));
    }
    for pointer in arrays_without_items(schema) {
        out.push(tp(
            Severity::Blocker,
            &catalog::SCHEMA_ITEMS,
            format!(
                "the array schema at '{pointer}' has no items: the Copilot extension stops every \
                 chat request, for all tools of all servers (R6 b)"
            ),
        ));
    }
    if path == Path::Bridge {
        for (_, pointer) in repairs.iter().filter(|(t, _)| t == name) {
            out.push(tp(
                Severity::Warning,
                &catalog::SCHEMA_ITEMS,
                format!(
                    "the array schema at '{pointer}' has no items: the bridge adds items: {{}} \
                     (R6 b); without the bridge the Copilot extension stops every chat request"
                ),
            ));
        }
    }
}

/// The JSON pointers of the array schemas whose `items` is missing or false in JavaScript.
pub fn arrays_without_items(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(schema, String::new(), 0, &mut out);
    out
}

fn falsy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) | Some(Value::Bool(false)) => true,
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    }
}

fn walk(s: &Value, at: String, depth: usize, out: &mut Vec<String>) {
    let Some(obj) = s.as_object() else { return };
    if depth > MAX_DEPTH {
        return;
    }
    let is_array = match obj.get("type") {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
        _ => false,
    };
    if is_array && falsy(obj.get("items")) {
        out.push(if at.is_empty() {
            "/".into()
        } else {
            at.clone()
        });
    }
    let esc = |k: &str| k.replace('~', "~0").replace('/', "~1");
    for (k, v) in obj {
        match k.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                for (name, sub) in v.as_object().into_iter().flatten() {
                    walk(sub, format!("{at}/{k}/{}", esc(name)), depth + 1, out);
                }
            }
            "items" | "prefixItems" | "anyOf" | "oneOf" | "allOf" => match v {
                Value::Array(list) => {
                    for (i, sub) in list.iter().enumerate() {
                        walk(sub, format!("{at}/{k}/{i}"), depth + 1, out);
                    }
                }
                other => walk(other, format!("{at}/{k}"), depth + 1, out),
            },
            "additionalProperties"
            | "additionalItems"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => walk(v, format!("{at}/{k}"), depth + 1, out),
            _ => {}
        }
    }
}

/// The repairs that the bridge logged: (tool, pointer).
pub fn bridge_repairs(stderr: &[String]) -> Vec<(String, String)> {
    let Ok(re) = Regex::new(r"tool '(.*)': added an items schema at '(.*)' of the input schema")
    else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = Vec::new();
    // The bridge repairs (and logs) each list it forwards: one entry per schema.
    for c in stderr.iter().filter_map(|l| re.captures(l)) {
        let entry = (c[1].to_string(), c[2].to_string());
        if !out.contains(&entry) {
            out.push(entry);
        }
    }
    out
}

/// The problems of the server as a whole, seen by one profile.
pub fn server_problems(run: &Run, path: Path) -> Vec<Problem> {
    let p = run.profile;
    let mut out = Vec::new();
    let prob = |sev, check, m: String| Problem::new(sev, check, m).profile(p);
    for line in &run.not_json {
        out.push(prob(
            Severity::Warning,
            &catalog::STDOUT,
            format!("a stdout line that is not a JSON-RPC message (VS Code skips it; R7): {line}"),
        ));
    }
    if let Some(c) = &run.call {
        call_problems(c, p, &mut out);
    }
    let Some(init) = &run.init else {
        return out;
    };
    let caps = init.get("capabilities").cloned().unwrap_or_default();
    if caps.get("tools").is_none() {
        let hidden = run.list("tools").len();
        if hidden > 0 {
            out.push(prob(
                Severity::Blocker,
                &catalog::CAPABILITY_TOOLS,
                format!(
                    "the server has {hidden} tools and does not declare the tools capability: \
                     VS Code never lists them (R1)"
                ),
            ));
        } else {
            out.push(prob(
                Severity::Warning,
                &catalog::CAPABILITY_TOOLS,
                "no tools capability: VS Code lists no tools".into(),
            ));
        }
    }
    let info_ok = init
        .pointer("/serverInfo/name")
        .is_some_and(Value::is_string)
        && init
            .pointer("/serverInfo/version")
            .is_some_and(Value::is_string);
    if !info_ok {
        out.push(prob(
            Severity::Warning,
            &catalog::SERVER_INFO,
            "serverInfo lacks a name or a version: VS Code prefixes the tool ids with the name of \
             the configuration entry until it has one"
                .into(),
        ));
    }
    if let Some(i) = init.get("instructions")
        && !i.is_string()
    {
        out.push(prob(
            Severity::Warning,
            &catalog::INSTRUCTIONS,
            "instructions is not a string: VS Code ignores it".into(),
        ));
    }
    let tools = run.list("tools").len();
    if tools > MANY_TOOLS {
        out.push(prob(
            Severity::Warning,
            &catalog::LIST_SIZE,
            format!(
                "{tools} tools: VS Code's chat gives a model at most {MANY_TOOLS} tools in one \
                 request; the user must pick or VS Code groups them"
            ),
        ));
    }
    let ready = run
        .timings
        .get("initialize_ms")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let budget = run.runtime.budget.as_millis() as u64;
    if p == Profile::Copilot && ready > budget {
        out.push(prob(
            Severity::Blocker,
            &catalog::STARTUP_TIME,
            format!(
                "initialize took {ready} ms: the Copilot runtime gives up after its {budget} ms                  budget"
            ),
        ));
    } else if ready > SLOW_START_MS {
        out.push(prob(
            Severity::Warning,
            &catalog::STARTUP_TIME,
            format!(
                "initialize took {ready} ms: VS Code logs \"Waiting for server to respond\" every 5 s"
            ),
        ));
    }
    if p == Profile::Copilot && run.asked.iter().any(|m| m == "roots/list") {
        out.push(prob(
            Severity::Warning,
            &catalog::INPUT_ROOTS,
            "the server asks for roots, and the Copilot harness has none: it gets an error (C2)"
                .into(),
        ));
    }
    if p == Profile::Local && run.asked.iter().any(|m| m == "roots/list") {
        out.push(prob(
            Severity::Warning,
            &catalog::INPUT_ROOTS,
            "the server asks for roots at start-up: the Copilot harness has none (C2)".into(),
        ));
    }
    if path == Path::Bridge {
        for line in &run.stderr {
            if (line.contains(": warning: ") || line.contains(": error: "))
                && line.starts_with("mcp-bridge-vscode: ")
            {
                out.push(prob(
                    Severity::Warning,
                    &catalog::BRIDGE,
                    format!(
                        "the bridge says: {}",
                        line.trim_start_matches("mcp-bridge-vscode: ")
                    ),
                ));
            }
        }
    }
    out
}

fn call_problems(c: &super::probe::CallOutcome, p: Profile, out: &mut Vec<Problem>) {
    let prob = |sev, m: String| {
        Problem::new(sev, &catalog::CALL, m)
            .profile(p)
            .tool(&c.tool)
    };
    match (&c.response, &c.error) {
        (_, Some(e)) => out.push(prob(
            Severity::Blocker,
            format!("tools/call {}: {e}", c.tool),
        )),
        (Some(r), None) => {
            if let Some(e) = r.get("error") {
                out.push(prob(
                    Severity::Blocker,
                    format!("tools/call {} failed: {e}", c.tool),
                ));
            } else if r.pointer("/result/isError") == Some(&Value::Bool(true)) {
                out.push(prob(
                    Severity::Warning,
                    format!("tools/call {} gave a result with isError: true", c.tool),
                ));
            } else if !r.pointer("/result/content").is_some_and(Value::is_array) {
                out.push(prob(
                    Severity::Blocker,
                    format!(
                        "tools/call {}: the result has no content array (R5)",
                        c.tool
                    ),
                ));
            }
        }
        (None, None) => {}
    }
}

/// Icons that VS Code drops (only PNG, JPEG, GIF and WebP; `data:` and, for a stdio server,
/// `file:`; never `http:` or `https:` for a stdio server; O10).
pub fn icon_problems(run: &Run) -> Vec<Problem> {
    let mut out = Vec::new();
    let Some(init) = &run.init else { return out };
    let mut owners: Vec<(String, &Value)> = vec![("serverInfo".into(), &init["serverInfo"])];
    for (label, _, _, _) in super::probe::LISTS {
        for item in run.list(label) {
            let n = item
                .get("name")
                .or_else(|| item.get("uri"))
                .and_then(Value::as_str)
                .unwrap_or("?");
            owners.push((format!("{label} {n}"), item));
        }
    }
    for (owner, v) in owners {
        let icons = v.get("icons").and_then(Value::as_array);
        for (i, icon) in icons.into_iter().flatten().enumerate() {
            if let Some(why) = icon_dropped(icon) {
                out.push(Problem::new(
                    Severity::Warning,
                    &catalog::ICONS,
                    format!("{owner}: icon {i} is dropped by VS Code: {why} (O10)"),
                ));
            }
        }
    }
    let _ = profile_name;
    out
}

/// Why VS Code drops this icon of a stdio server, or `None` when it shows it.
pub fn icon_dropped(icon: &Value) -> Option<String> {
    let src = icon.get("src").and_then(Value::as_str)?;
    let lower = src.to_ascii_lowercase();
    let scheme = lower.split(':').next().unwrap_or("");
    if !lower.contains(':') || !matches!(scheme, "data" | "file") {
        return Some(format!(
            "the scheme of {} (only data: and file:)",
            clip(src)
        ));
    }
    let mime = match icon.get("mimeType").and_then(Value::as_str) {
        Some(m) => m.to_ascii_lowercase(),
        None if scheme == "data" => lower
            .trim_start_matches("data:")
            .split([';', ','])
            .next()
            .unwrap_or("")
            .to_string(),
        None => match lower.rsplit('.').next().unwrap_or("") {
            "png" => "image/png".into(),
            "jpg" | "jpeg" => "image/jpeg".into(),
            "gif" => "image/gif".into(),
            "webp" => "image/webp".into(),
            other => format!("an unknown type (.{other})"),
        },
    };
    let allowed = [
        "image/webp",
        "image/png",
        "image/jpeg",
        "image/jpg",
        "image/gif",
    ];
    (!allowed.contains(&mime.as_str()))
        .then(|| format!("the type {mime} (only PNG, JPEG, GIF and WebP)"))
}

fn clip(s: &str) -> String {
    if s.len() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arrays_without_items_are_found_with_their_pointer() {
        let s = json!({"type":"object","properties":{
            "a":{"type":"array"},
            "b":{"type":"array","items":{"type":"string"}},
            "c":{"anyOf":[{"type":["array","null"],"items":false}]},
            "d/e":{"type":"array","items":0}}});
        assert_eq!(
            arrays_without_items(&s),
            vec!["/properties/a", "/properties/c/anyOf/0", "/properties/d~1e"]
        );
    }

    #[test]
    fn icons_of_svg_and_http_are_dropped() {
        assert!(icon_dropped(&json!({"src":"data:image/png;base64,AA"})).is_none());
        assert!(icon_dropped(&json!({"src":"data:image/svg+xml;base64,AA"})).is_some());
        assert!(icon_dropped(&json!({"src":"https://x/i.png"})).is_some());
        assert!(icon_dropped(&json!({"src":"file:///i.webp"})).is_none());
        assert!(icon_dropped(&json!({"src":"file:///i","mimeType":"image/gif"})).is_none());
    }

    #[test]
    fn the_bridge_repairs_are_read_from_its_log() {
        let r = bridge_repairs(&[
            "mcp-bridge-vscode: bridge: info: tool 'bare_array': added an items schema at '/properties/xs' of the input schema".into(),
        ]);
        assert_eq!(
            r,
            vec![("bare_array".to_string(), "/properties/xs".to_string())]
        );
    }
}

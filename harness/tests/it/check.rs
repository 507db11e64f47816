//! `harness check` with real processes: the fixture (through the bridge, clean), the fixture
//! with 120 more tools (paging), scripted servers with each problem (`harness scripted-server`),
//! the TypeScript SDK v2 server, a command that does not exist, the HTTPS fixture by URL, and
//! the usage errors.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::bins::{fixture, harness};

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", self.stdout, self.stderr))
    }
}

pub fn check(args: &[&str]) -> Out {
    fixture();
    let out = Command::new(harness())
        .arg("check")
        .args(args)
        .output()
        .expect("harness check runs");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The problems of a rule (from the top-level list).
fn with_rule<'a>(report: &'a Value, rule: &str) -> Vec<&'a Value> {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["rule"] == rule)
        .collect()
}

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {report:#}"))
}

/// A scripted server: `harness scripted-server <table>` with the table in a temporary file.
pub fn scripted(table: &Value) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("table.json");
    std::fs::write(&path, table.to_string()).unwrap();
    let cmd = vec![
        harness().to_string_lossy().into_owned(),
        "scripted-server".into(),
        path.to_string_lossy().into_owned(),
    ];
    (dir, cmd)
}

pub fn check_cmd(opts: &[&str], cmd: &[String]) -> Out {
    let mut args: Vec<&str> = opts.to_vec();
    args.push("--");
    args.extend(cmd.iter().map(String::as_str));
    check(&args)
}

#[test]
fn the_fixture_is_clean_through_the_bridge_and_every_tool_has_its_vscode_id() {
    let f = fixture();
    let out = check(&["--json", "--", f.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let r = out.json();
    assert_eq!(
        r["path"], "bridge",
        "a dual-era server is a 2026-07-28 server"
    );
    assert_eq!(r["server"]["name"], "bridge-fixture-server");
    assert_eq!(r["server"]["revision"], "2026-07-28");
    assert_eq!(r["profiles"], json!(["local", "copilot"]));
    for name in harness::fixture::tool_names() {
        assert_eq!(
            tool(&r, name)["vscode_id"],
            format!("mcp_bridge-fixtur_{name}")
        );
    }
    assert_eq!(r["blockers"], 0);
    // The bridge repairs bare_array: a warning with the pointer of each schema.
    let items = &tool(&r, "bare_array")["problems"];
    assert!(
        items
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["rule"] == "schema.items"
                && p["severity"] == "warning"
                && p["message"]
                    .as_str()
                    .unwrap()
                    .contains("'/properties/values'")),
        "{items:#}"
    );
    assert_eq!(r["prompts"].as_array().unwrap().len(), 3);
    assert!(r["timings"]["local"]["initialize_ms"].is_u64());
    assert!(r["timings"]["copilot"]["ready_ms"].is_u64());
    // The table for people says the same.
    let table = check(&["--profile", "local", "--", f.to_str().unwrap()]);
    assert_eq!(table.code, 0);
    assert!(
        table.stdout.contains("mcp_bridge-fixtur_echo"),
        "{}",
        table.stdout
    );
    assert!(
        table.stdout.contains("nothing blocks (exit 0)"),
        "{}",
        table.stdout
    );
}

#[test]
fn the_fixture_directly_has_blockers_that_the_bridge_repairs() {
    let f = fixture();
    let out = check(&[
        "--json",
        "--via",
        "direct",
        "--profile",
        "local",
        "--",
        f.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let r = out.json();
    assert_eq!(r["path"], "direct");
    assert_eq!(r["server"]["revision"], "2025-11-25");
    let items = with_rule(&r, "schema.items");
    assert!(
        items
            .iter()
            .all(|p| p["severity"] == "blocker" && p["tool"] == "bare_array")
    );
    assert!(!items.is_empty());
}

#[test]
fn the_fixture_with_120_more_tools_pages_and_lists_them_all() {
    let f = fixture();
    let out = check(&["--json", "--", f.to_str().unwrap(), "--many-tools", "120"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let r = out.json();
    let tools = r["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 22 + 120);
    for i in [0, 49, 50, 119] {
        assert_eq!(
            tool(&r, &format!("tool_{i}"))["vscode_id"],
            format!("mcp_bridge-fixtur_tool_{i}")
        );
    }
    assert_eq!(
        with_rule(&r, "list.size").len(),
        1,
        "more than 128 tools: a warning"
    );
}

#[test]
fn a_call_is_made_only_when_asked_and_its_result_is_reported() {
    let f = fixture();
    let out = check(&[
        "--json",
        "--profile",
        "copilot",
        "--call",
        "add",
        r#"{"a":2,"b":3}"#,
        "--",
        f.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let r = out.json();
    assert_eq!(r["calls"][0]["tool"], "add");
    assert_eq!(
        r["calls"][0]["response"]["result"]["content"][0]["text"],
        "5"
    );
    let form = check(&[
        "--json",
        "--profile",
        "local",
        "--call",
        "ask_form",
        "{}",
        "--",
        f.to_str().unwrap(),
    ]);
    let r = form.json();
    assert!(r["calls"][0]["response"]["result"].is_object(), "{r:#}");
}

/// The fixture of revision 2025-11-25 (`--revision 2025-11-25`): an older server.
fn older_fixture() -> Vec<String> {
    let f = fixture().to_string_lossy().into_owned();
    vec![f, "--revision".into(), "2025-11-25".into()]
}

#[test]
fn an_older_server_is_checked_directly_and_also_through_the_bridge() {
    let out = check_cmd(&["--json", "--profile", "local"], &older_fixture());
    let r = out.json();
    assert_eq!(r["path"], "direct", "{}", out.stdout);
    assert_eq!(r["server"]["revision"], "2025-11-25");
    // The exit code is the direct path's: the arrays without items block VS Code there.
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(with_rule(&r, "schema.items").len(), 3);
    let bridged = &r["through_bridge"];
    assert_eq!(bridged["path"], "bridge", "{bridged:#}");
    assert!(
        bridged["path_reason"]
            .as_str()
            .is_some_and(|why| why.contains("through the bridge")),
        "{bridged:#}"
    );
    assert!(bridged["repairs"].is_array() && bridged["through_bridge"].is_null());
    // --via direct checks one path only.
    let only = check_cmd(
        &["--json", "--via", "direct", "--profile", "local"],
        &older_fixture(),
    );
    assert!(only.json()["through_bridge"].is_null());
    // --via bridge names the revision that the bridge relays, read from its line.
    let bridged = check_cmd(
        &["--json", "--via", "bridge", "--profile", "local"],
        &older_fixture(),
    );
    assert_eq!(bridged.json()["server"]["revision"], "2025-11-25");
}

/// A 2025-11-25 server with a problem of each kind, spoken to directly.
fn problem_server() -> Value {
    let long = "x".repeat(60);
    json!({
        "replies": {
            "initialize": {"result": {"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": true}, "prompts": {}},
                "serverInfo": {"name": "Problem Server!", "version": "1.0.0",
                    "icons": [{"src": "data:image/svg+xml;base64,PHN2Zz4=", "mimeType": "image/svg+xml"}]},
                "instructions": "Use it with care."}},
            "tools/list": [
                {"result": {"tools": [
                    {"name": "ok", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
                    {"name": "bad_schema", "inputSchema": {"type": "object", "properties": {"a": {"type": "strin"}}}},
                    {"name": "bare", "inputSchema": {"type": "object", "properties": {"xs": {"type": "array"}}}}
                ], "nextCursor": "p2"}},
                {"result": {"tools": [
                    {"name": "a.b", "inputSchema": {"type": "object"}},
                    {"name": "a_b", "inputSchema": {"type": "object"}},
                    {"name": long, "inputSchema": {"type": "object"},
                        "icons": [{"src": "https://example.com/i.png"}]}
                ]}}
            ],
            "prompts/list": {"result": {"prompts": [{"name": "p"}], "nextCursor": null}}
        },
        "after_initialized": [{"jsonrpc": "2.0", "id": "s-1", "method": "roots/list"}],
        "noise": ["starting up..."]
    })
}

#[test]
fn a_server_with_each_problem_gets_each_blocker_and_warning() {
    let (_dir, cmd) = scripted(&problem_server());
    let out = check_cmd(&["--json"], &cmd);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let r = out.json();
    assert_eq!(r["path"], "direct", "{}", r["path_reason"]);
    assert_eq!(r["server"]["revision"], "2025-11-25");
    // The prefix from the server name: lower case, one _ for each run of other characters, cut
    // to 13 characters.
    assert_eq!(tool(&r, "ok")["vscode_id"], "mcp_problem_serve_ok");
    assert_eq!(tool(&r, "ok")["problems"], json!([]));
    let rules = |name: &str| -> Vec<(String, String)> {
        tool(&r, name)["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["severity"].as_str().unwrap().to_string(),
                    p["rule"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let has = |name: &str, sev: &str, rule: &str| {
        assert!(
            rules(name).contains(&(sev.to_string(), rule.to_string())),
            "{name}: {sev} {rule} in {:?}",
            rules(name)
        );
    };
    has("bad_schema", "blocker", "schema.draft-07");
    has("bare", "blocker", "schema.items");
    assert!(
        with_rule(&r, "schema.items")[0]["message"]
            .as_str()
            .unwrap()
            .contains("'/properties/xs'")
    );
    has("a.b", "warning", "tool-id.characters");
    has("a_b", "blocker", "tool-id.collision");
    let long = "x".repeat(60);
    has(&long, "warning", "tool-id.length");
    assert_eq!(tool(&r, &long)["vscode_id"].as_str().unwrap().len(), 64);
    // Paging went on to the second page; the null cursor of prompts/list is a blocker (R4).
    assert_eq!(r["tools"].as_array().unwrap().len(), 6);
    assert_eq!(with_rule(&r, "cursor")[0]["severity"], "blocker");
    // Roots: the Copilot harness has none.
    let roots = with_rule(&r, "input.roots");
    assert!(roots.iter().any(|p| p["profile"] == "copilot"), "{roots:?}");
    // Icons VS Code drops: the SVG of the server, the https icon of a stdio server.
    assert_eq!(with_rule(&r, "icons").len(), 2, "{:#}", r["problems"]);
    assert!(
        !with_rule(&r, "stdout").is_empty(),
        "the noise line on stdout"
    );
    assert_eq!(r["server"]["instructions"], "Use it with care.");
    assert_eq!(r["support"]["tools_list_changed"], true);
}

#[test]
fn hidden_tools_without_the_tools_capability_block() {
    let (_dir, cmd) = scripted(&json!({"replies": {
        "initialize": {"result": {"protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "nocap", "version": "1"}}},
        "tools/list": {"result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}}
    }}));
    let out = check_cmd(&["--json", "--profile", "local"], &cmd);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let caps = with_rule(&out.json(), "capability.tools")
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(caps[0]["severity"], "blocker", "{caps:?}");
}

#[test]
fn a_2026_07_28_server_is_checked_through_the_bridge_which_repairs_its_arrays() {
    let (_dir, cmd) = scripted(&json!({"replies": {
        "initialize": {"error": {"code": -32601, "message": "Method not found"}},
        "server/discover": {"result": {"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "2.0.0"}}}},
        "tools/list": {"result": {"resultType": "complete", "tools": [
            {"name": "bare", "inputSchema": {"type": "object", "properties": {"xs": {"type": "array"}}}}]}}
    }}));
    let out = check_cmd(&["--json"], &cmd);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let r = out.json();
    assert_eq!(r["path"], "bridge");
    assert!(
        r["path_reason"].as_str().unwrap().contains("-32601"),
        "{}",
        r["path_reason"]
    );
    assert_eq!(r["server"]["name"], "modern");
    assert_eq!(tool(&r, "bare")["vscode_id"], "mcp_modern_bare");
    let p = &tool(&r, "bare")["problems"][0];
    assert_eq!(p["severity"], "warning");
    assert!(
        p["message"].as_str().unwrap().contains("'/properties/xs'"),
        "{p}"
    );
}

#[test]
fn a_command_that_does_not_exist_is_a_blocker_with_its_cause() {
    let out = check(&["--json", "--", "/nonexistent/server"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let r = out.json();
    let b = &r["problems"][0];
    assert_eq!(b["severity"], "blocker");
    assert!(
        b["message"].as_str().unwrap().contains("No such file"),
        "{b}"
    );
    let table = check(&["--", "/nonexistent/server"]);
    assert_eq!(table.code, 1);
    assert!(table.stdout.contains("blocker"), "{}", table.stdout);
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(check(&[]).code, 2);
    assert_eq!(check(&["--profile", "nope", "--", "x"]).code, 2);
    assert_eq!(check(&["--call", "add", "{not json", "--", "x"]).code, 2);
    assert_eq!(check(&["not-a-url"]).code, 2);
    assert_eq!(check(&["--ca-file", "x", "--", "x"]).code, 2);
}

#[test]
fn the_https_fixture_by_url_with_its_ca() {
    let f = fixture();
    let https = harness::https::HttpsFixture::start(&f, &[]).expect("the HTTPS fixture");
    let ca = harness::https::certs_dir().join("ca.crt");
    let out = check(&["--json", "--ca-file", ca.to_str().unwrap(), &https.url]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let r = out.json();
    assert_eq!(r["path"], "bridge");
    assert_eq!(tool(&r, "add")["vscode_id"], "mcp_bridge-fixtur_add");
    // Without the CA the bridge cannot reach it: a blocker.
    let untrusted = check(&[
        "--json",
        "--profile",
        "local",
        "--timeout",
        "20",
        &https.url,
    ]);
    assert_eq!(untrusted.code, 1, "{}", untrusted.stdout);
}

#[test]
fn the_typescript_sdk_v2_server_over_stdio() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bridge/tests/interop");
    if !dir
        .join("node_modules/@modelcontextprotocol/server")
        .is_dir()
    {
        harness::skip::skip(
            "harness check: @modelcontextprotocol/server is not installed (run ci/install-peers.sh)",
        );
        return;
    }
    let script = dir.join("ts-v2-server.mjs");
    let cmd = vec!["node".to_string(), script.to_string_lossy().into_owned()];
    let out = check_cmd(&["--json"], &cmd);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let r = out.json();
    assert_eq!(r["path"], "bridge", "{}", r["path_reason"]);
    assert_eq!(r["server"]["name"], "ts-v2-server");
    assert_eq!(tool(&r, "weather")["vscode_id"], "mcp_ts-v2-server_weather");
}

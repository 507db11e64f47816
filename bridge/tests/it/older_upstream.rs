//! L1–L3 (docs/older-servers.md) on the real binary in front of a real older server that we
//! did not write: a FastMCP server of the Python SDK 1.30 (revision 2025-11-25,
//! tests/older/python_server.py) over stdio, in a venv that ci/install-peers.sh makes at
//! `target/py-peers`. The SDK answers `server/discover` with -32602 (after its validation
//! errors on stderr); the bridge then sends VS Code's `initialize` upstream and relays.
//!
//! The same list, call, form and list change against the TypeScript SDK v1 (McpServer over
//! stdio, tests/interop/ts-v1-server.mjs), pinned in tests/interop/package-lock.json.
//!
//! Without the venv (or node_modules) a test says that it skipped, except in CI (`CI=true`), where a missing
//! peer is a failure.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::{Bridge, call, request};

/// The Python of the venv, or `None` (skipped) when it is not installed.
fn python() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/py-peers");
    let python = if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    };
    if python.is_file() {
        return Some(python);
    }
    harness::skip::skip(
        "bridge older_upstream: the Python SDK 1.30 is not installed at target/py-peers (run ci/install-peers.sh)",
    );
    None
}

fn server_script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/older/python_server.py")
        .to_string_lossy()
        .into_owned()
}

/// The bridge in front of the Python server, initialized, after `notifications/initialized`.
fn started(options: &[&str]) -> Option<Bridge> {
    let python = python()?.to_string_lossy().into_owned();
    Some(started_with(
        options,
        &[&python, &server_script()],
        "py-older",
    ))
}

/// The bridge with `options` in front of the server `command`, whose name is `name`.
fn started_with(options: &[&str], command: &[&str], name: &str) -> Bridge {
    let mut args: Vec<&str> = options.to_vec();
    args.push("--");
    args.extend(command);
    let mut b = Bridge::start(&args);
    let result = b.initialize();
    assert_eq!(result["serverInfo"]["name"], name, "{result}");
    assert_eq!(result["protocolVersion"], "2025-11-25");
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    b
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// The next frame, which must be a request of the bridge to VS Code with a `b-` id.
fn bridge_request(b: &mut Bridge, method: &str) -> Value {
    let frame = b.next_frame(support::EXCHANGE);
    assert_eq!(frame["method"], method, "{frame}");
    assert!(
        frame["id"].as_str().is_some_and(|id| id.starts_with("b-")),
        "the bridge's own string id: {frame}"
    );
    frame
}

/// Calls `tool`, which asks VS Code with `method`; VS Code answers `result`. The request of
/// the bridge and the call's response.
fn ask_and_answer(
    b: &mut Bridge,
    id: u64,
    tool: &str,
    method: &str,
    result: Value,
) -> (Value, Value) {
    b.send(&call(id, tool, json!({})));
    let ask = bridge_request(b, method);
    b.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": result}));
    (ask, b.response(id))
}

/// Q6: the server's tool `toggle` adds the tool `extra`; its list change comes before the
/// call's result, and the next list has `extra`.
fn toggle_then_list(b: &mut Bridge) {
    b.send(&call(4, "toggle", json!({})));
    let (result, notes) = b.response_with_notifications(&json!(4));
    assert_eq!(text(&result), "toggled", "{result}");
    assert_eq!(
        notes,
        [json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})]
    );
    let list = b.exchange(&request(5, "tools/list", json!({})));
    assert!(list.to_string().contains("\"extra\""), "{list}");
}

#[test]
fn l1_l2_the_python_sdk_server_lists_calls_and_gets_a_list_change_through_the_bridge() {
    let Some(mut b) = started(&[]) else { return };
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: info: the upstream server speaks revision 2025-11-25: the bridge relays it"
    });
    let list = b.exchange(&request(2, "tools/list", json!({})));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        names.contains(&"add") && !names.contains(&"extra"),
        "{list}"
    );
    let sum = b.exchange(&call(3, "add", json!({"a": 2, "b": 3})));
    assert_eq!(text(&sum), "5", "{sum}");
    // Q6: the list change that the server writes before its result comes before it.
    toggle_then_list(&mut b);
    b.close_and_expect_exit_0();
}

#[test]
fn l3_o1_a_form_of_the_python_server_reaches_vscode_and_its_answer_goes_back() {
    let Some(mut b) = started(&[]) else { return };
    let accepted = json!({"action": "accept", "content": {"name": "Ada"}});
    let (ask, response) = ask_and_answer(&mut b, 2, "ask_name", "elicitation/create", accepted);
    assert_eq!(ask["params"]["message"], "Your name?");
    assert_eq!(
        ask["params"]["requestedSchema"]["required"],
        json!(["name"])
    );
    assert_eq!(text(&response), "hello Ada");
    // O1: content that is not valid against the schema never reaches the server: it gets
    // the bridge's error instead, and its tool fails.
    let invalid = json!({"action": "accept", "content": {"name": 7}});
    let (_, failed) = ask_and_answer(&mut b, 3, "ask_name", "elicitation/create", invalid);
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    assert!(
        text(&failed).ends_with(
            "The client sent an answer that is not valid for the input request of the upstream server."
        ),
        "the server got the bridge's error: {failed}"
    );
    b.close_and_expect_exit_0();
}

#[test]
fn l2_o4_c3_progress_of_the_python_server_reaches_vscode_with_its_own_token() {
    let Some(mut b) = started(&[]) else { return };
    for (id, token) in [(2, json!(0)), (3, json!("c0ffee"))] {
        let mut frame = call(id, "slow", json!({}));
        frame["params"]["_meta"] = json!({"progressToken": token});
        b.send(&frame);
        let (result, notes) = b.response_with_notifications(&json!(id));
        assert_eq!(text(&result), "done");
        assert_eq!(notes.len(), 2, "{notes:?}");
        for note in &notes {
            assert_eq!(note["method"], "notifications/progress");
            assert_eq!(note["params"]["progressToken"], token, "{note}");
        }
    }
    b.close_and_expect_exit_0();
}

#[test]
fn l3_o3_o2_roots_keep_only_file_uris_and_sampling_goes_to_vscode() {
    let Some(mut b) = started(&[]) else { return };
    let roots = json!({"roots": [{"uri": "file:///work/a", "name": "a"},
        {"uri": "vscode-vfs://github/x", "name": "x"}]});
    let (_, listed) = ask_and_answer(&mut b, 2, "roots", "roots/list", roots);
    assert_eq!(text(&listed), "file:///work/a");
    let sampled = json!({"role": "assistant", "content": {"type": "text", "text": "hello"},
        "model": "m"});
    let (_, response) = ask_and_answer(&mut b, 3, "sample", "sampling/createMessage", sampled);
    assert_eq!(text(&response), "sampled: hello");
    b.close_and_expect_exit_0();
}

#[test]
fn l1_a_forced_older_revision_sends_no_discover_and_a_forced_new_one_keeps_the_discover_error() {
    let Some(mut b) = started(&["--upstream-revision", "2025-11-25"]) else {
        return;
    };
    let sum = b.exchange(&call(2, "add", json!({"a": 1, "b": 1})));
    assert_eq!(text(&sum), "2");
    b.close_and_expect_exit_0();
    assert!(
        !b.stderr().contains("server/discover"),
        "no discover went upstream:\n{}",
        b.stderr()
    );

    let Some(python) = python() else { return };
    let python = python.to_string_lossy().into_owned();
    let script = server_script();
    let mut b = Bridge::start(&["--upstream-revision", "2026-07-28", "--", &python, &script]);
    let r = b.exchange(&support::vscode_initialize(1));
    assert_eq!(r["error"]["data"]["cause"], "discover_failed", "{r}");
    assert_eq!(r["error"]["code"], -32602, "{r}");
    b.close_and_expect_exit_0();
}

#[test]
fn l2_a_cancellation_of_vscode_reaches_the_python_server_and_its_crash_ends_the_bridge_with_1() {
    let Some(mut b) = started(&[]) else { return };
    let mut wait = call(2, "wait", json!({}));
    wait["params"]["_meta"] = json!({"progressToken": "w"});
    b.send(&wait);
    // The first progress says that the tool runs upstream.
    let progress = b.next_frame(support::EXCHANGE);
    assert_eq!(progress["params"]["progressToken"], "w", "{progress}");
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":2,"reason":"chat stopped"}}));
    b.expect_text("py-older: wait cancelled");
    // No response to the cancelled call: the next message is the answer of the next call.
    b.send(&call(3, "add", json!({"a": 1, "b": 2})));
    let next = b.next_message(support::EXCHANGE);
    assert_eq!(next["id"], 3, "{next}");
    assert_eq!(text(&next), "3");
    let crashed = b.exchange(&call(4, "crash", json!({})));
    assert_eq!(
        crashed["error"]["data"]["cause"], "upstream_exited",
        "{crashed}"
    );
    let status = b.wait_exit(std::time::Instant::now(), support::EXIT_BOUND);
    assert_eq!(status.code(), Some(1), "stderr:\n{}", b.stderr());
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: error: the upstream server exited with code 3"
    });
}

#[test]
fn l1_l2_l3_the_typescript_sdk_v1_server_lists_calls_asks_a_form_and_changes_its_list() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop");
    if !dir.join("node_modules/@modelcontextprotocol/sdk").is_dir() {
        harness::skip::skip(
            "bridge older_upstream: @modelcontextprotocol/sdk is not installed (run ci/install-peers.sh)",
        );
        return;
    }
    let script = dir.join("ts-v1-server.mjs").to_string_lossy().into_owned();
    let mut b = started_with(&[], &["node", &script], "ts-v1-older");
    let sum = b.exchange(&call(2, "add", json!({"a": 2, "b": 3})));
    assert_eq!(text(&sum), "5", "{sum}");
    let accepted = json!({"action": "accept", "content": {"name": "Ada"}});
    let (ask, response) = ask_and_answer(&mut b, 3, "ask_name", "elicitation/create", accepted);
    assert_eq!(ask["params"]["message"], "Your name?");
    assert_eq!(text(&response), "hello Ada");
    toggle_then_list(&mut b);
    b.close_and_expect_exit_0();
}

//! The start of the stdio form on the real binaries: VS Code's `initialize` (R1, R2), the
//! states before it and `server/discover` (C1–C4), a failed or slow discover, an upstream that
//! does not start, the quirks of a scripted upstream. Each test that starts the bridge also
//! proves that no process of its tree is left (see support::Bridge).

use crate::stdio_form::{fixture, start, text_of};
use crate::support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::{Bridge, call, copilot_initialize, request, vscode_initialize, vscode_version};

#[test]
fn r1_vscode_initialize_gives_a_2025_result_with_the_fixture_server_info_and_tools() {
    let mut b = start(&[]);
    let r = b.initialize();
    assert_eq!(r["protocolVersion"], "2025-11-25");
    assert_eq!(r["serverInfo"]["name"], "bridge-fixture-server");
    assert!(r["capabilities"]["tools"].is_object());
    assert!(r["capabilities"].get("tasks").is_none());
    for gone in [
        "resultType",
        "ttlMs",
        "cacheScope",
        "supportedVersions",
        "_meta",
    ] {
        assert!(r.get(gone).is_none(), "{gone}");
    }
    assert!(r["instructions"].is_string(), "O10: instructions kept");
    let from = format!(
        "mcp-bridge-vscode: bridge: info: initialize from Visual Studio Code {}",
        vscode_version()
    );
    b.expect_line(|l| l == from);
    b.expect_line(|l| l == "mcp-bridge-vscode: bridge: info: the upstream server is ready");
    b.close_and_expect_exit_0();
}

#[test]
fn c1_c4_discover_gets_32601_at_once_and_the_states_before_initialize() {
    let mut b = start(&[]);
    let r = b.exchange(&request(
        1,
        "server/discover",
        json!({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}),
    ));
    assert_eq!(r["error"]["code"], -32601);
    assert_eq!(r["error"]["data"]["cause"], "method_not_found");
    // R2: ping and setLevel in every state.
    assert_eq!(
        b.exchange(&request(2, "ping", json!({})))["result"],
        json!({})
    );
    assert_eq!(
        b.exchange(&request(3, "logging/setLevel", json!({"level":"info"})))["result"],
        json!({})
    );
    assert_eq!(
        b.exchange(&request(4, "logging/setLevel", json!({"level":"loud"})))["error"]["code"],
        -32602
    );
    // Before initialize: -32600 not_initialized, or -32601 for a client of both revisions.
    let r = b.exchange(&request(5, "tools/list", json!({})));
    assert_eq!(
        (
            r["error"]["code"].clone(),
            r["error"]["data"]["cause"].clone()
        ),
        (json!(-32600), json!("not_initialized"))
    );
    let r = b.exchange(&request(
        6,
        "tools/list",
        json!({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}),
    ));
    assert_eq!(r["error"]["code"], -32601);
    // Then the initialize of the Copilot harness.
    let copilot = copilot_initialize(7);
    let r = b.exchange(&copilot);
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    let r = b.exchange(&request(8, "initialize", copilot["params"].clone()));
    assert_eq!(
        (
            r["error"]["code"].clone(),
            r["error"]["data"]["cause"].clone()
        ),
        (json!(-32600), json!("already_initialized"))
    );
    let r = b.exchange(&request(9, "server/discover", json!({})));
    assert_eq!(r["error"]["code"], -32601);
    let r = b.exchange(&request(10, "tasks/list", json!({})));
    assert_eq!(r["error"]["code"], -32601);
    let r = b.exchange(&request(
        11,
        "resources/subscribe",
        json!({"uri":"file:///fixture/notes.txt"}),
    ));
    // M3 (O7): the fixture declares resources.subscribe, so the subscription works, even
    // before notifications/initialized (the listen stream starts with it).
    assert_eq!(r["result"], json!({}));
    let r = b.exchange(&call(12, "add", json!({"a":2,"b":3})));
    assert_eq!(text_of(&r), "5");
    b.close_and_expect_exit_0();
}

#[test]
fn r2_invalid_initialize_params_get_32602_and_a_new_initialize_succeeds() {
    let mut b = start(&[]);
    let r = b.exchange(&request(
        1,
        "initialize",
        json!({"protocolVersion":"2025-11-25"}),
    ));
    assert_eq!(r["error"]["code"], -32602);
    b.initialize();
    b.close_and_expect_exit_0();
}

#[cfg(unix)]
#[test]
fn r2_a_failed_discover_returns_to_the_state_before_and_a_new_initialize_succeeds() {
    // The first start of the command exits at once; the second is the fixture.
    let dir = tempfile::tempdir().expect("temp dir");
    let marker = dir.path().join("started");
    let script = format!(
        "if [ -e '{m}' ]; then exec '{f}'; else touch '{m}'; exit 0; fi",
        m = marker.display(),
        f = fixture()
    );
    let mut b = Bridge::start(&["--", "sh", "-c", &script]);
    let r = b.exchange(&vscode_initialize(1));
    assert_eq!(r["error"]["data"]["cause"], "discover_failed", "{r}");
    assert_eq!(r["error"]["code"], -32603);
    let r = b.exchange(&vscode_initialize(2));
    assert_eq!(
        r["result"]["serverInfo"]["name"], "bridge-fixture-server",
        "{r}"
    );
    b.close_and_expect_exit_0();
}

#[cfg(unix)]
#[test]
fn r2_discover_timeout_fails_initialize_with_the_detail() {
    let mut b = Bridge::start(&[
        "--discover-timeout",
        "1",
        "--",
        "sh",
        "-c",
        "while read -r l; do :; done",
    ]);
    let started = Instant::now();
    let r = b.exchange(&vscode_initialize(1));
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(
        r["error"]["data"],
        json!({"cause":"discover_failed","detail":"no response in 1 s"})
    );
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: warning: server/discover failed: no response in 1 s"
    });
    b.close_and_expect_exit_0();
}

#[test]
fn spawn_failure_gets_32603_and_the_warning_line() {
    let mut b = Bridge::start(&["--", "/nonexistent/upstream-command"]);
    let r = b.exchange(&vscode_initialize(1));
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(r["error"]["data"]["cause"], "spawn_failed");
    b.expect_line(|l| {
        l.starts_with("mcp-bridge-vscode: bridge: warning: cannot start the upstream command: ")
    });
    b.close_and_expect_exit_0();
}

#[cfg(unix)]
#[test]
fn quirks_32042_upstream_cancelled_null_cursor_and_fallback_name_with_a_scripted_upstream() {
    // A scripted upstream of revision 2026-07-28: answers by the order of the bridge's ids.
    let script = r#"
read l; echo '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","capabilities":{"tools":{},"tasks":{}}}}'
read l; echo '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"x"}}'
echo '{"jsonrpc":"2.0","id":2,"error":{"code":-32042,"message":"Sign in first.","data":{"elicitations":[{"mode":"url","url":"https://example.com"}]}}}'
read l; echo '{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","tools":[{"name":"t","inputSchema":{"type":"object","properties":{"v":{"type":"array","items":0}}}}],"nextCursor":null}}'
read l; echo '{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","isError":true}}'
while read -r l; do :; done
"#;
    let mut b = Bridge::start(&["--name", "demo", "--", "sh", "-c", script]);
    let r = b.initialize();
    assert_eq!(r["serverInfo"]["name"], "demo");
    assert_eq!(r["serverInfo"]["version"], mcp_bridge_vscode::VERSION);
    assert_eq!(r["capabilities"], json!({"tools":{}}));
    let r = b.exchange(&call(2, "x", json!({})));
    assert_eq!(
        r["error"],
        json!({"code":-32603,"message":"Sign in first."})
    );
    let r = b.exchange(&request(3, "tools/list", json!({})));
    assert!(r["result"].get("nextCursor").is_none());
    assert_eq!(
        r["result"]["tools"][0]["inputSchema"]["properties"]["v"]["items"],
        json!({})
    );
    let r = b.exchange(&call(4, "y", json!({})));
    assert_eq!(r["result"], json!({"isError":true,"content":[]}));
    b.close_and_expect_exit_0();
    assert!(
        b.all_frames
            .iter()
            .all(|f| f["method"] != "notifications/cancelled")
    );
}

/// R1, R2 and "bad input gets a clear error and the connection goes on": an initialize
/// without clientInfo gets -32602 and leaves the connection as it was, so that a correct
/// initialize right behind it (in the same write) is served, not refused as a second one.
#[test]
fn r1_an_initialize_that_is_not_valid_does_not_block_the_next_one() {
    let mut b = start(&[]);
    let bad = request(
        1,
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{}}),
    );
    let mut bytes = serde_json::to_vec(&bad).expect("json");
    bytes.push(b'\n');
    bytes.extend(serde_json::to_vec(&vscode_initialize(2)).expect("json"));
    bytes.push(b'\n');
    b.send_raw(&bytes);
    let first = b.response(1);
    assert_eq!(first["error"]["code"], -32602, "{first}");
    assert_eq!(first["error"]["data"]["cause"], "invalid_params", "{first}");
    let second = b.response(2);
    assert_eq!(
        second["result"]["serverInfo"]["name"], "bridge-fixture-server",
        "{second}"
    );
    b.close_and_expect_exit_0();
}

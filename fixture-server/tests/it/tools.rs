//! The result texts of the tools without input requests, progress, cancellation, and the tools
//! that end the process (`crash` exits with code 3, `shutdown` with 0).

use std::time::{Duration, Instant};

use crate::support::{Server, meta, text};
use serde_json::json;

#[test]
fn each_simple_tool_gives_its_text() {
    let mut server = Server::start(&["--many-tools", "3"]);
    assert_eq!(
        text(&server.call(1, "echo", json!({"text": "hi there"}))),
        "hi there"
    );
    assert_eq!(text(&server.call(2, "add", json!({"a": 2, "b": 3}))), "5");
    assert_eq!(text(&server.call(3, "add", json!({"a": -7, "b": 3}))), "-4");
    assert_eq!(
        text(&server.call(4, "slow", json!({"ms": 20}))),
        "slept 20 ms"
    );
    assert_eq!(
        text(&server.call(
            5,
            "bare_array",
            json!({"values": [1, "x", null], "pair": ["a", 2]})
        )),
        "3 values"
    );
    let structured = server.call(6, "structured", json!({"text": "héllo"}));
    assert_eq!(text(&structured), "6 bytes");
    assert_eq!(
        structured["structuredContent"],
        json!({"text": "héllo", "length": 6})
    );
    assert_eq!(text(&server.call(7, "show", json!({}))), "shown");
    assert_eq!(text(&server.call(8, "toggled", json!({}))), "toggled");
    assert_eq!(text(&server.call(9, "tool_2", json!({}))), "tool_2");
    assert_eq!(
        text(&server.call(10, "log", json!({}))),
        "logged 4 messages"
    );
    assert_eq!(
        text(&server.call(11, "touch", json!({"uri": "file:///a"}))),
        "touched file:///a"
    );
    assert_eq!(
        text(&server.call(12, "toggle", json!({"enabled": true}))),
        "tool toggled: enabled (no change)"
    );
    assert_eq!(
        text(&server.call(13, "toggle", json!({"enabled": false, "target": "prompt"}))),
        "prompt toggled: disabled"
    );
    // Nothing but the responses came: no listen stream is open.
    assert!(server.backlog.is_empty(), "{:?}", server.backlog);
}

#[test]
fn arguments_that_are_not_valid_give_a_tool_error() {
    let mut server = Server::new();
    let result = server.call(1, "add", json!({"a": "two", "b": 3}));
    assert_eq!(result["isError"], true);
    assert!(
        text(&result).starts_with("the arguments of add are not valid"),
        "{result}"
    );
    let result = server.call(2, "crash", json!({"after_ms": 0}));
    assert_eq!(result["isError"], true);
    assert_eq!(text(&result), "after_ms must be from 1 to 60000, not 0");
    assert!(server.running());
}

#[test]
fn progress_goes_with_the_token_before_the_result() {
    let mut server = Server::new();
    let mut with_token = meta();
    with_token["progressToken"] = json!("tok-1");
    server.request(
        1,
        "tools/call",
        json!({"name": "progress", "arguments": {"count": 3}, "_meta": with_token}),
    );
    let (before, response) = server.response(1);
    assert_eq!(text(&response["result"]), "sent 3 progress notifications");
    assert_eq!(before.len(), 3, "{before:?}");
    for (i, frame) in before.iter().enumerate() {
        assert_eq!(frame["method"], "notifications/progress");
        assert_eq!(frame["params"]["progressToken"], "tok-1");
        assert_eq!(frame["params"]["progress"].as_f64(), Some(i as f64 + 1.0));
        assert_eq!(frame["params"]["total"].as_f64(), Some(3.0));
        assert_eq!(frame["params"]["message"], format!("Step {} of 3", i + 1));
    }
    // The integer 0 is a valid token (C3).
    let mut zero = meta();
    zero["progressToken"] = json!(0);
    server.request(
        2,
        "tools/call",
        json!({"name": "progress", "arguments": {"count": 2, "ms": 5}, "_meta": zero}),
    );
    let (before, _) = server.response(2);
    assert_eq!(before.len(), 2);
    assert_eq!(before[1]["params"]["progressToken"], 0);
    // Without a token: no progress.
    server.request(
        3,
        "tools/call",
        json!({"name": "progress", "arguments": {"count": 2}}),
    );
    let (before, response) = server.response(3);
    assert!(before.is_empty());
    assert_eq!(text(&response["result"]), "sent 0 progress notifications");
}

#[test]
fn a_cancelled_slow_call_gets_no_response() {
    let mut server = Server::new();
    server.request(
        1,
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": 60000}}),
    );
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "test"}}));
    // The next request is answered, and the cancelled one never is.
    assert_eq!(
        text(&server.call(2, "echo", json!({"text": "after"}))),
        "after"
    );
    server.close_stdin();
    let frames = server.frames_until_end();
    assert!(frames.is_empty(), "{frames:?}");
    assert!(server.wait_exit(Duration::from_secs(3)).success());
}

#[test]
fn crash_exits_with_code_3_without_a_response() {
    let mut server = Server::new();
    server.request(1, "tools/call", json!({"name": "crash", "arguments": {}}));
    let frames = server.frames_until_end();
    assert!(frames.is_empty(), "{frames:?}");
    let status = server.wait_exit(Duration::from_secs(5));
    assert_eq!(status.code(), Some(3));
    assert!(
        server.stderr().starts_with("bridge-fixture-server: "),
        "{}",
        server.stderr()
    );
}

#[test]
fn crash_after_a_delay_gives_its_result_first() {
    let mut server = Server::new();
    let start = Instant::now();
    let result = server.call(1, "crash", json!({"after_ms": 150}));
    assert_eq!(text(&result), "the server stops in 150 ms");
    let status = server.wait_exit(Duration::from_secs(5));
    assert_eq!(status.code(), Some(3));
    assert!(start.elapsed() >= Duration::from_millis(150));
}

#[test]
fn shutdown_ends_the_listen_streams_and_exits_0() {
    let mut server = Server::new();
    server.request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let ack = server.next_frame().unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let result = server.call(2, "shutdown", json!({"after_ms": 100}));
    assert_eq!(
        text(&result),
        "the server ended its listen streams and stops in 100 ms"
    );
    let frames = server.frames_until_end();
    let end = frames
        .iter()
        .find(|f| f["id"] == 1)
        .unwrap_or_else(|| panic!("{frames:?}"));
    assert_eq!(
        end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    assert!(server.wait_exit(Duration::from_secs(5)).success());
}

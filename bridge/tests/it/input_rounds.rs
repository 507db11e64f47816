//! Process tests of milestone M2 (docs/rules.md R8): the input rounds over real pipes, with
//! `mcp-bridge-vscode` in front of `bridge-fixture-server`. Each test that starts the bridge
//! also proves that no process of its tree is left (see support::Bridge).

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::{Bridge, EXIT_BOUND, call, fixture_bin};

fn start() -> Bridge {
    let f = fixture_bin().to_string_lossy().into_owned();
    Bridge::start(&["--log-level", "debug", "--", &f])
}

/// The bound of one frame in these tests.
const FRAME: Duration = Duration::from_secs(20);

/// The next request of the bridge to VS Code (a frame with a method and a `b-` id).
fn bridge_request(b: &mut Bridge) -> Value {
    let f = b.next_frame(FRAME);
    let id = f["id"].as_str().unwrap_or_default();
    assert!(id.starts_with("b-") && f.get("method").is_some(), "{f}");
    f
}

/// The next `notifications/cancelled` frames, `n` of them.
fn cancellations(b: &mut Bridge, n: usize) -> Vec<Value> {
    let mut out = Vec::new();
    while out.len() < n {
        let f = b.next_frame(FRAME);
        if f["method"] == "notifications/cancelled" {
            out.push(f["params"].clone());
        }
    }
    out
}

#[test]
fn r8_o1_a_form_answered_over_the_pipe_completes_the_call() {
    let mut b = start();
    b.initialize();
    b.send(&call(2, "ask_form", json!({})));
    let q = bridge_request(&mut b);
    assert_eq!(q["id"], "b-1");
    assert_eq!(q["method"], "elicitation/create");
    assert_eq!(q["params"]["message"], "Tell us about you.");
    b.send(
        &json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept","content":{"name":"Ada"}}}),
    );
    let r = b.response(2);
    let text = r["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.starts_with("form: accept"), "{r}");
    assert!(text.contains("Ada"), "{r}");
    // The ids go on across requests of the connection.
    b.send(&call(3, "ask_form", json!({})));
    assert_eq!(bridge_request(&mut b)["id"], "b-2");
    b.send(&json!({"jsonrpc":"2.0","id":"b-2","result":{"action":"decline"}}));
    let r = b.response(3);
    assert_eq!(r["result"]["content"][0]["text"], "form: decline");
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: debug: request 2 (tools/call): sent elicitation/create to the client as request \"b-1\""
    });
    b.close_and_expect_exit_0();
}

#[test]
fn r8_r7_end_of_stdin_while_waiting_cancels_both_requests_and_exits_0() {
    let mut b = start();
    b.initialize();
    // multi asks a form and roots in one round: two requests of the bridge at once.
    b.send(&call(2, "multi", json!({})));
    let first = bridge_request(&mut b);
    let second = bridge_request(&mut b);
    let since = b.close_stdin();
    let cancelled = cancellations(&mut b, 2);
    for (q, c) in [first, second].iter().zip(&cancelled) {
        assert_eq!(
            *c,
            json!({"requestId": q["id"], "reason": "the client closed the connection"})
        );
    }
    let status = b.wait_exit(since, EXIT_BOUND);
    assert_eq!(status.code(), Some(0), "stderr:\n{}", b.stderr());
    // No response to the call: it was canceled by the end of input.
    assert!(
        !b.all_frames.iter().any(|f| f["id"] == 2),
        "{:?}",
        b.all_frames
    );
}

#[test]
fn r8_r7_upstream_crash_while_waiting_fails_each_call_and_exits_1() {
    let mut b = start();
    b.initialize();
    b.send(&call(2, "ask_form", json!({})));
    let q = bridge_request(&mut b);
    // The upstream exits (code 3) while the bridge waits for VS Code's answer to b-1.
    b.send(&call(3, "crash", json!({})));
    let mut errors = Vec::new();
    let mut cancelled = Vec::new();
    while errors.len() < 2 || cancelled.is_empty() {
        let f = b.next_frame(FRAME);
        if f["method"] == "notifications/cancelled" {
            cancelled.push(f["params"].clone());
        } else if f.get("error").is_some() {
            errors.push(f);
        }
    }
    for e in &errors {
        assert_eq!(e["error"]["code"], -32603, "{e}");
        assert_eq!(e["error"]["data"]["cause"], "upstream_exited", "{e}");
    }
    assert_eq!(
        cancelled,
        [json!({"requestId": q["id"], "reason": "the upstream server stopped"})]
    );
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: error: the upstream server exited with code 3"
    });
    let status = b.wait_exit(std::time::Instant::now(), EXIT_BOUND);
    assert_eq!(status.code(), Some(1), "stderr:\n{}", b.stderr());
}

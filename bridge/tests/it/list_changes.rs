//! Process tests of milestone M3 (docs/rules.md O5–O7) on the real binaries: `mcp-bridge-vscode` in front
//! of `bridge-fixture-server`, which declares every list change and `resources.subscribe`.
//! Each test that starts the bridge also proves that no process of its tree is left.

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Bridge, EXIT_BOUND, call, fixture_bin, request};

const NOTES: &str = "file:///fixture/notes.txt";

fn method(frame: &Value) -> &str {
    frame.get("method").and_then(Value::as_str).unwrap_or("")
}

/// Initialize, `notifications/initialized`, and the gap replay of the first listen stream
/// (R2 and the quirk "VS Code lists at the same time as notifications/initialized").
fn started() -> Bridge {
    let f = fixture_bin().to_string_lossy().into_owned();
    let mut b = Bridge::start(&["--", &f]);
    b.initialize();
    b.send(&json!({"method":"notifications/initialized","jsonrpc":"2.0"}));
    let replay: Vec<String> = (0..3)
        .map(|_| method(&b.next_frame(Duration::from_secs(10))).to_owned())
        .collect();
    assert_eq!(
        replay,
        [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed"
        ]
    );
    b
}

/// O6 and the quirk on tool re-listing (the quirk Q6 of docs/rules.md): every list change that the
/// upstream writes before a call result reaches VS Code before that result, 1000 times in a
/// row.
#[test]
fn m3_o6_the_list_change_comes_before_the_toggle_result_1000_times() {
    let mut b = started();
    for i in 0..1000u64 {
        let enabled = i % 2 == 1;
        let (response, notes) =
            b.response_with_notifications_of(&call(10 + i, "toggle", json!({"enabled": enabled})));
        let want = if enabled { "enabled" } else { "disabled" };
        assert_eq!(
            response["result"]["content"][0]["text"],
            format!("tool toggled: {want}"),
            "round {i}"
        );
        let methods: Vec<&str> = notes.iter().map(method).collect();
        assert_eq!(
            methods,
            ["notifications/tools/list_changed"],
            "round {i}: the list change must come before the result"
        );
        assert_eq!(
            notes[0],
            json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})
        );
    }
    b.close_and_expect_exit_0();
}

/// O7: subscribe answers `{}`; each update of the URI comes before the result of the `touch`
/// that made it; after unsubscribe no update comes.
#[test]
fn m3_o7_subscribe_then_updates_then_unsubscribe_and_no_more_updates() {
    let mut b = started();
    let r = b.exchange(&request(2, "resources/subscribe", json!({"uri": NOTES})));
    assert_eq!(r, json!({"jsonrpc":"2.0","id":2,"result":{}}));
    for i in 0..3u64 {
        let (r, notes) =
            b.response_with_notifications_of(&call(3 + i, "touch", json!({"uri": NOTES})));
        assert_eq!(
            r["result"]["content"][0]["text"],
            format!("touched {NOTES}")
        );
        assert_eq!(
            notes,
            [
                json!({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":NOTES}})
            ],
            "touch {i}"
        );
    }
    let r = b.exchange(&request(10, "resources/unsubscribe", json!({"uri": NOTES})));
    assert_eq!(r["result"], json!({}));
    let (r, notes) = b.response_with_notifications_of(&call(11, "touch", json!({"uri": NOTES})));
    assert!(r.get("result").is_some(), "{r}");
    assert!(notes.is_empty(), "no update after unsubscribe: {notes:?}");
    b.close_and_expect_exit_0();
}

/// M3: the upstream's `shutdown` tool ends its listen streams and the upstream exits: the
/// bridge exits with code 1, and VS Code never gets a `notifications/cancelled`.
#[test]
fn m3_the_shutdown_tool_ends_the_streams_and_the_bridge_exits_1_without_cancelled() {
    let mut b = started();
    let since = Instant::now();
    let (r, _) = b.response_with_notifications_of(&call(2, "shutdown", json!({"after_ms": 300})));
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("the server ended its listen streams")),
        "{r}"
    );
    let status = b.wait_exit(since, EXIT_BOUND);
    assert_eq!(status.code(), Some(1), "stderr:\n{}", b.stderr());
    assert!(
        !b.all_frames
            .iter()
            .any(|f| method(f) == "notifications/cancelled"),
        "a notifications/cancelled reached VS Code: {:?}",
        b.all_frames
    );
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: info: the upstream server ended the listen stream. A new stream follows in 500 ms."
    });
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: error: the upstream server exited with code 0"
    });
}

/// The end of input ends the listen stream within the stop bound (R7): exit 0, no process left.
#[test]
fn m3_r7_the_end_of_input_ends_the_listen_stream_within_the_bound() {
    let mut b = started();
    let r = b.exchange(&request(2, "resources/subscribe", json!({"uri": NOTES})));
    assert_eq!(r["result"], json!({}));
    let since = b.close_stdin();
    let status = b.wait_exit(since, Duration::from_secs(2));
    assert_eq!(status.code(), Some(0), "stderr:\n{}", b.stderr());
}

trait Exchange {
    fn response_with_notifications_of(&mut self, frame: &Value) -> (Value, Vec<Value>);
}

impl Exchange for Bridge {
    /// Sends a request; returns its response and the notifications before it.
    fn response_with_notifications_of(&mut self, frame: &Value) -> (Value, Vec<Value>) {
        self.send(frame);
        self.response_with_notifications(&frame["id"].clone())
    }
}

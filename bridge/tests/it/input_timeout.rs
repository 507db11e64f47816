//! M2 (R8, docs/rules.md R8): the wait for VS Code's answers is bounded by 1 h. The
//! bridge runs in this process in front of the real fixture server; once the bridge has sent
//! its `b-` request, tokio's clock is paused, so the idle runtime jumps straight to the bound:
//! no sleep, no hour, and the timers are the bridge's own.

use crate::support;

use std::time::Duration;

use mcp_bridge_vscode::testing::{Hooks, Options, Outcome, ServerInfoFallback, Target, serve};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The bound of one frame of the fixture (real time, before the clock is paused).
const FRAME: Duration = Duration::from_secs(20);

fn options() -> Options {
    Options {
        upstream: Target::Command {
            command: support::fixture_bin().into_os_string(),
            args: Vec::new(),
        },
        fallback: ServerInfoFallback {
            name: "fixture".into(),
            version: "0".into(),
        },
        discover_timeout: Duration::from_secs(60),
        max_line_bytes: 1 << 20,
        max_in_flight: 64,
        shutdown_grace: Duration::from_secs(2),
        sign_in: None,
    }
}

/// The bound of a frame once the clock is paused (virtual time): beyond the hour of the wait.
const PAUSED_FRAME: Duration = Duration::from_secs(2 * 3600);

async fn next<R: tokio::io::AsyncBufRead + Unpin>(
    lines: &mut tokio::io::Lines<R>,
    bound: Duration,
) -> Value {
    let line = tokio::time::timeout(bound, lines.next_line())
        .await
        .expect("a frame in time")
        .expect("read")
        .expect("a line");
    serde_json::from_str(&line).expect("JSON")
}

/// Also a hot-path choice (bridge/README.md): the first round of a `tools/call` through a command has no task while it
/// waits (the router takes its response). Here that response starts an input round, and the
/// request task goes on from it: from then on only the times of the round count. The
/// connection's ticks must not give the finished first round a timer: no "still waiting for
/// the upstream server" line in the hour of the round, whose own lines come at 10 s, 40 s, ….
#[tokio::test]
async fn r8_no_answer_in_one_hour_fails_the_call_and_cancels_the_request() {
    let seen = support::log_lines::capture();
    let (mut to_bridge, bridge_in) = tokio::io::duplex(1 << 16);
    let (bridge_out, from_bridge) = tokio::io::duplex(1 << 16);
    let bridge = tokio::spawn(serve(options(), bridge_in, bridge_out, Hooks::default()));
    let mut lines = BufReader::new(from_bridge).lines();
    let send = |v: Value| format!("{v}\n").into_bytes();
    to_bridge
        .write_all(&send(support::vscode_initialize(1)))
        .await
        .expect("write");
    assert_eq!(next(&mut lines, FRAME).await["id"], 1);
    to_bridge
        .write_all(&send(support::call(2, "ask_form", json!({}))))
        .await
        .expect("write");
    let q = next(&mut lines, FRAME).await;
    assert_eq!(q["method"], "elicitation/create");
    // From here on nothing happens but the bridge's timers.
    tokio::time::pause();
    let started = tokio::time::Instant::now();
    let cancel = next(&mut lines, PAUSED_FRAME).await;
    assert_eq!(
        cancel,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":q["id"],"reason":"no answer in time"}})
    );
    let r = next(&mut lines, PAUSED_FRAME).await;
    assert_eq!(
        r["error"],
        json!({"code":-32603,"message":"The client did not answer the input request of the upstream server in time.","data":{"cause":"input_timeout","detail":"no answers in 3600 s (input requests of the round: 1)"}})
    );
    assert_eq!(started.elapsed().as_secs(), 3600);
    tokio::time::resume();
    let text = seen.text();
    assert!(
        !text.contains("still waiting for the upstream server"),
        "{text}"
    );
    let round: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("still waiting for the answers of the client"))
        .take(2)
        .collect();
    assert_eq!(
        round,
        [10, 40].map(|s| format!(
            "mcp-bridge-vscode: bridge: info: still waiting for the answers of the client to the input requests of tools/call (request 2, {s} s)"
        )),
        "{text}"
    );
    drop(to_bridge);
    let outcome = tokio::time::timeout(FRAME, bridge)
        .await
        .expect("the bridge stops")
        .expect("join");
    assert_eq!(outcome, Outcome::Eof);
}

//! R7 and the stop sequence with a client that no longer reads stdout: VS Code can stop
//! reading a server before it closes its stdin. The bridge then has frames that it cannot
//! write, and still must stop in bounded time: by itself within the stop bound, or at the
//! latest by its watchdog 8 s after the end of stdin, always with exit code 0 and no process of
//! its tree left.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The watchdog's time after the end of stdin, plus the time to exit and to close stderr.
const WATCHDOG_BOUND: Duration = Duration::from_millis(9_500);

fn send(stdin: &mut ChildStdin, frame: &Value) {
    let mut line = serde_json::to_vec(frame).expect("json");
    line.push(b'\n');
    stdin.write_all(&line).expect("write to the bridge");
}

#[test]
fn r7_stop_with_a_client_that_does_not_read_stdout_exits_0_in_the_watchdog_bound() {
    let mut child = Command::new(support::bridge_bin())
        .arg("--")
        .arg(support::fixture_bin())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the bridge starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let stderr = child.stderr.take().expect("stderr");
    // stderr ends only when every process of the tree (the upstream inherits it) is gone.
    let (stderr_tx, stderr_done) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut text);
        let _ = stderr_tx.send(text);
    });

    send(&mut stdin, &support::vscode_initialize(1));
    // The initialize result is the last frame this client reads.
    let (line_tx, line_rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut line = String::new();
        let read = stdout.read_line(&mut line);
        let _ = line_tx.send((read.is_ok(), line));
        stdout
    });
    let (ok, line) = line_rx
        .recv_timeout(support::EXCHANGE)
        .expect("the initialize result within the exchange bound");
    assert!(
        ok && line.contains("\"protocolVersion\":\"2025-11-25\""),
        "{line}"
    );
    let _unread_stdout = reader.join().expect("reader");
    send(
        &mut stdin,
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );

    // Results far larger than the pipe to the client: the bridge cannot write them all.
    let text = "x".repeat(1 << 20);
    for id in 2..26 {
        send(
            &mut stdin,
            &support::call(id, "echo", json!({ "text": text })),
        );
    }
    drop(stdin);
    let since = Instant::now();

    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if since.elapsed() > WATCHDOG_BOUND {
            let _ = child.kill();
            panic!("the bridge did not exit within {WATCHDOG_BOUND:?} of the end of stdin");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0), "the exit code of the stop sequence");
    let left = WATCHDOG_BOUND.saturating_sub(since.elapsed()) + Duration::from_millis(500);
    let stderr = stderr_done
        .recv_timeout(left)
        .expect("no process of the bridge's tree holds stderr after the exit");
    for line in stderr
        .lines()
        .filter(|l| l.starts_with("mcp-bridge-vscode: "))
    {
        assert!(
            !line.contains(&text[..64]),
            "a log line carries frame content: {line:.200}"
        );
    }
}

/// A slow upstream call gives the contract's "still waiting" info line after 10 s, and a
/// cancellation of VS Code then ends the call without a response.
#[test]
fn r7_still_waiting_line_after_10_s_then_cancel_gives_no_response() {
    let mut bridge =
        support::Bridge::start(&["--", support::fixture_bin().to_str().expect("utf-8 path")]);
    bridge.initialize();
    bridge.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    bridge.send(&support::call(2, "slow", json!({"ms": 30_000})));
    bridge.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: info: still waiting for the upstream server: tools/call (request 2, 10 s)"
    });
    bridge.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"stop"}}));
    let pong = bridge.exchange(&support::request(3, "ping", json!({})));
    assert_eq!(
        pong["id"], 3,
        "the next answer is the ping, not the cancelled call"
    );
    bridge.close_and_expect_exit_0();
    assert!(
        bridge
            .all_frames
            .iter()
            .all(|f| f.get("id") != Some(&json!(2))),
        "the cancelled call got a response"
    );
}

//! The bounds of the waits (R8, docs/rules.md) on tokio's paused clock: a request that the
//! upstream does not answer in 120 s, with its "still waiting" lines and its cancellation
//! upstream, and the 1 h wait for VS Code's answers to an input round. The bridge's [`serve`]
//! runs in this process in front of a real upstream process; once the request is out, the
//! clock is paused, so the idle runtime jumps straight to the bound: no sleep, no hour, and
//! the timers are the bridge's own.

use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use harness::format::Profile;
use harness::profile;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::{Hooks, Options, Outcome, serve};
use crate::log::capture;
use crate::test_support::bins::fixture_bin;
use crate::translate::initialize::ServerInfoFallback;
use crate::upstream::connect::Target;

/// The discover result of a scripted upstream (`sh -c`).
pub(super) const DISCOVER: &str = r#"echo '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","capabilities":{"tools":{"listChanged":true}}}}'"#;

/// The bound of one frame (real time, before the clock is paused).
const FRAME: Duration = Duration::from_secs(20);

/// The bound of a frame once the clock is paused (virtual time): beyond the hour of the wait.
const PAUSED_FRAME: Duration = Duration::from_secs(2 * 3600);

pub(super) fn options(upstream: Target, name: &str, grace: Duration) -> Options {
    Options {
        upstream,
        fallback: ServerInfoFallback {
            name: name.into(),
            version: "0".into(),
        },
        discover_timeout: Duration::from_secs(60),
        answer_initialize_after: None,
        upstream_revision: crate::cli::UpstreamRevision::Modern,
        max_line_bytes: 1 << 20,
        max_in_flight: 64,
        shutdown_grace: grace,
        sign_in: None,
        refusal: None,
    }
}

/// The hooks of the executable for a child that tests the watchdog: the watchdog armed `after`
/// the end of stdin, with the upstream's process id kept in `pid`.
pub(super) fn watchdog_hooks(pid: &Arc<AtomicU32>, after: Duration) -> Hooks {
    let watchdog_pid = Arc::clone(pid);
    Hooks {
        on_eof: Some(Box::new(move || crate::watchdog::arm(watchdog_pid, after))),
        upstream_pid: Arc::clone(pid),
    }
}

/// R7: a child that tests the watchdog (armed at 1 s, shutdown_grace 5 s) was ended by the
/// watchdog, not by the stop sequence: its line, exit 0, before the first grace ends.
pub(super) fn assert_the_watchdog_ended_it(ran: &crate::test_support::child::Ran) {
    assert_eq!(ran.code, Some(0), "stderr:\n{}", ran.stderr);
    assert!(
        ran.stderr.contains(
            "mcp-bridge-vscode: vscode: warning: the bridge did not stop in 1 s after the end of stdin, thus it stops now"
        ),
        "{}",
        ran.stderr
    );
    assert!(
        ran.took < Duration::from_secs(5),
        "{:?}\n{}",
        ran.took,
        ran.stderr
    );
}

/// The options of a bridge in front of `sh -c <script>`.
pub(super) fn scripted_options(script: &str, grace: Duration) -> Options {
    let upstream = Target::Command {
        command: "sh".into(),
        args: vec!["-c".into(), script.into()],
        env: Default::default(),
    };
    options(upstream, "scripted", grace)
}

fn frame(v: &Value) -> Vec<u8> {
    format!("{v}\n").into_bytes()
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
}

/// VS Code's `initialize` (the harness's profile).
pub(super) fn vscode_initialize(id: i64) -> Value {
    profile::request(
        Profile::Local,
        id,
        "initialize",
        profile::initialize_params(Profile::Local),
    )
}

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

#[tokio::test]
async fn a_request_timeout_gives_the_line_the_error_and_a_cancellation_upstream() {
    let lines_seen = capture::capture();
    let dir = tempfile::tempdir().expect("temp dir");
    let seen = dir.path().join("upstream-input");
    let script = format!("read l; {DISCOVER}; cat > '{}'", seen.display());
    let (mut to_bridge, bridge_in) = tokio::io::duplex(1 << 16);
    let (bridge_out, from_bridge) = tokio::io::duplex(1 << 16);
    let bridge = tokio::spawn(serve(
        scripted_options(&script, Duration::from_secs(2)),
        bridge_in,
        bridge_out,
        Hooks::default(),
    ));
    let mut frames = BufReader::new(from_bridge).lines();
    to_bridge
        .write_all(&frame(&vscode_initialize(1)))
        .await
        .expect("write");
    assert!(next(&mut frames, FRAME).await.get("result").is_some());
    to_bridge
        .write_all(&frame(&request(2, "tools/list", json!({}))))
        .await
        .expect("write");
    tokio::time::pause();
    let started = tokio::time::Instant::now();
    let r = next(&mut frames, Duration::from_secs(3600)).await;
    let waited = started.elapsed();
    tokio::time::resume();
    assert_eq!(
        r,
        json!({"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"The upstream server did not answer in time. See the Output channel of the server.","data":{"cause":"timeout","detail":"tools/list: no response in 120 s"}}})
    );
    assert_fired_at(waited, 120);
    let text = lines_seen.text();
    let waiting: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("still waiting for the upstream server"))
        .collect();
    assert_eq!(
        waiting,
        [10, 40, 70, 100].map(|s| format!(
            "mcp-bridge-vscode: bridge: info: still waiting for the upstream server: tools/list (request 2, {s} s)"
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "mcp-bridge-vscode: bridge: warning: request 2 (tools/list): no response in 120 s\n"
        ),
        "{text}"
    );
    // The upstream got the cancellation of its request 2 (real time from here).
    let deadline = Instant::now() + Duration::from_secs(10);
    let cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"no answer in time"}});
    loop {
        let got = std::fs::read_to_string(&seen).unwrap_or_default();
        if got
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .any(|v| v == cancel)
        {
            break;
        }
        assert!(Instant::now() < deadline, "no cancellation upstream: {got}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(to_bridge);
    let _ = tokio::time::timeout(FRAME, bridge).await;
}

/// The first round's response starts an input round, and the request task goes on from it:
/// from then on only the times of the round count. The finished first round keeps no timer:
/// no "still waiting for the upstream server" line in the hour of the round, whose own lines
/// come at 10 s, 40 s, ….
#[tokio::test]
async fn r8_no_answer_in_one_hour_fails_the_call_and_cancels_the_request() {
    let seen = capture::capture();
    let upstream = Target::Command {
        command: fixture_bin().into_os_string(),
        args: Vec::new(),
        env: Default::default(),
    };
    let (mut to_bridge, bridge_in) = tokio::io::duplex(1 << 16);
    let (bridge_out, from_bridge) = tokio::io::duplex(1 << 16);
    let bridge = tokio::spawn(serve(
        options(upstream, "fixture", Duration::from_secs(2)),
        bridge_in,
        bridge_out,
        Hooks::default(),
    ));
    let mut lines = BufReader::new(from_bridge).lines();
    to_bridge
        .write_all(&frame(&vscode_initialize(1)))
        .await
        .expect("write");
    assert_eq!(next(&mut lines, FRAME).await["id"], 1);
    let call = request(
        2,
        "tools/call",
        json!({"name": "ask_form", "arguments": {}}),
    );
    to_bridge.write_all(&frame(&call)).await.expect("write");
    let q = next(&mut lines, FRAME).await;
    assert_eq!(q["method"], "elicitation/create");
    // From here on nothing happens but the bridge's timers.
    tokio::time::pause();
    let started = tokio::time::Instant::now();
    let cancel = next(&mut lines, PAUSED_FRAME).await;
    // Measured at the cancellation, which the bridge sends when its timer fires: the error
    // of the call can wait for the fixture (a real process), and while the runtime waits for
    // it, the paused clock runs on to the next timer.
    assert_fired_at(started.elapsed(), 3600);
    assert_eq!(
        cancel,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":q["id"],"reason":"no answer in time"}})
    );
    let r = next(&mut lines, PAUSED_FRAME).await;
    assert_eq!(
        r["error"],
        json!({"code":-32603,"message":"The client did not answer the input request of the upstream server in time.","data":{"cause":"input_timeout","detail":"no answers in 3600 s (input requests of the round: 1)"}})
    );
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

/// A timer of `limit` s fired after `waited` on the paused clock: within a second of the limit.
/// The bridge may have started the timer a few real milliseconds before the test paused the
/// clock (it reads its input on its own task), and the timer rounds up to its millisecond.
fn assert_fired_at(waited: Duration, limit: u64) {
    assert!(
        waited.abs_diff(Duration::from_secs(limit)) < Duration::from_secs(1),
        "fired after {waited:?}, not at {limit} s"
    );
}

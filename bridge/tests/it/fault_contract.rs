//! Contract paths of M1–M3 that no other test forces (bridge/README.md "Reliability"): the watchdog, the internal
//! error line, a request timeout with its cancellation upstream and the "still waiting" line
//! every 30 s, `cannot start the listen stream`, the "too deep to examine" line, `--log-level`
//! as a threshold, the signal form of the exit line, a cancellation of `initialize`, no form
//! answer on stderr at debug, and C1 "at once".
//!
//! The watchdog and the panic hook end their process, so they run in a child process: this
//! test executable runs itself with `MCP_FAULT_CHILD` set and `--exact <child test>`; the child
//! tests return at once without it.
#![cfg(unix)]

use crate::support;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use mcp_bridge_vscode::testing::{
    Hooks, Options, ServerInfoFallback, Target, arm_watchdog, exit_1_on_panic, serve,
};
use serde_json::{Value, json};
use support::{Bridge, EXIT_BOUND, call, request, vscode_initialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const DISCOVER: &str = r#"echo '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","capabilities":{"tools":{"listChanged":true}}}}'"#;

fn fixture() -> String {
    support::fixture_bin()
        .to_str()
        .expect("utf-8 path")
        .to_owned()
}

fn scripted(options: &[&str], script: &str) -> Bridge {
    let mut args: Vec<&str> = options.to_vec();
    args.extend(["--", "sh", "-c", script]);
    Bridge::start(&args)
}

// ---------------------------------------------------------------------------------------
// The child processes: the watchdog and the panic hook

const CHILD_ENV: &str = "MCP_FAULT_CHILD";

fn child_mode() -> Option<String> {
    std::env::var(CHILD_ENV).ok()
}

/// The name of the test `name` of this module as the test binary lists it (`<module>::<name>`,
/// the crate's name left out): the binary holds the tests of every module.
fn test_path(name: &str) -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    }
}

/// Runs the child test `name` of this executable in its own process; returns its exit code,
/// its stderr (complete: every process holding it is gone) and the time to its exit.
fn run_child(name: &str) -> (Option<i32>, String, Duration) {
    let mut child = Command::new(std::env::current_exe().expect("test executable"))
        .args([
            "--exact",
            &test_path(name),
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_ENV, name)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the child test starts");
    let started = Instant::now();
    let mut stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the child test {name} did not exit");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = started.elapsed();
    let text = rx
        .recv_timeout(Duration::from_secs(2))
        .expect("no process of the child's tree holds stderr (the upstream group is killed)");
    (status.code(), text, took)
}

fn in_process_options(upstream: &str, grace: Duration) -> Options {
    Options {
        upstream: Target::Command {
            command: "sh".into(),
            args: vec!["-c".into(), upstream.into()],
        },
        fallback: ServerInfoFallback {
            name: "scripted".into(),
            version: "0".into(),
        },
        discover_timeout: Duration::from_secs(60),
        max_line_bytes: 1 << 20,
        max_in_flight: 64,
        shutdown_grace: grace,
        sign_in: None,
    }
}

/// The child of the watchdog test: the bridge's own `serve` with the watchdog of the
/// executable, armed at 1 s, in front of an upstream that ignores the end of its stdin and
/// the termination signal, with a shutdown_grace of 5 s: the bridge's own stop would take
/// 10 s, so the watchdog fires first.
#[test]
fn child_watchdog() {
    if child_mode().as_deref() != Some("child_watchdog") {
        return;
    }
    mcp_bridge_vscode::install_log();
    let script =
        format!("trap '' TERM; read l; {DISCOVER}; while read -r l; do :; done; exec sleep 60");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let (mut to_bridge, bridge_in) = tokio::io::duplex(1 << 16);
        let (bridge_out, from_bridge) = tokio::io::duplex(1 << 16);
        let pid = Arc::new(AtomicU32::new(0));
        let watchdog_pid = Arc::clone(&pid);
        let hooks = Hooks {
            on_eof: Some(Box::new(move || {
                arm_watchdog(watchdog_pid, Duration::from_secs(1))
            })),
            upstream_pid: pid,
        };
        let bridge = tokio::spawn(serve(
            in_process_options(&script, Duration::from_secs(5)),
            bridge_in,
            bridge_out,
            hooks,
        ));
        let mut lines = BufReader::new(from_bridge).lines();
        to_bridge
            .write_all(format!("{}\n", vscode_initialize(1)).as_bytes())
            .await
            .expect("write");
        let r = lines.next_line().await.expect("read").expect("a line");
        assert!(r.contains("\"result\""), "{r}");
        drop(to_bridge);
        let _ = bridge.await;
        // Not reached: the watchdog exits the process first.
        eprintln!("the bridge stopped before the watchdog");
        std::process::exit(7);
    });
}

#[test]
fn r7_the_watchdog_writes_its_line_kills_the_upstream_group_and_exits_0() {
    let (code, stderr, took) = run_child("child_watchdog");
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    assert!(
        stderr.contains(
            "mcp-bridge-vscode: vscode: warning: the bridge did not stop in 1 s after the end of stdin, thus it stops now\n"
        ),
        "{stderr}"
    );
    // Before the first grace of 5 s ends: the watchdog, not the stop sequence, ended it; the
    // end of stderr proves that the kill reached the upstream (it ignores SIGTERM).
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// The child of the panic test: the executable's panic hook, an upstream process group that
/// ignores SIGTERM, then a panic inside a task of the runtime.
#[test]
fn child_panic() {
    if child_mode().as_deref() != Some("child_panic") {
        return;
    }
    mcp_bridge_vscode::install_log();
    let upstream = Command::new("sh")
        .args(["-c", "trap '' TERM; exec sleep 60"])
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("the upstream starts");
    exit_1_on_panic(Arc::new(AtomicU32::new(upstream.id())));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let _ = tokio::spawn(async { panic!("planted internal error") }).await;
    });
    std::process::exit(7);
}

#[test]
fn the_internal_error_line_kills_the_upstream_group_and_exits_1() {
    let (code, stderr, _) = run_child("child_panic");
    assert_eq!(code, Some(1), "stderr:\n{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("mcp-bridge-vscode: vscode: error: the bridge stopped because of an internal error: "))
        .unwrap_or_else(|| panic!("no internal error line:\n{stderr}"));
    assert!(
        line.contains("a panic at bridge/tests/it/fault_contract.rs:"),
        "{line}"
    );
    // The panic's message is not written (bridge/src/watchdog.rs): it could hold a secret.
    assert!(!stderr.contains("planted internal error"), "{stderr}");
}

// ---------------------------------------------------------------------------------------
// In-process on tokio's paused clock: a request timeout and the "still waiting" lines

#[tokio::test]
async fn a_request_timeout_gives_the_line_the_error_and_a_cancellation_upstream() {
    let lines_seen = support::log_lines::capture();
    let dir = tempfile::tempdir().expect("temp dir");
    let seen = dir.path().join("upstream-input");
    let script = format!("read l; {DISCOVER}; cat > '{}'", seen.display());
    let (mut to_bridge, bridge_in) = tokio::io::duplex(1 << 16);
    let (bridge_out, from_bridge) = tokio::io::duplex(1 << 16);
    let bridge = tokio::spawn(serve(
        in_process_options(&script, Duration::from_secs(2)),
        bridge_in,
        bridge_out,
        Hooks::default(),
    ));
    let mut frames = BufReader::new(from_bridge).lines();
    to_bridge
        .write_all(format!("{}\n", vscode_initialize(1)).as_bytes())
        .await
        .expect("write");
    let r = tokio::time::timeout(Duration::from_secs(20), frames.next_line())
        .await
        .expect("in time")
        .expect("read")
        .expect("line");
    assert!(r.contains("\"result\""), "{r}");
    to_bridge
        .write_all(format!("{}\n", request(2, "tools/list", json!({}))).as_bytes())
        .await
        .expect("write");
    tokio::time::pause();
    let started = tokio::time::Instant::now();
    let line = tokio::time::timeout(Duration::from_secs(3600), frames.next_line())
        .await
        .expect("in time")
        .expect("read")
        .expect("line");
    let waited = started.elapsed();
    tokio::time::resume();
    let r: Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(
        r,
        json!({"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"The upstream server did not answer in time. See the Output channel of the server.","data":{"cause":"timeout","detail":"tools/list: no response in 120 s"}}})
    );
    assert_eq!(waited.as_secs(), 120);
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
    let _ = tokio::time::timeout(Duration::from_secs(20), bridge).await;
}

// ---------------------------------------------------------------------------------------
// Process tests

#[test]
fn cannot_start_the_listen_stream_when_the_upstream_closed_its_output() {
    let script = format!("read l; {DISCOVER}; exec >&-; exec sleep 30");
    let mut b = scripted(&[], &script);
    b.initialize();
    // The end of the upstream's output reaches the bridge right after the result.
    std::thread::sleep(Duration::from_millis(300));
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    b.expect_line(|l| {
        l.starts_with("mcp-bridge-vscode: bridge: warning: cannot start the listen stream: ")
            && l.ends_with(". The client gets no list changes.")
    });
    let status = b.wait_exit(Instant::now(), EXIT_BOUND);
    assert_eq!(status.code(), Some(1));
}

/// A schema nested 70 levels deep (the bridge examines 64).
fn deep_tools_result(id: u64) -> String {
    let mut schema = json!({"type": "string"});
    for _ in 0..70 {
        schema = json!({"type": "array", "items": schema});
    }
    let schema = json!({"type": "object", "properties": {"a": schema}});
    json!({"jsonrpc":"2.0","id":id,"result":{"resultType":"complete","tools":[
        {"name":"deep","inputSchema":schema},
        {"name":"arr","inputSchema":{"type":"object","properties":{"v":{"type":"array","items":false}}}}
    ]}})
    .to_string()
}

#[test]
fn the_too_deep_line_end_to_end() {
    let script = format!(
        "read l; {DISCOVER}; read l; echo '{}'; while read -r l; do :; done",
        deep_tools_result(2)
    );
    let mut b = scripted(&[], &script);
    b.initialize();
    let r = b.exchange(&request(2, "tools/list", json!({})));
    assert_eq!(r["result"]["tools"][0]["name"], "deep", "{r}");
    b.expect_line(|l| {
        l.starts_with(
            "mcp-bridge-vscode: bridge: info: tool 'deep': the input schema at '/properties/a",
        ) && l.ends_with("' is too deep to examine")
    });
    b.close_and_expect_exit_0();
}

/// `--log-level` is a threshold: each level hides the levels below it. The scenario has a
/// line of each level: info (initialize, the schema fixes), warning (a dropped upstream
/// line), error (the exit of the upstream), debug (each upstream exchange).
#[test]
fn log_level_is_a_threshold() {
    let script = format!(
        "read l; {DISCOVER}; read l; echo '{}'; echo 'garbage'; read l; exit 3",
        deep_tools_result(2)
    );
    for (level, allowed) in [
        ("err", &["error"][..]),
        ("warn", &["error", "warning"][..]),
        ("info", &["error", "warning", "info"][..]),
        ("debug", &["error", "warning", "info", "debug"][..]),
    ] {
        let mut b = scripted(&["--log-level", level], &script);
        b.initialize();
        b.exchange(&request(2, "tools/list", json!({})));
        b.send(&call(3, "x", json!({})));
        let status = b.wait_exit(Instant::now(), EXIT_BOUND);
        assert_eq!(status.code(), Some(1));
        let mut seen: Vec<String> = b
            .bridge_lines()
            .iter()
            .filter_map(|l| l.split(": ").nth(2).map(str::to_owned))
            .collect();
        seen.sort();
        seen.dedup();
        let mut want: Vec<String> = allowed.iter().map(|s| (*s).to_owned()).collect();
        want.sort();
        assert_eq!(seen, want, "--log-level {level}:\n{}", b.stderr());
    }
}

#[test]
fn the_signal_form_of_the_exit_lines() {
    let script = format!("read l; {DISCOVER}; read l; kill -9 $$");
    let mut b = scripted(&[], &script);
    b.initialize();
    b.send(&call(2, "x", json!({})));
    let status = b.wait_exit(Instant::now(), EXIT_BOUND);
    assert_eq!(status.code(), Some(1));
    let lines = b.bridge_lines();
    assert_eq!(
        lines[lines.len() - 2..],
        [
            "mcp-bridge-vscode: mcp_stdio: warning: stdio server exited (signal 9); no restart is left",
            "mcp-bridge-vscode: bridge: error: the upstream server stopped on signal 9",
        ],
        "{lines:?}"
    );
    let r = b
        .all_frames
        .iter()
        .find(|f| f["id"] == 2)
        .expect("a response");
    assert_eq!(r["error"]["data"]["cause"], "upstream_exited");
}

/// The cancellation of `initialize` returns the connection to the state before it at once: an
/// `initialize` right behind the cancellation is served (not refused as a second one), the
/// upstream of the cancelled one is stopped (the end of its stdin), and the cancelled request
/// gets no response.
#[test]
fn a_cancelled_initialize_gets_no_response_and_the_next_one_right_behind_it_is_served() {
    let dir = tempfile::tempdir().expect("temp dir");
    let marker = dir.path().join("started");
    let stopped = dir.path().join("stopped");
    let script = format!(
        "if [ -e '{m}' ]; then exec '{f}'; else touch '{m}'; while read -r l; do :; done; touch '{s}'; fi",
        m = marker.display(),
        s = stopped.display(),
        f = fixture()
    );
    let mut b = scripted(&[], &script);
    b.send(&vscode_initialize(1));
    while !marker.exists() {
        std::thread::sleep(Duration::from_millis(10));
    }
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}}));
    let r = b.exchange(&vscode_initialize(2));
    assert_eq!(
        r["result"]["serverInfo"]["name"], "bridge-fixture-server",
        "{r}"
    );
    let since = Instant::now();
    while !stopped.exists() {
        assert!(
            since.elapsed() < support::EXCHANGE,
            "the upstream was not stopped"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    b.close_and_expect_exit_0();
    assert!(
        b.all_frames.iter().all(|f| f["id"] != 1),
        "{:?}",
        b.all_frames
    );
}

#[test]
fn no_form_answer_on_stderr_at_debug() {
    let secret = "Planted-Form-Answer-7c1e9f3a";
    let mut b = Bridge::start(&["--log-level", "debug", "--", &fixture()]);
    b.initialize();
    b.send(&call(2, "ask_form", json!({})));
    let q = b.next_frame(support::EXCHANGE);
    assert_eq!(q["id"], "b-1");
    b.send(
        &json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept","content":{"name":secret}}}),
    );
    let r = b.response(2);
    assert!(
        r.to_string().contains(secret),
        "the answer reached the upstream: {r}"
    );
    b.close_and_expect_exit_0();
    assert!(b.stderr().contains("bridge: debug: "));
    assert!(!b.stderr().contains(secret), "{}", b.stderr());
}

/// C1: server/discover gets -32601 at once (under 100 ms) in each state, also while the
/// upstream is busy.
#[test]
fn c1_discover_is_answered_at_once_in_each_state() {
    let mut b = scripted(
        &[],
        &format!("read l; sleep 2; {DISCOVER}; while read -r l; do :; done"),
    );
    let discover = |id: u64| request(id, "server/discover", json!({}));
    let at_once = |b: &mut Bridge, id: u64| {
        let since = Instant::now();
        let r = b.exchange(&discover(id));
        let took = since.elapsed();
        assert_eq!(r["error"]["code"], -32601, "{r}");
        assert!(
            took < Duration::from_millis(100),
            "server/discover took {took:?}"
        );
    };
    at_once(&mut b, 10);
    b.send(&vscode_initialize(1));
    at_once(&mut b, 11); // while the upstream takes 2 s for its discover result
    assert!(b.response(1).get("result").is_some());
    b.send(&call(2, "x", json!({}))); // never answered
    at_once(&mut b, 12);
    b.close_and_expect_exit_0();
}

//! The fault matrix of bridge/README.md ("Reliability"): one process test per row, each with
//! the real binary, real pipes and a scripted upstream (`sh -c`) or the fixture server. Each
//! row asserts that every request is answered exactly once (or cancelled as the contract says),
//! the contract's stderr line, that no process is left (the end of stderr, see support), and
//! the bridge's peak memory where it matters.
#![cfg(unix)]

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::faults::{answered_once, never_answered};
use support::{Bridge, EXIT_BOUND, call, request, vscode_initialize};

fn fixture() -> String {
    support::fixture_bin()
        .to_str()
        .expect("utf-8 path")
        .to_owned()
}

/// The discover result of a scripted upstream (first request: id 1), with list changes.
const DISCOVER: &str = r#"echo '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","capabilities":{"tools":{"listChanged":true}}}}'"#;

fn scripted(options: &[&str], script: &str) -> Bridge {
    let mut args: Vec<&str> = options.to_vec();
    args.extend(["--", "sh", "-c", script]);
    Bridge::start(&args)
}

fn initialized() -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/initialized"})
}

fn wait_exit_code(b: &mut Bridge, since: Instant) -> Option<i32> {
    b.wait_exit(since, EXIT_BOUND).code()
}

// ---------------------------------------------------------------------------------------
// Upstream rows

#[test]
fn u1_upstream_does_not_start() {
    let mut b = Bridge::start(&["--", "/nonexistent/upstream-command"]);
    let r = b.exchange(&vscode_initialize(1));
    assert_eq!(r["error"]["data"]["cause"], "spawn_failed", "{r}");
    b.expect_line(|l| {
        l.starts_with("mcp-bridge-vscode: bridge: warning: cannot start the upstream command: ")
    });
    b.close_and_expect_exit_0();
    answered_once(&b.all_frames, &[json!(1)]);
}

#[test]
fn u2_upstream_exits_before_discover() {
    let mut b = scripted(&[], "exit 5");
    let r = b.exchange(&vscode_initialize(1));
    assert_eq!(r["error"]["data"]["cause"], "discover_failed", "{r}");
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: mcp_stdio: warning: stdio server exited (exit code 5); no restart is left"
    });
    b.expect_line(|l| {
        l.starts_with("mcp-bridge-vscode: bridge: warning: server/discover failed: ")
    });
    b.close_and_expect_exit_0();
    answered_once(&b.all_frames, &[json!(1)]);
}

#[test]
fn u3_upstream_exits_during_discover_then_the_next_initialize_starts_it_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let marker = dir.path().join("started");
    let script = format!(
        "if [ -e '{m}' ]; then exec '{f}'; else touch '{m}'; read l; exit 6; fi",
        m = marker.display(),
        f = fixture()
    );
    let mut b = scripted(&[], &script);
    let r = b.exchange(&vscode_initialize(1));
    assert_eq!(r["error"]["data"]["cause"], "discover_failed", "{r}");
    let lines = || b.bridge_lines();
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: mcp_stdio: warning: stdio server exited (exit code 6); no restart is left"
    });
    let all = lines();
    let exit_at = all.iter().position(|l| l.contains("stdio server exited"));
    let failed_at = all
        .iter()
        .position(|l| l.contains("server/discover failed"));
    assert!(exit_at < failed_at, "the exit line comes first: {all:?}");
    let r = b.exchange(&vscode_initialize(2));
    assert_eq!(
        r["result"]["serverInfo"]["name"], "bridge-fixture-server",
        "{r}"
    );
    b.close_and_expect_exit_0();
    answered_once(&b.all_frames, &[json!(1), json!(2)]);
}

#[test]
fn u4_upstream_exits_after_discover() {
    let script = format!("read l; {DISCOVER}; exit 7");
    let mut b = scripted(&[], &script);
    b.send(&vscode_initialize(1));
    let since = Instant::now();
    assert_eq!(wait_exit_code(&mut b, since), Some(1), "{}", b.stderr());
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: error: the upstream server exited with code 7"
    });
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: mcp_stdio: warning: stdio server exited (exit code 7); no restart is left"
    });
    answered_once(&b.all_frames, &[json!(1)]);
}

#[test]
fn u5_upstream_exits_mid_call() {
    let mut b = Bridge::start(&["--", &fixture()]);
    b.initialize();
    b.send(&call(2, "slow", json!({"ms": 60_000})));
    b.send(&call(3, "slow", json!({"ms": 60_000})));
    b.send(&call(4, "crash", json!({})));
    let since = Instant::now();
    assert_eq!(wait_exit_code(&mut b, since), Some(1));
    for f in b.all_frames.iter().filter(|f| f["id"] != 1) {
        assert_eq!(f["error"]["data"]["cause"], "upstream_exited", "{f}");
    }
    answered_once(&b.all_frames, &[json!(2), json!(3), json!(4)]);
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: error: the upstream server exited with code 3"
    });
}

#[test]
fn u6_upstream_exits_mid_round_while_vscode_holds_a_b_request() {
    let mut b = Bridge::start(&["--", &fixture()]);
    b.initialize();
    b.send(&call(2, "ask_form", json!({})));
    let q = b.next_frame(support::EXCHANGE);
    assert_eq!(q["id"], "b-1", "{q}");
    b.send(&call(3, "crash", json!({})));
    let since = Instant::now();
    assert_eq!(wait_exit_code(&mut b, since), Some(1));
    let cancelled: Vec<&Value> = b
        .all_frames
        .iter()
        .filter(|f| f["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(
        cancelled,
        [
            &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1","reason":"the upstream server stopped"}})
        ]
    );
    answered_once(&b.all_frames, &[json!(2), json!(3)]);
    // A late answer of VS Code to b-1 reaches nobody: the bridge is gone.
}

#[test]
fn u7_upstream_exits_mid_listen_stream() {
    let mut b = Bridge::start(&["--", &fixture()]);
    b.initialize();
    b.send(&initialized());
    for _ in 0..3 {
        let f = b.next_frame(support::EXCHANGE);
        assert!(
            f["method"].as_str().unwrap_or("").ends_with("list_changed"),
            "{f}"
        );
    }
    b.send(&call(2, "crash", json!({"after_ms": 100})));
    let since = Instant::now();
    assert_eq!(wait_exit_code(&mut b, since), Some(1));
    answered_once(&b.all_frames, &[json!(2)]);
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: error: the upstream server exited with code 3"
    });
    assert!(
        !b.stderr().contains("the listen stream ended"),
        "the end of the upstream is not a lost stream:\n{}",
        b.stderr()
    );
}

#[test]
fn u8_upstream_exits_during_the_stop_sequence() {
    let script = format!("read l; {DISCOVER}; while read -r l; do :; done; sleep 0.3; exit 9");
    let mut b = scripted(&[], &script);
    b.initialize();
    b.send(&call(2, "t", json!({})));
    b.close_and_expect_exit_0();
    never_answered(&b.all_frames, &[json!(2)]);
    assert!(
        !b.stderr().contains("bridge: error:"),
        "an exit in the stop sequence is no error:\n{}",
        b.stderr()
    );
}

#[test]
fn u9_upstream_closes_stdout_and_runs_on() {
    let script = format!("read l; {DISCOVER}; read l; exec >&-; exec sleep 30");
    let mut b = scripted(&[], &script);
    b.initialize();
    b.send(&call(2, "t", json!({})));
    let since = Instant::now();
    assert_eq!(wait_exit_code(&mut b, since), Some(1));
    answered_once(&b.all_frames, &[json!(2)]);
    let r = b
        .all_frames
        .iter()
        .find(|f| f["id"] == 2)
        .expect("response");
    assert_eq!(r["error"]["data"]["cause"], "upstream_exited", "{r}");
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: error: the upstream server stopped on signal 15"
    });
}

#[test]
fn u10_upstream_writes_garbage() {
    let script = format!(
        r#"read l; {DISCOVER}
echo 'garbage {{'; echo '[1,2]'; echo '"text"'; echo '{{"jsonrpc":"2.0","id":99,"result":{{}}}}'
read l; echo '{{"jsonrpc":"2.0","id":2,"result":{{"resultType":"complete","tools":[]}}}}'
while read -r l; do :; done"#
    );
    let mut b = scripted(&[], &script);
    b.initialize();
    let r = b.exchange(&request(2, "tools/list", json!({})));
    assert_eq!(r["result"], json!({"tools": []}), "{r}");
    b.expect_line(|l| l.starts_with("mcp-bridge-vscode: mcp_router: warning: dropped "));
    b.close_and_expect_exit_0();
    answered_once(&b.all_frames, &[json!(1), json!(2)]);
}

#[test]
fn u11_upstream_writes_a_line_over_the_limit() {
    let script = format!(
        r#"read l; {DISCOVER}
read l; printf '{{"jsonrpc":"2.0","id":2,"result":{{"resultType":"complete","tools":[],"x":"%s"}}}}\n' "$(head -c 10000 /dev/zero | tr '\0' a)"
read l; echo '{{"jsonrpc":"2.0","id":3,"result":{{"resultType":"complete","tools":[]}}}}'
while read -r l; do :; done"#
    );
    let mut b = scripted(&["--max-line-bytes", "4096"], &script);
    b.initialize();
    let r = b.exchange(&request(2, "tools/list", json!({})));
    assert_eq!(r["error"]["code"], -32603, "{r}");
    b.expect_line(|l| l.starts_with("mcp-bridge-vscode: mcp_router: warning: dropped "));
    let r = b.exchange(&request(3, "tools/list", json!({})));
    assert_eq!(r["result"], json!({"tools": []}), "{r}");
    b.close_and_expect_exit_0();
    answered_once(&b.all_frames, &[json!(1), json!(2), json!(3)]);
}

/// The line is streamed through the bridge (1 GiB by default; `MCP_FAULT_GIB_LINE_MIB` sets
/// its size in MiB); the peak memory of the bridge stays far below it.
#[test]
fn u12_upstream_writes_a_1_gib_line() {
    let mib: u64 = std::env::var("MCP_FAULT_GIB_LINE_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let script = format!(
        r#"read l; {DISCOVER}
read l; printf '{{"jsonrpc":"2.0","id":2,"result":{{"resultType":"complete","x":"'; head -c {bytes} /dev/zero | tr '\0' a; printf '"}}}}\n'
read l; echo '{{"jsonrpc":"2.0","id":3,"result":{{"resultType":"complete","tools":[]}}}}'
while read -r l; do :; done"#,
        bytes = mib << 20
    );
    let mut b = scripted(&["--max-line-bytes", "1048576"], &script);
    b.initialize();
    let started = Instant::now();
    let r = b.exchange(&request(2, "tools/list", json!({})));
    let took = started.elapsed();
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let r = b.exchange(&request(3, "tools/list", json!({})));
    assert_eq!(r["result"], json!({"tools": []}), "{r}");
    if let Some(peak) = b.peak_kib() {
        eprintln!("u12: a {mib} MiB line in {took:?}, peak memory of the bridge {peak} KiB");
        assert!(
            peak < 64 << 10,
            "peak memory {peak} KiB for a {mib} MiB line"
        );
    }
    b.close_and_expect_exit_0();
    answered_once(&b.all_frames, &[json!(1), json!(2), json!(3)]);
}

/// The upstream stops reading its stdin while the bridge writes 16 MiB of calls to it: the
/// bridge still answers VS Code at once (ping), its memory stays bounded, and the end of stdin
/// stops everything within the bound.
#[test]
fn u13_upstream_stops_reading_its_stdin() {
    let script = format!("read l; {DISCOVER}; exec sleep 60");
    let mut b = scripted(&[], &script);
    b.initialize();
    let text = "y".repeat(1 << 20);
    let ids: Vec<Value> = (10..26).map(|i| json!(i)).collect();
    for id in &ids {
        b.send(&call(
            id.as_u64().unwrap_or(0),
            "echo",
            json!({ "text": text }),
        ));
    }
    let since = Instant::now();
    let pong = b.exchange(&request(2, "ping", json!({})));
    assert_eq!(pong["result"], json!({}));
    assert!(
        since.elapsed() < Duration::from_secs(1),
        "ping took {:?}",
        since.elapsed()
    );
    let peak = b.peak_kib();
    b.close_and_expect_exit_0();
    never_answered(&b.all_frames, &ids);
    if let Some(peak) = peak {
        eprintln!("u13: peak memory of the bridge {peak} KiB with 16 MiB unread by the upstream");
        assert!(peak < 400 << 10, "peak memory {peak} KiB");
    }
}

#[test]
fn u14_upstream_ignores_the_termination_signal() {
    let script =
        format!("trap '' TERM; read l; {DISCOVER}; while read -r l; do :; done; exec sleep 60");
    let mut b = scripted(&[], &script);
    b.initialize();
    let since = b.close_stdin();
    // The end of stderr proves that the kill after the second grace reached the upstream.
    let status = b.wait_exit(since, EXIT_BOUND);
    assert_eq!(status.code(), Some(0), "{}", b.stderr());
    assert!(
        since.elapsed() >= Duration::from_secs(3),
        "the grace was not given"
    );
}

// ---------------------------------------------------------------------------------------
// VS Code rows

/// The end of input in each phase: exit 0 within the bound, the open request cancelled
/// without a response, and no process left.
#[test]
fn v1_end_of_input_at_each_phase() {
    // Before initialize.
    let mut b = Bridge::start(&["--", &fixture()]);
    b.close_and_expect_exit_0();
    // During discover (the upstream never answers).
    // The upstream says on its stderr that server/discover reached it.
    let mut b = scripted(
        &[],
        "read -r l; echo discover-arrived >&2; while read -r l; do :; done",
    );
    b.send(&vscode_initialize(1));
    b.expect_text("discover-arrived");
    b.close_and_expect_exit_0();
    never_answered(&b.all_frames, &[json!(1)]);
    // Ready and idle.
    let mut b = Bridge::start(&["--", &fixture()]);
    b.initialize();
    b.close_and_expect_exit_0();
    // Mid-call.
    let mut b = Bridge::start(&["--", &fixture()]);
    b.initialize();
    b.send(&call(2, "slow", json!({"ms": 60_000})));
    // The upstream reads its stdin in order: the answer of a later call means that the slow
    // call reached it.
    let r = b.exchange(&call(3, "add", json!({"a": 1, "b": 2})));
    assert_eq!(r["result"]["content"][0]["text"], "3", "{r}");
    b.close_and_expect_exit_0();
    never_answered(&b.all_frames, &[json!(2)]);
    // Mid-round: VS Code holds b-1; it gets notifications/cancelled for it.
    let mut b = Bridge::start(&["--", &fixture()]);
    b.initialize();
    b.send(&call(2, "ask_form", json!({})));
    assert_eq!(b.next_frame(support::EXCHANGE)["id"], "b-1");
    b.close_and_expect_exit_0();
    never_answered(&b.all_frames, &[json!(2)]);
    assert!(
        b.all_frames
            .iter()
            .any(|f| f["method"] == "notifications/cancelled" && f["params"]["requestId"] == "b-1"),
        "{:?}",
        b.all_frames
    );
    // Mid-listen-stream.
    let mut b = Bridge::start(&["--", &fixture()]);
    b.initialize();
    b.send(&initialized());
    for _ in 0..3 {
        b.next_frame(support::EXCHANGE);
    }
    b.close_and_expect_exit_0();
}

/// VS Code stops reading stdout: the bridge's memory stays bounded while results pile up,
/// and the end of stdin then stops it with exit 0 (by itself, at the latest by the watchdog).
#[test]
fn v2_vscode_stops_reading_stdout() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(support::bridge_bin())
        .args(["--log-level", "debug", "--", &fixture()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the bridge starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let stderr = child.stderr.take().expect("stderr");
    // Stderr line by line: the debug line of each upstream exchange tells when a result is
    // back in the bridge.
    let (tx, stderr_done) = std::sync::mpsc::channel();
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
        let _ = tx.send(());
    });
    let send = |stdin: &mut std::process::ChildStdin, v: &Value| {
        stdin.write_all(format!("{v}\n").as_bytes()).expect("write");
    };
    send(&mut stdin, &vscode_initialize(1));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the initialize result");
    let text = "z".repeat(1 << 20);
    for id in 2..42 {
        send(&mut stdin, &call(id, "echo", json!({ "text": text })));
    }
    // Measure once the bridge's queue for stdout is at its bound (32 MiB of frames: the reader
    // of the upstream pauses there): at least 31 results of 1 MiB are back in the bridge.
    let mut back = 0;
    let deadline = Instant::now() + support::EXCHANGE;
    while back < 31 {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("{back} results came back"));
        if line.contains("(tools/call, round 1 of client request ")
            && line.contains("): response after ")
        {
            back += 1;
        }
    }
    let peak = support::faults::vm_hwm_kib(child.id());
    drop(stdin);
    let since = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(since.elapsed() < Duration::from_millis(9_500), "no exit");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0));
    stderr_done
        .recv_timeout(Duration::from_secs(2))
        .expect("no process of the tree holds stderr");
    if let Some(peak) = peak {
        eprintln!(
            "v2: peak memory {peak} KiB with 40 MiB of unread results, exit after {:?}",
            since.elapsed()
        );
        assert!(peak < 400 << 10, "peak memory {peak} KiB");
    }
}

/// 10 000 requests written before any response is read: each gets exactly one response (a
/// result, or -32603 `too_many_requests` above the limit of requests in flight).
#[test]
fn v3_ten_thousand_requests_without_reading() {
    let mut b = Bridge::start(&["--", &fixture()]);
    b.initialize();
    let mut batch = Vec::new();
    for id in 2..10_002u64 {
        let frame = if id % 2 == 0 {
            request(id, "ping", json!({}))
        } else {
            call(id, "add", json!({"a": id, "b": 1}))
        };
        batch.extend_from_slice(format!("{frame}\n").as_bytes());
    }
    b.send_raw(&batch);
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..10_000 {
        let f = b.next_frame(support::EXCHANGE);
        if f.get("result").is_some() {
            ok += 1;
        } else {
            assert_eq!(f["error"]["data"]["cause"], "too_many_requests", "{f}");
            refused += 1;
        }
    }
    let peak = b.peak_kib();
    b.close_and_expect_exit_0();
    let ids: Vec<Value> = (2..10_002u64).map(|i| json!(i)).collect();
    answered_once(&b.all_frames, &ids);
    eprintln!("v3: {ok} results, {refused} refused, peak memory {peak:?} KiB");
}

#[test]
fn v4_cancellations_for_unknown_ids() {
    let mut b = Bridge::start(&["--", &fixture()]);
    b.initialize();
    for id in [json!(999), json!("b-7"), json!(null), json!({}), json!(1)] {
        b.send(
            &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}}),
        );
    }
    let r = b.exchange(&call(2, "add", json!({"a": 1, "b": 2})));
    assert!(r.get("result").is_some(), "{r}");
    b.close_and_expect_exit_0();
    assert_eq!(b.all_frames.len(), 2, "{:?}", b.all_frames);
}

#[test]
fn v5_duplicate_ids() {
    let mut b = Bridge::start(&["--", &fixture()]);
    b.initialize();
    b.send(&call(5, "slow", json!({"ms": 300})));
    b.send(&call(5, "add", json!({"a": 1, "b": 2})));
    let first = b.next_frame(support::EXCHANGE);
    assert_eq!(first["error"]["code"], -32600, "{first}");
    assert_eq!(
        first["error"]["data"]["detail"],
        "a request with this id is in flight"
    );
    let second = b.next_frame(support::EXCHANGE);
    assert!(second.get("result").is_some(), "{second}");
    b.close_and_expect_exit_0();
    assert_eq!(b.all_frames.len(), 3, "{:?}", b.all_frames);
}

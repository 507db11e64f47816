//! Paths of the rules (docs/rules.md) that no other test forces (bridge/README.md "Reliability"), on the
//! real binary: `cannot start the listen stream`, the "too deep to examine" line,
//! `--log-level` as a threshold, the signal form of the exit line, a cancellation of
//! `initialize`, no form answer on stderr at debug, and C1 "at once". The watchdog, the
//! internal error line and the request timeout need the bridge's own hooks and clock: they are
//! unit tests of `front` (`front::watchdog_tests`, `front::timeout_tests`).
#![cfg(unix)]

use crate::support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::{Bridge, EXIT_BOUND, call, request, vscode_initialize};

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

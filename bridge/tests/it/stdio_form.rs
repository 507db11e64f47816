//! The stdio form after `initialize` on the real binaries: `mcp-bridge-vscode` in front of
//! `bridge-fixture-server` or a scripted upstream: the lists and their pages, calls, progress,
//! the stop at the end of stdin, an upstream that crashes, bad input lines, cancellations, the
//! debug lines and the bound of requests in flight (the start and `initialize`: the module
//! `initialize`). Each test that starts the bridge also proves that no process of its tree is
//! left (see support::Bridge).

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Bridge, EXIT_BOUND, call, fixture_bin, request, vscode_initialize};

pub(crate) fn fixture() -> String {
    fixture_bin().to_string_lossy().into_owned()
}

pub(crate) fn start(options: &[&str]) -> Bridge {
    let f = fixture();
    let mut args: Vec<&str> = options.to_vec();
    args.push("--");
    args.push(&f);
    Bridge::start(&args)
}

pub(crate) fn text_of(response: &Value) -> String {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Walks a schema and returns the pointers of array schemas without truthy `items`.
fn arrays_without_items(schema: &Value, pointer: String, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if map.get("type") == Some(&json!("array")) {
                let ok = map
                    .get("items")
                    .is_some_and(|i| i.is_object() || i.is_array() || i == &json!(true));
                if !ok {
                    out.push(pointer.clone());
                }
            }
            for (k, v) in map {
                arrays_without_items(v, format!("{pointer}/{k}"), out);
            }
        }
        Value::Array(list) => {
            for (i, v) in list.iter().enumerate() {
                arrays_without_items(v, format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
    }
}
#[test]
fn r4_r6_tools_list_pages_through_every_tool_with_items_and_string_cursors() {
    let mut b = start(&[]);
    b.initialize();
    // VS Code's order after the result: setLevel, initialized, prompts/list, tools/list.
    b.send(&json!({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}));
    b.send(&json!({"method":"notifications/initialized","jsonrpc":"2.0"}));
    assert_eq!(b.response(2)["result"], json!({}));
    let mut names = Vec::new();
    let mut cursor: Option<Value> = None;
    for page in 0..50u64 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = b.exchange(&request(10 + page, "tools/list", params));
        let result = &r["result"];
        for tool in result["tools"].as_array().expect("tools") {
            let mut bad = Vec::new();
            arrays_without_items(&tool["inputSchema"], String::new(), &mut bad);
            assert!(
                bad.is_empty(),
                "tool {} has arrays without items at {bad:?}",
                tool["name"]
            );
            if let Some(out) = tool.get("outputSchema") {
                assert_eq!(out["type"], "object");
            }
            names.push(tool["name"].as_str().unwrap_or_default().to_owned());
        }
        match result.get("nextCursor") {
            None => break,
            Some(c) => {
                assert!(c.is_string(), "R4: nextCursor {c}");
                cursor = Some(c.clone());
            }
        }
    }
    for expected in ["echo", "add", "slow", "progress", "bare_array", "crash"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }
    b.expect_line(|l| {
        l.contains(
            "tool 'bare_array': added an items schema at '/properties/values' of the input schema",
        )
    });
    b.close_and_expect_exit_0();
}

#[test]
fn r4_many_tools_give_several_pages() {
    let f = fixture();
    let mut b = Bridge::start(&["--", &f, "--many-tools", "250"]);
    b.initialize();
    let mut count = 0;
    let mut pages = 0;
    let mut cursor: Option<Value> = None;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let r = b.exchange(&request(100 + pages, "tools/list", params));
        pages += 1;
        count += r["result"]["tools"].as_array().map_or(0, Vec::len);
        match r["result"].get("nextCursor") {
            Some(c) => {
                assert!(c.is_string());
                cursor = Some(c.clone());
            }
            None => break,
        }
        assert!(pages < 20);
    }
    assert!(pages > 1, "more than one page");
    assert!(count >= 250, "{count}");
    b.close_and_expect_exit_0();
}

#[test]
fn o8_o9_add_prompt_resource_and_completion_are_forwarded() {
    let mut b = start(&[]);
    b.initialize();
    let r = b.exchange(&call(2, "add", json!({"a":2,"b":3})));
    assert_eq!(text_of(&r), "5");
    let r = b.exchange(&request(
        3,
        "prompts/get",
        json!({"name":"greet","arguments":{"name":"VS Code"}}),
    ));
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"],
        "Hello, VS Code."
    );
    let r = b.exchange(&request(
        4,
        "resources/read",
        json!({"uri":"file:///fixture/notes.txt"}),
    ));
    assert_eq!(
        r["result"]["contents"][0]["text"],
        "The notes of the fixture."
    );
    let r = b.exchange(&request(
        5,
        "completion/complete",
        json!({"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"a"}}),
    ));
    assert!(r["result"]["completion"]["values"].is_array(), "{r}");
    for m in ["prompts/list", "resources/list", "resources/templates/list"] {
        let r = b.exchange(&request(6, m, json!({})));
        assert!(r.get("result").is_some(), "{m}: {r}");
        assert!(r["result"].get("resultType").is_none());
    }
    // An upstream error passes unchanged (O8): an unknown tool.
    let r = b.exchange(&call(7, "no_such_tool", json!({})));
    assert!(r.get("error").is_some(), "{r}");
    b.close_and_expect_exit_0();
}

#[test]
fn o4_c3_three_progress_notifications_with_token_0_come_before_the_result() {
    let mut b = start(&[]);
    b.initialize();
    b.send(&request(
        2,
        "tools/call",
        json!({"name":"progress","arguments":{"count":3},"_meta":{"progressToken":0}}),
    ));
    let (r, notes) = b.response_with_notifications(&json!(2));
    assert_eq!(text_of(&r), "sent 3 progress notifications");
    assert_eq!(notes.len(), 3, "{notes:?}");
    for (i, n) in notes.iter().enumerate() {
        assert_eq!(n["method"], "notifications/progress");
        assert_eq!(n["params"]["progressToken"], 0);
        assert_eq!(n["params"]["progress"].as_f64(), Some((i + 1) as f64));
        assert!(n["params"].get("_meta").is_none());
    }
    // A UUID token of the Local harness.
    let uuid = "3f1c2e0a-8d0b-4f7e-9a51-6c2d1b7e9f10";
    b.send(&request(
        3,
        "tools/call",
        json!({"name":"progress","arguments":{"count":2},"_meta":{"progressToken":uuid}}),
    ));
    let (_, notes) = b.response_with_notifications(&json!(3));
    assert_eq!(notes.len(), 2);
    assert!(notes.iter().all(|n| n["params"]["progressToken"] == uuid));
    // No token, no progress.
    b.send(&call(4, "progress", json!({"count":3})));
    let (_, notes) = b.response_with_notifications(&json!(4));
    assert!(notes.is_empty(), "{notes:?}");
    b.close_and_expect_exit_0();
}

#[test]
fn r7_closing_stdin_during_a_slow_call_ends_both_processes_with_code_0_and_no_response() {
    let mut b = start(&[]);
    b.initialize();
    b.send(&call(2, "slow", json!({"ms":60000})));
    // Meanwhile the connection still answers.
    assert_eq!(
        b.exchange(&request(3, "ping", json!({})))["result"],
        json!({})
    );
    assert_eq!(
        text_of(&b.exchange(&call(4, "add", json!({"a":1,"b":1})))),
        "2"
    );
    let since = b.close_stdin();
    let status = b.wait_exit(since, EXIT_BOUND);
    assert_eq!(status.code(), Some(0), "{}", b.stderr());
    assert!(
        b.all_frames.iter().all(|f| f["id"] != json!(2)),
        "no response to the slow call"
    );
    // Aim: far below the bound when the upstream stops at the end of its stdin.
    assert!(since.elapsed() < EXIT_BOUND);
}

#[test]
fn r7_exit_0_when_stdin_ends_before_initialize() {
    let mut b = start(&[]);
    let since = b.close_stdin();
    let status = b.wait_exit(since, EXIT_BOUND);
    assert_eq!(status.code(), Some(0));
    assert!(b.all_frames.is_empty());
    assert!(
        since.elapsed() < Duration::from_secs(2),
        "idle stop is fast"
    );
}

#[test]
fn upstream_crash_fails_the_calls_in_flight_and_the_bridge_exits_1_with_the_contract_line() {
    let mut b = start(&[]);
    b.initialize();
    b.send(&call(2, "slow", json!({"ms":60000})));
    b.send(&call(3, "crash", json!({})));
    let since = Instant::now();
    let mut answered = Vec::new();
    for _ in 0..2 {
        let f = b.next_frame(support::EXCHANGE);
        assert_eq!(f["error"]["code"], -32603, "{f}");
        assert_eq!(f["error"]["data"]["cause"], "upstream_exited", "{f}");
        answered.push(f["id"].clone());
    }
    answered.sort_by_key(|v| v.as_i64());
    assert_eq!(answered, vec![json!(2), json!(3)], "each call exactly once");
    let status = b.wait_exit(since, EXIT_BOUND);
    assert_eq!(status.code(), Some(1));
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: error: the upstream server exited with code 3"
    });
    assert_eq!(b.all_frames.len(), 3, "{:?}", b.all_frames);
}

#[test]
fn upstream_crash_while_no_request_is_in_flight_makes_the_bridge_exit_1() {
    let mut b = start(&[]);
    b.initialize();
    let r = b.exchange(&call(2, "crash", json!({"after_ms":200})));
    assert_eq!(text_of(&r), "the server stops in 200 ms");
    let status = b.wait_exit(Instant::now(), EXIT_BOUND);
    assert_eq!(status.code(), Some(1));
    b.expect_line(|l| l.ends_with("bridge: error: the upstream server exited with code 3"));
}

#[test]
fn an_upstream_that_closes_stdout_and_keeps_running_fails_initialize_and_is_stopped() {
    let f = fixture();
    let mut b = Bridge::start(&["--discover-timeout", "5", "--", &f, "--close-stdout"]);
    let since = Instant::now();
    let r = b.exchange(&vscode_initialize(1));
    assert!(since.elapsed() < Duration::from_secs(5) + 2 * Duration::from_secs(2));
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(r["error"]["data"]["cause"], "discover_failed");
    b.expect_text(
        "mcp-bridge-vscode: bridge: warning: server/discover failed: the upstream server closed its output\n",
    );
    // The connection goes back to the state before initialize; the child is stopped.
    b.close_and_expect_exit_0();
}

#[test]
fn input_hardening_each_bad_line_gets_its_error_and_the_connection_goes_on() {
    let mut b = start(&["--max-line-bytes", "300"]);
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\n");
    let r = b.next_frame(support::EXCHANGE);
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(1), json!(-32700))
    );
    b.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"\xff\"}\n");
    let r = b.next_frame(support::EXCHANGE);
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(2), json!(-32700))
    );
    b.send_raw(b"{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}\n");
    let r = b.next_frame(support::EXCHANGE);
    assert_eq!(
        (r["id"].clone(), r["error"]["data"]["cause"].clone()),
        (json!(3), json!("invalid_request_shape"))
    );
    b.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}]\n");
    let r = b.next_frame(support::EXCHANGE);
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
    // A long line: the id from its head, and from its tail (the TypeScript SDK writes id last).
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{{\"t\":\"{}\"}}}}\n",
        "x".repeat(1000)
    );
    b.send_raw(long.as_bytes());
    let r = b.next_frame(support::EXCHANGE);
    assert_eq!(r["id"], 5);
    assert_eq!(
        r["error"]["data"],
        json!({"cause":"line_too_long","detail":"limit: 300 bytes"})
    );
    let long = format!(
        "{{\"method\":\"tools/call\",\"params\":{{\"t\":\"{}\"}},\"jsonrpc\":\"2.0\",\"id\":6}}\n",
        "x".repeat(1000)
    );
    b.send_raw(long.as_bytes());
    assert_eq!(b.next_frame(support::EXCHANGE)["id"], 6);
    let mut deep = String::from("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":");
    deep.push_str(&"[".repeat(140));
    deep.push_str(&"]".repeat(140));
    deep.push_str("}\n");
    let mut b2 = start(&[]);
    b2.send_raw(deep.as_bytes());
    let r = b2.next_frame(support::EXCHANGE);
    assert_eq!(
        (r["id"].clone(), r["error"]["data"]["cause"].clone()),
        (json!(7), json!("too_deep"))
    );
    b2.close_and_expect_exit_0();
    // Blank lines are skipped; the connection goes on.
    b.send_raw(b"\n  \r\n");
    assert_eq!(
        b.exchange(&request(8, "ping", json!({})))["result"],
        json!({})
    );
    b.close_and_expect_exit_0();
}

#[test]
fn a_client_cancellation_gets_no_response_and_the_connection_goes_on() {
    let mut b = start(&["--log-level", "debug"]);
    b.initialize();
    b.send(&call(2, "slow", json!({"ms":60000})));
    // The ping answer proves that the slow call is in flight before the cancellation.
    assert_eq!(
        b.exchange(&request(3, "ping", json!({})))["result"],
        json!({})
    );
    b.send(&json!({"method":"notifications/cancelled","params":{"requestId":2},"jsonrpc":"2.0"}));
    assert_eq!(
        text_of(&b.exchange(&call(4, "add", json!({"a":1,"b":2})))),
        "3"
    );
    b.close_and_expect_exit_0();
    assert!(b.all_frames.iter().all(|f| f["id"] != json!(2)));
    b.expect_line(|l| l.contains("(tools/call, round 1 of client request 2): canceled after "));
}

#[test]
fn r7_debug_lines_are_tagged_and_never_carry_frame_content() {
    let marker = "MARKER-7f3a-no-frame-content";
    let mut b = start(&["--log-level", "debug"]);
    b.initialize();
    let r = b.exchange(&call(2, "echo", json!({"text": marker})));
    assert_eq!(text_of(&r), marker);
    b.close_and_expect_exit_0();
    let stderr = b.stderr();
    for line in stderr.lines() {
        assert!(
            line.starts_with("mcp-bridge-vscode: ") || line.starts_with("bridge-fixture-server"),
            "an untagged line: {line}"
        );
        if line.starts_with("mcp-bridge-vscode: ") {
            assert!(!line.contains(marker), "frame content on stderr: {line}");
        }
    }
    assert!(stderr.contains("mcp-bridge-vscode: bridge: debug: upstream request "));
    assert!(stderr.contains("(tools/call, round 1 of client request 2): response after "));
}

#[test]
fn too_many_requests_in_flight_get_32603_at_once() {
    let mut b = start(&[]);
    b.initialize();
    let limit = mcp_bridge_vscode::embed::Options::default().max_in_flight as u64;
    for id in 0..limit {
        b.send(&call(100 + id, "slow", json!({"ms":60000})));
    }
    let r = b.exchange(&call(1000, "add", json!({"a":1,"b":1})));
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(r["error"]["data"]["cause"], "too_many_requests");
    assert_eq!(
        r["error"]["message"],
        "The connection has too many requests in flight"
    );
    b.expect_line(|l| l == "mcp-bridge-vscode: bridge: warning: rejected request 1000 (tools/call): too many requests in flight");
    // Reading never stops: ping is answered, and the end of stdin stops everything.
    assert_eq!(
        b.exchange(&request(1001, "ping", json!({})))["result"],
        json!({})
    );
    b.close_and_expect_exit_0();
}

#[cfg(unix)]
#[test]
fn an_upstream_that_closes_stdout_while_ready_is_stopped_and_the_bridge_exits_1() {
    let script = r#"
read l; echo '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","capabilities":{"tools":{}}}}'
exec >&-
exec sleep 30
"#;
    let mut b = Bridge::start(&["--", "sh", "-c", script]);
    b.initialize();
    let since = Instant::now();
    let status = b.wait_exit(since, EXIT_BOUND);
    assert_eq!(status.code(), Some(1));
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: error: the upstream server stopped on signal 15"
    });
}

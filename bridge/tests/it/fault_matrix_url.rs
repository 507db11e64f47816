//! The fault matrix of the URL form (bridge/README.md "Reliability"): 5xx, 408 and 429, a
//! reset in the middle of an SSE stream, a TLS failure, a response that never ends, and an
//! event over `--max-response-bytes`. An upstream at a URL never stops the bridge: each row
//! checks the failed request's answer (exactly once), the contract's line (the warning, or the
//! debug line of the failed exchange where the row has no warning), that the next
//! request still works, and exit 0 with no process left at the end of stdin.
#![cfg(unix)]

use crate::support;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::faults::answered_once;
use support::url_upstreams::{
    Answer, HttpsFixture, RawServer, certs_dir, json_response, sse_head_and_events, status_response,
};
use support::{Bridge, call, vscode_initialize};

fn ca() -> String {
    certs_dir().join("ca.crt").to_string_lossy().into_owned()
}

fn discover_result(id: &Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"result":{"resultType":"complete","capabilities":{"tools":{}}}})
}

/// A raw upstream: discover, then `tools/call` by the tool's name: `fail` gets the scripted
/// answer, `ok` a result.
fn raw(fail: impl Fn(&Value) -> Answer + Send + Sync + 'static) -> RawServer {
    RawServer::start(move |req| {
        let id = req.get("id").cloned().unwrap_or(Value::Null);
        match req["method"].as_str().unwrap_or("") {
            "server/discover" => Answer::Bytes(json_response(200, &discover_result(&id))),
            "tools/call" if req["params"]["name"] == "fail" => fail(req),
            "tools/call" => Answer::Bytes(json_response(
                200,
                &json!({"jsonrpc":"2.0","id":id,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}),
            )),
            _ if req.get("id").is_none() => {
                Answer::Bytes(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec())
            }
            _ => Answer::Bytes(status_response(404)),
        }
    })
}

/// A call that fails, then a call that works; both answered exactly once.
fn fail_then_ok(b: &mut Bridge) -> Value {
    let r = b.exchange(&call(2, "fail", json!({})));
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let ok = b.exchange(&call(3, "ok", json!({})));
    assert_eq!(ok["result"]["content"][0]["text"], "ok", "{ok}");
    r
}

/// The debug line of the failed call (request 2, the contract's line of each upstream
/// exchange) with its outcome; the bridges of the rows with no warning run at the debug level.
fn expect_call_line(b: &Bridge, outcome: &str) {
    let line = format!(
        "mcp-bridge-vscode: bridge: debug: upstream request 2 (tools/call, round 1 of client request 2): {outcome}"
    );
    b.expect_line(|l| l.starts_with(&line));
}

fn finish(mut b: Bridge, ids: &[Value]) {
    b.close_and_expect_exit_0();
    answered_once(&b.all_frames, ids);
}

#[test]
fn h1_5xx_408_429_on_a_call_fail_that_call_only() {
    for status in [500u16, 503, 408, 429] {
        let server = raw(move |_| Answer::Bytes(status_response(status)));
        let mut b = Bridge::start(&["--log-level", "debug", &server.url]);
        b.initialize();
        let r = fail_then_ok(&mut b);
        assert!(
            r.to_string().contains(&format!("HTTP status {status}")),
            "status {status}: {r}"
        );
        expect_call_line(&b, &format!("failed (HTTP status {status}) after "));
        finish(b, &[json!(1), json!(2), json!(3)]);
    }
}

#[test]
fn h2_5xx_408_429_on_the_listen_stream_give_the_line_and_a_new_stream() {
    for status in ["503", "408", "429"] {
        let fixture = HttpsFixture::start(&["--listen-status", &format!("{status}:1")], &[]);
        let mut b = Bridge::start(&["--ca-file", &ca(), &fixture.url]);
        b.initialize();
        b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        b.expect_line(|l| {
            l.starts_with(&format!(
                "mcp-bridge-vscode: bridge: warning: the listen stream ended with the HTTP status {status}. A new stream follows in "
            ))
        });
        // The next stream is served: its acknowledgment gives the gap replay.
        let f = b.next_frame(support::EXCHANGE);
        assert_eq!(f["method"], "notifications/tools/list_changed", "{f}");
        finish(b, &[json!(1)]);
    }
}

#[test]
fn h3_a_reset_in_the_middle_of_an_sse_stream() {
    let server = raw(|req| {
        let progress = json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":req["params"]["_meta"]["progressToken"],"progress":1}});
        let mut bytes = sse_head_and_events(&[progress]);
        bytes.extend_from_slice(b"data: {\"jsonrpc\":\"2.0\",\"id\"");
        Answer::BytesThenClose(bytes)
    });
    let mut b = Bridge::start(&["--log-level", "debug", &server.url]);
    b.initialize();
    let r = fail_then_ok(&mut b);
    assert_eq!(r["error"]["data"]["cause"], "transport_failed", "{r}");
    expect_call_line(&b, "failed (the connection failed (");
    finish(b, &[json!(1), json!(2), json!(3)]);
}

#[test]
fn h4_a_tls_failure() {
    let fixture = HttpsFixture::start(&["--untrusted"], &[]);
    let mut b = Bridge::start(&["--ca-file", &ca(), &fixture.url]);
    let r = b.exchange(&vscode_initialize(1));
    assert_eq!(r["error"]["data"]["cause"], "discover_failed", "{r}");
    // The cause is the certificate (not any failure to connect).
    b.expect_line(|l| {
        l.starts_with(
            "mcp-bridge-vscode: bridge: warning: server/discover failed: the connection failed (",
        ) && l.contains("invalid peer certificate: UnknownIssuer")
    });
    // The URL form never stops the bridge: a later initialize tries again.
    let r = b.exchange(&vscode_initialize(2));
    assert_eq!(r["error"]["data"]["cause"], "discover_failed", "{r}");
    finish(b, &[json!(1), json!(2)]);
}

#[test]
fn h5_a_response_that_never_ends() {
    // The discover response never ends: --discover-timeout bounds it.
    let hang = RawServer::start(|_| Answer::BytesThenHang(sse_head_and_events(&[])));
    let mut b = Bridge::start(&["--discover-timeout", "1", &hang.url]);
    let since = Instant::now();
    let r = b.exchange(&vscode_initialize(1));
    assert_eq!(
        r["error"]["data"],
        json!({"cause":"discover_failed","detail":"no response in 1 s"})
    );
    assert!(since.elapsed() < Duration::from_secs(5));
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: warning: server/discover failed: no response in 1 s"
    });
    // The bridge gave the request up: it closed the connection.
    let deadline = Instant::now() + Duration::from_secs(5);
    while hang.closed_hangs.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the connection stayed open");
        std::thread::sleep(Duration::from_millis(10));
    }
    finish(b, &[json!(1)]);

    // A call whose response never ends: VS Code's cancellation closes its connection.
    let arrived = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = std::sync::Arc::clone(&arrived);
    let server = raw(move |_| {
        seen.store(true, Ordering::SeqCst);
        Answer::BytesThenHang(sse_head_and_events(&[]))
    });
    let mut b = Bridge::start(&["--log-level", "debug", &server.url]);
    b.initialize();
    b.send(&call(2, "fail", json!({})));
    // The cancellation follows the call's arrival upstream.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !arrived.load(Ordering::SeqCst) {
        assert!(
            Instant::now() < deadline,
            "the call never reached the server"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}));
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.closed_hangs.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "the cancelled call's connection stayed open"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    expect_call_line(&b, "canceled after ");
    let ok = b.exchange(&call(3, "ok", json!({})));
    assert_eq!(ok["result"]["content"][0]["text"], "ok", "{ok}");
    b.close_and_expect_exit_0();
    assert!(
        b.all_frames.iter().all(|f| f["id"] != 2),
        "a cancelled call got a response"
    );
}

#[test]
fn h6_an_event_over_max_response_bytes() {
    let fixture = HttpsFixture::start(&["--always-sse"], &[]);
    let mut b = Bridge::start(&[
        "--ca-file",
        &ca(),
        "--max-response-bytes",
        "65536",
        "--log-level",
        "debug",
        &fixture.url,
    ]);
    b.initialize();
    let big = "q".repeat(1 << 20);
    let r = b.exchange(&call(2, "echo", json!({ "text": big })));
    assert_eq!(r["error"]["code"], -32603, "{r}");
    expect_call_line(
        &b,
        "failed (the response is not valid (a message of the upstream server is longer than --max-response-bytes (65536))) after ",
    );
    let small = b.exchange(&call(3, "echo", json!({"text": "small"})));
    assert!(small.get("result").is_some(), "{small}");
    let peak = b.peak_kib();
    finish(b, &[json!(1), json!(2), json!(3)]);
    if let Some(peak) = peak {
        eprintln!("h6: peak memory of the bridge {peak} KiB");
        assert!(peak < 128 << 10, "{peak} KiB");
    }
}

//! L4 (docs/older-servers.md) on the real binary: the URL form in front of older servers at a
//! URL. The fixture with `--revision 2025-11-25` (rmcp's Streamable HTTP with sessions, and
//! the HTTP+SSE transport of 2024-11-05 at `/sse`), and two servers that we did not write over
//! Streamable HTTP: the FastMCP server of the Python SDK 1.30 (tests/older/python_server.py
//! `--http`) and the TypeScript SDK v1 (tests/interop/ts-v1-server.mjs `--http`). Plain http
//! on 127.0.0.1: the bridge accepts loopback http.

use crate::support;

use std::io::{Read, Write};

use serde_json::{Value, json};
use support::http_peers::HttpPeer;
use support::https_fixture::HttpsFixture;
use support::oauth::{
    bridge as oauth_bridge, complete, counters, fixture_request, free_port, initialize_signing_in,
    oauth_fixture, set_overrides,
};
use support::stored::add;
use support::{Bridge, call, request};

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// The older fixture over plain http on 127.0.0.1.
fn older_fixture() -> HttpsFixture {
    HttpsFixture::start(&["--plain-http", "--revision", "2025-11-25"], &[])
}

/// The bridge in front of the older fixture with its sign-in, `initialize` signed in.
fn signed_in(fixture: &HttpsFixture) -> Bridge {
    let mut b = oauth_bridge(
        &fixture.url,
        free_port(),
        &["--no-browser", "--upstream-revision", "2025-11-25"],
        &[],
    );
    initialize_signing_in(&mut b);
    b
}

/// The bridge in front of `url` with `options`, initialized, after
/// `notifications/initialized`.
fn started(options: &[&str], url: &str) -> Bridge {
    let mut args: Vec<&str> = options.to_vec();
    args.push(url);
    let mut b = Bridge::start_with_env_removed(&args, &[], &support::MACHINE_VARS);
    let result = b.initialize();
    assert!(result["protocolVersion"].is_string(), "{result}");
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    b
}

/// The next frame, a request of the bridge to VS Code with a `b-` id; VS Code answers it.
fn answer_bridge_request(b: &mut Bridge, method: &str, result: Value) -> Value {
    let ask = b.next_frame(support::EXCHANGE);
    assert_eq!(ask["method"], method, "{ask}");
    assert!(
        ask["id"].as_str().is_some_and(|id| id.starts_with("b-")),
        "{ask}"
    );
    b.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": result}));
    ask
}

/// `POST <origin><path>` on a plain http server, without a body; the status line.
fn post_plain(url: &str, path: &str) -> String {
    let authority = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .expect("a plain http URL");
    let mut stream = std::net::TcpStream::connect(authority).expect("the fixture answers");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).expect("the request goes");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.lines().next().unwrap_or_default().to_owned()
}

#[test]
fn l4_a_400_to_the_discover_post_is_an_older_server_whose_session_serves_and_is_deleted() {
    let fixture = older_fixture();
    let mut b = started(&[], &fixture.url);
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: info: the upstream server answered server/discover with the HTTP status 400: it is a server of an older revision"
    });
    let list = b.exchange(&request(2, "tools/list", json!({})));
    assert!(list.to_string().contains("\"echo\""), "{list}");
    let echo = b.exchange(&call(3, "echo", json!({"text": "hi"})));
    assert_eq!(text(&echo), "hi", "{echo}");
    // The GET stream carries nothing here, the POST streams carry the server's requests.
    let accepted = json!({"action": "accept", "content": {"name": "Ada"}});
    b.send(&call(4, "ask_form", json!({})));
    answer_bridge_request(&mut b, "elicitation/create", accepted);
    let form = b.response(4);
    assert!(text(&form).contains("Ada"), "{form}");
    b.close_and_expect_exit_0();
    assert!(
        !b.stderr()
            .contains("DELETE of the upstream session: the connection failed"),
        "{}",
        b.stderr()
    );
    // The DELETE at the stop ended the session: the fixture's hook finds none left.
    assert_eq!(
        post_plain(&fixture.url, "/fixture/expire-sessions"),
        "HTTP/1.1 204 No Content"
    );
    fixture.expect_text("ended 0 sessions (/fixture/expire-sessions)");
}

#[test]
fn l4_an_expired_session_is_initialized_again_once_and_the_request_goes_again() {
    let fixture = older_fixture();
    let mut b = started(&["--upstream-revision", "2025-11-25"], &fixture.url);
    let first = b.exchange(&call(2, "echo", json!({"text": "one"})));
    assert_eq!(text(&first), "one", "{first}");
    assert_eq!(
        post_plain(&fixture.url, "/fixture/expire-sessions"),
        "HTTP/1.1 204 No Content"
    );
    let again = b.exchange(&call(3, "echo", json!({"text": "two"})));
    assert_eq!(
        text(&again),
        "two",
        "the request went again on the new session: {again}"
    );
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: warning: the upstream server ended the session (HTTP status 404): the bridge initializes a new one"
    });
    b.close_and_expect_exit_0();
    assert!(
        !b.stderr().contains("server/discover"),
        "a forced older revision sends no discover:\n{}",
        b.stderr()
    );
}

/// L4: a server may close a POST's event stream before its response (the polling of
/// 2025-11-25: the Python SDK's `close_sse_stream`, with its event store); the bridge reads
/// on with a GET and `Last-Event-ID` after the server's `retry`: the progress after the close
/// and the result reach VS Code, each once.
#[test]
fn l4_an_event_stream_closed_before_its_response_is_read_on_with_last_event_id() {
    let Some(peer) = HttpPeer::py_older() else {
        return;
    };
    let mut b = started(&[], peer.url());
    let mut frame = call(2, "poll", json!({}));
    frame["params"]["_meta"] = json!({"progressToken": "p"});
    b.send(&frame);
    let (result, notes) = b.response_with_notifications(&json!(2));
    assert_eq!(text(&result), "polled", "{result}");
    let steps: Vec<&Value> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| &n["params"]["progress"])
        .collect();
    assert_eq!(steps, [&json!(1.0), &json!(2.0)], "{notes:?}");
    b.close_and_expect_exit_0();
    peer.stop();
}

/// L4: a server of 2025-03-26 has no protected resource metadata (404, and no
/// `resource_metadata` in its challenge): the bridge signs in at the authorization server of
/// its origin, and the session serves.
#[test]
fn l4_an_older_server_without_resource_metadata_signs_in_at_its_origin() {
    let fixture = oauth_fixture(&["--revision", "2025-11-25"]);
    set_overrides(&fixture, &json!({"no_resource_metadata": true}));
    let mut b = oauth_bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    initialize_signing_in(&mut b);
    add(&mut b);
    b.expect_line(|l| l.contains("has no protected resource metadata: the bridge asks for the authorization server metadata at its origin"));
    assert_eq!(
        counters(&fixture)["token_requests"]["authorization_code"],
        1
    );
    b.close_and_expect_exit_0();
}

/// L4: the fallback to the origin's authorization server sends the MCP URL without its query
/// as the `resource` (RFC 8707): the fixture accepts only its MCP URL, and refuses the grant
/// for any other.
#[test]
fn l4_an_older_server_without_resource_metadata_gets_the_mcp_url_without_its_query_as_resource() {
    let fixture = oauth_fixture(&["--revision", "2025-11-25"]);
    set_overrides(&fixture, &json!({"no_resource_metadata": true}));
    let url = format!("{}?tenant=a", fixture.url);
    let mut b = oauth_bridge(&url, free_port(), &["--no-browser"], &[]);
    initialize_signing_in(&mut b);
    add(&mut b);
    let c = counters(&fixture);
    assert_eq!(c["token_requests"]["authorization_code"], 1, "{c}");
    b.close_and_expect_exit_0();
}

/// L4: only a 404 of the protected resource metadata means a server of 2025-03-26; a 503 (or
/// any other status) is a broken server, and the sign-in fails with that status instead of
/// signing in at the origin.
#[test]
fn l4_a_5xx_of_the_protected_resource_metadata_fails_the_sign_in_without_the_origin_fallback() {
    let fixture = oauth_fixture(&["--revision", "2025-11-25"]);
    set_overrides(
        &fixture,
        &json!({"no_resource_metadata": true, "resource_metadata_status": 503}),
    );
    let mut b = oauth_bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    b.send(&support::vscode_initialize(1));
    let r = b.response(1);
    assert!(r.get("error").is_some(), "{r}");
    b.expect_line(|l| {
        l.contains("the protected resource metadata of the upstream server answered with the HTTP status 503, not 404")
    });
    assert!(
        !b.stderr().contains("at its origin (revision 2025-03-26)"),
        "{}",
        b.stderr()
    );
    let c = counters(&fixture);
    assert_eq!(c["authorization_requests"], 0, "{c}");
    assert_eq!(c["token_requests"]["authorization_code"], 0, "{c}");
    b.close_and_expect_exit_0();
}

/// L4: the DELETE of the session at the stop goes with the token that the bridge holds: with
/// tokens that expire within the bridge's margin of 60 s, every other request refreshes first,
/// the DELETE does not (a refresh or a sign-in would outlast the stop's bound).
#[test]
fn l4_the_delete_at_the_stop_uses_the_token_held_and_starts_no_refresh() {
    let fixture = oauth_fixture(&["--revision", "2025-11-25"]);
    set_overrides(&fixture, &json!({"expires_in": 30}));
    let mut b = signed_in(&fixture);
    let refreshed = counters(&fixture)["token_requests"]["refresh_token"].clone();
    assert!(
        refreshed.as_u64().is_some_and(|n| n >= 1),
        "a request with a token near its expiry refreshes it: {refreshed}"
    );
    b.close_and_expect_exit_0();
    // rmcp answers 202: the token held was accepted.
    b.expect_line(|l| l.ends_with("DELETE of the upstream session: HTTP status 202"));
    assert_eq!(
        counters(&fixture)["token_requests"]["refresh_token"],
        refreshed,
        "{}",
        b.stderr()
    );
}

/// L4: a new sign-in (here the step-up of `guarded`) ends the use of the session made under
/// the earlier one: the refused call is not sent again with its `Mcp-Session-Id`; a new session
/// is initialized and the call goes on it. The old session is left to the server (no DELETE
/// with the new token either): after the stop, which deletes the new one, the fixture still
/// holds exactly one.
#[test]
fn l4_a_new_sign_in_makes_a_new_session_and_the_old_session_id_is_not_sent_again() {
    let fixture = oauth_fixture(&["--revision", "2025-11-25"]);
    let mut b = signed_in(&fixture);
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    add(&mut b);
    b.send(&call(3, "guarded", json!({})));
    let q = loop {
        let f = b.next_frame(support::EXCHANGE);
        if f.get("id").is_some() && f.get("method").is_some() {
            break f;
        }
    };
    assert_eq!(q["method"], "elicitation/create", "{q}");
    let step_up = q["params"]["url"].as_str().expect("url").to_owned();
    b.send(&json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept"}}));
    complete(&step_up);
    let (r, _) = b.response_with_notifications(&json!(3));
    assert_eq!(
        text(&r),
        "guarded: the token has the scope mcp:write",
        "{r}\n{}",
        b.stderr()
    );
    // Each session served one sign-in only: the session of the token with mcp:read alone
    // never carried the token of the step-up.
    let c = counters(&fixture);
    let mut scopes_of: std::collections::HashMap<String, Vec<String>> = Default::default();
    for used in c["session_scopes"].as_array().expect("session_scopes") {
        let session = used["session"].as_str().unwrap_or_default().to_owned();
        let scopes = used["scopes"].as_str().unwrap_or_default().to_owned();
        let seen = scopes_of.entry(session).or_default();
        if !seen.contains(&scopes) {
            seen.push(scopes);
        }
    }
    assert_eq!(scopes_of.len(), 2, "{c}");
    assert!(scopes_of.values().all(|s| s.len() == 1), "{c}");
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: info: a new sign-in: the bridge initializes a new session of the upstream server (the session of the earlier sign-in is not used again)"
    });
    b.close_and_expect_exit_0();
    let (status, _) = fixture_request(fixture.port, "POST", "/fixture/expire-sessions");
    assert_eq!(status, 204);
    fixture.expect_text("ended 1 sessions (/fixture/expire-sessions)");
}

#[test]
fn l4_a_405_to_the_initialize_post_falls_back_to_the_http_sse_transport_of_2024_11_05() {
    let fixture = older_fixture();
    let sse = fixture.url.replace("/mcp", "/sse");
    let mut b = started(&[], &sse);
    b.expect_line(|l| {
        l.starts_with("mcp-bridge-vscode: bridge: info: the upstream server refused the initialize POST with the HTTP status ")
            && l.ends_with(": the bridge tries the HTTP+SSE transport of 2024-11-05")
    });
    let list = b.exchange(&request(2, "tools/list", json!({})));
    assert!(list.to_string().contains("\"echo\""), "{list}");
    let echo = b.exchange(&call(3, "echo", json!({"text": "sse"})));
    assert_eq!(text(&echo), "sse", "{echo}");
    let sampled = json!({"role": "assistant", "content": {"type": "text", "text": "Hello!"},
        "model": "m"});
    b.send(&call(4, "sample", json!({})));
    answer_bridge_request(&mut b, "sampling/createMessage", sampled);
    let response = b.response(4);
    assert!(text(&response).contains("Hello!"), "{response}");
    b.close_and_expect_exit_0();
}

/// L4 with a server that we did not write, at `peer`: list, call, a form elicitation and a list
/// change through the bridge. A server may send its list change on the session's GET stream
/// instead of the POST stream of the call, so before or after the call's response.
fn lists_calls_asks_a_form_and_changes_its_list(peer: HttpPeer) {
    let mut b = started(&[], peer.url());
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: info: the upstream server speaks revision 2025-11-25: the bridge relays it"
    });
    let list = b.exchange(&request(2, "tools/list", json!({})));
    assert!(list.to_string().contains("\"add\""), "{list}");
    let sum = b.exchange(&call(3, "add", json!({"a": 2, "b": 3})));
    assert_eq!(text(&sum), "5", "{sum}");
    let accepted = json!({"action": "accept", "content": {"name": "Ada"}});
    b.send(&call(4, "ask_name", json!({})));
    let ask = answer_bridge_request(&mut b, "elicitation/create", accepted);
    assert_eq!(ask["params"]["message"], "Your name?");
    assert_eq!(text(&b.response(4)), "hello Ada");
    b.send(&call(5, "toggle", json!({})));
    let (result, mut notes) = b.response_with_notifications(&json!(5));
    assert_eq!(text(&result), "toggled", "{result}");
    if notes.is_empty() {
        notes.push(b.next_frame(support::EXCHANGE));
    }
    assert_eq!(
        notes,
        [json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})]
    );
    let list = b.exchange(&request(6, "tools/list", json!({})));
    assert!(list.to_string().contains("\"extra\""), "{list}");
    b.close_and_expect_exit_0();
    peer.stop();
}

#[test]
fn l4_the_python_sdk_server_over_http_lists_calls_asks_a_form_and_changes_its_list() {
    if let Some(peer) = HttpPeer::py_older() {
        lists_calls_asks_a_form_and_changes_its_list(peer);
    }
}

#[test]
fn l4_the_typescript_sdk_v1_server_over_http_lists_calls_asks_a_form_and_changes_its_list() {
    if let Some(peer) = HttpPeer::ts_v1() {
        lists_calls_asks_a_form_and_changes_its_list(peer);
    }
}

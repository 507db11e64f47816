//! The HTTP mode of the fixture (`--listen`): real processes, real TLS with the test CA of
//! `certs/`, Streamable HTTP of revision 2026-07-28 at `/mcp`.
#![allow(clippy::unwrap_used, reason = "tests")]

mod http_support;
mod support;

use std::process::{Command, Stdio};

use http_support::{Events, HttpFixture, client, json_body, post, request};
use serde_json::{Value, json};
use support::{BIN, check_schema, text};

fn ca() -> reqwest::Client {
    client("ca.crt")
}

#[tokio::test]
async fn listens_discovers_and_calls() {
    let fixture = HttpFixture::start(&[]);
    let port = fixture
        .url
        .strip_prefix("https://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("the URL is {}", fixture.url));
    assert!(port.parse::<u16>().unwrap() > 0);
    let client = ca();

    let body = request(1, "server/discover", json!({}));
    let discover = json_body(post(&client, &fixture.url, &body).send().await.unwrap()).await;
    check_schema(&discover, Some("server/discover"));
    assert_eq!(
        discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "bridge-fixture-server"
    );

    let body = request(2, "tools/list", json!({}));
    let list = json_body(post(&client, &fixture.url, &body).send().await.unwrap()).await;
    check_schema(&list, Some("tools/list"));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"add") && names.contains(&"ask_form"),
        "{names:?}"
    );

    let body = request(
        3,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    let response = post(&client, &fixture.url, &body).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let add = json_body(response).await;
    check_schema(&add, Some("tools/call"));
    assert_eq!(text(&add["result"]), "5");

    let body = request(
        4,
        "resources/read",
        json!({"uri": "file:///fixture/notes.txt"}),
    );
    let read = json_body(post(&client, &fixture.url, &body).send().await.unwrap()).await;
    assert_eq!(
        read["result"]["contents"][0]["text"],
        "The notes of the fixture."
    );
}

#[tokio::test]
async fn progress_comes_on_the_sse_stream_before_the_result() {
    let fixture = HttpFixture::start(&[]);
    let body = request(
        7,
        "tools/call",
        json!({"name": "progress", "arguments": {"count": 3}, "_meta": {"progressToken": 0}}),
    );
    let response = post(&ca(), &fixture.url, &body).send().await.unwrap();
    let mut events = Events::of(response);
    for step in 1..=3 {
        let event = events.next().await.unwrap();
        check_schema(&event, None);
        assert_eq!(event["method"], "notifications/progress");
        assert_eq!(event["params"]["progressToken"], 0);
        assert_eq!(event["params"]["progress"], f64::from(step));
    }
    let result = events.next().await.unwrap();
    assert_eq!(result["id"], 7);
    assert_eq!(text(&result["result"]), "sent 3 progress notifications");
    assert!(
        events.next().await.is_none(),
        "the stream ends after the result"
    );
}

#[tokio::test]
async fn an_input_round_gives_input_required_then_the_result() {
    let fixture = HttpFixture::start(&[]);
    let client = ca();
    let body = request(
        1,
        "tools/call",
        json!({"name": "ask_form", "arguments": {}}),
    );
    let first = json_body(post(&client, &fixture.url, &body).send().await.unwrap()).await;
    check_schema(&first, Some("tools/call"));
    assert_eq!(first["result"]["resultType"], "input_required");
    assert_eq!(
        first["result"]["inputRequests"]["profile"]["method"],
        "elicitation/create"
    );
    let answers = json!({"profile": {"action": "accept", "content": {"name": "Ada"}}});
    let body = request(
        2,
        "tools/call",
        json!({"name": "ask_form", "arguments": {}, "inputResponses": answers}),
    );
    let done = json_body(post(&client, &fixture.url, &body).send().await.unwrap()).await;
    assert_eq!(text(&done["result"]), r#"form: accept {"name":"Ada"}"#);
}

#[tokio::test]
async fn the_listen_stream_is_acknowledged_and_carries_a_list_change() {
    let fixture = HttpFixture::start(&[]);
    let client = ca();
    let body = request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let response = post(&client, &fixture.url, &body).send().await.unwrap();
    let mut events = Events::of(response);
    let ack = events.next().await.unwrap();
    check_schema(&ack, None);
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let body = request(
        2,
        "tools/call",
        json!({"name": "toggle", "arguments": {"enabled": false}}),
    );
    let toggled = json_body(post(&client, &fixture.url, &body).send().await.unwrap()).await;
    assert_eq!(text(&toggled["result"]), "tool toggled: disabled");
    let change = events.next().await.unwrap();
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
}

#[tokio::test]
async fn only_post_is_served_and_headers_must_match_the_body() {
    let fixture = HttpFixture::start(&[]);
    let client = ca();
    let get = client.get(&fixture.url).send().await.unwrap();
    assert_eq!(get.status(), 405);
    assert_eq!(get.headers()["allow"], "POST");
    let elsewhere = fixture.url.replace("/mcp", "/other");
    let other = client.post(&elsewhere).send().await.unwrap();
    assert_eq!(other.status(), 404);

    let body = request(
        1,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 1}}),
    );
    let mismatch = post(&client, &fixture.url, &body)
        .header("Mcp-Name", "echo")
        .send()
        .await
        .unwrap();
    assert_eq!(mismatch.status(), 400);
    let error: Value = mismatch.json().await.unwrap();
    assert_eq!(error["error"]["code"], -32020);

    let notification =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    let accepted = post(&client, &fixture.url, &notification)
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 202);

    let big = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x".repeat(65 << 20)}}});
    let too_large = post(&client, &fixture.url, &big).send().await.unwrap();
    assert_eq!(too_large.status(), 413);
}

#[tokio::test]
async fn a_bearer_token_is_required_with_bearer_env() {
    let fixture = HttpFixture::start_with_env(
        &["--bearer-env", "FIXTURE_TOKEN"],
        &[("FIXTURE_TOKEN", "s3cret-token")],
    );
    let client = ca();
    let body = request(
        1,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    for authorization in [None, Some("Bearer wrong"), Some("Basic s3cret-token")] {
        let mut builder = post(&client, &fixture.url, &body);
        if let Some(value) = authorization {
            builder = builder.header("Authorization", value);
        }
        let refused = builder.send().await.unwrap();
        assert_eq!(refused.status(), 401, "{authorization:?}");
        assert_eq!(
            refused.headers()["www-authenticate"],
            r#"Bearer realm="bridge-fixture""#
        );
    }
    let allowed = post(&client, &fixture.url, &body)
        .header("Authorization", "bEARER s3cret-token")
        .send()
        .await
        .unwrap();
    assert_eq!(text(&json_body(allowed).await["result"]), "5");

    let unset = Command::new(BIN)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--bearer-env",
            "FIXTURE_TOKEN_NOT_SET",
        ])
        .env_remove("FIXTURE_TOKEN_NOT_SET")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(unset.status.code(), Some(2));
    assert!(unset.stdout.is_empty());
}

#[tokio::test]
async fn the_untrusted_certificate_needs_the_untrusted_ca() {
    let fixture = HttpFixture::start(&["--untrusted"]);
    let body = request(
        1,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    let refused = post(&ca(), &fixture.url, &body).send().await;
    let error = refused.expect_err("the test CA does not trust the untrusted certificate");
    assert!(error.is_connect(), "{error:?}");
    let trusted = client("untrusted-ca.crt");
    let allowed = post(&trusted, &fixture.url, &body).send().await.unwrap();
    assert_eq!(text(&json_body(allowed).await["result"]), "5");
}

#[test]
fn an_address_that_is_not_loopback_is_refused() {
    for address in ["0.0.0.0:0", "192.0.2.1:8080", "[::]:0"] {
        let output = Command::new(BIN)
            .args(["--listen", address])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{address}");
        assert!(output.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("only a loopback address"), "{stderr}");
    }
}

#[tokio::test]
async fn plain_http_serves_http() {
    let fixture = HttpFixture::start(&["--plain-http"]);
    assert!(
        fixture.url.starts_with("http://127.0.0.1:"),
        "{}",
        fixture.url
    );
    let body = request(
        1,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    mcp_bridge_vscode::install_crypto_provider();
    let response = post(&reqwest::Client::new(), &fixture.url, &body)
        .send()
        .await
        .unwrap();
    assert_eq!(text(&json_body(response).await["result"]), "5");
}

// Two threads: the wait for the stderr line blocks one, the connection closes on the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_stream_cancels_the_request() {
    let fixture = HttpFixture::start(&[]);
    let body = request(
        1,
        "tools/call",
        json!({"name": "progress", "arguments": {"count": 10000, "ms": 20}, "_meta": {"progressToken": 0}}),
    );
    let response = post(&ca(), &fixture.url, &body).send().await.unwrap();
    let mut events = Events::of(response);
    assert_eq!(
        events.next().await.unwrap()["method"],
        "notifications/progress"
    );
    drop(events);
    let line = fixture.wait_stderr("closed the response stream");
    assert!(line.contains("tools/call"), "{line}");
}

#[tokio::test]
async fn listen_status_answers_the_first_listen_requests_with_a_status() {
    let fixture = HttpFixture::start(&["--listen-status", "503:2"]);
    let client = ca();
    let body = request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    for _ in 0..2 {
        let refused = post(&client, &fixture.url, &body).send().await.unwrap();
        assert_eq!(refused.status(), 503);
    }
    // Other requests are not counted.
    let add = request(
        2,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    let response = post(&client, &fixture.url, &add).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let response = post(&client, &fixture.url, &body).send().await.unwrap();
    let mut events = Events::of(response);
    let ack = events.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
}

#[tokio::test]
async fn always_sse_streams_every_result() {
    let fixture = HttpFixture::start(&["--always-sse"]);
    let body = request(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let response = post(&ca(), &fixture.url, &body).send().await.unwrap();
    let mut events = Events::of(response);
    assert_eq!(text(&events.next().await.unwrap()["result"]), "hi");
}

/// The harness's HTTPS upstream (`{"upstream":{"https":…}}` and `{"https_fixture":…}`): killed,
/// the URL refuses connections; restarted, the same URL works again.
#[tokio::test]
async fn the_harness_kills_and_restarts_the_fixture_on_the_same_port() {
    let bin = std::path::Path::new(BIN);
    let mut fixture = harness::https::HttpsFixture::start(bin, &[]).unwrap();
    let url = fixture.url.clone();
    let client = ca();
    let body = request(
        1,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    let response = post(&client, &url, &body).send().await.unwrap();
    assert_eq!(text(&json_body(response).await["result"]), "5");
    fixture.kill().unwrap();
    let refused = post(&client, &url, &body).send().await;
    assert!(refused.is_err(), "{refused:?}");
    fixture.restart().unwrap();
    assert_eq!(fixture.url, url);
    let response = post(&client, &url, &body).send().await.unwrap();
    assert_eq!(text(&json_body(response).await["result"]), "5");
}

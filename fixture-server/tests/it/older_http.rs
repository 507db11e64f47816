//! `--revision 2025-11-25 --listen`: Streamable HTTP with sessions (docs/fixture.md), over real
//! TLS with the test CA; every JSON-RPC message of the fixture is checked against the schema
//! of 2025-11-25.
use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};

use crate::http_support::{HttpFixture, WAIT, client};
use crate::support::check_schema_of;

const REVISION: &str = "2025-11-25";

/// One SSE event: its id and its JSON-RPC message (events without data are skipped).
struct Event {
    id: Option<String>,
    message: Value,
}

/// One SSE event as it came: its name (`event:`), id and data.
struct RawEvent {
    name: Option<String>,
    id: Option<String>,
    data: String,
}

/// The SSE events of a response.
struct Events {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<axum::body::Bytes>>,
    buffer: Vec<u8>,
}

impl Events {
    fn of(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[CONTENT_TYPE], "text/event-stream");
        Self {
            body: response.bytes_stream().boxed(),
            buffer: Vec::new(),
        }
    }

    /// The next event with data, `None` at the end of the stream.
    async fn next_raw(&mut self) -> Option<RawEvent> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let raw: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let text = String::from_utf8(raw).unwrap();
                let (mut name, mut id, mut data) = (None, None, Vec::new());
                for line in text.lines() {
                    if let Some(value) = line.strip_prefix("id:") {
                        id = Some(value.trim().to_string());
                    } else if let Some(value) = line.strip_prefix("event:") {
                        name = Some(value.trim().to_string());
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push(value.trim_start().to_string());
                    }
                }
                let data = data.join("\n");
                if data.trim().is_empty() {
                    continue; // the priming event, a comment
                }
                return Some(RawEvent { name, id, data });
            }
            let chunk = tokio::time::timeout(WAIT, self.body.next())
                .await
                .expect("an SSE event within the wait")?;
            self.buffer.extend_from_slice(&chunk.unwrap());
        }
    }

    /// The next event with a JSON-RPC message, `None` at the end of the stream.
    async fn next(&mut self) -> Option<Event> {
        let raw = self.next_raw().await?;
        let message: Value = serde_json::from_str(&raw.data).unwrap();
        Some(Event {
            id: raw.id,
            message,
        })
    }
}

/// A client of one session: the URL, the session id, the methods of the requests it sent.
struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
}

fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut builder = http
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream");
    if let Some(session) = session {
        builder = builder
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", REVISION);
    }
    builder.json(body)
}

/// The response of `request` (method `method`) among the events, schema-checked with the rest.
async fn response_of(events: &mut Events, id: u64, method: &str) -> (Vec<Value>, Value) {
    let mut before = Vec::new();
    while let Some(event) = events.next().await {
        let message = event.message;
        if message.get("method").is_none() && message["id"] == id {
            check_schema_of(REVISION, &message, Some(method));
            return (before, message);
        }
        check_schema_of(REVISION, &message, None);
        before.push(message);
    }
    panic!("the stream ended before the response {id}: {before:?}");
}

impl Session {
    /// `initialize` and `notifications/initialized`.
    async fn start(fixture: &HttpFixture) -> Self {
        let http = client("ca.crt");
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": REVISION,
            "capabilities": {"elicitation": {"form": {}, "url": {}}},
            "clientInfo": {"name": "fixture-test", "version": "1.0.0"}
        }});
        let response = post(&http, &fixture.url, None, &initialize)
            .send()
            .await
            .unwrap();
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_string();
        let (_, result) = response_of(&mut Events::of(response), 1, "initialize").await;
        assert_eq!(result["result"]["protocolVersion"], REVISION);
        let session = Self {
            http,
            url: fixture.url.clone(),
            id,
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(
            session.send(&initialized).await.status(),
            StatusCode::ACCEPTED
        );
        session
    }

    async fn send(&self, body: &Value) -> reqwest::Response {
        post(&self.http, &self.url, Some(&self.id), body)
            .send()
            .await
            .unwrap()
    }

    /// A tool call; returns its event stream.
    async fn call(&self, id: u64, tool: &str, arguments: Value) -> Events {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
        Events::of(self.send(&body).await)
    }
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn a_session_starts_with_initialize_and_ends_with_delete_then_404() {
    let fixture = HttpFixture::start(&["--revision", REVISION]);
    let http = client("ca.crt");
    // Before a session, a request other than initialize gets 400, server/discover too.
    let discover = json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    let response = post(&http, &fixture.url, None, &discover)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["code"], -32000, "{error}");

    let session = Session::start(&fixture).await;
    let (_, echo) = response_of(
        &mut session.call(2, "echo", json!({"text": "hi"})).await,
        2,
        "tools/call",
    )
    .await;
    assert_eq!(text(&echo), "hi");

    let unknown = post(
        &http,
        &fixture.url,
        Some("no-such-session"),
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    );
    assert_eq!(
        unknown.send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );

    let deleted = session
        .http
        .delete(&session.url)
        .header("Mcp-Session-Id", &session.id)
        .header("MCP-Protocol-Version", REVISION)
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    let after = session
        .send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
        .await;
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_form_elicitation_comes_on_the_call_stream_and_its_answer_is_posted() {
    let fixture = HttpFixture::start(&["--revision", REVISION]);
    let session = Session::start(&fixture).await;
    let mut events = session.call(2, "ask_form", json!({})).await;
    let request = events.next().await.unwrap().message;
    check_schema_of(REVISION, &request, None);
    assert_eq!(request["method"], "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}});
    assert_eq!(session.send(&answer).await.status(), StatusCode::ACCEPTED);
    let (_, result) = response_of(&mut events, 2, "tools/call").await;
    assert_eq!(text(&result), "form: decline");
}

#[tokio::test]
async fn the_get_stream_opens_for_a_session_and_a_stream_resumes_after_its_last_event_id() {
    let fixture = HttpFixture::start(&["--revision", REVISION]);
    let session = Session::start(&fixture).await;
    let get = session
        .http
        .get(&session.url)
        .header(ACCEPT, "text/event-stream")
        .header("Mcp-Session-Id", &session.id)
        .header("MCP-Protocol-Version", REVISION)
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), StatusCode::OK);
    assert_eq!(get.headers()[CONTENT_TYPE], "text/event-stream");
    drop(get);

    // Three progress notifications 200 ms apart; the client leaves after the first one and
    // resumes from its event id: the rest and the result come on the new stream.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "progress", "arguments": {"count": 3, "ms": 200}, "_meta": {"progressToken": "p"}
    }});
    let mut events = Events::of(session.send(&body).await);
    let first = events.next().await.unwrap();
    assert_eq!(first.message["params"]["progress"], 1.0);
    let last_id = first.id.expect("the event has an id");
    drop(events);
    let resumed = session
        .http
        .get(&session.url)
        .header(ACCEPT, "text/event-stream")
        .header("Mcp-Session-Id", &session.id)
        .header("MCP-Protocol-Version", REVISION)
        .header("Last-Event-ID", &last_id)
        .send()
        .await
        .unwrap();
    let (before, result) = response_of(&mut Events::of(resumed), 2, "tools/call").await;
    assert_eq!(text(&result), "sent 3 progress notifications");
    let steps: Vec<&Value> = before.iter().map(|m| &m["params"]["progress"]).collect();
    assert_eq!(steps, [&json!(2.0), &json!(3.0)]);
}

#[tokio::test]
async fn an_expired_session_gets_404() {
    let fixture = HttpFixture::start(&["--revision", REVISION]);
    let session = Session::start(&fixture).await;
    let origin = fixture.url.trim_end_matches("/mcp");
    let expire = session
        .http
        .post(format!("{origin}/fixture/expire-sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(expire.status(), StatusCode::NO_CONTENT);
    let after = session
        .send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_2024_11_05_transport_gives_an_endpoint_and_answers_on_the_stream() {
    let fixture = HttpFixture::start(&["--revision", REVISION]);
    let http = client("ca.crt");
    let origin = fixture.url.trim_end_matches("/mcp").to_string();
    let stream = http
        .get(format!("{origin}/sse"))
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .unwrap();
    let mut events = Events::of(stream);
    let endpoint = events.next_raw().await.unwrap();
    assert_eq!(endpoint.name.as_deref(), Some("endpoint"));
    assert!(
        endpoint.data.starts_with("/messages?sessionId="),
        "{}",
        endpoint.data
    );
    let messages = format!("{origin}{}", endpoint.data);
    let send = |body: Value| {
        http.post(&messages)
            .header(CONTENT_TYPE, "application/json")
            .json(&body)
            .send()
    };

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "fixture-test", "version": "1.0.0"}
    }});
    assert_eq!(
        send(initialize).await.unwrap().status(),
        StatusCode::ACCEPTED
    );
    let (_, result) = response_of(&mut events, 1, "initialize").await;
    assert_eq!(result["result"]["protocolVersion"], "2024-11-05");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await
        .unwrap();

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask_form", "arguments": {}}});
    assert_eq!(send(call).await.unwrap().status(), StatusCode::ACCEPTED);
    let request = events.next().await.unwrap().message;
    check_schema_of(REVISION, &request, None);
    assert_eq!(request["method"], "elicitation/create");
    send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "cancel"}}))
        .await
        .unwrap();
    let (_, result) = response_of(&mut events, 2, "tools/call").await;
    assert_eq!(text(&result), "form: cancel");

    let unknown = http
        .post(format!("{origin}/messages?sessionId=nobody"))
        .header(CONTENT_TYPE, "application/json")
        .json(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let bad = send(json!({"not": "a message"})).await.unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

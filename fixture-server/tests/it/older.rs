//! `--revision 2025-11-25`: the fixture as a stateful server of the older revision, driven as a
//! plain 2025-11-25 client would (no bridge), every frame checked against the schema of
//! 2025-11-25 (docs/fixture.md).
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Server, text};

/// The capabilities of VS Code's Local harness in `initialize`: forms and URLs, sampling, roots.
fn local_capabilities() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {"listChanged": true}})
}

/// `initialize` and `notifications/initialized`; returns the result of `initialize`.
fn initialize(server: &mut Server, revision: &str, capabilities: Value) -> Value {
    let result = server.result(
        1,
        "initialize",
        json!({
            "protocolVersion": revision,
            "capabilities": capabilities,
            "clientInfo": {"name": "fixture-test", "version": "1.0.0"}
        }),
    );
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    result
}

/// A started older server with the Local capabilities.
fn started() -> Server {
    let mut server = Server::older(&[]);
    initialize(&mut server, "2025-11-25", local_capabilities());
    server
}

/// Reads frames until the server's request of `method`; returns it (other frames go to the
/// backlog).
fn server_request(server: &mut Server, method: &str) -> Value {
    loop {
        let frame = server
            .next_frame()
            .unwrap_or_else(|| panic!("stdout ended before {method}"));
        if frame["method"] == method && frame.get("id").is_some() {
            return frame;
        }
        server.backlog.push(frame);
    }
}

/// Answers a request of the server with this result.
fn answer(server: &mut Server, request: &Value, result: Value) {
    server.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}));
}

/// Sends `tools/call` without waiting.
fn start_call(server: &mut Server, id: i64, tool: &str, arguments: Value) {
    server.request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
}

/// The text of the result of the call `id`, with the frames that came before it.
fn call_text(server: &mut Server, id: i64) -> (Vec<Value>, String) {
    let (before, response) = server.response(id);
    let result = response
        .get("result")
        .unwrap_or_else(|| panic!("the call {id} failed: {response}"));
    (before, text(result).to_string())
}

#[test]
fn an_older_server_refuses_discover_with_32601_and_starts_with_initialize() {
    let mut server = Server::older(&[]);
    let discover = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let error = server.error(0, "server/discover", json!({"_meta": discover}));
    assert_eq!(error["code"], -32601, "{error}");
    let result = initialize(&mut server, "2025-11-25", local_capabilities());
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "bridge-fixture-server");
    assert_eq!(result["capabilities"]["resources"]["subscribe"], true);
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert!(
        result["capabilities"].get("extensions").is_none(),
        "{result}"
    );
    let tools = server.result(2, "tools/list", json!({}));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    for name in [
        "echo",
        "ask_form",
        "ask_url",
        "sample",
        "list_roots",
        "ping_client",
    ] {
        assert!(names.contains(&name), "{name} is missing: {names:?}");
    }
    assert!(names.contains(&"url_required") && names.contains(&"touch"));
    for round_only in ["ask_url_twice", "multi", "many_inputs"] {
        assert!(!names.contains(&round_only), "{round_only}: {names:?}");
    }
    let echo = server.call(3, "echo", json!({"text": "hi"}));
    assert_eq!(text(&echo), "hi");
    assert!(echo.get("resultType").is_none(), "{echo}");
}

#[test]
fn an_older_server_answers_initialize_with_an_older_revision_of_the_client() {
    let mut server = Server::older(&[]);
    let result = initialize(&mut server, "2025-06-18", local_capabilities());
    assert_eq!(result["protocolVersion"], "2025-06-18");
}

#[test]
fn a_form_elicitation_is_a_request_of_the_server_during_the_call() {
    let mut server = started();
    start_call(&mut server, 2, "ask_form", json!({}));
    let request = server_request(&mut server, "elicitation/create");
    assert_eq!(request["params"]["mode"], "form");
    assert_eq!(request["params"]["message"], "Tell us about you.");
    assert_eq!(
        request["params"]["requestedSchema"]["required"],
        json!(["name"])
    );
    answer(
        &mut server,
        &request,
        json!({"action": "accept", "content": {"name": "Ada"}}),
    );
    let (_, text) = call_text(&mut server, 2);
    assert_eq!(text, r#"form: accept {"name":"Ada"}"#);
}

#[test]
fn a_url_elicitation_is_completed_before_the_result() {
    let mut server = started();
    start_call(&mut server, 2, "ask_url", json!({}));
    let request = server_request(&mut server, "elicitation/create");
    assert_eq!(request["params"]["mode"], "url");
    assert_eq!(request["params"]["url"], "https://example.com/auth");
    assert_eq!(request["params"]["elicitationId"], "fixture-auth");
    answer(&mut server, &request, json!({"action": "accept"}));
    let (before, text) = call_text(&mut server, 2);
    assert_eq!(text, "url: accept");
    let complete = json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "fixture-auth"}});
    assert!(before.contains(&complete), "{before:?}");
}

#[test]
fn sampling_roots_and_ping_are_requests_of_the_server() {
    let mut server = started();
    start_call(&mut server, 2, "sample", json!({}));
    let request = server_request(&mut server, "sampling/createMessage");
    assert_eq!(request["params"]["maxTokens"], 50);
    let model = json!({"role": "assistant", "content": {"type": "text", "text": "Hello."}, "model": "test-model"});
    answer(&mut server, &request, model);
    assert_eq!(call_text(&mut server, 2).1, "model: Hello.");

    start_call(&mut server, 3, "list_roots", json!({}));
    let request = server_request(&mut server, "roots/list");
    let roots = json!({"roots": [{"uri": "file:///work", "name": "work"}]});
    answer(&mut server, &request, roots);
    assert_eq!(call_text(&mut server, 3).1, "roots: file:///work");

    start_call(&mut server, 4, "ping_client", json!({}));
    let request = server_request(&mut server, "ping");
    answer(&mut server, &request, json!({}));
    assert_eq!(call_text(&mut server, 4).1, "pong");
}

#[test]
fn a_client_without_roots_gets_a_tool_error_and_no_request() {
    let mut server = Server::older(&[]);
    initialize(&mut server, "2025-11-25", json!({"elicitation": {}}));
    let result = server.call(2, "list_roots", json!({}));
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).contains("roots"), "{result}");
    assert!(
        server
            .backlog
            .iter()
            .all(|frame| frame.get("method").is_none()),
        "{:?}",
        server.backlog
    );
}

#[test]
fn list_changes_subscriptions_and_log_messages_are_session_notifications() {
    let mut server = started();
    let (before, text) = {
        start_call(&mut server, 2, "toggle", json!({"enabled": false}));
        call_text(&mut server, 2)
    };
    assert_eq!(text, "tool toggled: disabled");
    let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    assert!(before.contains(&changed), "{before:?}");
    let tools = server.result(3, "tools/list", json!({}));
    assert!(!tools.to_string().contains("\"toggled\""), "{tools}");

    // No update without a subscription; one after resources/subscribe, before the result.
    let uri = "file:///fixture/notes.txt";
    start_call(&mut server, 4, "touch", json!({"uri": uri}));
    let (before, _) = call_text(&mut server, 4);
    assert!(before.is_empty(), "{before:?}");
    server.result(5, "resources/subscribe", json!({"uri": uri}));
    start_call(&mut server, 6, "touch", json!({"uri": uri}));
    let (before, _) = call_text(&mut server, 6);
    let updated = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}});
    assert_eq!(before, vec![updated]);

    server.result(7, "logging/setLevel", json!({"level": "warning"}));
    start_call(&mut server, 8, "log", json!({}));
    let (before, _) = call_text(&mut server, 8);
    let levels: Vec<&str> = before
        .iter()
        .filter(|frame| frame["method"] == "notifications/message")
        .map(|frame| frame["params"]["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["warning", "error"]);
}

#[test]
fn progress_uses_the_token_of_the_request() {
    let mut server = started();
    let params =
        json!({"name": "progress", "arguments": {"count": 2}, "_meta": {"progressToken": "p-1"}});
    server.request(2, "tools/call", params);
    let (before, text) = call_text(&mut server, 2);
    assert_eq!(text, "sent 2 progress notifications");
    let tokens: Vec<&Value> = before
        .iter()
        .map(|frame| &frame["params"]["progressToken"])
        .collect();
    assert_eq!(tokens, [&json!("p-1"), &json!("p-1")]);
}

#[test]
fn the_error_32042_carries_the_url_to_open() {
    let mut server = started();
    let error = server.error(
        2,
        "tools/call",
        json!({"name": "url_required", "arguments": {}}),
    );
    assert_eq!(error["code"], -32042);
    assert_eq!(
        error["data"]["elicitations"][0]["url"],
        "https://example.com/auth"
    );
}

#[test]
fn a_cancelled_call_gets_no_response() {
    let mut server = started();
    start_call(&mut server, 2, "slow", json!({"ms": 60000}));
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "test"}}));
    // The next response is the one of the later request: the cancelled call has none.
    server.request(3, "ping", json!({}));
    let (before, response) = server.response(3);
    assert_eq!(response["result"], json!({}));
    assert!(before.is_empty(), "{before:?}");
    server.close_stdin();
    let rest = server.frames_until_end();
    assert!(
        rest.iter().all(|frame| frame["id"] != 2),
        "the cancelled call was answered: {rest:?}"
    );
}

#[test]
fn the_tool_crash_exits_with_code_3_without_a_response() {
    let mut server = started();
    start_call(&mut server, 2, "crash", json!({}));
    let rest = server.frames_until_end();
    assert!(rest.iter().all(|frame| frame["id"] != 2), "{rest:?}");
    assert_eq!(server.wait_exit(Duration::from_secs(5)).code(), Some(3));
}

#[test]
fn the_older_revision_excludes_the_embedded_bridge() {
    let output = std::process::Command::new(crate::support::BIN)
        .args(["--revision", "2025-11-25", "--embedded"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(
            "bridge-fixture-server: error(cli): the option --embedded needs --revision 2026-07-28"
        ),
        "{stderr}"
    );
}

/// `--conformance`: the forms and the sampling of the 2025-11-25 scenarios are requests of the
/// server during the call, with the texts that the scenarios check; the tools of 2026-07-28
/// input rounds are not listed.
#[test]
fn the_conformance_tools_ask_with_requests_of_the_server() {
    let mut server = Server::older(&["--conformance"]);
    initialize(&mut server, "2025-11-25", local_capabilities());
    let list = server.result(9, "tools/list", json!({}));
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert!(
        names.contains(&"test_elicitation_sep1330_enums"),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|name| name.starts_with("test_input_required")),
        "{names:?}"
    );
    start_call(
        &mut server,
        2,
        "test_elicitation",
        json!({"message": "Who?"}),
    );
    let request = server_request(&mut server, "elicitation/create");
    assert_eq!(request["params"]["message"], "Who?");
    assert_eq!(
        request["params"]["requestedSchema"]["required"],
        json!(["username", "email"])
    );
    let content = json!({"username": "ada", "email": "ada@example.com"});
    answer(
        &mut server,
        &request,
        json!({"action": "accept", "content": content}),
    );
    let (_, text) = call_text(&mut server, 2);
    assert_eq!(
        text,
        format!("User response: action=accept, content={content}")
    );

    start_call(&mut server, 3, "test_sampling", json!({"prompt": "Hi?"}));
    let request = server_request(&mut server, "sampling/createMessage");
    assert_eq!(request["params"]["messages"][0]["content"]["text"], "Hi?");
    let sampled = json!({"role": "assistant", "content": {"type": "text", "text": "hello"},
        "model": "m"});
    answer(&mut server, &request, sampled);
    let (_, text) = call_text(&mut server, 3);
    assert_eq!(text, "LLM response: hello");
}

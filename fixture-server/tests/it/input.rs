//! The tools and the prompt that ask for input (MRTR): the exact shape of each
//! `InputRequiredResult` (keys, methods, params, `requestState`), the retry with
//! `inputResponses` that completes each of them, and the refusals (-32021 for a capability that
//! the client did not declare, -32602 for a `requestState` that the fixture did not give).

use crate::support::{Server, meta_with, text};
use serde_json::{Value, json};

/// Calls a tool, expects `input_required`, and returns its result.
fn ask(server: &mut Server, id: i64, tool: &str, arguments: Value) -> Value {
    let result = server.call(id, tool, arguments);
    assert_eq!(result["resultType"], "input_required", "{result}");
    result
}

/// The retry of a tool call with these answers and state.
fn retry(
    server: &mut Server,
    id: i64,
    tool: &str,
    arguments: Value,
    answers: Value,
    state: Option<&Value>,
) -> Value {
    let mut params = json!({"name": tool, "arguments": arguments, "inputResponses": answers});
    if let Some(state) = state {
        params["requestState"] = state.clone();
    }
    server.result(id, "tools/call", params)
}

#[test]
fn ask_form_asks_for_the_profile_and_reads_each_action() {
    let mut server = Server::new();
    let result = ask(&mut server, 1, "ask_form", json!({}));
    assert_eq!(
        result,
        json!({
            "resultType": "input_required",
            "inputRequests": {"profile": {"method": "elicitation/create", "params": {
                "mode": "form",
                "message": "Tell us about you.",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "title": "Name", "minLength": 1},
                        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
                        "subscribe": {"type": "boolean", "title": "Subscribe"},
                        "color": {"type": "string", "title": "Color", "enum": ["red", "green", "blue"]}
                    },
                    "required": ["name"]
                }
            }}}
        })
    );
    let accept = json!({"profile": {"action": "accept", "content": {"name": "Ada", "age": 36}}});
    let done = retry(&mut server, 2, "ask_form", json!({}), accept, None);
    assert_eq!(done["resultType"], "complete");
    assert_eq!(text(&done), r#"form: accept {"name":"Ada","age":36}"#);
    let done = retry(
        &mut server,
        3,
        "ask_form",
        json!({}),
        json!({"profile": {"action": "decline"}}),
        None,
    );
    assert_eq!(text(&done), "form: decline");
    let done = retry(
        &mut server,
        4,
        "ask_form",
        json!({}),
        json!({"profile": {"action": "cancel"}}),
        None,
    );
    assert_eq!(text(&done), "form: cancel");
    // An answer without a known action is refused.
    let error = server.error(
        5,
        "tools/call",
        json!({"name": "ask_form", "inputResponses": {"profile": {"action": "maybe"}}}),
    );
    assert_eq!(error["code"], -32602);
}

#[test]
fn the_url_tools_ask_for_their_urls() {
    let mut server = Server::new();
    let result = ask(&mut server, 1, "ask_url", json!({}));
    let auth = &result["inputRequests"]["auth"];
    assert_eq!(auth["method"], "elicitation/create");
    assert_eq!(auth["params"]["mode"], "url");
    assert_eq!(auth["params"]["message"], "Sign in to continue.");
    assert_eq!(auth["params"]["url"], "https://example.com/auth");
    assert!(result.get("requestState").is_none());
    let done = retry(
        &mut server,
        2,
        "ask_url",
        json!({}),
        json!({"auth": {"action": "accept"}}),
        None,
    );
    assert_eq!(text(&done), "url: accept");

    let result = ask(&mut server, 3, "ask_bad_url", json!({}));
    let file = &result["inputRequests"]["file"];
    assert_eq!(file["params"]["message"], "Open the file.");
    assert_eq!(file["params"]["url"], "file://localhost/etc/passwd");
    let done = retry(
        &mut server,
        4,
        "ask_bad_url",
        json!({}),
        json!({"file": {"action": "decline"}}),
        None,
    );
    assert_eq!(text(&done), "url: decline");
}

#[test]
fn ask_url_twice_keeps_its_round_in_the_request_state() {
    let mut server = Server::new();
    let accept = json!({"auth": {"action": "accept"}});
    let first = ask(&mut server, 1, "ask_url_twice", json!({}));
    let state1 = first["requestState"].clone();
    assert!(state1.is_string(), "{first}");
    assert_eq!(
        first["inputRequests"]["auth"]["params"]["url"],
        "https://example.com/auth"
    );
    let second = retry(
        &mut server,
        2,
        "ask_url_twice",
        json!({}),
        accept.clone(),
        Some(&state1),
    );
    assert_eq!(second["resultType"], "input_required", "{second}");
    assert_eq!(second["inputRequests"], first["inputRequests"]);
    let state2 = second["requestState"].clone();
    assert!(state2.is_string() && state2 != state1, "{second}");
    let third = retry(
        &mut server,
        3,
        "ask_url_twice",
        json!({}),
        accept.clone(),
        Some(&state2),
    );
    assert_eq!(text(&third), "url twice: accept");

    // With complete: true, the second round gives the result.
    let first = ask(&mut server, 4, "ask_url_twice", json!({"complete": true}));
    let state = first["requestState"].clone();
    let done = retry(
        &mut server,
        5,
        "ask_url_twice",
        json!({"complete": true}),
        json!({"auth": {"action": "cancel"}}),
        Some(&state),
    );
    assert_eq!(text(&done), "url twice: cancel");

    // A retry without the answer asks again in the same round.
    let again = retry(
        &mut server,
        6,
        "ask_url_twice",
        json!({}),
        json!({}),
        Some(&state1),
    );
    assert_eq!(
        (again["resultType"].clone(), again["requestState"].clone()),
        (json!("input_required"), state1)
    );

    // A state that the fixture did not give.
    let error = server.error(
        7,
        "tools/call",
        json!({"name": "ask_url_twice", "inputResponses": accept, "requestState": "forged"}),
    );
    assert_eq!(
        error,
        json!({"code": -32602, "message": "Invalid or expired requestState", "data": {"reason": "invalid_request_state"}})
    );
}

#[test]
fn sampling_asks_the_model_and_reads_its_text() {
    let mut server = Server::new();
    let result = ask(&mut server, 1, "sample", json!({}));
    assert_eq!(
        result["inputRequests"]["model"],
        json!({"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}],
            "maxTokens": 50
        }})
    );
    let answer = json!({"model": {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m-1", "stopReason": "endTurn"}});
    assert_eq!(
        text(&retry(&mut server, 2, "sample", json!({}), answer, None)),
        "model: hello"
    );
    let image = json!({"model": {"role": "assistant", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}, "model": "m-1"}});
    assert_eq!(
        text(&retry(&mut server, 3, "sample", json!({}), image, None)),
        "model: no text"
    );

    let result = ask(&mut server, 4, "sample_tools", json!({}));
    let params = &result["inputRequests"]["model"]["params"];
    assert_eq!(
        params["messages"][0]["content"]["text"],
        "Look up the weather."
    );
    assert_eq!(params["tools"][0]["name"], "lookup");
    assert_eq!(params["tools"][0]["inputSchema"], json!({"type": "object"}));
    let answer = json!({"model": {"role": "assistant", "content": {"type": "text", "text": "sunny"}, "model": "m-1"}});
    assert_eq!(
        text(&retry(
            &mut server,
            5,
            "sample_tools",
            json!({}),
            answer,
            None
        )),
        "model: sunny"
    );
}

#[test]
fn roots_multi_and_many_inputs() {
    let mut server = Server::new();
    let result = ask(&mut server, 1, "list_roots", json!({}));
    assert_eq!(
        result["inputRequests"],
        json!({"roots": {"method": "roots/list"}})
    );
    let roots =
        json!({"roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]}});
    assert_eq!(
        text(&retry(&mut server, 2, "list_roots", json!({}), roots, None)),
        "roots: file:///a\nfile:///b"
    );

    let result = ask(&mut server, 3, "multi", json!({}));
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["name", "roots"]);
    assert_eq!(requests["name"]["params"]["message"], "Your name?");
    assert_eq!(
        requests["name"]["params"]["requestedSchema"]["required"],
        json!(["name"])
    );
    // Only one answer: the other question comes again, alone.
    let partial = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let again = retry(&mut server, 4, "multi", json!({}), partial, None);
    assert_eq!(
        again["inputRequests"],
        json!({"roots": {"method": "roots/list"}})
    );
    let both = json!({"name": {"action": "accept", "content": {"name": "Ada"}}, "roots": {"roots": [{"uri": "file:///w"}]}});
    assert_eq!(
        text(&retry(&mut server, 5, "multi", json!({}), both, None)),
        "name: Ada (accept); roots: 1"
    );

    let result = ask(&mut server, 6, "many_inputs", json!({}));
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 17);
    for i in 0..17 {
        assert_eq!(requests[&format!("r{i}")], json!({"method": "roots/list"}));
    }
    let answers: serde_json::Map<String, Value> = (0..17)
        .map(|i| (format!("r{i}"), json!({"roots": []})))
        .collect();
    assert_eq!(
        text(&retry(
            &mut server,
            7,
            "many_inputs",
            json!({}),
            Value::Object(answers),
            None
        )),
        "answers: 17"
    );
}

#[test]
fn a_capability_that_the_client_did_not_declare_gives_32021() {
    let mut server = Server::new();
    // The capabilities of VS Code's Copilot harness: forms, URLs and sampling, no roots (C2).
    let copilot = meta_with(json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}}));
    let cases = [
        ("list_roots", json!({"roots": {}})),
        ("multi", json!({"roots": {}})),
        ("many_inputs", json!({"roots": {}})),
        ("sample_tools", json!({"sampling": {"tools": {}}})),
    ];
    for (i, (tool, required)) in cases.into_iter().enumerate() {
        let error = server.error(
            i as i64 + 1,
            "tools/call",
            json!({"name": tool, "_meta": copilot}),
        );
        assert_eq!(error["code"], -32021, "{tool}: {error}");
        assert_eq!(error["data"]["requiredCapabilities"], required, "{tool}");
    }
    let bare = meta_with(json!({}));
    for (i, tool) in ["ask_form", "ask_url", "sample"].into_iter().enumerate() {
        let error = server.error(
            i as i64 + 10,
            "tools/call",
            json!({"name": tool, "_meta": bare}),
        );
        assert_eq!(error["code"], -32021, "{tool}: {error}");
    }
    // An empty elicitation object means form mode.
    let empty = meta_with(json!({"elicitation": {}}));
    let result = server.result(
        20,
        "tools/call",
        json!({"name": "ask_form", "_meta": empty}),
    );
    assert_eq!(result["resultType"], "input_required");
}

#[test]
fn the_prompt_ask_name_asks_with_a_form() {
    let mut server = Server::new();
    let result = server.result(1, "prompts/get", json!({"name": "ask_name"}));
    assert_eq!(result["resultType"], "input_required");
    let name = &result["inputRequests"]["name"];
    assert_eq!(name["params"]["message"], "What is your name?");
    assert_eq!(name["params"]["mode"], "form");
    let accept = json!({"name": "ask_name", "inputResponses": {"name": {"action": "accept", "content": {"name": "Bo"}}}});
    let done = server.result(2, "prompts/get", accept);
    assert_eq!(done["messages"][0]["content"]["text"], "Hello, Bo.");
    let decline = json!({"name": "ask_name", "inputResponses": {"name": {"action": "decline"}}});
    let done = server.result(3, "prompts/get", decline);
    assert_eq!(done["messages"][0]["content"]["text"], "Hello, nobody.");
}

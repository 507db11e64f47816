//! `--conformance`: the tools, resources and prompts of the official conformance suite's server
//! scenarios, on stdio (a real process), and their absence without the flag.

use crate::support::{Server, meta_with, text};
use serde_json::{Value, json};

fn conformance() -> Server {
    Server::start(&["--conformance"])
}

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item[field].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_flag_adds_the_tools_resources_and_prompts_and_only_the_flag() {
    let mut server = conformance();
    let tools = names(&server.result(1, "tools/list", json!({})), "tools", "name");
    for tool in [
        "echo",
        "test_simple_text",
        "test_sampling",
        "test_input_required_result_multi_round",
        "test_missing_capability",
        "json_schema_2020_12_tool",
    ] {
        assert!(tools.contains(&tool.to_string()), "{tool} in {tools:?}");
    }
    let resources = server.result(2, "resources/list", json!({}));
    assert!(names(&resources, "resources", "uri").contains(&"test://static-text".to_string()));
    let templates = server.result(3, "resources/templates/list", json!({}));
    assert_eq!(
        names(&templates, "resourceTemplates", "uriTemplate"),
        ["test://template/{id}/data"]
    );
    let prompts = names(
        &server.result(4, "prompts/list", json!({})),
        "prompts",
        "name",
    );
    assert!(
        prompts.contains(&"test_prompt_with_image".to_string()),
        "{prompts:?}"
    );

    let mut plain = Server::new();
    let tools = names(&plain.result(1, "tools/list", json!({})), "tools", "name");
    assert!(
        !tools.iter().any(|name| name.starts_with("test_")),
        "{tools:?}"
    );
    let error = plain.error(
        2,
        "tools/call",
        json!({"name": "test_simple_text", "arguments": {}}),
    );
    assert_eq!(error["code"], -32602, "{error}");
}

#[test]
fn the_content_tools_give_their_blocks() {
    let mut server = conformance();
    let result = server.call(1, "test_simple_text", json!({}));
    assert_eq!(result["resultType"], "complete");
    assert_eq!(text(&result), "This is a simple text response for testing.");
    let result = server.call(2, "test_audio_content", json!({}));
    assert_eq!(result["content"][0]["mimeType"], "audio/wav");
    let result = server.call(3, "test_multiple_content_types", json!({}));
    let types: Vec<&str> = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["text", "image", "resource"]);
    let result = server.call(4, "test_error_handling", json!({}));
    assert_eq!(result["isError"], true, "{result}");
}

#[test]
fn progress_goes_0_50_100_with_the_token() {
    let mut server = conformance();
    let mut params_meta = crate::support::meta();
    params_meta["progressToken"] = json!("p-1");
    server.request(
        1,
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": params_meta}),
    );
    let (before, response) = server.response(1);
    let progress: Vec<f64> = before
        .iter()
        .filter(|frame| frame["method"] == "notifications/progress")
        .map(|frame| frame["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, [0.0, 50.0, 100.0], "{before:?}");
    assert_eq!(response["result"]["resultType"], "complete");
}

#[test]
fn the_request_state_rounds_complete_and_a_changed_state_is_refused() {
    let mut server = conformance();
    let name = "test_input_required_result_request_state";
    let first = server.call(1, name, json!({}));
    assert_eq!(first["resultType"], "input_required", "{first}");
    let state = first["requestState"].as_str().unwrap().to_string();
    let retry = |state: &str| {
        json!({
            "name": name,
            "arguments": {},
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
            "requestState": state
        })
    };
    let done = server.result(2, "tools/call", retry(&state));
    assert!(text(&done).contains("state-ok"), "{done}");
    let error = server.error(3, "tools/call", retry(&format!("{state}-TAMPERED")));
    assert_eq!(error["code"], -32602, "{error}");
}

#[test]
fn multi_round_asks_twice_with_new_states() {
    let mut server = conformance();
    let name = "test_input_required_result_multi_round";
    let first = server.call(1, name, json!({}));
    assert!(first["inputRequests"]["step1"].is_object(), "{first}");
    let second = server.result(
        2,
        "tools/call",
        json!({"name": name, "arguments": {}, "requestState": first["requestState"],
               "inputResponses": {"step1": {"action": "accept", "content": {"name": "Alice"}}}}),
    );
    assert!(second["inputRequests"]["step2"].is_object(), "{second}");
    assert_ne!(second["requestState"], first["requestState"]);
    let third = server.result(
        3,
        "tools/call",
        json!({"name": name, "arguments": {}, "requestState": second["requestState"],
               "inputResponses": {"step2": {"action": "accept", "content": {"color": "blue"}}}}),
    );
    assert_eq!(text(&third), "color: blue");
}

#[test]
fn capabilities_decide_the_input_requests() {
    let mut server = conformance();
    let params = |capabilities: Value| {
        json!({"name": "test_input_required_result_capabilities", "arguments": {},
               "_meta": meta_with(capabilities)})
    };
    let result = server.result(1, "tools/call", params(json!({"sampling": {}})));
    let keys: Vec<&String> = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["greeting"], "{result}");
    let error = server.error(
        2,
        "tools/call",
        json!({"name": "test_missing_capability", "arguments": {}, "_meta": meta_with(json!({}))}),
    );
    assert_eq!(error["code"], -32021, "{error}");
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

#[test]
fn the_template_and_the_prompts_take_their_arguments() {
    let mut server = conformance();
    let read = server.result(
        1,
        "resources/read",
        json!({"uri": "test://template/123/data"}),
    );
    assert!(
        read["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("123"),
        "{read}"
    );
    let binary = server.result(2, "resources/read", json!({"uri": "test://static-binary"}));
    assert_eq!(binary["contents"][0]["mimeType"], "image/png");
    let prompt = server.result(
        3,
        "prompts/get",
        json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
    );
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );
    let asked = server.result(
        4,
        "prompts/get",
        json!({"name": "test_input_required_result_prompt"}),
    );
    assert_eq!(asked["resultType"], "input_required", "{asked}");
}

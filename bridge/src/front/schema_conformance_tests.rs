//! The pure rules against the official JSON schemas of both revisions, read by path from
//! the specification's folder beside the workspace (`MCP_SPEC_DIR`, docs/harness.md; never
//! copied). Frames toward VS Code must be valid 2025-11-25 messages;
//! values toward the upstream server must be valid 2026-07-28 values; the hand-written shape
//! checks must agree with the schemas (where the bridge is stricter, the test says so).
//! Without the schema folder, each test says that it skipped its check (`harness::skip`); under
//! CI it fails.

use harness::skip;

use crate::errors::Cause;
use crate::front::client_requests::request_frame;
use crate::front::inflight::{
    REASON_CLIENT_CANCELED, REASON_CLIENT_CLOSED, REASON_TIMEOUT, REASON_UPSTREAM_STOPPED,
};
use crate::input::answers::{ClientAnswer, collect_answers, retry_params_for, shape_answer};
use crate::input::check::{ClientCaps, check_input_request};
use crate::input::complete::{ElicitationIds, UrlSteps, elicitation_complete};
use crate::input::forms::{choice_form, continue_form};
use crate::input::parse::parse_input_required;
use crate::input::route::plan_round;
use crate::input::shape;
use crate::input::texts::cancelled;
use jsonschema::Validator;
use serde_json::{Value, json};

/// A validator for one definition of a revision's schema, or `None` (skipped) without it. The
/// specification folder is the harness's (docs/harness.md, `MCP_SPEC_DIR`).
fn def(revision: &str, name: &str) -> Option<Validator> {
    let Some(dir) = harness::schema::default_spec_dir() else {
        skip::skip("bridge input_schema_conformance: no specification folder (MCP_SPEC_DIR)");
        return None;
    };
    let path = dir.join(revision).join("schema/schema.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        skip::skip(&format!(
            "bridge input_schema_conformance: no {}",
            path.display()
        ));
        return None;
    };
    let mut schema: Value = serde_json::from_str(&text).expect("schema.json is JSON");
    schema["$ref"] = json!(format!("#/$defs/{name}"));
    Some(
        jsonschema::options()
            .offline()
            .build(&schema)
            .expect("the schema compiles"),
    )
}

fn assert_valid(v: &Validator, value: &Value) {
    let errors: Vec<String> = v.iter_errors(value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{value}\n{errors:#?}");
}

const ALL: ClientCaps = ClientCaps {
    form: true,
    url: true,
    sampling: true,
    sampling_tools: true,
    roots: true,
};

fn text_msg(role: &str) -> Value {
    json!({"role": role, "content": {"type": "text", "text": "x"}})
}

/// Input requests and whether the official `InputRequest` (2026-07-28) accepts them.
fn input_request_vectors() -> Vec<(Value, bool)> {
    let form_schema =
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    vec![
        (
            json!({"method": "elicitation/create", "params": {"mode": "form", "message": "m", "requestedSchema": form_schema}}),
            true,
        ),
        (
            json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": form_schema}}),
            true,
        ),
        (
            json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}}),
            true,
        ),
        (
            json!({"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://example.com/"}}),
            true,
        ),
        (
            json!({"method": "elicitation/create", "params": {"mode": "url", "message": "m"}}),
            false,
        ),
        (
            json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {"o": {"type": "object"}}}}}),
            false,
        ),
        (
            json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {"o": {"type": "string", "format": "uuid"}}}}}),
            false,
        ),
        (
            json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {"o": {"type": "array", "items": {"type": "string", "enum": ["a"]}}}}}}),
            true,
        ),
        (
            json!({"method": "elicitation/create", "params": {"message": 1, "requestedSchema": form_schema}}),
            false,
        ),
        (json!({"method": "elicitation/create"}), false),
        (
            json!({"method": "sampling/createMessage", "params": {"messages": [text_msg("user")], "maxTokens": 5}}),
            true,
        ),
        (
            json!({"method": "sampling/createMessage", "params": {"messages": [text_msg("user")], "maxTokens": 5, "includeContext": "thisServer", "temperature": 0.5, "stopSequences": ["x"], "modelPreferences": {"hints": [{"name": "c"}], "speedPriority": 0.5}}}),
            true,
        ),
        (
            json!({"method": "sampling/createMessage", "params": {"messages": [text_msg("user")], "maxTokens": 5, "modelPreferences": {"speedPriority": 2}}}),
            false,
        ),
        (
            json!({"method": "sampling/createMessage", "params": {"messages": [text_msg("user")], "maxTokens": 5, "includeContext": "everything"}}),
            false,
        ),
        (
            json!({"method": "sampling/createMessage", "params": {"messages": [text_msg("user")], "maxTokens": 1.5}}),
            false,
        ),
        (
            json!({"method": "sampling/createMessage", "params": {"messages": [text_msg("bot")], "maxTokens": 5}}),
            false,
        ),
        (
            json!({"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}], "maxTokens": 5}}),
            true,
        ),
        (
            json!({"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "image", "data": "AA=="}}], "maxTokens": 5}}),
            false,
        ),
        (
            json!({"method": "sampling/createMessage", "params": {"messages": [text_msg("user")]}}),
            false,
        ),
        (json!({"method": "roots/list"}), true),
        (json!({"method": "roots/list", "params": {}}), true),
        (
            json!({"method": "roots/list", "params": {"_meta": 1}}),
            false,
        ),
        (
            json!({"method": "tools/call", "params": {"name": "x"}}),
            false,
        ),
        (json!(["roots/list"]), false),
    ]
}

#[test]
fn r8_shape_check_agrees_with_the_2026_input_request_schema() {
    let Some(v) = def("2026-07-28", "InputRequest") else {
        return;
    };
    for (request, valid) in input_request_vectors() {
        assert_eq!(
            v.is_valid(&request),
            valid,
            "schema verdict changed for {request}"
        );
        let ours = check_input_request("k", &request, &ALL);
        let shape_failure = matches!(&ours, Err(e) if e.cause == Cause::InvalidInputRequest
            && e.detail.ends_with("does not have the shape of the schema"));
        assert_eq!(!shape_failure, valid, "{request}: {ours:?}");
    }
}

#[test]
fn r8_bridge_is_stricter_than_the_schema_on_empty_sampling_messages() {
    let Some(v) = def("2026-07-28", "InputRequest") else {
        return;
    };
    // A sampling request without a message is refused (docs/rules.md O2); the schema has no
    // minItems.
    let empty =
        json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}});
    assert!(v.is_valid(&empty));
    assert!(check_input_request("k", &empty, &ALL).is_err());
}

#[test]
fn o1_every_request_of_the_bridge_is_valid_2025_11_25() {
    let (Some(elicit), Some(sampling), Some(roots), Some(complete), Some(cancel)) = (
        def("2025-11-25", "ElicitRequest"),
        def("2025-11-25", "CreateMessageRequest"),
        def("2025-11-25", "ListRootsRequest"),
        def("2025-11-25", "ElicitationCompleteNotification"),
        def("2025-11-25", "CancelledNotification"),
    ) else {
        return;
    };
    let result = json!({"resultType": "input_required", "requestState": "s", "inputRequests": {
        "profile": {"method": "elicitation/create", "params": {"mode": "form", "message": "Tell us",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}, "task": {"ttl": 5}}},
        "confirm": {"method": "elicitation/create", "params": {"message": "Delete?", "requestedSchema": {"type": "object", "properties": {}}}},
        "auth": {"method": "elicitation/create", "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/auth"}},
        "model": {"method": "sampling/createMessage", "params": {"messages": [text_msg("user")], "maxTokens": 5, "includeContext": "none"}},
        "where": {"method": "roots/list"}}});
    let mut steps = UrlSteps::new();
    let mut eids = ElicitationIds::new();
    let caps = ClientCaps {
        sampling_tools: false,
        ..ALL
    };
    let plan = plan_round(
        &parse_input_required(&result).unwrap(),
        &caps,
        &mut steps,
        &mut eids,
    )
    .unwrap();
    // The frames as the bridge-request table writes them.
    let out: Vec<Value> = plan
        .questions
        .iter()
        .enumerate()
        .map(|(i, q)| request_frame(&format!("b-{}", i + 1), q.method(), q.params.clone()))
        .collect();
    assert_eq!(out.len(), 5);
    for o in &out {
        let v = match o["method"].as_str().unwrap_or("") {
            "elicitation/create" => &elicit,
            "sampling/createMessage" => &sampling,
            _ => &roots,
        };
        assert_valid(v, o);
    }
    // Why the bridge injects elicitationId: 2025-11-25 requires it in URL mode.
    let mut without_id = out[2].clone();
    assert!(without_id["params"]["elicitationId"].is_string());
    without_id["params"]
        .as_object_mut()
        .unwrap()
        .remove("elicitationId");
    assert!(!elicit.is_valid(&without_id));
    // And `task` is gone from the forwarded form.
    assert!(out[0]["params"].get("task").is_none());
    let continue_frame = json!({"jsonrpc": "2.0", "id": "b-9", "method": "elicitation/create", "params": continue_form()});
    assert_valid(&elicit, &continue_frame);
    assert_valid(
        &elicit,
        &json!({"jsonrpc": "2.0", "id": "b-9", "method": "elicitation/create", "params": choice_form("Sure?")}),
    );
    assert_valid(&complete, &elicitation_complete("elicitation-1"));
    for r in [
        REASON_CLIENT_CANCELED,
        REASON_CLIENT_CLOSED,
        REASON_UPSTREAM_STOPPED,
        REASON_TIMEOUT,
    ] {
        assert_valid(&cancel, &cancelled("b-1", r));
    }
}

#[test]
fn r8_input_responses_and_retry_params_are_valid_2026_07_28() {
    let (Some(responses), Some(response)) = (
        def("2026-07-28", "InputResponses"),
        def("2026-07-28", "InputResponse"),
    ) else {
        return;
    };
    let result = json!({"resultType": "input_required", "requestState": "s", "inputRequests": {
        "profile": {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}}},
        "confirm": {"method": "elicitation/create", "params": {"message": "Delete?", "requestedSchema": {"type": "object", "properties": {}}}},
        "auth": {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://example.com/auth"}},
        "bad": {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "javascript:alert(1)"}},
        "model": {"method": "sampling/createMessage", "params": {"messages": [text_msg("user")], "maxTokens": 5}},
        "where": {"method": "roots/list"}}});
    let mut steps = UrlSteps::new();
    let plan = plan_round(
        &parse_input_required(&result).unwrap(),
        &ALL,
        &mut steps,
        &mut ElicitationIds::new(),
    )
    .unwrap();
    let answers = [
        ClientAnswer::Result(json!({"action": "accept", "content": {"name": "Bo", "n": 3}})),
        ClientAnswer::Result(json!({"action": "accept", "content": {"continue": "Continue"}})),
        ClientAnswer::Result(json!({"action": "accept"})),
        ClientAnswer::Result(
            json!({"role": "assistant", "content": {"type": "text", "text": "Hello!"}, "model": "m"}),
        ),
        ClientAnswer::Result(
            json!({"roots": [{"uri": "file:///ws", "name": "ws"}, {"uri": "vscode-vfs://x"}]}),
        ),
    ];
    for (q, a) in plan.questions.iter().zip(&answers) {
        assert_valid(&response, &shape_answer(q, a).unwrap().response);
    }
    let collected = collect_answers(&plan, &answers, &mut steps).unwrap();
    let retry = retry_params_for(
        &json!({"name": "multi", "arguments": {}}),
        &plan,
        &collected,
    );
    assert_valid(&responses, &retry["inputResponses"]);
    assert_eq!(retry["requestState"], "s");
    // Cancel and decline answers too.
    for a in [
        ClientAnswer::BadLine,
        ClientAnswer::Result(json!({"action": "decline", "content": {"x": 1}})),
    ] {
        assert_valid(
            &response,
            &shape_answer(&plan.questions[0], &a).unwrap().response,
        );
    }
}

#[test]
fn o1_o2_o3_answer_shapes_agree_with_the_2025_11_25_results() {
    let (Some(elicit), Some(sampling), Some(roots)) = (
        def("2025-11-25", "ElicitResult"),
        def("2025-11-25", "CreateMessageResult"),
        def("2025-11-25", "ListRootsResult"),
    ) else {
        return;
    };
    for r in [
        json!({"action": "accept", "content": {"a": "x", "b": 1, "d": true, "e": ["x"]}}),
        json!({"action": "decline"}),
        json!({"action": "maybe"}),
        json!({"action": "accept", "content": {"a": {"b": 1}}}),
        json!({"action": "accept", "content": []}),
        json!({}),
    ] {
        assert_eq!(shape::is_elicit_result(&r), elicit.is_valid(&r), "{r}");
    }
    // The bridge accepts a fraction for a `type: "number"` property; the schema says integer.
    let fraction = json!({"action": "accept", "content": {"n": 1.5}});
    assert!(shape::is_elicit_result(&fraction) && !elicit.is_valid(&fraction));
    for r in [
        json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}),
        json!({"role": "assistant", "content": [{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}], "model": "m", "stopReason": "endTurn"}),
        json!({"role": "assistant", "content": {"type": "text"}, "model": "m"}),
        json!({"role": "assistant", "model": "m"}),
        json!({"role": "robot", "content": {"type": "text", "text": "x"}, "model": "m"}),
    ] {
        assert_eq!(
            shape::is_create_message_result(&r),
            sampling.is_valid(&r),
            "{r}"
        );
    }
    for r in [
        json!({"roots": []}),
        json!({"roots": [{"uri": "file:///a", "name": "a"}]}),
        json!({"roots": [{"name": "a"}]}),
        json!({"roots": [{"uri": 1}]}),
        json!({}),
    ] {
        assert_eq!(shape::is_list_roots_result(&r), roots.is_valid(&r), "{r}");
    }
}

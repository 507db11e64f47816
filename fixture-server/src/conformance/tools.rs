//! The `test_*` tools of the conformance suite's server scenarios: content of each kind, an
//! error, logging, progress, and the input rounds of `tools-call-sampling`,
//! `tools-call-elicitation`, `elicitation-sep1034-defaults`, `elicitation-sep1330-enums` and
//! the `input-required-result-*` scenarios (SEP-2322).
#![expect(
    deprecated,
    reason = "rmcp 3.11 marks logging deprecated (SEP-2577); the scenario tools-call-with-logging still checks it"
)]
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, LoggingMessageNotificationParam, ProgressNotificationParam, Tool,
};
use serde_json::{Value, json};

use super::forms::{Form, elicitation_text, form_of, sampled, sampling_prompt, sampling_text};
use super::{PNG, WAV};
use crate::call::{Call, Fail, Outcome, no_input, tool};
use crate::envelope::{self, Capabilities, LEVELS, need_form, need_roots, need_sampling};
use crate::json::typed;
use crate::mrtr::{self, Answers, Ask, Round, bad_state, elicited, input_required, round};

/// The `requestState` values of the rounds. The fixture keeps no state: the round is in the
/// value, and a value that the fixture did not give is refused (-32602), as the scenario
/// `input-required-result-tampered-state` asks.
const STATE_CONFIRM: &str = "conformance/request-state/round-1";
const STATE_MULTIPLE: &str = "conformance/multiple-inputs/round-1";
const STATE_STEP1: &str = "conformance/multi-round/round-1";
const STATE_STEP2: &str = "conformance/multi-round/round-2";
const STATE_TAMPER: &str = "conformance/tampered-state/round-1";

/// The definitions, in a fixed order.
pub fn definitions() -> Vec<Tool> {
    let plain = [
        ("test_simple_text", "Returns a simple text"),
        ("test_image_content", "Returns an image"),
        ("test_audio_content", "Returns an audio clip"),
        ("test_embedded_resource", "Returns an embedded resource"),
        (
            "test_multiple_content_types",
            "Returns a text, an image and a resource",
        ),
        ("test_tool_with_logging", "Logs three messages at info"),
        ("test_tool_with_progress", "Reports progress 0, 50 and 100"),
        ("test_error_handling", "Always fails with isError: true"),
        (
            "test_elicitation_sep1034_defaults",
            "Asks for a form whose fields have defaults",
        ),
        (
            "test_elicitation_sep1330_enums",
            "Asks for a form with the five kinds of enums",
        ),
        (
            "test_input_required_result_elicitation",
            "Asks for a name (input_required)",
        ),
        (
            "test_input_required_result_sampling",
            "Asks the model a question (input_required)",
        ),
        (
            "test_input_required_result_list_roots",
            "Asks for the roots (input_required)",
        ),
        (
            "test_input_required_result_request_state",
            "Asks for a confirmation with a requestState",
        ),
        (
            "test_input_required_result_multiple_inputs",
            "Asks for a form, a model message and the roots in one round",
        ),
        (
            "test_input_required_result_multi_round",
            "Asks in two rounds, then completes",
        ),
        (
            "test_input_required_result_tampered_state",
            "Refuses a requestState that it did not give",
        ),
        (
            "test_input_required_result_capabilities",
            "Asks only for what the client declared",
        ),
        (
            "test_missing_capability",
            "Needs the sampling capability of the client (-32021 without it)",
        ),
        (
            "test_streaming_elicitation",
            "Asks for a name (input_required), never with a request of its own",
        ),
        (
            "test_logging_tool",
            "Logs three messages at info, at the log level of the request",
        ),
        (
            "test_trigger_tool_change",
            "Changes the tool list (the tool toggled) and notifies the listen streams",
        ),
        (
            "test_trigger_prompt_change",
            "Changes the prompt list (the prompt toggled) and notifies the listen streams",
        ),
    ];
    let mut tools: Vec<Tool> = plain
        .into_iter()
        .map(|(name, description)| tool(name, description, no_input(), false))
        .collect();
    tools.push(tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }},
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        }),
        false,
    ));
    tools.push(tool(
        "test_sampling",
        "Asks the model of the client for a message",
        json!({
            "type": "object",
            "properties": {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}},
            "required": ["prompt"]
        }),
        false,
    ));
    tools.push(tool(
        "test_elicitation",
        "Asks the user for a username and an email address",
        json!({
            "type": "object",
            "properties": {"message": {"type": "string", "description": "The message to show the user"}},
            "required": ["message"]
        }),
        false,
    ));
    tools
}

/// The call of a conformance tool; `None` when `name` is not one.
pub async fn call(name: &str, call: &Call<'_>) -> Option<Outcome> {
    let outcome = match name {
        "json_schema_2020_12_tool" => text("the arguments fit the schema"),
        "test_simple_text" => content(json!([
            {"type": "text", "text": "This is a simple text response for testing."}
        ])),
        "test_image_content" => {
            content(json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]))
        }
        "test_audio_content" => {
            content(json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]))
        }
        "test_embedded_resource" => content(json!([{"type": "resource", "resource": {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content."
        }}])),
        "test_multiple_content_types" => content(json!([
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": "{\"test\":\"data\",\"value\":123}"
            }}
        ])),
        "test_error_handling" => result(json!({
            "resultType": "complete",
            "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}],
            "isError": true
        })),
        "test_tool_with_logging" => logging(call).await,
        "test_tool_with_progress" => progress(call).await,
        "test_sampling" => sampling(call),
        "test_elicitation"
        | "test_elicitation_sep1034_defaults"
        | "test_elicitation_sep1330_enums" => match form_of(name, call.arguments) {
            Some(Ok(form)) => one_form(call, form),
            Some(Err(fail)) => Err(fail),
            None => return None,
        },
        "test_input_required_result_elicitation" | "test_streaming_elicitation" => user_name(call),
        "test_logging_tool" => logging(call).await,
        "test_missing_capability" => missing_capability(call),
        "test_trigger_tool_change" => {
            call.state.toggled_tool.fetch_xor(true, Ordering::SeqCst);
            call.state.listeners.tools_changed().await;
            text("the tool list changed")
        }
        "test_trigger_prompt_change" => {
            call.state.toggled_prompt.fetch_xor(true, Ordering::SeqCst);
            call.state.listeners.prompts_changed().await;
            text("the prompt list changed")
        }
        "test_input_required_result_sampling" => capital(call),
        "test_input_required_result_list_roots" => client_roots(call),
        "test_input_required_result_request_state" => request_state(call, STATE_CONFIRM),
        "test_input_required_result_tampered_state" => request_state(call, STATE_TAMPER),
        "test_input_required_result_multiple_inputs" => multiple(call),
        "test_input_required_result_multi_round" => multi_round(call),
        "test_input_required_result_capabilities" => capabilities(call),
        _ => return None,
    };
    Some(outcome)
}

fn result(value: Value) -> Outcome {
    Ok(typed::<CallToolResult>("a conformance tool result", value)?.into())
}

fn content(blocks: Value) -> Outcome {
    result(json!({"resultType": "complete", "content": blocks}))
}

fn text(text: impl Into<String>) -> Outcome {
    content(json!([{"type": "text", "text": text.into()}]))
}

fn failed(what: &str, error: impl std::fmt::Display) -> Fail {
    Fail::Protocol(McpError::internal_error(
        format!("cannot send {what}: {error}"),
        None,
    ))
}

/// Three messages at info, 50 ms apart, when the client's level lets info through.
async fn logging(call: &Call<'_>) -> Outcome {
    let info = LEVELS.iter().position(|level| *level == "info");
    let send =
        envelope::log_level(call.state, call.context).is_some_and(|lowest| info >= Some(lowest));
    let messages = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (i, message) in messages.into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if !send {
            continue;
        }
        let param: LoggingMessageNotificationParam = typed(
            "a log message",
            json!({"level": "info", "logger": "conformance", "data": message}),
        )?;
        call.context
            .peer
            .notify_logging_message(param)
            .await
            .map_err(|error| failed("a log message", error))?;
    }
    text("Tool with logging executed successfully")
}

/// Progress 0, 50 and 100 of 100, 50 ms apart, with the token of the request.
async fn progress(call: &Call<'_>) -> Outcome {
    let token = call.context.meta.get_progress_token();
    for (i, value) in [0, 50, 100].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let Some(token) = &token else { continue };
        let param: ProgressNotificationParam = typed(
            "a progress notification",
            json!({"progressToken": token, "progress": value, "total": 100}),
        )?;
        call.context
            .peer
            .notify_progress(param)
            .await
            .map_err(|error| failed("a progress notification", error))?;
    }
    text("Tool with progress executed successfully")
}

fn answers<'a>(call: &Call<'a>) -> Answers<'a> {
    Answers(call.responses)
}

/// One round with one form.
fn one_form(call: &Call<'_>, form: Form) -> Outcome {
    let ask = Ask::new(
        form.key,
        mrtr::form(&form.message, form.schema.clone()),
        need_form,
    );
    match round(call.context, answers(call), [ask], None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => text(elicitation_text(&form, answer)?),
    }
}

fn sampling(call: &Call<'_>) -> Outcome {
    let prompt = sampling_prompt(call.arguments)?;
    let ask = Ask::new("prompt", mrtr::sampling(&prompt, 100, None), need_sampling);
    match round(call.context, answers(call), [ask], None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => text(sampling_text(answer)),
    }
}

fn name_schema(field: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]})
}

/// The `name` of an accepted form, or `nobody`.
fn field(key: &str, answer: &Value, name: &str) -> Result<String, Fail> {
    let answer = elicited(key, answer)?;
    Ok(answer
        .content
        .as_ref()
        .filter(|_| answer.action == "accept")
        .and_then(|content| content.get(name))
        .and_then(Value::as_str)
        .unwrap_or("nobody")
        .to_string())
}

fn user_name(call: &Call<'_>) -> Outcome {
    let ask = Ask::new(
        "user_name",
        mrtr::form("What is your name?", name_schema("name")),
        need_form,
    );
    match round(call.context, answers(call), [ask], None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => text(format!("Hello, {}!", field("user_name", answer, "name")?)),
    }
}

fn capital(call: &Call<'_>) -> Outcome {
    let request = mrtr::sampling("What is the capital of France?", 100, None);
    let ask = Ask::new("capital_question", request, need_sampling);
    match round(call.context, answers(call), [ask], None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => text(format!("The model said: {}", sampled(answer))),
    }
}

fn client_roots(call: &Call<'_>) -> Outcome {
    let ask = Ask::new("client_roots", roots_request(), need_roots);
    match round(call.context, answers(call), [ask], None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => {
            let uris = mrtr::root_uris("client_roots", answer)?;
            text(format!("roots: {}", uris.join(", ")))
        }
    }
}

/// `roots/list` with the empty `params` of the scenario's description.
fn roots_request() -> Value {
    json!({"method": "roots/list", "params": {}})
}

/// The state of the retry: absent in round 1, `expected` in round 2; any other value is
/// refused.
fn check_state(call: &Call<'_>, expected: &str) -> Result<bool, Fail> {
    match call.request_state {
        None => Ok(false),
        Some(state) if state == expected => Ok(true),
        Some(_) => Err(bad_state().into()),
    }
}

/// A confirmation with a `requestState`; the result says `state-ok` once the echoed state is
/// the one that the fixture gave.
fn request_state(call: &Call<'_>, state: &str) -> Outcome {
    let echoed = check_state(call, state)?;
    let schema =
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
    let ask = Ask::new("confirm", mrtr::form("Please confirm", schema), need_form);
    let responses = if echoed { answers(call) } else { Answers(None) };
    match round(call.context, responses, [ask], Some(state.to_string()))? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => {
            let answer = elicited("confirm", answer)?;
            text(format!("state-ok: {}", answer.action))
        }
    }
}

fn multiple(call: &Call<'_>) -> Outcome {
    let echoed = check_state(call, STATE_MULTIPLE)?;
    let asks = [
        Ask::new(
            "user_name",
            mrtr::form("What is your name?", name_schema("name")),
            need_form,
        ),
        Ask::new(
            "greeting",
            mrtr::sampling("Generate a greeting", 50, None),
            need_sampling,
        ),
        Ask::new("client_roots", roots_request(), need_roots),
    ];
    let responses = if echoed { answers(call) } else { Answers(None) };
    match round(
        call.context,
        responses,
        asks,
        Some(STATE_MULTIPLE.to_string()),
    )? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([name, greeting, roots]) => {
            let name = field("user_name", name, "name")?;
            let roots = mrtr::root_uris("client_roots", roots)?;
            text(format!(
                "name: {name}; greeting: {}; roots: {}",
                sampled(greeting),
                roots.len()
            ))
        }
    }
}

/// Round 1 asks for a name (state round-1), round 2 for a color (state round-2), round 3
/// completes.
fn multi_round(call: &Call<'_>) -> Outcome {
    let step1 = || {
        Ask::new(
            "step1",
            mrtr::form("Step 1: What is your name?", name_schema("name")),
            need_form,
        )
    };
    let step2 = || {
        Ask::new(
            "step2",
            mrtr::form("Step 2: What is your favorite color?", name_schema("color")),
            need_form,
        )
    };
    let ask = |asks: [Ask; 1], state: &str| -> Outcome {
        match round(call.context, Answers(None), asks, Some(state.to_string()))? {
            Round::Ask(result) => Ok(result.into()),
            Round::Done(_) => Err(bad_state().into()),
        }
    };
    match call.request_state {
        None => ask([step1()], STATE_STEP1),
        Some(STATE_STEP1) => match answers(call).get("step1") {
            Some(answer) => {
                elicited("step1", answer)?;
                ask([step2()], STATE_STEP2)
            }
            None => ask([step1()], STATE_STEP1),
        },
        Some(STATE_STEP2) => match answers(call).get("step2") {
            Some(answer) => text(format!("color: {}", field("step2", answer, "color")?)),
            None => ask([step2()], STATE_STEP2),
        },
        Some(_) => Err(bad_state().into()),
    }
}

/// Asks only for what the client declared in this request: a form, a model message, the roots.
fn capabilities(call: &Call<'_>) -> Outcome {
    if answers(call).present() {
        return text(format!("answers: {}", answers(call).len()));
    }
    let caps = Capabilities::of(call.context);
    let mut requests = Vec::new();
    if caps.form() {
        requests.push((
            "user_name".to_string(),
            mrtr::form("What is your name?", name_schema("name")),
        ));
    }
    if caps.sampling() {
        requests.push((
            "greeting".to_string(),
            mrtr::sampling("Generate a greeting", 50, None),
        ));
    }
    if caps.roots() {
        requests.push(("client_roots".to_string(), roots_request()));
    }
    if requests.is_empty() {
        return text("the client declared no input capability");
    }
    Ok(input_required(requests, None)?.into())
}

/// Needs `sampling` in the capabilities of the request: -32021 with
/// `requiredCapabilities: {"sampling": {}}` without it.
fn missing_capability(call: &Call<'_>) -> Outcome {
    need_sampling(&Capabilities::of(call.context))?;
    text("the client declared sampling")
}

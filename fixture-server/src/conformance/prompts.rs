//! The `test_*` prompts of the conformance suite's server scenarios, and the prompt of
//! `input-required-result-non-tool-request`, whose `prompts/get` asks for a form first.
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{GetPromptRequestParams, GetPromptResponse, GetPromptResult};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use super::PNG;
use crate::envelope::need_form;
use crate::json::typed;
use crate::mrtr::{self, Answers, Ask, Round, elicited, round};

/// The prompts of `prompts/list`, as wire JSON.
pub fn definitions() -> Vec<Value> {
    vec![
        json!({"name": "test_simple_prompt", "description": "A simple prompt without arguments"}),
        json!({
            "name": "test_prompt_with_arguments",
            "description": "A prompt with two arguments",
            "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true}
            ]
        }),
        json!({
            "name": "test_prompt_with_embedded_resource",
            "description": "A prompt with an embedded resource",
            "arguments": [{"name": "resourceUri", "description": "URI of the resource to embed", "required": true}]
        }),
        json!({"name": "test_prompt_with_image", "description": "A prompt with an image"}),
        json!({"name": "test_input_required_result_prompt", "description": "A prompt that asks for a form first (input_required)"}),
    ]
}

fn messages(messages: Value) -> Result<GetPromptResponse, McpError> {
    let result: GetPromptResult = typed(
        "a conformance prompt result",
        json!({"resultType": "complete", "messages": messages}),
    )?;
    Ok(result.into())
}

fn user_text(text: &str) -> Value {
    json!({"role": "user", "content": {"type": "text", "text": text}})
}

/// `prompts/get` of a conformance prompt; `None` when `name` is not one.
pub fn get(
    params: &GetPromptRequestParams,
    context: &RequestContext<RoleServer>,
) -> Option<Result<GetPromptResponse, McpError>> {
    let argument = |name: &str| -> Result<String, McpError> {
        params
            .arguments
            .as_ref()
            .and_then(|args| args.get(name))
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                McpError::invalid_params(format!("Missing required argument: {name}"), None)
            })
    };
    let result = match params.name.as_str() {
        "test_simple_prompt" => messages(json!([user_text("This is a simple prompt for testing.")])),
        "test_prompt_with_arguments" => (|| {
            let (arg1, arg2) = (argument("arg1")?, argument("arg2")?);
            let text = format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'");
            messages(json!([user_text(&text)]))
        })(),
        "test_prompt_with_embedded_resource" => argument("resourceUri").and_then(|uri| {
            messages(json!([
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing."
                }}},
                user_text("Please process the embedded resource above.")
            ]))
        }),
        "test_prompt_with_image" => messages(json!([
            {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
            user_text("Please analyze the image above.")
        ])),
        "test_input_required_result_prompt" => with_context(params, context),
        _ => return None,
    };
    Some(result)
}

fn with_context(
    params: &GetPromptRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<GetPromptResponse, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {"context": {"type": "string"}},
        "required": ["context"]
    });
    let ask = Ask::new(
        "user_context",
        mrtr::form("What context should the prompt use?", schema),
        need_form,
    );
    match round(
        context,
        Answers(params.input_responses.as_ref()),
        [ask],
        None,
    )? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => {
            let answer = elicited("user_context", answer)?;
            let given = answer
                .content
                .as_ref()
                .and_then(|content| content.get("context"))
                .and_then(Value::as_str)
                .unwrap_or("none")
                .to_string();
            messages(json!([user_text(&format!("The context: {given}"))]))
        }
    }
}

//! The prompts (O9): `greet` (also the target of completion), `ask_name` (MRTR for
//! `prompts/get`) and `toggled` (in the list while `toggle` with `target: "prompt"` enabled it).
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{
    CompleteResult, GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult,
    Prompt,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use crate::envelope::{self, need_form};
use crate::json::typed;
use crate::mrtr::{self, Answers, Ask, Round, elicited, round};
use crate::paging;
use crate::state::State;

fn definitions(state: &State) -> Vec<Value> {
    let mut prompts = vec![
        json!({
            "name": "greet",
            "description": "A greeting",
            "arguments": [{"name": "name", "description": "The name of the person", "required": true}]
        }),
        json!({"name": "ask_name", "description": "A greeting after a form"}),
    ];
    if state.prompt_enabled() {
        prompts.push(json!({"name": "toggled", "description": "Exists while toggle enabled it"}));
    }
    if state.options.conformance {
        prompts.extend(crate::conformance::prompts::definitions());
    }
    prompts
}

/// `prompts/list`, one page.
pub fn list(state: &State, cursor: Option<&str>) -> Result<ListPromptsResult, McpError> {
    let mut prompts = Vec::new();
    for prompt in definitions(state) {
        prompts.push(typed::<Prompt>("a prompt", prompt)?);
    }
    let (prompts, next) = paging::page(prompts, cursor)?;
    let mut result = ListPromptsResult::with_all_items(prompts);
    result.next_cursor = next;
    Ok(result)
}

fn user_text(description: &str, text: &str) -> Result<GetPromptResult, McpError> {
    typed(
        "a prompt result",
        json!({
            "resultType": "complete",
            "description": description,
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}]
        }),
    )
}

/// `prompts/get`.
pub fn get(
    state: &State,
    params: GetPromptRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<GetPromptResponse, McpError> {
    envelope::check(context)?;
    if state.options.conformance
        && let Some(result) = crate::conformance::prompts::get(&params, context)
    {
        return result;
    }
    match params.name.as_str() {
        "greet" => {
            let name = params
                .arguments
                .as_ref()
                .and_then(|args| args.get("name"))
                .and_then(Value::as_str)
                .ok_or_else(|| McpError::invalid_params("Missing required argument: name", None))?;
            Ok(user_text("A greeting", &format!("Hello, {name}."))?.into())
        }
        "ask_name" => ask_name(params.input_responses.as_ref(), context),
        "toggled" if state.prompt_enabled() => {
            Ok(user_text("Exists while toggle enabled it", "toggled")?.into())
        }
        name => Err(McpError::invalid_params(
            format!("Unknown prompt: {name}"),
            None,
        )),
    }
}

/// A form for the name, then the greeting: `Hello, <name>.`, or `Hello, nobody.` when the user
/// declines or cancels.
fn ask_name(
    responses: Option<&rmcp::model::InputResponses>,
    context: &RequestContext<RoleServer>,
) -> Result<GetPromptResponse, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string", "title": "Name"}},
        "required": ["name"]
    });
    let ask = Ask::new("name", mrtr::form("What is your name?", schema), need_form);
    match round(context, Answers(responses), [ask], None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => {
            let answer = elicited("name", answer)?;
            let name = answer
                .content
                .as_ref()
                .filter(|_| answer.action == "accept")
                .and_then(|content| content.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("nobody")
                .to_string();
            Ok(user_text("A greeting after a form", &format!("Hello, {name}."))?.into())
        }
    }
}

/// `completion/complete` (O8): always the same two values.
pub fn complete(context: &RequestContext<RoleServer>) -> Result<CompleteResult, McpError> {
    envelope::check(context)?;
    typed(
        "a completion",
        json!({"resultType": "complete", "completion": {"values": ["alpha", "beta"], "total": 2, "hasMore": false}}),
    )
}

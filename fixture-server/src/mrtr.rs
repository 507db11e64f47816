//! Multi round-trip requests (MRTR) of revision 2026-07-28: the `InputRequiredResult` of a
//! tool, a prompt or a resource, and the `inputResponses` of the retry (R8 is the bridge's side
//! of these rounds).
//!
//! The fixture keeps no state between the rounds: what a later round needs is in the request
//! (`inputResponses`) or in `requestState`. Only `ask_url_twice` uses `requestState` (the number
//! of its round); its value is not sealed, because a changed value can only make the request
//! fail (the specification allows that).
use rmcp::ErrorData as McpError;
use rmcp::model::{InputRequests, InputRequiredResult, InputResponses};
use serde_json::{Map, Value, json};

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use crate::envelope::Capabilities;
use crate::json::typed;

/// An `InputRequiredResult` with these input requests (key, request as wire JSON) and an
/// optional `requestState`.
pub fn input_required(
    requests: Vec<(String, Value)>,
    state: Option<String>,
) -> Result<InputRequiredResult, McpError> {
    let mut map = InputRequests::new();
    for (key, request) in requests {
        map.insert(key, typed("an input request", request)?);
    }
    Ok(InputRequiredResult::new(Some(map), state))
}

/// A form elicitation.
pub fn form(message: &str, schema: Value) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema}
    })
}

/// A URL elicitation. Revision 2026-07-28 has no `elicitationId` (the bridge makes its own for
/// VS Code, O1), but rmcp 3.11 always writes the member; the fixture gives it a fixed value
/// rather than an empty string.
pub fn url(key: &str, message: &str, url: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {"mode": "url", "message": message, "url": url, "elicitationId": format!("fixture-{key}")}
    })
}

/// A sampling request with one user message.
pub fn sampling(text: &str, max_tokens: u32, tools: Option<Value>) -> Value {
    let mut params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens,
    });
    if let (Some(tools), Some(object)) = (tools, params.as_object_mut()) {
        object.insert("tools".into(), tools);
    }
    json!({"method": "sampling/createMessage", "params": params})
}

/// A roots request.
pub fn roots() -> Value {
    json!({"method": "roots/list"})
}

/// The answers of the retry round, if any.
#[derive(Clone, Copy)]
pub struct Answers<'a>(pub Option<&'a InputResponses>);

impl<'a> Answers<'a> {
    /// The answer to the input request `key`.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.and_then(|responses| responses.get(key))
    }

    /// Whether the request carries `inputResponses`.
    pub fn present(&self) -> bool {
        self.0.is_some()
    }

    /// The number of answers.
    pub fn len(&self) -> usize {
        self.0.map_or(0, |responses| responses.len())
    }
}

/// The answer of an elicitation: its action, and the content of an accepted form.
pub struct Elicited {
    pub action: String,
    pub content: Option<Map<String, Value>>,
}

/// Reads the answer to the elicitation `key`; an answer without a known action is -32602.
pub fn elicited(key: &str, answer: &Value) -> Result<Elicited, McpError> {
    let action = answer.get("action").and_then(Value::as_str);
    match action {
        Some(action @ ("accept" | "decline" | "cancel")) => Ok(Elicited {
            action: action.to_string(),
            content: answer.get("content").and_then(Value::as_object).cloned(),
        }),
        _ => Err(McpError::invalid_params(
            format!("the input response '{key}' is not an elicitation result"),
            None,
        )),
    }
}

/// The text of a sampling answer: the text of its content block (or of the first text block
/// of a list of blocks).
pub fn sampled_text(answer: &Value) -> Option<String> {
    let content = answer.get("content")?;
    let block = match content {
        Value::Array(blocks) => blocks
            .iter()
            .find(|block| block.get("type").and_then(Value::as_str) == Some("text"))?,
        block => block,
    };
    if block.get("type").and_then(Value::as_str) != Some("text") {
        return None;
    }
    block
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The URIs of a roots answer.
pub fn root_uris(key: &str, answer: &Value) -> Result<Vec<String>, McpError> {
    let roots = answer
        .get("roots")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            McpError::invalid_params(
                format!("the input response '{key}' is not a roots result"),
                None,
            )
        })?;
    Ok(roots
        .iter()
        .filter_map(|root| root.get("uri").and_then(Value::as_str))
        .map(str::to_string)
        .collect())
}

/// One input request of a round, with the capability that the client must declare for it.
pub struct Ask {
    pub key: String,
    pub request: Value,
    pub need: fn(&Capabilities) -> Result<(), McpError>,
}

impl Ask {
    pub fn new(key: &str, request: Value, need: fn(&Capabilities) -> Result<(), McpError>) -> Self {
        Self {
            key: key.to_string(),
            request,
            need,
        }
    }
}

/// The outcome of a round: all answers (in the order of the asks), or the input requests that
/// still have no answer.
pub enum Round<'a, const N: usize> {
    Done([&'a Value; N]),
    Ask(InputRequiredResult),
}

/// Looks for the answer of each ask. The asks without an answer go to the client again (the
/// specification asks a server to ask again rather than fail), after a check that the client
/// declared their capability (-32021 otherwise).
pub fn round<'a, const N: usize>(
    context: &RequestContext<RoleServer>,
    answers: Answers<'a>,
    asks: [Ask; N],
    state: Option<String>,
) -> Result<Round<'a, N>, McpError> {
    let found: Vec<&'a Value> = asks
        .iter()
        .filter_map(|ask| answers.get(&ask.key))
        .collect();
    if let Ok(done) = <[&'a Value; N]>::try_from(found) {
        return Ok(Round::Done(done));
    }
    let caps = Capabilities::of(context);
    let missing: Vec<Ask> = asks
        .into_iter()
        .filter(|ask| answers.get(&ask.key).is_none())
        .collect();
    for ask in &missing {
        (ask.need)(&caps)?;
    }
    let requests = missing
        .into_iter()
        .map(|ask| (ask.key, ask.request))
        .collect();
    Ok(Round::Ask(input_required(requests, state)?))
}

/// The error of a `requestState` that the fixture did not give (the shape that 2026-07-28 SDK
/// servers give, which the bridge turns into the text of its refused-state rule, docs/rules.md R8).
pub fn bad_state() -> McpError {
    McpError::invalid_params(
        "Invalid or expired requestState",
        Some(json!({"reason": "invalid_request_state"})),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_answers() {
        let text = sampled_text(
            &json!({"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}),
        );
        assert_eq!(text.as_deref(), Some("hi"));
        let list = json!({"content":[{"type":"image","data":"","mimeType":"image/png"},{"type":"text","text":"x"}]});
        assert_eq!(sampled_text(&list).as_deref(), Some("x"));
        assert_eq!(sampled_text(&json!({"content":{"type":"image"}})), None);
        assert!(elicited("k", &json!({"action":"maybe"})).is_err());
        let roots = root_uris(
            "r",
            &json!({"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}),
        );
        assert_eq!(roots.unwrap_or_default(), vec!["file:///a", "file:///b"]);
    }

    #[test]
    fn the_input_requests_fit_the_model_of_rmcp() {
        let schema =
            json!({"type":"object","properties":{"name":{"type":"string"}},"required":["name"]});
        let requests = vec![
            ("a".to_string(), form("Your name?", schema)),
            (
                "b".to_string(),
                url("b", "Sign in.", "https://example.com/auth"),
            ),
            ("c".to_string(), sampling("Say hello.", 50, None)),
            ("d".to_string(), roots()),
        ];
        assert!(input_required(requests, None).is_ok());
    }
}

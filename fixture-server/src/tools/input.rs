//! The tools that ask for input with an `InputRequiredResult` (MRTR): forms, URLs, sampling
//! and roots (O1 to O3, R8). The first call gets `resultType: "input_required"`; the retry with
//! `inputResponses` gets the result.
use rmcp::model::Tool;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::call::{Call, Outcome, no_input, tool};
use crate::envelope::{need_form, need_roots, need_sampling, need_sampling_tools, need_url};
use crate::json::{arguments, text_result};
use crate::mrtr::{self, Answers, Ask, Round, bad_state, elicited, round};

/// The URL of `ask_url` and `ask_url_twice`.
const AUTH_URL: &str = "https://example.com/auth";
/// The URL of `ask_bad_url`: a `file:` URL that the bridge must never show (quirks of VS Code).
const BAD_URL: &str = "file://localhost/etc/passwd";
/// The number of roots requests of `many_inputs`: one above the limit of the bridge (16).
const MANY_INPUTS: usize = 17;

pub fn definitions() -> Vec<Tool> {
    vec![
        tool(
            "ask_form",
            "Asks for a form, and gives the answer",
            no_input(),
            false,
        ),
        tool(
            "ask_url",
            "Asks the user to open a URL, and gives the answer",
            no_input(),
            false,
        ),
        tool(
            "ask_url_twice",
            "Asks for the same URL in two rounds (or one with complete: true)",
            json!({"type": "object", "properties": {"complete": {"type": "boolean"}}}),
            false,
        ),
        tool(
            "ask_bad_url",
            "Asks the user to open a file: URL",
            no_input(),
            false,
        ),
        tool(
            "sample",
            "Asks the client for a message of its model",
            no_input(),
            false,
        ),
        tool(
            "sample_tools",
            "Asks the client for a message of its model, with a tool",
            no_input(),
            false,
        ),
        tool(
            "list_roots",
            "Asks the client for its roots",
            no_input(),
            false,
        ),
        tool(
            "multi",
            "Asks for a form and the roots in one round",
            no_input(),
            false,
        ),
        tool(
            "many_inputs",
            "Asks for the roots 17 times in one round",
            no_input(),
            false,
        ),
    ]
}

/// The form of `ask_form`.
pub fn profile_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 1},
            "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
            "subscribe": {"type": "boolean", "title": "Subscribe"},
            "color": {"type": "string", "title": "Color", "enum": ["red", "green", "blue"]}
        },
        "required": ["name"]
    })
}

fn answers<'a>(call: &Call<'a>) -> Answers<'a> {
    Answers(call.responses)
}

/// The text of an elicitation answer: `<action>`, with the content of an accepted form.
fn action_text(key: &str, answer: &Value, with_content: bool) -> Result<String, super::Fail> {
    let answer = elicited(key, answer)?;
    if with_content && answer.action == "accept" {
        let content = Value::Object(answer.content.unwrap_or_default());
        return Ok(format!("accept {content}"));
    }
    Ok(answer.action)
}

pub fn ask_form(call: &Call<'_>) -> Outcome {
    let ask = Ask::new(
        "profile",
        mrtr::form("Tell us about you.", profile_schema()),
        need_form,
    );
    match round(call.context, answers(call), [ask], None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => {
            let text = action_text("profile", answer, true)?;
            Ok(text_result(format!("form: {text}")).into())
        }
    }
}

fn url_ask(key: &str, message: &str, url: &str) -> Ask {
    Ask::new(key, mrtr::url(key, message, url), need_url)
}

/// One round that asks for the URL `url` under `key`; the result is `url: <action>`.
fn url_tool(call: &Call<'_>, key: &str, message: &str, url: &str) -> Outcome {
    let ask = url_ask(key, message, url);
    match round(call.context, answers(call), [ask], None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => {
            let text = action_text(key, answer, false)?;
            Ok(text_result(format!("url: {text}")).into())
        }
    }
}

pub fn ask_url(call: &Call<'_>) -> Outcome {
    url_tool(call, "auth", "Sign in to continue.", AUTH_URL)
}

pub fn ask_bad_url(call: &Call<'_>) -> Outcome {
    url_tool(call, "file", "Open the file.", BAD_URL)
}

#[derive(Deserialize)]
struct Twice {
    #[serde(default)]
    complete: bool,
}

/// The `requestState` of `ask_url_twice` after round `n`.
fn twice_state(n: u32) -> String {
    format!("ask_url_twice/round-{n}")
}

/// Asks for the same URL in rounds 1 and 2 and gives the result in round 3; the number of the
/// round is in `requestState`, the only state that the fixture keeps between rounds. With
/// `complete: true`, the result comes in round 2. A `requestState` that the fixture did not
/// give gets -32602 with `data.reason: "invalid_request_state"`.
pub fn ask_url_twice(call: &Call<'_>) -> Outcome {
    let args: Twice = arguments("ask_url_twice", call.arguments)?;
    let done_round = match call.request_state {
        None => 0,
        Some(state) if state == twice_state(1) => 1,
        Some(state) if state == twice_state(2) => 2,
        Some(_) => return Err(bad_state().into()),
    };
    let answer = if done_round == 0 {
        None
    } else {
        answers(call).get("auth")
    };
    let ask = || url_ask("auth", "Sign in to continue.", AUTH_URL);
    let Some(answer) = answer else {
        // Round 1, or a retry without the answer: ask (again) in the same round.
        let state = Some(twice_state(done_round.max(1)));
        return match round(call.context, Answers(None), [ask()], state)? {
            Round::Ask(result) => Ok(result.into()),
            Round::Done(_) => Err(bad_state().into()),
        };
    };
    let text = action_text("auth", answer, false)?;
    if done_round == 1 && !args.complete {
        return match round(call.context, Answers(None), [ask()], Some(twice_state(2)))? {
            Round::Ask(result) => Ok(result.into()),
            Round::Done(_) => Err(bad_state().into()),
        };
    }
    Ok(text_result(format!("url twice: {text}")).into())
}

fn sampled(answer: &Value) -> String {
    match mrtr::sampled_text(answer) {
        Some(text) => format!("model: {text}"),
        None => "model: no text".to_string(),
    }
}

pub fn sample(call: &Call<'_>) -> Outcome {
    let ask = Ask::new(
        "model",
        mrtr::sampling("Say hello.", 50, None),
        need_sampling,
    );
    match round(call.context, answers(call), [ask], None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => Ok(text_result(sampled(answer)).into()),
    }
}

/// Sampling with a tool: needs `sampling.tools`, which VS Code never declares (O2), thus the
/// bridge gets -32021.
pub fn sample_tools(call: &Call<'_>) -> Outcome {
    let tools = json!([{"name": "lookup", "inputSchema": {"type": "object"}}]);
    let ask = Ask::new(
        "model",
        mrtr::sampling("Look up the weather.", 50, Some(tools)),
        need_sampling_tools,
    );
    match round(call.context, answers(call), [ask], None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => Ok(text_result(sampled(answer)).into()),
    }
}

pub fn list_roots(call: &Call<'_>) -> Outcome {
    let ask = Ask::new("roots", mrtr::roots(), need_roots);
    match round(call.context, answers(call), [ask], None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([answer]) => {
            let uris = mrtr::root_uris("roots", answer)?;
            Ok(text_result(format!("roots: {}", uris.join("\n"))).into())
        }
    }
}

/// A form and the roots in one round: the bridge sends both questions to VS Code at once.
pub fn multi(call: &Call<'_>) -> Outcome {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    });
    let asks = [
        Ask::new("name", mrtr::form("Your name?", schema), need_form),
        Ask::new("roots", mrtr::roots(), need_roots),
    ];
    match round(call.context, answers(call), asks, None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done([name_answer, roots_answer]) => {
            let form = elicited("name", name_answer)?;
            let name = form
                .content
                .as_ref()
                .and_then(|content| content.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let roots = mrtr::root_uris("roots", roots_answer)?;
            let text = format!("name: {name} ({}); roots: {}", form.action, roots.len());
            Ok(text_result(text).into())
        }
    }
}

/// 17 roots requests in one round, one above the limit of the bridge. Any retry with
/// `inputResponses` completes, with the number of answers.
pub fn many_inputs(call: &Call<'_>) -> Outcome {
    let answers = answers(call);
    if answers.present() {
        return Ok(text_result(format!("answers: {}", answers.len())).into());
    }
    let asks: [Ask; MANY_INPUTS] =
        std::array::from_fn(|i| Ask::new(&format!("r{i}"), mrtr::roots(), need_roots));
    match round(call.context, Answers(None), asks, None)? {
        Round::Ask(result) => Ok(result.into()),
        Round::Done(done) => Ok(text_result(format!("answers: {}", done.len())).into()),
    }
}

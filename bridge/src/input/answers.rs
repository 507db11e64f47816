//! Shaping of the client's answers (O1, O2, O3), the pending answers of one round (late and
//! duplicate answers), `inputResponses` and the params of the retry.

use serde_json::{Map, Value, json};

use super::check::InputKind;
use super::complete::UrlSteps;
use super::error::{InputError, RoundFailure};
use super::forms::content_is_valid;
use super::route::{Question, RoundPlan, Route};
use super::shape;
use crate::errors::Cause;

/// Detail texts (without the `input request '<key>': ` prefix).
pub mod what {
    pub const ELICIT_SHAPE: &str = "the elicitation result does not have the shape of the schema";
    pub const CONTENT_INVALID: &str =
        "the accepted content is not valid against the requestedSchema";
    pub const SAMPLING_SHAPE: &str = "the sampling result does not have the shape of the schema";
    pub const ROOTS_SHAPE: &str = "the roots result does not have the shape of the schema";
    pub const BAD_LINE: &str = "the answer of the client is not a valid message";
}

/// What the client answered to one request of the bridge.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientAnswer {
    /// The `result` member of the response.
    Result(Value),
    /// The `error` member of the response (the JSON-RPC error object).
    Error(Value),
    /// A line with the bridge's id that is not a valid message (bad JSON, a lone surrogate,
    /// invalid UTF-8, too deep, too long).
    BadLine,
}

/// One shaped answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Shaped {
    /// The value for `inputResponses[key]`.
    pub response: Value,
    /// The elicitation id of a URL step that the user accepted.
    pub accepted_step: Option<String>,
    /// The root URIs that did not go upstream (for a debug line).
    pub dropped_roots: Vec<String>,
}

impl Shaped {
    fn of(response: Value) -> Self {
        Shaped {
            response,
            accepted_step: None,
            dropped_roots: Vec::new(),
        }
    }
}

/// Shape the client's answer to one question.
pub fn shape_answer(question: &Question, answer: &ClientAnswer) -> Result<Shaped, RoundFailure> {
    let fail = |what: &str| {
        RoundFailure::Bridge(InputError::for_key(
            Cause::InvalidClientAnswer,
            &question.key,
            what,
        ))
    };
    match question.kind {
        InputKind::Form | InputKind::Url => shape_elicitation(question, answer),
        InputKind::Sampling => match answer {
            // O2: the client's error (VS Code refuses with −32000) goes to the original
            // request unchanged.
            ClientAnswer::Error(e) => Err(RoundFailure::Client(e.clone())),
            ClientAnswer::BadLine => Err(fail(what::BAD_LINE)),
            ClientAnswer::Result(r) if shape::is_create_message_result(r) => {
                Ok(Shaped::of(r.clone()))
            }
            ClientAnswer::Result(_) => Err(fail(what::SAMPLING_SHAPE)),
        },
        InputKind::Roots => match answer {
            ClientAnswer::Error(e) => Err(RoundFailure::Client(e.clone())),
            ClientAnswer::BadLine => Err(fail(what::BAD_LINE)),
            ClientAnswer::Result(r) if shape::is_list_roots_result(r) => Ok(keep_file_roots(r)),
            ClientAnswer::Result(_) => Err(fail(what::ROOTS_SHAPE)),
        },
    }
}

/// O1: an elicitation answer keeps only `action`, plus `content` only for `accept`
/// on a form sent as it is, after validation against its `requestedSchema` (VS Code does not
/// validate). An error or a broken answer of the client becomes `cancel`.
fn shape_elicitation(question: &Question, answer: &ClientAnswer) -> Result<Shaped, RoundFailure> {
    let fail = |what: &str| {
        RoundFailure::Bridge(InputError::for_key(
            Cause::InvalidClientAnswer,
            &question.key,
            what,
        ))
    };
    let result = match answer {
        ClientAnswer::Error(_) | ClientAnswer::BadLine => {
            return Ok(Shaped::of(json!({"action": "cancel"})));
        }
        ClientAnswer::Result(r) => r,
    };
    if !shape::is_elicit_result(result) {
        return Err(fail(what::ELICIT_SHAPE));
    }
    let action = result
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("cancel");
    if action != "accept" {
        return Ok(Shaped::of(json!({"action": action})));
    }
    match &question.route {
        Route::AsIs => {
            let content = result.get("content").cloned().unwrap_or_else(|| json!({}));
            let valid = question
                .validator
                .as_deref()
                .is_some_and(|v| content_is_valid(v, &content));
            if !valid {
                return Err(fail(what::CONTENT_INVALID));
            }
            Ok(Shaped::of(json!({"action": "accept", "content": content})))
        }
        // Quirk: the choice form's one property is the bridge's, not the server's.
        Route::ChoiceForm => Ok(Shaped::of(json!({"action": "accept", "content": {}}))),
        Route::UrlStep { elicitation_id, .. } => Ok(Shaped {
            response: json!({"action": "accept"}),
            accepted_step: Some(elicitation_id.clone()),
            dropped_roots: Vec::new(),
        }),
        Route::UrlContinue { .. } => Ok(Shaped::of(json!({"action": "accept"}))),
    }
}

/// O3: only roots with a `file://` URI go upstream; every other member stays.
fn keep_file_roots(result: &Value) -> Shaped {
    let mut out = result.clone();
    let mut dropped = Vec::new();
    if let Some(roots) = out.get_mut("roots").and_then(Value::as_array_mut) {
        roots.retain(|root| {
            let uri = root.get("uri").and_then(Value::as_str).unwrap_or("");
            let keep = uri.starts_with("file://");
            if !keep {
                dropped.push(uri.to_owned());
            }
            keep
        });
    }
    Shaped {
        response: out,
        accepted_step: None,
        dropped_roots: dropped,
    }
}

/// The answers of a round, shaped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collected {
    /// `inputResponses`: keyed by the input-request keys, in the upstream server's order.
    pub input_responses: Map<String, Value>,
    /// `(key, uri)` of the roots that did not go upstream (debug lines).
    pub dropped_roots: Vec<(String, String)>,
}

/// Shape every answer of a round (`answers[i]` answers `plan.questions[i]`) and build
/// `inputResponses`. Every accepted URL step is marked, also when another answer fails the
/// round, so that its complete notification still comes. The first failure in the
/// order of the questions fails the round.
pub fn collect_answers(
    plan: &RoundPlan,
    answers: &[ClientAnswer],
    steps: &mut UrlSteps,
) -> Result<Collected, RoundFailure> {
    let mut shaped: Vec<(String, Value)> = Vec::new();
    let mut dropped_roots = Vec::new();
    let mut failure: Option<RoundFailure> = None;
    for (i, question) in plan.questions.iter().enumerate() {
        let answer = answers.get(i).unwrap_or(&ClientAnswer::BadLine);
        match shape_answer(question, answer) {
            Ok(s) => {
                if let Some(id) = &s.accepted_step {
                    steps.mark_accepted(id);
                }
                dropped_roots.extend(
                    s.dropped_roots
                        .into_iter()
                        .map(|u| (question.key.clone(), u)),
                );
                shaped.push((question.key.clone(), s.response));
            }
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    if let Some(f) = failure {
        return Err(f);
    }
    let mut input_responses = Map::new();
    for key in &plan.keys {
        let value = shaped
            .iter()
            .find(|(k, _)| k == key)
            .or_else(|| plan.preset.iter().find(|(k, _)| k == key))
            .map(|(_, v)| v.clone());
        if let Some(v) = value {
            input_responses.insert(key.clone(), v);
        }
    }
    Ok(Collected {
        input_responses,
        dropped_roots,
    })
}

/// The params of the retry: a copy of the original forwarded params minus any
/// old `inputResponses` / `requestState`, plus the new `inputResponses` (if the round had
/// input requests) and `requestState` (if the upstream server sent one). Every other member
/// stays. Non-object params count as `{}`.
pub fn retry_params(
    original: &Value,
    input_responses: Option<&Map<String, Value>>,
    request_state: Option<&str>,
) -> Value {
    let mut params = match original {
        Value::Object(o) => o.clone(),
        _ => Map::new(),
    };
    params.shift_remove("inputResponses");
    params.shift_remove("requestState");
    if let Some(r) = input_responses {
        params.insert("inputResponses".into(), Value::Object(r.clone()));
    }
    if let Some(s) = request_state {
        params.insert("requestState".into(), Value::String(s.to_owned()));
    }
    Value::Object(params)
}

/// For a whole round: the retry params from the plan and its collected answers.
pub fn retry_params_for(original: &Value, plan: &RoundPlan, collected: &Collected) -> Value {
    let responses = plan
        .has_input_requests()
        .then_some(&collected.input_responses);
    retry_params(original, responses, plan.request_state.as_deref())
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod tests;

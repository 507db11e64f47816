//! L3: the requests of an older upstream server to VS Code (sampling, elicitation in form and
//! URL mode, roots, ping), with the checks of the input rounds (R8, O1, O2, O3, C2, Q3, Q4):
//! each request is checked before VS Code sees it, goes to VS Code with the bridge's `b-` id,
//! and its answer is shaped as in a round before it goes upstream with the server's own id.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{Older, Shared};
use crate::errors::{Cause, error_object};
use crate::front::inflight::{REASON_TIMEOUT, REASON_UPSTREAM_STOPPED, key_of};
use crate::input::answers::{ClientAnswer, shape_answer};
use crate::input::check::{CheckedRequest, InputKind, check_input_request};
use crate::input::complete::{ElicitationIds, UrlSteps};
use crate::input::error::RoundFailure;
use crate::input::route::{Question, Route, route_round};
use crate::input::texts;
use crate::input::url::url_allowed;
use crate::log::{self, Level};
use crate::translate::forward::INPUT_TIMEOUT;
use crate::translate::older::upstream_response;
use crate::upstream::client::UpstreamClient;

/// The methods that the bridge asks VS Code for; any other request of the server gets -32601.
const INPUT_METHODS: [&str; 3] = ["elicitation/create", "sampling/createMessage", "roots/list"];

/// L3: a request of the upstream server, on the router.
pub(crate) fn asked(
    shared: &Arc<Shared>,
    older: &Arc<Older>,
    client: &Arc<UpstreamClient>,
    id: Value,
    method: &str,
    params: Option<Value>,
) {
    let ask = Ask {
        shared,
        older,
        client,
    };
    if method != "ping" && !INPUT_METHODS.contains(&method) {
        client.send_message(&upstream_response(
            id,
            Err(error_object(Cause::MethodNotFound, None)),
        ));
        return;
    }
    // L3: as many of the server's requests wait for VS Code at once as input requests in a
    // round; one more is refused before VS Code sees it.
    if let Err(over) = older.asked().room() {
        log::bridge(Level::Warn, &over.warning(method));
        client.send_message(&upstream_response(id, Err(over.error_object())));
        return;
    }
    if method == "ping" {
        return ask.vscode(id, method, params, Answer::AsIs);
    }
    let key = texts::request_id(&id);
    let mut request = Map::new();
    request.insert("method".into(), method.into());
    if let Some(params) = params {
        request.insert("params".into(), params);
    }
    let question = match check_input_request(&key, &Value::Object(request), &older.caps) {
        Ok(checked) => question_for(checked),
        Err(e) => {
            log::bridge(
                Level::Warn,
                &format!("refused the request {method} of the upstream server: {e}"),
            );
            client.send_message(&upstream_response(id, Err(e.to_error_object())));
            return;
        }
    };
    let Some(question) = question else {
        // Q4: a URL that VS Code must not open is a decline, with a warning.
        log::bridge(Level::Warn, &texts::refused_url(&key));
        client.send_message(&upstream_response(id, Ok(json!({"action": "decline"}))));
        return;
    };
    if let Route::UrlStep { elicitation_id, .. } = &question.route {
        // O1: only an elicitation that the server opened may be completed by it.
        older.asked().opened_url(elicitation_id);
    }
    let params = question.params.clone();
    ask.vscode(id, question.method(), params, Answer::Input(question));
}

/// What a request of the server needs on its way to VS Code and back.
struct Ask<'a> {
    shared: &'a Arc<Shared>,
    older: &'a Arc<Older>,
    client: &'a Arc<UpstreamClient>,
}

/// How VS Code's answer goes upstream.
enum Answer {
    /// Shaped as the answer to an input request of a round.
    Input(Question),
    /// As VS Code gave it (`ping`).
    AsIs,
}

impl Ask<'_> {
    /// Sends the request to VS Code with the bridge's next `b-` id, and its answer upstream with
    /// the server's `id`.
    fn vscode(&self, id: Value, method: &str, params: Option<Value>, shape: Answer) {
        let shared = self.shared;
        let pending = shared.client_requests.send(&shared.outbox, method, params);
        log::bridge(
            Level::Debug,
            &format!(
                "sent the request {method} of the upstream server to the client as request \"{}\"",
                pending.id
            ),
        );
        // Room was checked before: the router, which alone adds requests, is still here.
        let _ = self.older.asked().admit(key_of(&id), pending.id.clone());
        let shared = Arc::clone(shared);
        let older = Arc::clone(self.older);
        let client = Arc::clone(self.client);
        let mut end = client.transport().end_watch();
        // Not a tracked task of the connection: it ends with the upstream connection (the stop
        // ends that within its bound), with VS Code's answer, or after the wait of an input.
        tokio::spawn(async move {
            let bridge_id = pending.id;
            tokio::select! {
                answer = pending.answer => {
                    older.asked().remove(&key_of(&id));
                    // Without an answer the server cancelled its request: nothing goes upstream.
                    if let Ok(answer) = answer {
                        let response = match &shape {
                            Answer::Input(question) => shaped(question, &answer),
                            Answer::AsIs => as_is(answer),
                        };
                        client.send_message(&upstream_response(id, response));
                    }
                }
                _ = end.wait_for(Option::is_some) => {
                    shared.client_requests.cancel(&shared.outbox, &bridge_id, REASON_UPSTREAM_STOPPED);
                }
                () = tokio::time::sleep(INPUT_TIMEOUT) => {
                    older.asked().remove(&key_of(&id));
                    shared.client_requests.cancel(&shared.outbox, &bridge_id, REASON_TIMEOUT);
                    let error = texts::input_timeout_error(INPUT_TIMEOUT, 1);
                    client.send_message(&upstream_response(id, Err(error.to_error_object())));
                }
            }
        });
    }
}

/// VS Code's answer as it came; a line that is not a valid answer is the bridge's error.
fn as_is(answer: ClientAnswer) -> Result<Value, Value> {
    match answer {
        ClientAnswer::Result(result) => Ok(result),
        ClientAnswer::Error(error) => Err(error),
        ClientAnswer::BadLine => Err(error_object(Cause::InvalidClientAnswer, None)),
    }
}

/// The question for VS Code of a checked request; `None` for a URL that the URL rule refuses
/// (Q4). A form and the other kinds take the routes of a round (Q3: the choice form for a
/// form without a property); a URL keeps the `elicitationId` that the server gave, because
/// the server's `notifications/elicitation/complete` names it.
fn question_for(checked: CheckedRequest) -> Option<Question> {
    if checked.kind != InputKind::Url {
        let caps = Default::default();
        let plan = route_round(
            vec![checked],
            &caps,
            &mut UrlSteps::new(),
            &mut ElicitationIds::new(),
        );
        return plan.questions.into_iter().next();
    }
    let params = checked.params.unwrap_or_else(|| json!({}));
    let url = params.get("url").and_then(Value::as_str).unwrap_or("");
    if !url_allowed(url) {
        return None;
    }
    let route = Route::UrlStep {
        url: url.to_owned(),
        elicitation_id: params
            .get("elicitationId")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
    };
    Some(Question {
        key: checked.key,
        kind: checked.kind,
        route,
        params: Some(params),
        validator: None,
    })
}

/// O1, O2, O3: VS Code's answer as it goes upstream: a form's accepted content only when it
/// is valid against its schema (else the server gets the bridge's error), no content with
/// decline or cancel, VS Code's own error for sampling and roots, only `file://` roots.
fn shaped(question: &Question, answer: &ClientAnswer) -> Result<Value, Value> {
    match shape_answer(question, answer) {
        Ok(shaped) => Ok(shaped.response),
        Err(RoundFailure::Client(error)) => Err(error),
        Err(RoundFailure::Bridge(error)) => {
            log::bridge(
                Level::Warn,
                &format!("the answer of the client is not valid: {error}"),
            );
            Err(error.to_error_object())
        }
    }
}

//! R8 (M2): the input rounds of one forwarded request. The pure
//! rules are in [`crate::input`]; this file does their I/O: the questions of a round go to
//! VS Code through the bridge-request table, the wait for the answers is bounded (1 h, with
//! the still-waiting lines), and a cancellation or the end of input gives each unanswered
//! `b-` request up with `notifications/cancelled`.

use std::time::Duration;

use serde_json::{Map, Value};
use tokio::time::Instant;

use super::Shared;
use super::client_requests::PendingAnswer;
use super::exchange::{FIRST_NOTE, NOTE_EVERY};
use super::inflight::{REASON_TIMEOUT, Slot};
use crate::input::answers::{ClientAnswer, collect_answers, retry_params_for};
use crate::input::check::ClientCaps;
use crate::input::complete::UrlSteps;
use crate::input::error::RoundFailure;
use crate::input::parse::{RoundCounter, parse_input_required};
use crate::input::route::{RoundPlan, plan_round};
use crate::input::texts;
use crate::log::{self, Level};
use crate::translate::forward::INPUT_TIMEOUT;

/// What the request task does after a round.
pub(crate) enum Next {
    /// Send the request upstream again with these params.
    Retry(Map<String, Value>),
    /// Answer VS Code (a failed round).
    Respond(Result<Value, Value>),
    /// The original request was canceled (or stdin ended): no response.
    Cancelled,
}

/// The input state of one original request: its URL steps and its round counter.
pub(crate) struct Rounds {
    caps: ClientCaps,
    steps: UrlSteps,
    counter: RoundCounter,
    /// The last retry carried a `requestState` (needed to read a −32602).
    pub(crate) carried_state: bool,
    /// How long the last round waited for VS Code (the refused-state log line).
    pub(crate) input_wait: Duration,
}

impl Rounds {
    /// `declared`: the client capabilities that the bridge declared upstream (C2: the input
    /// kinds of the round are checked against them).
    pub(crate) fn new(declared: &Value) -> Self {
        Rounds {
            caps: ClientCaps::from_capabilities(declared),
            steps: UrlSteps::new(),
            counter: RoundCounter::new(),
            carried_state: false,
            input_wait: Duration::ZERO,
        }
    }

    /// Before deciding on an upstream result, VS Code hears that the accepted URL steps
    /// that the result no longer asks for are complete.
    pub(crate) fn observe(&mut self, shared: &Shared, raw: &Value) {
        for id in self.steps.observe(raw) {
            shared.elicitation_complete(&id);
        }
    }

    /// Every exit path, also a cancellation, completes the accepted URL steps before
    /// the response, so that VS Code can hide the URL in the chat.
    pub(crate) fn finish(&mut self, shared: &Shared) {
        for id in self.steps.finish() {
            shared.elicitation_complete(&id);
        }
    }

    /// One `InputRequiredResult`: the checks, the questions to VS Code, the
    /// answers, and the params of the retry.
    pub(crate) async fn round(
        &mut self,
        shared: &Shared,
        slot: &Slot,
        original: &Map<String, Value>,
        raw: &Value,
    ) -> Next {
        let (method, id) = (slot.method.as_str(), &slot.id);
        if let Err(e) = self.counter.input_required() {
            let rounds = self.counter.round().saturating_add(1);
            log::bridge(Level::Warn, &texts::too_many_rounds(method, id, rounds));
            return Next::Respond(Err(e.to_error_object()));
        }
        let plan = {
            let parsed = parse_input_required(raw);
            let mut eids = shared.elicitation_ids();
            parsed.and_then(|p| plan_round(&p, &self.caps, &mut self.steps, &mut eids))
        };
        let plan = match plan {
            Ok(plan) => plan,
            Err(e) => {
                // R8: the round fails before VS Code sees any of its requests.
                log::bridge(Level::Warn, &texts::round_failed(method, id, &e.detail));
                return Next::Respond(Err(e.to_error_object()));
            }
        };
        for warning in &plan.warnings {
            log::bridge(Level::Warn, warning);
        }
        let started = Instant::now();
        let answers = match ask(shared, slot, &plan).await {
            Asked::Answers(a) => a,
            Asked::Cancelled => return Next::Cancelled,
            Asked::TimedOut(error) => return Next::Respond(Err(error)),
        };
        self.input_wait = started.elapsed();
        let original = Value::Object(original.clone());
        match collect_answers(&plan, &answers, &mut self.steps) {
            Ok(collected) => {
                for (key, uri) in &collected.dropped_roots {
                    // Only the scheme: the rest of a URI can carry user information or a
                    // token, and no secret reaches a log line (docs/architecture.md principle 8).
                    log::bridge(
                        Level::Debug,
                        &format!(
                            "input request '{key}': dropped a root with the scheme {}: not a file:// URI",
                            uri_scheme(uri)
                        ),
                    );
                }
                self.carried_state = plan.request_state.is_some();
                match retry_params_for(&original, &plan, &collected) {
                    Value::Object(params) => Next::Retry(params),
                    _ => Next::Retry(Map::new()),
                }
            }
            Err(RoundFailure::Client(error)) => {
                let message = error.get("message").and_then(Value::as_str).unwrap_or("");
                log::bridge(
                    Level::Info,
                    &texts::client_answered_error(method, id, message),
                );
                Next::Respond(Err(error))
            }
            Err(RoundFailure::Bridge(e)) => {
                log::bridge(Level::Warn, &texts::round_failed(method, id, &e.detail));
                Next::Respond(Err(e.to_error_object()))
            }
        }
    }
}

/// How the wait for VS Code ended.
enum Asked {
    /// `answers[i]` answers `plan.questions[i]`.
    Answers(Vec<ClientAnswer>),
    Cancelled,
    /// No answers in the time limit: the `input_timeout` error.
    TimedOut(Value),
}

/// All questions of the round go out at once, then the bridge waits for every answer,
/// at most [`INPUT_TIMEOUT`]. A cancellation between two writes stops the next ones.
async fn ask(shared: &Shared, slot: &Slot, plan: &RoundPlan) -> Asked {
    let mut pending: Vec<PendingAnswer> = Vec::with_capacity(plan.questions.len());
    for q in &plan.questions {
        if slot.token.is_cancelled() {
            give_up(shared, &pending, slot.reason());
            return Asked::Cancelled;
        }
        let p = shared
            .client_requests
            .send(&shared.outbox, q.method(), q.params.clone());
        log::bridge(
            Level::Debug,
            &texts::sent_to_client(&slot.method, &slot.id, q.method(), &p.id),
        );
        pending.push(p);
    }
    let started = Instant::now();
    let deadline = started + INPUT_TIMEOUT;
    let mut note_at = started + FIRST_NOTE;
    let mut answers = Vec::with_capacity(pending.len());
    for i in 0..pending.len() {
        let answer = loop {
            tokio::select! {
                biased;
                _ = slot.token.cancelled() => {
                    give_up(shared, &pending[i..], slot.reason());
                    return Asked::Cancelled;
                }
                answer = &mut pending[i].answer => {
                    // The sender goes only with an answer, or with our own cancellation.
                    break answer.unwrap_or(ClientAnswer::BadLine);
                }
                _ = tokio::time::sleep_until(deadline) => {
                    let unanswered = pending[i..]
                        .iter_mut()
                        .map(|p| p.answer.try_recv().is_err())
                        .filter(|&unanswered| unanswered)
                        .count();
                    log::bridge(Level::Warn, &texts::input_timeout_log(
                        &slot.method, &slot.id, INPUT_TIMEOUT, unanswered, pending.len()));
                    give_up(shared, &pending[i..], REASON_TIMEOUT);
                    let e = texts::input_timeout_error(INPUT_TIMEOUT, pending.len());
                    return Asked::TimedOut(e.to_error_object());
                }
                _ = tokio::time::sleep_until(note_at) => {
                    log::bridge(Level::Info, &texts::still_waiting_for_client(
                        &slot.method, &slot.id, started.elapsed()));
                    note_at += NOTE_EVERY;
                }
            }
        };
        answers.push(answer);
    }
    Asked::Answers(answers)
}

/// `notifications/cancelled` for each `b-` request that has no answer yet (the table sends
/// nothing for an answered one).
fn give_up(shared: &Shared, pending: &[PendingAnswer], reason: &str) {
    for p in pending {
        shared.client_requests.cancel(&shared.outbox, &p.id, reason);
    }
}

/// The scheme of a URI for a log line (O3), or `(none)` when the text has no valid scheme.
fn uri_scheme(uri: &str) -> &str {
    match uri.split_once(':') {
        Some((scheme, _))
            if scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
        {
            scheme
        }
        _ => "(none)",
    }
}

#[cfg(test)]
mod uri_scheme_tests {
    use super::uri_scheme;

    #[test]
    fn o3_the_log_line_names_only_the_scheme_of_a_dropped_root() {
        assert_eq!(
            uri_scheme("vscode-remote://ssh-remote+x/home"),
            "vscode-remote"
        );
        assert_eq!(uri_scheme("https://user:token@host/x"), "https");
        assert_eq!(uri_scheme("no scheme here"), "(none)");
        assert_eq!(uri_scheme("://x"), "(none)");
        assert_eq!(uri_scheme("1x:y"), "(none)");
    }
}

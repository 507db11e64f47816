//! The log lines, details and frames of the input rounds, as functions of their values
//! (texts exact: the tables of docs/stderr.md and docs/errors.md).

use std::time::Duration;

use serde_json::{Value, json};

use super::error::InputError;
use crate::errors::{Cause, format_limit};

/// A request id of the client for a log line: an integer as it is, a string in quotes.
pub fn request_id(id: &Value) -> String {
    id.to_string()
}

/// Info: `still waiting for the answers of the client to the input requests of <method>
/// (request <id>, <n> s)`, with the whole seconds of the wait.
pub fn still_waiting_for_client(method: &str, id: &Value, waited: Duration) -> String {
    format!(
        "still waiting for the answers of the client to the input requests of {method} (request {}, {} s)",
        request_id(id),
        waited.as_secs()
    )
}

/// Warning: a refused URL of a URL elicitation (O1).
pub fn refused_url(key: &str) -> String {
    format!(
        "input request '{key}': the bridge refused the URL of a URL elicitation, and the upstream server gets decline"
    )
}

/// Warning: the input requests of a round failed (a bridge failure).
pub fn round_failed(method: &str, id: &Value, detail: &str) -> String {
    format!(
        "request {} ({method}): the input requests of the upstream server failed: {detail}",
        request_id(id)
    )
}

/// Info: the client answered an input request with an error (passed to the original request).
pub fn client_answered_error(method: &str, id: &Value, message: &str) -> String {
    format!(
        "request {} ({method}): the client answered an input request with an error: {message}",
        request_id(id)
    )
}

/// Warning: the round limit.
pub fn too_many_rounds(method: &str, id: &Value, rounds: u32) -> String {
    format!(
        "request {} ({method}): the upstream server asked for input in {rounds} rounds",
        request_id(id)
    )
}

/// Debug: one request of the bridge went to the client.
pub fn sent_to_client(method: &str, id: &Value, question_method: &str, bridge_id: &str) -> String {
    format!(
        "request {} ({method}): sent {question_method} to the client as request \"{bridge_id}\"",
        request_id(id)
    )
}

/// Warning: no answers of the client in the time limit.
pub fn input_timeout_log(
    method: &str,
    id: &Value,
    limit: Duration,
    unanswered: usize,
    total: usize,
) -> String {
    format!(
        "request {} ({method}): no answers of the client in {} (input requests without an answer: {unanswered} of {total})",
        request_id(id),
        format_limit(limit)
    )
}

/// The detail of the `input_timeout` error.
pub fn input_timeout_detail(limit: Duration, round_requests: usize) -> String {
    format!(
        "no answers in {} (input requests of the round: {round_requests})",
        format_limit(limit)
    )
}

/// The `input_timeout` error of a round.
pub fn input_timeout_error(limit: Duration, round_requests: usize) -> InputError {
    InputError::new(
        Cause::InputTimeout,
        input_timeout_detail(limit, round_requests),
    )
}

/// Warning: the upstream server refused the request state.
pub fn refused_state_log(method: &str, id: &Value, waited: Duration) -> String {
    format!(
        "request {} ({method}): the upstream server refused the request state after an input wait of {}",
        request_id(id),
        format_limit(waited)
    )
}

/// The frame `notifications/cancelled` for a request of the bridge (quirk: VS Code ignores it,
/// thus late answers are normal and dropped).
pub fn cancelled(bridge_id: &str, reason: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": bridge_id, "reason": reason}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m2_still_waiting_text() {
        assert_eq!(
            still_waiting_for_client("tools/call", &json!(3), Duration::from_millis(10_900)),
            "still waiting for the answers of the client to the input requests of tools/call (request 3, 10 s)"
        );
        assert_eq!(
            still_waiting_for_client("prompts/get", &json!("r-1"), Duration::from_secs(40)),
            "still waiting for the answers of the client to the input requests of prompts/get (request \"r-1\", 40 s)"
        );
    }

    #[test]
    fn m2_timeout_texts() {
        assert_eq!(
            input_timeout_log("tools/call", &json!(7), Duration::from_secs(3600), 1, 2),
            "request 7 (tools/call): no answers of the client in 3600 s (input requests without an answer: 1 of 2)"
        );
        assert_eq!(
            input_timeout_detail(Duration::from_millis(300), 1),
            "no answers in 300 ms (input requests of the round: 1)"
        );
        let e = input_timeout_error(Duration::from_secs(3600), 2);
        assert_eq!(e.cause.name(), "input_timeout");
        assert_eq!(
            e.detail,
            "no answers in 3600 s (input requests of the round: 2)"
        );
        assert_eq!(
            cancelled("b-1", "no answer in time").to_string(),
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1","reason":"no answer in time"}}"#
        );
    }

    #[test]
    fn m2_log_lines() {
        let id = json!(4);
        assert_eq!(
            refused_url("auth"),
            "input request 'auth': the bridge refused the URL of a URL elicitation, and the upstream server gets decline"
        );
        assert_eq!(
            round_failed("tools/call", &id, "x"),
            "request 4 (tools/call): the input requests of the upstream server failed: x"
        );
        assert_eq!(
            client_answered_error("tools/call", &id, "The user refused the request."),
            "request 4 (tools/call): the client answered an input request with an error: The user refused the request."
        );
        assert_eq!(
            too_many_rounds("tools/call", &id, 10),
            "request 4 (tools/call): the upstream server asked for input in 10 rounds"
        );
        assert_eq!(
            sent_to_client("tools/call", &id, "elicitation/create", "b-1"),
            "request 4 (tools/call): sent elicitation/create to the client as request \"b-1\""
        );
        assert_eq!(
            refused_state_log("tools/call", &id, Duration::from_secs(700)),
            "request 4 (tools/call): the upstream server refused the request state after an input wait of 700 s"
        );
    }
}

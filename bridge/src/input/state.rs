//! A `requestState` refused by the upstream server on a retry (R8).

use serde_json::{Map, Value, json};

use crate::errors::code::INVALID_PARAMS;

/// Whether an upstream error refuses the saved state: the round carried a
/// `requestState` and the code is −32602 (no `data.reason` check: servers may omit it). A
/// −32602 on a round without state passes unchanged.
pub fn is_refused_state(round_carried_state: bool, upstream_error: &Value) -> bool {
    round_carried_state
        && upstream_error.get("code").and_then(Value::as_i64) == Some(INVALID_PARAMS)
}

/// The answer of the original request after a refused state.
#[derive(Debug, Clone, PartialEq)]
pub enum RefusedState {
    /// `tools/call`: a successful tool result with `isError`, so that the model reads the text.
    Result(Value),
    /// Other methods: an error with the upstream code and data and the text as message.
    Error(Value),
}

/// The text T: the upstream message without its trailing period, and the advice to run
/// the tool (or send the request) again.
pub fn refused_state_text(method: &str, upstream_message: &str) -> String {
    let message = upstream_message.trim_end().trim_end_matches('.');
    let again = if method == "tools/call" {
        "Run the tool again."
    } else {
        "Send the request again."
    };
    format!(
        "The upstream server did not accept the saved state of the request. The answer possibly came after the time limit of the state, or the server started again. Upstream message: {message}. {again}"
    )
}

/// The answer of the original request after a refused state (log:
/// `texts::refused_state_log`).
pub fn refused_state_response(method: &str, upstream_error: &Value) -> RefusedState {
    let message = upstream_error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("");
    let text = refused_state_text(method, message);
    if method == "tools/call" {
        return RefusedState::Result(
            json!({"content": [{"type": "text", "text": text}], "isError": true}),
        );
    }
    let mut error = Map::new();
    error.insert(
        "code".into(),
        upstream_error
            .get("code")
            .cloned()
            .unwrap_or(json!(INVALID_PARAMS)),
    );
    error.insert("message".into(), Value::String(text));
    if let Some(data) = upstream_error.get("data") {
        error.insert("data".into(), data.clone());
    }
    RefusedState::Error(Value::Object(error))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scripted() -> Value {
        json!({"code": -32602, "message": "Invalid or expired requestState", "data": {"reason": "invalid_request_state"}})
    }

    #[test]
    fn r8_refused_state_only_with_state_and_invalid_params() {
        assert!(is_refused_state(true, &scripted()));
        assert!(is_refused_state(
            true,
            &json!({"code": -32602, "message": "x"})
        ));
        assert!(!is_refused_state(false, &scripted()));
        assert!(!is_refused_state(
            true,
            &json!({"code": -32603, "message": "x"})
        ));
        assert!(!is_refused_state(true, &json!({"message": "x"})));
    }

    #[test]
    fn r8_refused_state_for_tools_call_is_an_error_result() {
        let RefusedState::Result(r) = refused_state_response("tools/call", &scripted()) else {
            panic!("tools/call gets a result");
        };
        assert_eq!(
            r,
            json!({"content": [{"type": "text", "text": "The upstream server did not accept the saved state of the request. The answer possibly came after the time limit of the state, or the server started again. Upstream message: Invalid or expired requestState. Run the tool again."}], "isError": true})
        );
    }

    #[test]
    fn r8_refused_state_for_other_methods_is_an_error_with_upstream_code_and_data() {
        for method in ["prompts/get", "resources/read"] {
            let RefusedState::Error(e) = refused_state_response(method, &scripted()) else {
                panic!("{method} gets an error");
            };
            assert_eq!(
                e,
                json!({"code": -32602, "message": "The upstream server did not accept the saved state of the request. The answer possibly came after the time limit of the state, or the server started again. Upstream message: Invalid or expired requestState. Send the request again.", "data": {"reason": "invalid_request_state"}})
            );
        }
        let RefusedState::Error(e) = refused_state_response(
            "prompts/get",
            &json!({"code": -32602, "message": "Bad state."}),
        ) else {
            panic!();
        };
        assert!(e.get("data").is_none());
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("Upstream message: Bad state. Send")
        );
    }

    #[test]
    fn r8_trailing_periods_are_removed_once_for_the_text() {
        assert!(
            refused_state_text("tools/call", "Expired.")
                .ends_with("Upstream message: Expired. Run the tool again.")
        );
        assert!(
            refused_state_text("tools/call", "Expired... ")
                .ends_with("Upstream message: Expired. Run the tool again.")
        );
    }
}

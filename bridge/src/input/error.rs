//! The failures of an input round. Their causes are rows of the bridge's one error table
//! ([`Cause`], docs/architecture.md principle 6): each has its JSON-RPC code (−32603), its fixed message
//! and its `data.cause` name; the `detail` names the input request.

use std::fmt;

use serde_json::Value;

use crate::errors::{Cause, error_object};

/// A failure of an input round that the bridge reports: a cause of the table and its detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub cause: Cause,
    pub detail: String,
}

impl InputError {
    pub fn new(cause: Cause, detail: impl Into<String>) -> Self {
        InputError {
            cause,
            detail: detail.into(),
        }
    }

    /// A failure of one input request: the detail is `input request '<key>': <what>`
    /// so that the Output channel names the request.
    pub fn for_key(cause: Cause, key: &str, what: &str) -> Self {
        InputError::new(cause, format!("input request '{key}': {what}"))
    }

    /// The JSON-RPC error object: `{"code","message","data":{"cause","detail"}}`.
    pub fn to_error_object(&self) -> Value {
        error_object(self.cause, Some(&self.detail))
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.cause.name(), self.detail)
    }
}

impl std::error::Error for InputError {}

/// How a round ends without a retry.
#[derive(Debug, Clone, PartialEq)]
pub enum RoundFailure {
    /// A failure of the bridge: the original request gets `InputError::to_error_object`.
    /// Log: warning `texts::round_failed`.
    Bridge(InputError),
    /// The client answered a sampling or roots request with an error: the original request gets
    /// this error object unchanged (O2: VS Code's −32000 refusal reaches the caller as it is).
    /// Log: info `texts::client_answered_error`.
    Client(Value),
}

impl From<InputError> for RoundFailure {
    fn from(e: InputError) -> Self {
        RoundFailure::Bridge(e)
    }
}

impl RoundFailure {
    /// The error object for the response of the original request.
    #[cfg(test)]
    pub fn to_error_object(&self) -> Value {
        match self {
            RoundFailure::Bridge(e) => e.to_error_object(),
            RoundFailure::Client(v) => v.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The input causes of the one table (R8): all −32603, with the messages of docs/errors.md.
    const INPUT_CAUSES: [Cause; 6] = [
        Cause::TooManyRounds,
        Cause::UndeclaredInputRequest,
        Cause::InvalidInputRequest,
        Cause::TooManyInputRequests,
        Cause::InputTimeout,
        Cause::InvalidClientAnswer,
    ];

    #[test]
    fn r8_every_input_cause_is_an_internal_error_with_its_table_row() {
        let names: Vec<_> = INPUT_CAUSES.iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            [
                "too_many_rounds",
                "undeclared_input_request",
                "invalid_input_request",
                "too_many_input_requests",
                "input_timeout",
                "invalid_client_answer"
            ]
        );
        for c in INPUT_CAUSES {
            assert_eq!(c.code(), -32603);
            assert!(c.message().ends_with('.'), "{}", c.message());
        }
    }

    #[test]
    fn r8_error_object_has_cause_and_detail() {
        let e = InputError::for_key(
            Cause::UndeclaredInputRequest,
            "auth",
            "the client did not declare elicitation.url",
        );
        assert_eq!(
            e.to_error_object(),
            json!({"code": -32603,
                "message": "The upstream server asked for input that the client did not declare.",
                "data": {"cause": "undeclared_input_request",
                         "detail": "input request 'auth': the client did not declare elicitation.url"}})
        );
        assert_eq!(
            e.to_string(),
            "undeclared_input_request: input request 'auth': the client did not declare elicitation.url"
        );
    }

    #[test]
    fn o2_client_failure_passes_the_error_object_unchanged() {
        let err =
            json!({"code": -32000, "message": "The user refused the request.", "data": {"x": 1}});
        assert_eq!(RoundFailure::Client(err.clone()).to_error_object(), err);
    }
}

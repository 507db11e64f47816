//! The tool `log`: four log messages, filtered by the log level of the request (O5).
#![expect(
    deprecated,
    reason = "rmcp 3.11 marks logging deprecated (SEP-2577), but revision 2026-07-28 keeps the per-request log level that the fixture honours (O5)"
)]
use rmcp::model::{LoggingMessageNotificationParam, Tool};
use serde_json::json;

use crate::call::{Call, Fail, Outcome, no_input, tool};
use crate::envelope::{self, LEVELS};
use crate::json::{text_result, typed};

/// The levels of the four messages of `log`.
const MESSAGES: [&str; 4] = ["debug", "info", "warning", "error"];

pub fn definitions() -> Vec<Tool> {
    vec![tool(
        "log",
        "Logs a message at debug, info, warning and error; the client gets those at its level or above",
        no_input(),
        true,
    )]
}

/// Sends the messages at the level of the request or above, before the result. A request of
/// revision 2026-07-28 without `io.modelcontextprotocol/logLevel` gets none.
pub async fn log(call: &Call<'_>) -> Outcome {
    if let Some(lowest) = envelope::log_level(call.state, call.context) {
        for level in MESSAGES {
            if LEVELS.iter().position(|l| *l == level) < Some(lowest) {
                continue;
            }
            let param: LoggingMessageNotificationParam = typed(
                "a log message",
                json!({
                    "level": level,
                    "logger": "fixture",
                    "data": format!("a message at the level {level}")
                }),
            )?;
            call.context
                .peer
                .notify_logging_message(param)
                .await
                .map_err(|error| {
                    Fail::Protocol(rmcp::ErrorData::internal_error(
                        format!("cannot send a log message: {error}"),
                        None,
                    ))
                })?;
        }
    }
    Ok(text_result("logged 4 messages").into())
}

//! The tools that end the process: `crash` (exit code 3, the upstream server that stops while
//! the bridge runs) and `shutdown` (the listen streams end, then exit code 0).
//!
//! rmcp has no way to end the process from a handler, and it would write a response for a
//! handler that returns. `crash` without `after_ms` thus calls `std::process::exit(3)` inside
//! the handler, before rmcp sees an outcome: no response is ever written.
use std::time::Duration;

use rmcp::model::Tool;
use serde::Deserialize;
use serde_json::json;

use crate::call::{Call, Outcome, tool};
use crate::json::{arguments, text_result, tool_error};
use crate::log;

/// The exit code of `crash`.
pub const CRASH_CODE: i32 = 3;
/// The longest delay of `crash` and `shutdown`.
const MAX_DELAY_MS: u32 = 60_000;

pub fn definitions() -> Vec<Tool> {
    let delay = json!({"type": "integer", "minimum": 1, "maximum": MAX_DELAY_MS});
    vec![
        tool(
            "crash",
            "Exits the process with code 3: at once without a response, or after_ms after its result",
            json!({"type": "object", "properties": {"after_ms": delay}}),
            false,
        ),
        tool(
            "shutdown",
            "Ends the listen streams with their result, and exits with code 0 after_ms after its result",
            json!({"type": "object", "properties": {"after_ms": delay}, "required": ["after_ms"]}),
            false,
        ),
    ]
}

#[derive(Deserialize)]
struct Crash {
    after_ms: Option<u32>,
}

pub fn crash(call: &Call<'_>) -> Outcome {
    let args: Crash = arguments("crash", call.arguments)?;
    match args.after_ms {
        None => {
            log::info("crash", "the tool crash exits with code 3 now");
            std::process::exit(CRASH_CODE);
        }
        Some(ms) => {
            let ms = delay(ms)?;
            exit_later(ms, CRASH_CODE, "crash");
            Ok(text_result(format!("the server stops in {ms} ms")).into())
        }
    }
}

#[derive(Deserialize)]
struct Shutdown {
    after_ms: u32,
}

/// Ends every listen stream as at the end of stdin: each stream gets its result (graceful
/// closure of the subscriptions page). rmcp writes those results when the streams return, thus
/// their order relative to the result of `shutdown` is not fixed.
pub fn shutdown(call: &Call<'_>) -> Outcome {
    let args: Shutdown = arguments("shutdown", call.arguments)?;
    let ms = delay(args.after_ms)?;
    call.state.lifecycle.stopping.cancel();
    exit_later(ms, 0, "shutdown");
    Ok(text_result(format!(
        "the server ended its listen streams and stops in {ms} ms"
    ))
    .into())
}

fn delay(ms: u32) -> Result<u32, super::Fail> {
    if (1..=MAX_DELAY_MS).contains(&ms) {
        Ok(ms)
    } else {
        Err(tool_error(format!(
            "after_ms must be from 1 to {MAX_DELAY_MS}, not {ms}"
        ))
        .into())
    }
}

/// Exits after `ms`; the result of the tool is written long before (it needs well under 1 ms).
fn exit_later(ms: u32, code: i32, scope: &'static str) {
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
        log::info(
            scope,
            &format!("the tool {scope} exits with code {code} now"),
        );
        std::process::exit(code);
    });
}

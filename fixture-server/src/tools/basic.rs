//! The tools without input requests: `echo`, `add`, `slow`, `progress`, `bare_array`,
//! `structured` and the MCP App tool `show` (O11).
use std::time::Duration;

use rmcp::model::{MetaObject, ProgressNotificationParam, Tool};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::call::{Call, Fail, Outcome, no_input, tool};
use crate::json::{arguments, schema, text_result, tool_error, typed};

/// The highest `count` of `progress`: a bound on the frames of one call.
const MAX_PROGRESS: u32 = 10_000;

pub fn definitions() -> Vec<Tool> {
    vec![
        tool(
            "echo",
            "Sends the text back",
            json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The text to send back."}},
                "required": ["text"],
                "description": "Any text"
            }),
            true,
        ),
        tool(
            "add",
            "Adds two integers",
            json!({
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"]
            }),
            true,
        ),
        tool(
            "slow",
            "Waits for ms milliseconds; a cancellation stops it",
            json!({
                "type": "object",
                "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 4294967295u64}},
                "required": ["ms"]
            }),
            true,
        ),
        tool(
            "progress",
            "Sends count progress notifications, ms milliseconds apart",
            json!({
                "type": "object",
                "properties": {
                    "count": {"type": "integer", "minimum": 0, "maximum": MAX_PROGRESS},
                    "ms": {"type": "integer", "minimum": 0, "default": 0}
                },
                "required": ["count"]
            }),
            true,
        ),
        tool(
            "bare_array",
            "Counts the values; its schema has arrays without items (R6)",
            json!({
                "type": "object",
                "properties": {
                    "values": {"type": "array", "description": "Any values"},
                    "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false},
                    "choice": {"anyOf": [{"type": "array"}, {"type": "string"}]}
                },
                "required": ["values"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            "structured",
            "Gives the length of the text as structured content",
            json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            }),
            true,
        )
        .with_raw_output_schema(schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "length": {"type": "integer"}},
            "required": ["text", "length"]
        }))),
    ]
}

/// `show`: an MCP App tool whose view is the resource `ui://fixture/view` (O11).
pub fn show_definition() -> Tool {
    let mut meta = MetaObject::new();
    meta.0.insert(
        "ui".into(),
        json!({"resourceUri": crate::resources::VIEW_URI}),
    );
    tool("show", "Shows the view of the fixture", no_input(), true).with_meta(meta)
}

#[derive(Deserialize)]
struct Echo {
    text: String,
}

pub fn echo(call: &Call<'_>) -> Outcome {
    let args: Echo = arguments("echo", call.arguments)?;
    Ok(text_result(args.text).into())
}

#[derive(Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

pub fn add(call: &Call<'_>) -> Outcome {
    let args: Add = arguments("add", call.arguments)?;
    match args.a.checked_add(args.b) {
        Some(sum) => Ok(text_result(sum.to_string()).into()),
        None => Err(tool_error("the sum is outside the 64-bit integers").into()),
    }
}

#[derive(Deserialize)]
struct Slow {
    ms: u32,
}

/// Waits, and stops at a cancellation of the client or at the end of stdin (R7): rmcp then
/// writes no response for a cancelled request.
pub async fn slow(call: &Call<'_>) -> Outcome {
    let args: Slow = arguments("slow", call.arguments)?;
    wait(call, Duration::from_millis(u64::from(args.ms))).await?;
    Ok(text_result(format!("slept {} ms", args.ms)).into())
}

async fn wait(call: &Call<'_>, time: Duration) -> Result<(), Fail> {
    tokio::select! {
        () = tokio::time::sleep(time) => Ok(()),
        () = call.context.ct.cancelled() => Err(stopped("the client cancelled the request")),
        () = call.state.lifecycle.input_closed.cancelled() => Err(stopped("the input ended")),
    }
}

fn stopped(why: &str) -> Fail {
    Fail::Protocol(rmcp::ErrorData::internal_error(why.to_string(), None))
}

#[derive(Deserialize)]
struct Progress {
    count: u32,
    #[serde(default)]
    ms: u32,
}

/// Sends the progress with the token of the request (O4); without a token, none.
pub async fn progress(call: &Call<'_>) -> Outcome {
    let args: Progress = arguments("progress", call.arguments)?;
    if args.count > MAX_PROGRESS {
        return Err(tool_error(format!("count is above {MAX_PROGRESS}")).into());
    }
    let Some(token) = call.context.meta.get_progress_token() else {
        return Ok(text_result("sent 0 progress notifications").into());
    };
    for i in 1..=args.count {
        if i > 1 && args.ms > 0 {
            wait(call, Duration::from_millis(u64::from(args.ms))).await?;
        }
        let param: ProgressNotificationParam = typed(
            "a progress notification",
            json!({
                "progressToken": token,
                "progress": i,
                "total": args.count,
                "message": format!("Step {i} of {}", args.count)
            }),
        )?;
        // Awaited: the notification is written before the next one and before the result.
        call.context
            .peer
            .notify_progress(param)
            .await
            .map_err(|error| stopped(&format!("cannot send the progress: {error}")))?;
    }
    Ok(text_result(format!("sent {} progress notifications", args.count)).into())
}

#[derive(Deserialize)]
struct BareArray {
    values: Vec<Value>,
}

pub fn bare_array(call: &Call<'_>) -> Outcome {
    let args: BareArray = arguments("bare_array", call.arguments)?;
    Ok(text_result(format!("{} values", args.values.len())).into())
}

#[derive(Deserialize)]
struct Structured {
    text: String,
}

/// A text block and the same facts as structured content; the bridge keeps both (O11).
pub fn structured(call: &Call<'_>) -> Outcome {
    let args: Structured = arguments("structured", call.arguments)?;
    let length = args.text.len();
    let mut result = text_result(format!("{length} bytes"));
    result.structured_content = Some(json!({"text": args.text, "length": length}));
    Ok(result.into())
}

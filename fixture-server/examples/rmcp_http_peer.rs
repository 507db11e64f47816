//! A 2026-07-28 upstream at a URL that we did not write: rmcp's own Streamable HTTP server
//! (`StreamableHttpService` in axum), for the interop tests of the bridge's URL form. It uses
//! rmcp's typed handler only, nothing of the fixture, so that what it puts on the wire is rmcp's.
//!
//! `cargo run -p bridge-fixture-server --example rmcp_http_peer`
//!
//! - binds 127.0.0.1 on a free port; the first line on stdout is exactly
//!   `listening http://127.0.0.1:<port>/mcp`;
//! - exits when its stdin ends (a test that closes the pipe leaves no process);
//! - tools: `add` (`{a, b}` → the sum as text), `ask_city` (an `InputRequiredResult` with a
//!   form elicitation `city` and `requestState` `"ask_city-1"`; the retry with
//!   `inputResponses.city` accepted gives `sunny in <city>`, declined gives an error result),
//!   `progress` (three `notifications/progress` for the request's progress token, then `done`),
//!   `slow` (answers `slow done` after 60 s: a call in flight; closing its response stream
//!   cancels it, and the peer writes `rmcp-http-peer: slow cancelled` on stderr).
//!
//! What it answers (observed with curl; every request a POST with
//! `Accept: application/json, text/event-stream`, `Content-Type: application/json`,
//! `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method`, `Mcp-Name` for tools/call, and the `_meta`
//! envelope in the params):
//! - 2026-07-28 is always stateless (no `Mcp-Session-Id`), and every answer to a request is an
//!   SSE stream (`content-type: text/event-stream`): `data: <message>` events without `event:`
//!   or `id:` lines, the response last, then the end of the stream. The response head comes
//!   with the first message, so a call in flight shows nothing at all until then.
//! - `server/discover`: `resultType: "complete"`, `supportedVersions` (the five revisions),
//!   `capabilities`, `ttlMs: 0`, `cacheScope: "private"`, and
//!   `_meta["io.modelcontextprotocol/serverInfo"]`. Other results carry no serverInfo.
//! - `ask_city`: `resultType: "input_required"`, `inputRequests.city` =
//!   `{method: "elicitation/create", params: {mode: "form", message, requestedSchema}}`,
//!   `requestState: "ask_city-1"`; the retry carries `requestState` and
//!   `inputResponses.city` = `{action, content}`.
//! - `progress` with `_meta.progressToken: 0`: three `notifications/progress` with
//!   `progress: 1.0, total: 3.0` (floats) before the response, on the call's stream.
//! - Refusals: `Mcp-Method` or `Mcp-Name` (tools/call) or `MCP-Protocol-Version` missing or
//!   different from the body: 400 with a JSON-RPC error -32020; no envelope: 400 -32602;
//!   `Accept` without both types: 406 (plain text); `Content-Type` not JSON: 415 (plain text);
//!   GET or DELETE without a session: 400 (plain text); a `Host` that is not loopback (such as
//!   `fixture.test`): 403 (plain text); a notification: 202; `subscriptions/listen`: 404 with
//!   -32601 (this peer declares no list changes). An unknown tool: 200, an SSE error event.
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InputRequests, InputRequiredResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool, ToolsCapability,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// The `requestState` of the first round of `ask_city`: echoed back by the client, checked on
/// the retry.
const ASK_CITY_STATE: &str = "ask_city-1";

#[derive(Clone)]
struct Peer;

fn schema(value: Value) -> Arc<Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

fn text(text: impl Into<String>) -> CallToolResponse {
    CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(text)]))
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "add",
            "Adds two numbers",
            schema(json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            })),
        ),
        Tool::new(
            "ask_city",
            "Asks for a city through a form, and gives its weather",
            schema(json!({"type": "object", "properties": {}})),
        ),
        Tool::new(
            "progress",
            "Sends three progress notifications, then answers done",
            schema(json!({"type": "object", "properties": {}})),
        ),
        Tool::new(
            "slow",
            "Answers after 60 s, or never when cancelled",
            schema(json!({"type": "object", "properties": {}})),
        ),
    ]
}

fn add(arguments: Option<&Map<String, Value>>) -> Result<CallToolResponse, McpError> {
    let number = |name: &str| {
        arguments
            .and_then(|a| a.get(name))
            .and_then(Value::as_f64)
            .ok_or_else(|| McpError::invalid_params(format!("`{name}` must be a number"), None))
    };
    let sum = number("a")? + number("b")?;
    Ok(text(sum.to_string()))
}

fn ask_city(request: &CallToolRequestParams) -> Result<CallToolResponse, McpError> {
    let answer = request
        .input_responses
        .as_ref()
        .and_then(|responses| responses.get("city"));
    let Some(answer) = answer else {
        let form = json!({
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Which city?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"]
                }
            }
        });
        let form = serde_json::from_value(form)
            .map_err(|e| McpError::internal_error(format!("the form: {e}"), None))?;
        let mut requests = InputRequests::new();
        requests.insert("city".into(), form);
        return Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
            Some(requests),
            Some(ASK_CITY_STATE.into()),
        )));
    };
    if request.request_state.as_deref() != Some(ASK_CITY_STATE) {
        return Err(McpError::invalid_params("unknown requestState", None));
    }
    if answer.get("action").and_then(Value::as_str) != Some("accept") {
        return Ok(CallToolResponse::Complete(CallToolResult::error(vec![
            ContentBlock::text("no city"),
        ])));
    }
    match answer
        .get("content")
        .and_then(|c| c.get("city"))
        .and_then(Value::as_str)
    {
        Some(city) => Ok(text(format!("sunny in {city}"))),
        None => Err(McpError::invalid_params("the answer has no city", None)),
    }
}

async fn progress(context: &RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
    if let Some(token) = context.meta.get_progress_token() {
        for step in 1..=3 {
            let mut param = ProgressNotificationParam::new(token.clone(), f64::from(step));
            param.total = Some(3.0);
            context
                .peer
                .notify_progress(param)
                .await
                .map_err(|e| McpError::internal_error(format!("progress: {e}"), None))?;
        }
    }
    Ok(text("done"))
}

/// A call in flight: the answer comes after 60 s, unless the client cancels the call (closes
/// its stream), which the peer reports on stderr.
async fn slow(context: &RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(60)) => Ok(text("slow done")),
        () = context.ct.cancelled() => {
            eprintln!("rmcp-http-peer: slow cancelled");
            Err(McpError::internal_error("cancelled", None))
        }
    }
}

impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        capabilities.tools = Some(ToolsCapability::default());
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("rmcp-http-peer", "3.11.0-interop"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        match request.name.as_ref() {
            "add" => add(request.arguments.as_ref()),
            "ask_city" => ask_city(&request),
            "progress" => progress(&context).await,
            "slow" => slow(&context).await,
            other => Err(McpError::invalid_params(
                format!("unknown tool {other}"),
                None,
            )),
        }
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let stop = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default();
    config.sse_keep_alive = Some(Duration::from_secs(15));
    config.cancellation_token = stop.child_token();
    let service =
        StreamableHttpService::new(|| Ok(Peer), LocalSessionManager::default().into(), config);
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    println!("listening http://{address}/mcp");

    // The end of stdin stops the peer; open SSE streams are dropped with the runtime.
    let mut stdin = tokio::io::stdin();
    let mut sink = [0u8; 1024];
    let server = axum::serve(listener, app).with_graceful_shutdown(stop.clone().cancelled_owned());
    tokio::select! {
        served = server => served,
        () = async {
            while matches!(stdin.read(&mut sink).await, Ok(n) if n > 0) {}
        } => {
            stop.cancel();
            Ok(())
        }
    }
}

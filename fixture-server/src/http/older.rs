//! The HTTP mode of `--revision 2025-11-25`: Streamable HTTP with sessions (revisions
//! 2025-03-26 to 2025-11-25), as most MCP servers at a URL serve it today (docs/fixture.md).
//!
//! rmcp's `StreamableHttpService` in its session mode with its `LocalSessionManager` does the
//! transport: `initialize` creates a session and answers with `Mcp-Session-Id`; later POSTs,
//! the GET stream of server messages and DELETE need it, and an unknown or ended session is
//! 404; SSE events carry ids, and a GET with `Last-Event-ID` resumes a stream. Each session has
//! its own older `Fixture` and [`State`] (toggles, subscriptions, log level). The fixture adds
//! what a server of that era answers before any session (`without_session`) and a test hook
//! that ends every session at once ([`EXPIRE_PATH`]), so that a client's re-initialization
//! after a 404 is tested without waiting for an idle timeout.
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};

use crate::cli::Options;
use crate::log;
use crate::server::Fixture;
use crate::state::State;

/// The test hook: POST here ends every session (204); their next request gets 404.
pub const EXPIRE_PATH: &str = "/fixture/expire-sessions";
/// The header of the session id.
const SESSION: &str = "mcp-session-id";

/// The MCP service of the older revision, and the session manager that the hook empties.
pub fn service(
    options: &Options,
    config: StreamableHttpServerConfig,
) -> (
    StreamableHttpService<Fixture, LocalSessionManager>,
    Arc<LocalSessionManager>,
) {
    let sessions = Arc::new(LocalSessionManager::default());
    let options = options.clone();
    let config = config
        .with_legacy_session_mode(true)
        // Event ids and a retry hint on every stream: a client can resume with Last-Event-ID.
        .with_sse_retry(Some(Duration::from_secs(1)));
    let service = StreamableHttpService::new(
        move || Ok(Fixture::older(Arc::new(State::new(options.clone())))),
        Arc::clone(&sessions),
        config,
    );
    (service, sessions)
}

/// The route of [`EXPIRE_PATH`].
pub fn expire_route(sessions: Arc<LocalSessionManager>) -> Router {
    Router::new().route(
        EXPIRE_PATH,
        post(move || async move {
            let ids: Vec<_> = sessions.sessions.read().await.keys().cloned().collect();
            for id in &ids {
                if let Err(error) = sessions.close_session(id).await {
                    log::warning("http", &format!("cannot end the session {id}: {error}"));
                }
            }
            log::info(
                "http",
                &format!("ended {} sessions ({EXPIRE_PATH})", ids.len()),
            );
            StatusCode::NO_CONTENT
        }),
    )
}

/// Reads the body of a POST at `/mcp` of the older revision (`max_body` is the gate's limit):
///
/// - without `Mcp-Session-Id` it must be `initialize` (or a notification or response, which
///   rmcp refuses by itself): any other request, `server/discover` among them, gets what the
///   TypeScript SDK 1.x answers, 400 with the JSON-RPC error -32000 `Bad Request: Server not
///   initialized`. rmcp would serve it on its stateless path instead, which no server of this
///   revision has;
/// - a `tools/call` of `guarded` gets the headers `Mcp-Method` and `Mcp-Name` that a client of
///   2026-07-28 sends and one of 2025-11-25 does not, so that the token check of `--oauth`
///   (which reads them) asks for the step-up to `mcp:write` on both revisions.
pub async fn prepare(request: Request, max_body: usize) -> Result<Request, Response> {
    let (mut parts, body) = request.into_parts();
    let bytes: Bytes = axum::body::to_bytes(body, max_body)
        .await
        .map_err(|_| (StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").into_response())?;
    let frame = serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null);
    let method = frame.get("method").and_then(Value::as_str);
    let is_request = frame.get("id").is_some() && method.is_some();
    if !parts.headers.contains_key(SESSION) && is_request && method != Some("initialize") {
        let error = json!({
            "jsonrpc": "2.0",
            "id": Value::Null,
            "error": {"code": -32000, "message": "Bad Request: Server not initialized"}
        });
        let response = (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            error.to_string(),
        );
        return Err(response.into_response());
    }
    let guarded = method == Some("tools/call")
        && frame.pointer("/params/name").and_then(Value::as_str) == Some(crate::oauth::GUARDED);
    if guarded && !parts.headers.contains_key(MCP_METHOD) {
        parts
            .headers
            .insert(MCP_METHOD, HeaderValue::from_static("tools/call"));
        parts
            .headers
            .insert(MCP_NAME, HeaderValue::from_static(crate::oauth::GUARDED));
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// The headers of revision 2026-07-28 that name the method and the tool of a request.
const MCP_METHOD: &str = "mcp-method";
const MCP_NAME: &str = "mcp-name";

/// rmcp 3.11 replays a resumed stream from the event named in `Last-Event-ID` itself, not
/// from the one after it (the transport page: the server replays the messages after the last
/// event id). Its ids are `<index>/<stream>` (or `<index>` for the GET stream): the fixture
/// passes rmcp the next index, so the client gets each message once.
pub fn resume_after_last_event(mut request: Request) -> Request {
    let next = request
        .headers()
        .get(LAST_EVENT_ID)
        .and_then(|value| value.to_str().ok())
        .and_then(|id| {
            let (index, stream) = match id.split_once('/') {
                Some((index, stream)) => (index, Some(stream)),
                None => (id, None),
            };
            let index: usize = index.parse().ok()?;
            let next = index.checked_add(1)?;
            Some(match stream {
                Some(stream) => format!("{next}/{stream}"),
                None => next.to_string(),
            })
        });
    if let Some(value) = next.and_then(|next| HeaderValue::from_str(&next).ok()) {
        request.headers_mut().insert(LAST_EVENT_ID, value);
    }
    request
}

/// The header of a resumed stream.
const LAST_EVENT_ID: &str = "last-event-id";

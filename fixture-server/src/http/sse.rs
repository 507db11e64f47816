//! `--revision 2025-11-25 --listen`: the HTTP+SSE transport of revision 2024-11-05, the
//! fallback of clients such as mcp-remote's http-first (docs/fixture.md). rmcp 3.11 has no
//! server for it any more, so this module is the transport and rmcp runs the session on it:
//!
//! - `GET /sse` opens a session: an SSE stream whose first event is `endpoint` with
//!   `/messages?sessionId=<id>`, then one `message` event per message of the server;
//! - `POST /messages?sessionId=<id>` takes one JSON-RPC message: 202 `Accepted`, and the answer
//!   comes on the stream; an unknown session is 404, a body that is not a message 400;
//! - the end of the stream ends the session (its older `Fixture` stops).
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State as Shared;
use axum::http::{StatusCode, Uri};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use rmcp::RoleServer;
use rmcp::ServiceExt;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

use crate::cli::Options;
use crate::log;
use crate::server::Fixture;
use crate::state::State;
use crate::sync::lock;

/// The path of the stream.
pub const SSE_PATH: &str = "/sse";
/// The path of the messages.
pub const MESSAGES_PATH: &str = "/messages";
/// The messages that wait for the server of one session: a bound, so that a client that
/// floods a session is slowed down, not the process.
const QUEUE: usize = 64;

/// The open sessions: id → the sender of the client's messages.
#[derive(Clone, Default)]
struct Sessions {
    inputs: Arc<Mutex<HashMap<String, mpsc::Sender<RxJsonRpcMessage<RoleServer>>>>>,
    options: Arc<Options>,
}

/// The routes of the 2024-11-05 transport.
pub fn routes(options: &Options) -> Router {
    let sessions = Sessions {
        options: Arc::new(options.clone()),
        ..Sessions::default()
    };
    Router::new()
        .route(SSE_PATH, get(open))
        .route(MESSAGES_PATH, post(message))
        .with_state(sessions)
}

/// The transport of one session: the client's messages from the POSTs, the server's to the
/// stream.
struct SseTransport {
    input: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    output: mpsc::Sender<TxJsonRpcMessage<RoleServer>>,
}

/// The stream of the session has ended.
#[derive(Debug)]
struct Closed;

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the SSE stream of the session has ended")
    }
}

impl std::error::Error for Closed {}

impl Transport<RoleServer> for SseTransport {
    type Error = Closed;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let output = self.output.clone();
        async move { output.send(item).await.map_err(|_| Closed) }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.input.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.input.close();
        Ok(())
    }
}

/// `GET /sse`: a new session and its stream.
async fn open(
    Shared(sessions): Shared<Sessions>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    // 32 random bytes, URL-safe: the id is in the endpoint URL.
    let id = crate::oauth::token("sse_");
    let (input_tx, input) = mpsc::channel(QUEUE);
    let (output, output_rx) = mpsc::channel::<TxJsonRpcMessage<RoleServer>>(QUEUE);
    lock(&sessions.inputs).insert(id.clone(), input_tx);
    let fixture = Fixture::older(Arc::new(State::new((*sessions.options).clone())));
    let transport = SseTransport { input, output };
    let ended = sessions.clone();
    let session = id.clone();
    tokio::spawn(async move {
        match fixture.serve(transport).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(error) => log::info("sse", &format!("the session did not start: {error}")),
        }
        lock(&ended.inputs).remove(&session);
    });
    let endpoint = format!("{MESSAGES_PATH}?sessionId={id}");
    Sse::new(events(endpoint, id, sessions, output_rx)).keep_alive(KeepAlive::default())
}

/// The events of a stream: `endpoint` first, then each message of the server; the session
/// leaves the table when the stream is dropped (the client went away).
fn events(
    endpoint: String,
    id: String,
    sessions: Sessions,
    output: mpsc::Receiver<TxJsonRpcMessage<RoleServer>>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let guard = Leave { id, sessions };
    let first = Event::default().event("endpoint").data(endpoint);
    futures_util::stream::unfold(
        (Some(first), output, guard),
        |(first, mut output, guard)| async move {
            if let Some(event) = first {
                return Some((Ok(event), (None, output, guard)));
            }
            let message = output.recv().await?;
            let data = serde_json::to_string(&message).ok()?;
            let event = Event::default().event("message").data(data);
            Some((Ok(event), (None, output, guard)))
        },
    )
}

/// Removes the session from the table when its stream is dropped; the server then sees the
/// end of its input and stops.
struct Leave {
    id: String,
    sessions: Sessions,
}

impl Drop for Leave {
    fn drop(&mut self) {
        lock(&self.sessions.inputs).remove(&self.id);
    }
}

/// `POST /messages?sessionId=<id>`: one message of the client for its session.
async fn message(Shared(sessions): Shared<Sessions>, uri: Uri, body: String) -> Response {
    let id = url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
        .find(|(name, _)| name == "sessionId")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    let Some(input) = lock(&sessions.inputs).get(&id).cloned() else {
        return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
    };
    let message: RxJsonRpcMessage<RoleServer> = match serde_json::from_str(&body) {
        Ok(message) => message,
        Err(error) => {
            let text = format!("Bad Request: not a JSON-RPC message: {error}");
            return (StatusCode::BAD_REQUEST, text).into_response();
        }
    };
    if input.send(message).await.is_err() {
        return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
    }
    (StatusCode::ACCEPTED, "Accepted").into_response()
}

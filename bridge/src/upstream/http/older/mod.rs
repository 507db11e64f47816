//! L4: the HTTP transports of an older upstream server at a URL (docs/older-servers.md): Streamable HTTP of 2025-03-26 to 2025-11-25 with its session
//! ([`session`]), and, when the `initialize` POST gets 400, 404 or 405, the HTTP+SSE transport
//! of 2024-11-05 ([`legacy`]).
//!
//! What is the era's and nothing else: the order rule, the session id and the revision header
//! ([`session`]), the reopening of the GET stream and the resumption of a POST's stream
//! ([`stream`]), and the legacy endpoint ([`legacy`]). The POST, the sign-in, the reading of
//! an answer and the pacing of reconnects are those of every revision (`http/post.rs`,
//! `http/sse.rs`), and so is the cancellation of a request (`http/inflight.rs`).
//!
//! The client hands frames to [`OlderLink::send`]; one dispatcher task POSTs them in the
//! client's order. `initialize` and every notification or response wait for their answer
//! before the next frame goes (so that `notifications/initialized` reaches the server before
//! the requests behind it); a request goes on its own task and the dispatcher moves on. The
//! answers come back as [`crate::upstream::TransportEvent`]s, as from every transport.

mod legacy;
mod session;
mod stream;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use url::Url;

use super::inflight::Inflight;
use super::post::PostContext;
use crate::log::{self, Level};
use crate::sync::lock;
use crate::upstream::{TransportEvent, UpstreamError};

/// L4: how long one notification or response of the relay may take to be POSTed (its status
/// and, for an event stream, its end). The dispatcher sends these one at a time, in the
/// relay's order, so one POST that never ends would hold every later frame; after this bound
/// the frame is given up with a warning and the next one goes.
const MESSAGE_BOUND: Duration = Duration::from_secs(10);

/// L4: the statuses of the `initialize` POST that mean a server of 2024-11-05.
const FALLBACK_STATUSES: [u16; 3] = [400, 404, 405];

/// L4: true when the status of the `initialize` POST sends the bridge to the HTTP+SSE
/// transport ([`legacy`]); the session transport ([`session`]) asks it too.
fn falls_back(status: u16) -> bool {
    FALLBACK_STATUSES.contains(&status)
}

/// How long the DELETE of the session may take at the stop (R7: the stop stays bounded).
pub const DELETE_BOUND: Duration = Duration::from_secs(2);

/// The link of the relay to an older server at a URL.
pub struct OlderLink {
    inner: Arc<Inner>,
    queue: mpsc::UnboundedSender<Value>,
    /// The receiving end, until the first frame starts the dispatcher.
    idle: Mutex<Option<mpsc::UnboundedReceiver<Value>>>,
}

/// What the dispatcher and the tasks of one link share.
struct Inner {
    ctx: Arc<PostContext>,
    /// `Mcp-Session-Id` of the server's `initialize` answer.
    session_id: Mutex<Option<String>>,
    /// The revision of the server's `initialize` result: the `MCP-Protocol-Version` header.
    revision: Mutex<Option<String>>,
    /// The count of completed sign-ins when the session was made (L4: a later sign-in makes a
    /// new session, [`Inner::signed_in_since_session`]).
    session_sign_ins: Mutex<u64>,
    /// VS Code's `initialize` frame, for a new session after a 404.
    init: Mutex<Option<Value>>,
    /// The 2024-11-05 transport: the endpoint of the `endpoint` event.
    endpoint: Mutex<Option<Url>>,
    /// One new session at a time; the count names the re-initialize requests.
    reinit: tokio::sync::Mutex<u64>,
    /// The dispatcher's task; aborted at the stop.
    tasks: Mutex<Vec<AbortHandle>>,
    /// The task of each request in flight, the transport's (cancelled there) and aborted at
    /// the stop.
    requests: Inflight,
    /// The GET stream of server messages (Streamable HTTP).
    listen: Mutex<Option<AbortHandle>>,
    stopped: AtomicBool,
}

/// What kind of frame the relay sent.
enum Kind {
    Initialize(i64),
    Request(i64),
    /// A notification or a response: no answer but the status.
    Message,
}

fn kind_of(frame: &Value) -> Kind {
    match (frame.get("id").and_then(Value::as_i64), frame.get("method")) {
        (Some(id), Some(method)) if method == "initialize" => Kind::Initialize(id),
        (Some(id), Some(_)) => Kind::Request(id),
        _ => Kind::Message,
    }
}

impl OlderLink {
    pub(super) fn new(ctx: Arc<PostContext>, requests: Inflight) -> OlderLink {
        let (queue, rx) = mpsc::unbounded_channel();
        OlderLink {
            inner: Arc::new(Inner {
                ctx,
                session_id: Mutex::new(None),
                revision: Mutex::new(None),
                session_sign_ins: Mutex::new(0),
                init: Mutex::new(None),
                endpoint: Mutex::new(None),
                reinit: tokio::sync::Mutex::new(0),
                tasks: Mutex::new(Vec::new()),
                requests,
                listen: Mutex::new(None),
                stopped: AtomicBool::new(false),
            }),
            queue,
            idle: Mutex::new(Some(rx)),
        }
    }

    /// The stop: every request and stream ends, and the session is deleted (DELETE with its
    /// `Mcp-Session-Id`, within [`DELETE_BOUND`]; a 405 means the server keeps it). Without a
    /// session (never initialized, or 2024-11-05, whose session ends with its stream) it
    /// returns at once.
    pub(super) async fn close(&self) {
        self.inner.stopped.store(true, Ordering::Relaxed);
        self.inner.abort_all();
        let session = lock(&self.inner.session_id).take();
        if session.is_some() && self.inner.signed_in_since_session() {
            // L4: the session of an earlier sign-in is not used again, not even to end it.
            log::bridge(
                Level::Debug,
                "no DELETE of the upstream session: it belongs to an earlier sign-in",
            );
            return;
        }
        if let Some(session) = session {
            let _ = tokio::time::timeout(DELETE_BOUND, self.inner.delete(&session)).await;
        }
    }
}

impl OlderLink {
    /// Queues one frame of the client (a request, a notification, a response) for the
    /// dispatcher; false after the stop.
    pub(in crate::upstream::http) fn send(&self, frame: &Value) -> bool {
        if self.inner.stopped.load(Ordering::Relaxed) {
            return false;
        }
        if let Some(rx) = lock(&self.idle).take() {
            let inner = Arc::clone(&self.inner);
            let task = tokio::spawn(dispatch(inner, rx));
            self.inner.track(task.abort_handle());
        }
        self.queue.send(frame.clone()).is_ok()
    }
}

/// The dispatcher: the frames of the relay in its order.
async fn dispatch(inner: Arc<Inner>, mut rx: mpsc::UnboundedReceiver<Value>) {
    while let Some(frame) = rx.recv().await {
        match kind_of(&frame) {
            Kind::Initialize(id) => {
                *lock(&inner.init) = Some(frame.clone());
                if let Err(error) = inner.initialize(&frame).await {
                    inner.fail(id, error);
                }
            }
            Kind::Request(id) => {
                let task_inner = Arc::clone(&inner);
                inner.requests.spawn(id, async move {
                    if let Err(error) = task_inner.request(id, &frame).await {
                        task_inner.fail(id, error);
                    }
                });
            }
            Kind::Message => {
                let initialized = frame.get("method").and_then(Value::as_str)
                    == Some("notifications/initialized");
                match tokio::time::timeout(MESSAGE_BOUND, inner.message(&frame)).await {
                    Ok(Ok(())) if initialized => inner.open_listen_stream(),
                    Ok(Ok(())) => {}
                    Ok(Err(error)) => log::bridge(
                        Level::Warn,
                        &format!("a message to the upstream server was not delivered: {error}"),
                    ),
                    Err(_) => log::bridge(
                        Level::Warn,
                        &format!(
                            "a message to the upstream server got no answer within {} s: the bridge gave it up and sends the next one",
                            MESSAGE_BOUND.as_secs()
                        ),
                    ),
                }
            }
        }
    }
}

impl Inner {
    fn track(&self, task: AbortHandle) {
        let mut tasks = lock(&self.tasks);
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }

    fn abort_all(&self) {
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
        self.requests.abort_all();
        if let Some(task) = lock(&self.listen).take() {
            task.abort();
        }
    }

    /// Request `id` ends without a JSON-RPC answer.
    fn fail(&self, id: i64, error: UpstreamError) {
        let _ = self.ctx.events.send(TransportEvent::Failed { id, error });
    }

    /// `initialize`: Streamable HTTP first; a 400, 404 or 405 to its POST is a server of
    /// 2024-11-05 (as the TypeScript SDK's clients fall back), which gets the HTTP+SSE
    /// transport.
    async fn initialize(self: &Arc<Self>, frame: &Value) -> Result<(), UpstreamError> {
        match self.post_initialize(frame, true).await {
            Err(UpstreamError::HttpStatus(status)) if falls_back(status) => {
                log::bridge(
                    Level::Info,
                    &format!(
                        "the upstream server refused the initialize POST with the HTTP status {status}: the bridge tries the HTTP+SSE transport of 2024-11-05"
                    ),
                );
                let endpoint = self.open_legacy().await?;
                *lock(&self.endpoint) = Some(endpoint);
                self.legacy_post(frame).await
            }
            Err(error) => Err(error),
            Ok(true) => Ok(()),
            Ok(false) => Err(no_response()),
        }
    }

    /// A request of the relay.
    async fn request(self: &Arc<Self>, id: i64, frame: &Value) -> Result<(), UpstreamError> {
        if lock(&self.endpoint).is_some() {
            return self.legacy_post(frame).await;
        }
        let answered = self.post_frame(frame, Some(id)).await?;
        if answered { Ok(()) } else { Err(no_response()) }
    }

    /// A notification or a response of the relay.
    async fn message(self: &Arc<Self>, frame: &Value) -> Result<(), UpstreamError> {
        if lock(&self.endpoint).is_some() {
            return self.legacy_post(frame).await;
        }
        self.post_frame(frame, None).await.map(|_| ())
    }
}

fn no_response() -> UpstreamError {
    UpstreamError::TransportFailed("the response ended without a JSON-RPC response".into())
}

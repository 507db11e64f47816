//! The upstream client, one for every revision: integer ids, the request frame of its
//! [`Dialect`], one table of requests in flight, routing of responses and progress by
//! request, `notifications/cancelled` for a request that the bridge gives up, and the one path
//! of the server's notifications and requests to the front ([`IncomingSink`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

use super::dialect::{Dialect, DialectCell};
use super::envelope::{self, Envelope};
use super::events::{Flow, Inbox};
use super::{Ended, Outgoing, Transport, TransportEvent, UpstreamError};
use crate::errors::Cause;
use crate::log::{self, Level, Scope};
use crate::sync::lock;
use crate::translate::level::LogLevel;
use crate::wire::fast::{Fast, parse_fast};
use crate::wire::lazy::{Body, LazyObject};
use crate::wire::parse::{self, Message, Parsed};
use crate::wire::reader::RawLine;

/// Progress notifications kept per request while the request task is busy; more are dropped
/// (progress is advisory, and a flood must not grow memory without a bound).
const PROGRESS_QUEUE: usize = 256;

/// What the front learns of the upstream server besides responses.
#[derive(Debug)]
pub enum ClientEvent {
    /// The connection is gone (the upstream process and its tree, where there is one).
    Ended(Ended),
}

/// A message of the upstream server that belongs to no request of the bridge.
#[derive(Debug)]
pub enum Incoming {
    /// A notification (M3: the events of the listen streams, the log messages; L2: every
    /// notification of an older server).
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// L3: a request of an older server to VS Code (its id as the server gave it).
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
}

/// Takes each message of the upstream server that belongs to no request. It runs on the
/// router, before the router reads the next line: so whatever it writes to the one writer of
/// VS Code is queued before the response of any later line is even routed (the quirk on the
/// order of list changes and results). It must not block.
pub type IncomingSink = Arc<dyn Fn(Incoming) + Send + Sync>;

/// A request in flight: the channels of its [`Call`].
struct Pending {
    progress: Option<mpsc::Sender<Value>>,
    done: oneshot::Sender<Result<Body, UpstreamError>>,
    /// A listen stream: a `notifications/cancelled` of the upstream server for it ends it.
    stream: bool,
}

impl Pending {
    /// Hands the response to the request's task.
    fn finish(self, result: Result<Body, UpstreamError>) {
        let _ = self.done.send(result);
    }

    fn progress(&self, params: Value) {
        if let Some(tx) = &self.progress {
            let _ = tx.try_send(params);
        }
    }
}

/// Options of one upstream request.
#[derive(Clone, Debug, Default)]
pub struct RequestOptions {
    /// The level of VS Code's last `logging/setLevel`.
    pub log_level: Option<LogLevel>,
    /// True when VS Code asked for progress: the request gets a progress token.
    pub progress: bool,
    /// R3: the `_meta` keys of VS Code that go upstream.
    pub meta: Map<String, Value>,
    /// A `subscriptions/listen` stream (M3): the upstream server may end it with
    /// `notifications/cancelled` instead of (or as well as) its result.
    pub stream: bool,
}

/// One 2026-07-28 client over one transport.
pub struct UpstreamClient {
    transport: Arc<dyn Transport>,
    envelope: Envelope,
    /// The members of `_meta` that every request carries, as JSON text.
    fixed_meta: Vec<u8>,
    next_id: AtomicI64,
    /// foldhash: the bridge's own integer ids need no protection of SipHash (a hot-path choice of bridge/README.md).
    pending: Mutex<HashMap<i64, Pending, foldhash::fast::RandomState>>,
    closed: AtomicBool,
    max_line_bytes: usize,
    /// L1: the revision of the connection.
    dialect: DialectCell,
}

/// What a request task reads from its call.
#[derive(Debug)]
pub enum CallEvent {
    /// The params of a `notifications/progress` of this request.
    Progress(Value),
    /// The response: the result (its members parsed on demand), or why there is none.
    Done(Result<Body, UpstreamError>),
}

/// One request in flight upstream. Dropping it before its response cancels it upstream.
pub struct Call {
    id: i64,
    client: Arc<UpstreamClient>,
    progress: Option<mpsc::Receiver<Value>>,
    done: oneshot::Receiver<Result<Body, UpstreamError>>,
    finished: bool,
}

impl UpstreamClient {
    /// Makes the client and installs its router on `events` of the transport; the router
    /// reports unrouted notifications and the exit to `front`.
    pub fn start(
        transport: Arc<dyn Transport>,
        events: Inbox,
        envelope: Envelope,
        max_line_bytes: usize,
        front: mpsc::UnboundedSender<ClientEvent>,
        sink: IncomingSink,
    ) -> Arc<UpstreamClient> {
        let client = Arc::new(UpstreamClient {
            transport,
            fixed_meta: envelope.fixed_members(),
            envelope,
            next_id: AtomicI64::new(1),
            pending: Mutex::new(HashMap::default()),
            closed: AtomicBool::new(false),
            max_line_bytes,
            dialect: DialectCell::default(),
        });
        let mut router = Router {
            client: Arc::clone(&client),
            front,
            sink,
        };
        events.route(Box::new(move |event| router.route(event)));
        client
    }

    /// The client capabilities that the bridge declared upstream (VS Code's, after the mask of
    /// C2): the input kinds that an input round may ask VS Code for (R8).
    pub fn capabilities(&self) -> &Value {
        &self.envelope.capabilities
    }

    /// See [`Transport::tools_listed`]; the parameters of `x-mcp-header` are of 2026-07-28.
    pub fn tools_listed(&self, result: &mut Value) {
        if self.dialect() == Dialect::Modern {
            self.transport.tools_listed(result);
        }
    }

    /// L1: the revision of the connection.
    pub fn dialect(&self) -> Dialect {
        self.dialect.get()
    }

    /// L1: the front found the revision of the server; the requests from now on are written
    /// in `dialect`.
    pub fn set_dialect(&self, dialect: Dialect) {
        self.dialect.set(dialect);
    }

    /// L2, L3: one notification or response upstream (of an older server); false when the
    /// transport takes no more.
    pub fn send_message(&self, frame: &Value) -> bool {
        self.transport.send(Outgoing::Message(frame))
    }

    /// The transport (for the stop sequence and the watchdog).
    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.transport
    }

    /// True when the upstream server sends nothing more.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Sends one request. The call is registered before the frame goes out, so that no
    /// response can come before its entry. Members of `params` that were received raw go
    /// out as received (a hot-path choice of bridge/README.md).
    pub fn request(
        self: &Arc<Self>,
        method: &str,
        params: impl Into<LazyObject>,
        opts: &RequestOptions,
    ) -> Result<Call, UpstreamError> {
        self.request_with(method, &params.into(), opts)
    }

    /// The next id of the upstream connection.
    fn reserve_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// [`UpstreamClient::request`] with borrowed params: the frame is written from them.
    pub fn request_with(
        self: &Arc<Self>,
        method: &str,
        params: &LazyObject,
        opts: &RequestOptions,
    ) -> Result<Call, UpstreamError> {
        let id = self.reserve_id();
        let (done_tx, done_rx) = oneshot::channel();
        let (progress_tx, progress_rx) = if opts.progress {
            let (tx, rx) = mpsc::channel(PROGRESS_QUEUE);
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let frame = match self.dialect() {
            Dialect::Modern => envelope::RequestFrame::new(id, method, params, self.meta(id, opts)),
            Dialect::Older => envelope::RequestFrame::older(id, method, params, opts.progress),
        };
        {
            let mut pending = lock(&self.pending);
            if self.is_closed() {
                return Err(UpstreamError::Closed);
            }
            pending.insert(
                id,
                Pending {
                    progress: progress_tx,
                    done: done_tx,
                    stream: opts.stream,
                },
            );
        }
        if !self.transport.send(Outgoing::Request(&frame)) {
            lock(&self.pending).remove(&id);
            return Err(UpstreamError::Closed);
        }
        Ok(Call {
            id,
            client: Arc::clone(self),
            progress: progress_rx,
            done: done_rx,
            finished: false,
        })
    }

    /// The JSON text of the `_meta` of request `id`.
    fn meta(&self, id: i64, opts: &RequestOptions) -> Vec<u8> {
        self.envelope.meta_bytes_with(
            &self.fixed_meta,
            opts.log_level,
            opts.progress.then_some(id),
            &opts.meta,
        )
    }

    /// Gives up request `id` while it is pending: its waiter is dropped without a response,
    /// and `notifications/cancelled` with `reason` goes upstream. False when it was not
    /// pending any more.
    pub fn give_up(&self, id: i64, reason: &str) -> bool {
        let pending = lock(&self.pending).remove(&id);
        let Some(pending) = pending else {
            return false;
        };
        drop(pending);
        if !self.is_closed() {
            self.transport
                .cancel(id, &envelope::cancel_frame(id, reason));
        }
        true
    }

    /// Fails every request in flight: the upstream server sends nothing more.
    fn close_all(&self) {
        let drained: Vec<(i64, Pending)> = {
            let mut pending = lock(&self.pending);
            self.closed.store(true, Ordering::SeqCst);
            pending.drain().collect()
        };
        for (_, p) in drained {
            p.finish(Err(UpstreamError::Closed));
        }
    }

    fn complete(&self, id: &Value, body: Result<Body, UpstreamError>) -> bool {
        let Some(id) = id.as_i64() else {
            return false;
        };
        let pending = lock(&self.pending).remove(&id);
        match pending {
            Some(p) => {
                p.finish(body);
                true
            }
            None => false,
        }
    }

    /// M3: the upstream server cancelled a request; only a listen stream ends by it (the
    /// server ends its streams at its stop with a result, a cancellation, or both, in either
    /// order). Nothing of it reaches VS Code.
    fn cancelled_by_server(&self, params: Option<&Value>) {
        let Some(id) = params
            .and_then(|p| p.get("requestId"))
            .and_then(Value::as_i64)
        else {
            return;
        };
        let ended = {
            let mut pending = lock(&self.pending);
            match pending.get(&id) {
                Some(p) if p.stream => pending.remove(&id),
                _ => None,
            }
        };
        if let Some(p) = ended {
            p.finish(Err(UpstreamError::Ended));
        }
    }

    fn progress(&self, params: Option<Value>) {
        let Some(params) = params else {
            return;
        };
        let Some(token) = params.get("progressToken").and_then(Value::as_i64) else {
            log::bridge(
                Level::Debug,
                "dropped a progress notification of the upstream server without a known token",
            );
            return;
        };
        if let Some(p) = lock(&self.pending).get(&token) {
            p.progress(params);
        }
    }

    /// Stops the transport and waits until the connection (the upstream and its tree) is
    /// gone.
    pub async fn shutdown(&self) -> Option<Ended> {
        self.transport.stop();
        let mut watch = self.transport.end_watch();
        watch.wait_for(Option::is_some).await.ok().and_then(|v| *v)
    }
}

/// The router of a client: what the transport's events mean for the requests in flight and
/// for the front. It runs on the transport's own task ([`super::events`]).
struct Router {
    client: Arc<UpstreamClient>,
    front: mpsc::UnboundedSender<ClientEvent>,
    sink: IncomingSink,
}

impl Router {
    fn route(&mut self, event: TransportEvent) -> Flow {
        let client = &self.client;
        match event {
            TransportEvent::Line(RawLine::Line(line)) => match parse_fast(line) {
                // The common case: a result whose members stay as received (a hot-path choice of bridge/README.md).
                Ok(Fast::Response { id, result }) => {
                    if !client.complete(&id, Ok(Body::Object(result))) {
                        log::bridge(Level::Debug, NO_REQUEST);
                    }
                }
                Ok(Fast::Request { id, method, params }) => {
                    let params = params.map(|p| Value::Object(p.into_map()));
                    request(client, id, method, params, &self.sink);
                }
                Err(line) => handle(client, parse::parse_line(&line), &self.sink),
            },
            TransportEvent::Line(RawLine::TooLong { head, tail }) => handle(
                client,
                parse::too_long(&head, &tail, client.max_line_bytes),
                &self.sink,
            ),
            TransportEvent::Line(RawLine::Eof) | TransportEvent::Closed => client.close_all(),
            // After the response of the request this changes nothing.
            TransportEvent::Failed { id, error } => {
                client.complete(&Value::from(id), Err(error));
            }
            TransportEvent::Ended(ended) => {
                client.close_all();
                let _ = self.front.send(ClientEvent::Ended(ended));
                // Nothing comes after the end; the router lets the connection go.
                return Flow::Stop;
            }
        }
        Flow::Continue
    }
}

impl Drop for Router {
    /// The transport is gone without its end (every sender dropped): requests in flight
    /// fail rather than wait.
    fn drop(&mut self) {
        self.client.close_all();
    }
}

const NO_REQUEST: &str = "dropped a response of the upstream server to no request in flight";

/// L3: a request of the upstream server goes to the front when the server is older; a server
/// of 2026-07-28 sends none.
fn request(
    client: &UpstreamClient,
    id: Value,
    method: String,
    params: Option<Value>,
    sink: &IncomingSink,
) {
    if client.dialect() == Dialect::Older {
        return sink(Incoming::Request { id, method, params });
    }
    log::bridge(
        Level::Debug,
        &format!(
            "dropped the request {method} of the upstream server: a server of revision 2026-07-28 sends no requests"
        ),
    );
}

fn handle(client: &UpstreamClient, parsed: Parsed, sink: &IncomingSink) {
    match parsed {
        Parsed::Message(Message::Response { id, body }) => {
            let body = body.map(Body::Value).map_err(UpstreamError::Rpc);
            if !client.complete(&id, body) {
                log::bridge(Level::Debug, NO_REQUEST);
            }
        }
        Parsed::Message(Message::Notification { method, params }) => match method.as_str() {
            "notifications/progress" => client.progress(params),
            // Quirk of M1: the ids of VS Code and of the upstream are both integers; a
            // cancellation of the upstream never reaches VS Code as it came. An older server
            // gives up one of its own requests to VS Code with it (L3): the front maps its id.
            "notifications/cancelled" => {
                client.cancelled_by_server(params.as_ref());
                if client.dialect() == Dialect::Older {
                    return sink(Incoming::Notification { method, params });
                }
                log::bridge(
                    Level::Debug,
                    "dropped the notification notifications/cancelled of the upstream server",
                )
            }
            _ => sink(Incoming::Notification { method, params }),
        },
        Parsed::Message(Message::Request { id, method, params }) => {
            request(client, id, method, params, sink)
        }
        Parsed::Invalid { id, cause, detail } => {
            let why = dropped_invalid_line(cause, detail);
            client.complete(&id, Err(UpstreamError::InvalidResponse(why)));
        }
        Parsed::BadAnswer { .. } | Parsed::Dropped => dropped_line_without_id(),
    }
}

/// The line of docs/stderr.md `mcp_router: warning: dropped <frame>: <outcome>` for a line
/// of the upstream server that is not valid; returns the reason.
fn dropped_invalid_line(cause: Cause, detail: Option<String>) -> String {
    let why = detail.map_or_else(
        || cause.name().to_owned(),
        |d| format!("{} ({d})", cause.name()),
    );
    log::write(
        Scope::McpRouter,
        Level::Warn,
        &format!("dropped a line of the upstream server: {why}"),
    );
    why
}

/// The same line for a response of the upstream server without a valid id.
fn dropped_line_without_id() {
    log::write(
        Scope::McpRouter,
        Level::Warn,
        "dropped a line of the upstream server: a response without a valid id",
    );
}

impl Call {
    /// The upstream id of this request (also its progress token).
    pub fn id(&self) -> i64 {
        self.id
    }

    /// The next progress or the response. Progress that the upstream sent before its
    /// response always comes first.
    pub async fn next(&mut self) -> CallEvent {
        if self.finished {
            return CallEvent::Done(Err(UpstreamError::Closed));
        }
        let done = match self.progress.as_mut() {
            Some(progress) => tokio::select! {
                biased;
                Some(p) = progress.recv() => return CallEvent::Progress(p),
                done = &mut self.done => done,
            },
            None => (&mut self.done).await,
        };
        // Progress queued before the response still goes first.
        if let Some(p) = self.progress.as_mut().and_then(|rx| rx.try_recv().ok()) {
            self.done = resolved(done);
            return CallEvent::Progress(p);
        }
        self.finished = true;
        CallEvent::Done(done.unwrap_or(Err(UpstreamError::Closed)))
    }

    /// Gives the request up: `notifications/cancelled` with the reason goes upstream.
    pub fn cancel(mut self, reason: &str) {
        self.finished = true;
        self.client.give_up(self.id, reason);
    }
}

/// A receiver that already holds a value (to put a response back behind queued progress).
fn resolved(
    value: Result<Result<Body, UpstreamError>, oneshot::error::RecvError>,
) -> oneshot::Receiver<Result<Body, UpstreamError>> {
    let (tx, rx) = oneshot::channel();
    let _ = tx.send(value.unwrap_or(Err(UpstreamError::Closed)));
    rx
}

impl Drop for Call {
    fn drop(&mut self) {
        if !self.finished {
            self.client
                .give_up(self.id, "the client closed the connection");
        }
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;

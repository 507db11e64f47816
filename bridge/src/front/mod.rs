//! The 2025-11-25 face for VS Code: the connection states, the dispatch of each line, and the
//! two ways to stop (the end of stdin, and the exit of the upstream server).
//!
//! One reader task reads stdin and never waits for a request: each request runs on its own
//! task with its own cancel token (DESIGN principle 5), so that cancellations, answers to
//! the bridge's requests and the end of input are always read.

pub mod client_requests;
pub mod inflight;
pub mod initialize;
pub(crate) mod listener;
pub mod request;
pub mod rounds;

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use self::client_requests::ClientRequests;
use self::inflight::{
    Inflight, REASON_CLIENT_CANCELED, REASON_CLIENT_CLOSED, REASON_UPSTREAM_STOPPED, Refused, Slot,
};
use crate::input::answers::ClientAnswer;
use crate::input::complete::ElicitationIds;
use crate::listen::filter::SUBSCRIPTION_ID_KEY;
use crate::listen::replay::subscription_uri;
use crate::log::{self, Level, Scope};
use crate::translate::errors::{Cause, error_frame, error_object, result_frame};
use crate::translate::forward::{MethodClass, classify, has_modern_meta};
use crate::translate::initialize::{ServerInfoFallback, parse_initialize};
use crate::translate::level::{self, LogLevel};
use crate::upstream::Ended;
use crate::upstream::connect::Target;
use crate::upstream::client::{ClientEvent, NotificationSink, UpstreamClient};
use crate::wire::parse::{self, Message, Parsed, valid_id};
use crate::wire::reader::{LineReader, RawLine};
use crate::wire::writer::{Outbox, spawn_writer};

/// The options of one connection.
#[derive(Clone, Debug)]
pub struct Options {
    /// The upstream server: a command or a URL.
    pub upstream: Target,
    pub fallback: ServerInfoFallback,
    pub discover_timeout: Duration,
    pub max_line_bytes: usize,
    pub max_in_flight: usize,
    pub shutdown_grace: Duration,
}

/// How [`serve`] ended; the executable maps it to its exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Stdin ended and the bridge stopped (exit 0).
    Eof,
    /// The upstream server stopped while stdin was open (exit 1). Only a connection of a
    /// command or a pipe ends this way; an upstream at a URL never stops the bridge.
    UpstreamExited(Ended),
}

/// Hooks of the executable.
#[derive(Default)]
pub struct Hooks {
    /// Called once at the end of stdin, before the bounded stop (the watchdog starts here).
    pub on_eof: Option<Box<dyn FnOnce() + Send>>,
    /// The process (group) id of the current upstream command, for the watchdog.
    pub upstream_pid: Arc<AtomicU32>,
}

/// The connection states (reference-bridge.md §1.4).
pub(crate) enum State {
    AwaitingInit,
    Initializing {
        generation: u64,
        upstream: Option<Arc<UpstreamClient>>,
    },
    Ready {
        generation: u64,
        upstream: Arc<UpstreamClient>,
    },
    Closing,
}

/// What the tasks of a connection share.
pub(crate) struct Shared {
    pub(crate) opts: Options,
    outbox: Outbox,
    state: Mutex<State>,
    inflight: Inflight,
    /// 0 = no `logging/setLevel` yet, else the rank of the level + 1.
    level: AtomicU8,
    client_requests: ClientRequests,
    /// O1: the `elicitationId`s of URL steps, one counter per connection.
    elicitation_ids: Mutex<ElicitationIds>,
    tasks: TaskTracker,
    stoppers: TaskTracker,
    generation: AtomicU64,
    events: mpsc::UnboundedSender<(u64, ClientEvent)>,
    pub(crate) upstream_pid: Arc<AtomicU32>,
    /// M3: the listen stream and the subscriptions.
    listener: listener::Listener,
}

impl Shared {
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The connection's counter of elicitation ids (held only while a round is planned).
    pub(crate) fn elicitation_ids(&self) -> MutexGuard<'_, ElicitationIds> {
        self.elicitation_ids
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The level that goes upstream with each new request (O5).
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        match self.level.load(Ordering::Relaxed) {
            0 => None,
            n => LogLevel::from_rank(n - 1),
        }
    }

    /// Answers a request task: only when the request was not canceled and not answered yet.
    pub(crate) fn respond(&self, slot: &Slot, response: Result<Value, Value>) {
        if self.inflight.finish(slot) {
            let frame = match response {
                Ok(result) => result_frame(slot.id.clone(), result),
                Err(error) => error_frame(slot.id.clone(), error),
            };
            self.outbox.send(&frame);
        }
    }

    /// O4: progress of a live request, with VS Code's token.
    pub(crate) fn progress(&self, slot: &Slot, token: &Value, upstream: &Value) {
        if self.inflight.is_live(slot) {
            self.outbox.send(&request::progress_frame(token, upstream));
        }
    }

    /// A channel of client events for the upstream of one generation.
    pub(crate) fn client_events(&self, generation: u64) -> mpsc::UnboundedSender<ClientEvent> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let events = self.events.clone();
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                if events.send((generation, event)).is_err() {
                    break;
                }
            }
        });
        tx
    }

    /// M3: the notifications of the upstream of one generation, on its router, in the
    /// upstream's order (see [`listener`]). Holds the connection weakly: the upstream client
    /// must not keep the connection alive.
    pub(crate) fn notification_sink(self: &Arc<Self>, generation: u64) -> NotificationSink {
        let weak = Arc::downgrade(self);
        Arc::new(move |method, params| {
            if let Some(shared) = weak.upgrade() {
                on_upstream_notification(&shared, generation, method, params);
            }
        })
    }

    /// Stops an upstream that no state holds any more, on a tracked task.
    pub(crate) fn retire(&self, client: Arc<UpstreamClient>) {
        self.stoppers.spawn(async move {
            client.shutdown().await;
        });
    }

    fn reply(&self, id: Value, response: Result<Value, Value>) {
        let frame = match response {
            Ok(result) => result_frame(id, result),
            Err(error) => error_frame(id, error),
        };
        self.outbox.send(&frame);
    }
}

/// Serves one VS Code connection on `input`/`output` until stdin ends or the upstream stops.
pub async fn serve<R, W>(opts: Options, input: R, output: W, mut hooks: Hooks) -> Outcome
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (outbox, writer) = spawn_writer(output);
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        inflight: Inflight::new(opts.max_in_flight),
        opts,
        outbox: outbox.clone(),
        state: Mutex::new(State::AwaitingInit),
        level: AtomicU8::new(0),
        client_requests: ClientRequests::default(),
        elicitation_ids: Mutex::new(ElicitationIds::new()),
        tasks: TaskTracker::new(),
        stoppers: TaskTracker::new(),
        generation: AtomicU64::new(0),
        events: events_tx,
        upstream_pid: Arc::clone(&hooks.upstream_pid),
        listener: listener::Listener::default(),
    });
    let lines = spawn_reader(input, shared.opts.max_line_bytes);
    let mut lines = lines;
    let outcome = loop {
        tokio::select! {
            line = lines.recv() => match line {
                Some(RawLine::Line(bytes)) => on_parsed(&shared, parse::parse_line(&bytes)),
                Some(RawLine::TooLong { head, tail }) => {
                    on_parsed(&shared, parse::too_long(&head, &tail, shared.opts.max_line_bytes));
                }
                Some(RawLine::Eof) | None => break Outcome::Eof,
            },
            Some((generation, event)) = events.recv() => {
                if let Some(exit) = on_client_event(&shared, generation, event) {
                    break Outcome::UpstreamExited(exit);
                }
            }
        }
    };
    match outcome {
        Outcome::Eof => {
            if let Some(on_eof) = hooks.on_eof.take() {
                on_eof();
            }
            stop_at_eof(&shared).await;
        }
        Outcome::UpstreamExited(exit) => stop_after_upstream_exit(&shared, exit).await,
    }
    outbox.close();
    // VS Code may not read stdout any more; the writer gets a bounded time to flush.
    let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
    outcome
}

/// Stdin is read on its own task, so that a long line never delays the dispatch.
fn spawn_reader<R: AsyncRead + Unpin + Send + 'static>(
    input: R,
    max: usize,
) -> mpsc::Receiver<RawLine> {
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        let mut reader = LineReader::new(input, max);
        loop {
            let line = reader.next().await.unwrap_or(RawLine::Eof);
            let end = line == RawLine::Eof;
            if tx.send(line).await.is_err() || end {
                break;
            }
        }
    });
    rx
}

fn on_parsed(shared: &Arc<Shared>, parsed: Parsed) {
    match parsed {
        Parsed::Message(Message::Request { id, method, params }) => {
            on_request(shared, id, method, params)
        }
        Parsed::Message(Message::Notification { method, params }) => {
            on_notification(shared, &method, params.as_ref())
        }
        Parsed::Message(Message::Response { id, body }) => {
            let answer = match body {
                Ok(result) => ClientAnswer::Result(result),
                Err(error) => ClientAnswer::Error(error),
            };
            match id.as_str() {
                Some(id) => {
                    shared.client_requests.resolve(id, answer);
                }
                None => log::bridge(
                    Level::Debug,
                    "dropped a response of the client to no request of the bridge",
                ),
            }
        }
        Parsed::BadAnswer { id } => {
            shared.client_requests.resolve(&id, ClientAnswer::BadLine);
        }
        Parsed::Invalid { id, cause, detail } => {
            shared.reply(id, Err(error_object(cause, detail.as_deref())))
        }
        Parsed::Dropped => log::bridge(
            Level::Debug,
            "dropped a response of the client without a valid id",
        ),
    }
}

fn on_request(shared: &Arc<Shared>, id: Value, method: String, params: Option<Value>) {
    let class = classify(&method);
    match class {
        // R2: answered in every state.
        MethodClass::Ping => return shared.reply(id, Ok(json!({}))),
        MethodClass::SetLevel => {
            let response = match level::set_level_params(params.as_ref()) {
                Some(level) => {
                    shared.level.store(level.rank() + 1, Ordering::Relaxed);
                    Ok(json!({}))
                }
                None => Err(error_object(Cause::InvalidParams, None)),
            };
            return shared.reply(id, response);
        }
        // C1, C4: at once, never forwarded, so no late answer can follow.
        MethodClass::Discover => {
            return shared.reply(id, Err(error_object(Cause::MethodNotFound, None)));
        }
        MethodClass::Initialize => return on_initialize(shared, id, params),
        _ => {}
    }
    let upstream = {
        let state = shared.state();
        match &*state {
            State::AwaitingInit | State::Initializing { .. } => {
                // C1: a client of both revisions gets -32601, so that it uses initialize.
                let cause = if has_modern_meta(params.as_ref()) {
                    Cause::MethodNotFound
                } else {
                    Cause::NotInitialized
                };
                drop(state);
                return shared.reply(id, Err(error_object(cause, None)));
            }
            State::Closing => {
                drop(state);
                return shared.reply(id, Err(error_object(Cause::UpstreamExited, None)));
            }
            State::Ready { upstream, .. } => Arc::clone(upstream),
        }
    };
    let kind = match class {
        MethodClass::Forward(kind) => kind,
        MethodClass::Subscribe | MethodClass::Unsubscribe => {
            return on_subscription(shared, id, &method, params.as_ref());
        }
        _ => return shared.reply(id, Err(error_object(Cause::MethodNotFound, None))),
    };
    let Some(slot) = admit(shared, &id, &method) else {
        return;
    };
    shared.tasks.spawn(request::run_forward(
        Arc::clone(shared),
        slot,
        kind,
        params,
        upstream,
    ));
}

/// O7: `resources/subscribe` and `resources/unsubscribe` go to the owner of the listen
/// stream (one change at a time). Without upstream support, -32601; without a URI, -32602.
fn on_subscription(shared: &Arc<Shared>, id: Value, method: &str, params: Option<&Value>) {
    if !shared.listener.supports_subscriptions() {
        return shared.reply(id, Err(error_object(Cause::MethodNotFound, None)));
    }
    let Some(uri) = subscription_uri(params).map(str::to_owned) else {
        return shared.reply(id, Err(error_object(Cause::InvalidParams, None)));
    };
    let Some(slot) = admit(shared, &id, method) else {
        return;
    };
    let command = listener::Command {
        slot,
        uri,
        subscribe: method == "resources/subscribe",
    };
    if let Err(command) = listener::queue(shared, command) {
        // VS Code subscribed before notifications/initialized: start the stream now.
        let upstream = match &*shared.state() {
            State::Ready { upstream, .. } => Some(Arc::clone(upstream)),
            _ => None,
        };
        if let Some(upstream) = upstream {
            listener::start(shared, upstream);
        }
        if let Err(command) = listener::queue(shared, *command) {
            shared.respond(
                &command.slot,
                Err(error_object(Cause::UpstreamExited, None)),
            );
        }
    }
}

fn admit(shared: &Shared, id: &Value, method: &str) -> Option<Slot> {
    match shared.inflight.admit(id, method) {
        Ok(slot) => Some(slot),
        Err(Refused::Full) => {
            log::bridge(
                Level::Warn,
                &format!("rejected request {id} ({method}): too many requests in flight"),
            );
            shared.reply(id.clone(), Err(error_object(Cause::TooManyRequests, None)));
            None
        }
        Err(Refused::DuplicateId) => {
            shared.reply(
                id.clone(),
                Err(error_object(
                    Cause::InvalidRequestShape,
                    Some("a request with this id is in flight"),
                )),
            );
            None
        }
    }
}

fn on_initialize(shared: &Arc<Shared>, id: Value, params: Option<Value>) {
    let (generation, init) = {
        let mut state = shared.state();
        match &*state {
            State::AwaitingInit => {
                // Parameters that are not valid leave the state as it is, so that an
                // initialize right behind them is served (and not refused as a second one).
                let Some(init) = parse_initialize(params.as_ref()) else {
                    drop(state);
                    return shared.reply(id, Err(error_object(Cause::InvalidParams, None)));
                };
                let generation = shared.generation.fetch_add(1, Ordering::SeqCst) + 1;
                *state = State::Initializing {
                    generation,
                    upstream: None,
                };
                (generation, init)
            }
            State::Initializing { .. } | State::Ready { .. } => {
                drop(state);
                return shared.reply(id, Err(error_object(Cause::AlreadyInitialized, None)));
            }
            State::Closing => {
                drop(state);
                return shared.reply(id, Err(error_object(Cause::UpstreamExited, None)));
            }
        }
    };
    let Some(slot) = admit(shared, &id, "initialize") else {
        *shared.state() = State::AwaitingInit;
        return;
    };
    shared.tasks.spawn(initialize::run_initialize(
        Arc::clone(shared),
        slot,
        generation,
        init,
    ));
}

fn on_notification(shared: &Arc<Shared>, method: &str, params: Option<&Value>) {
    match method {
        "notifications/cancelled" => {
            // requestId is optional in 2025-11-25; without a valid one it cancels nothing.
            if let Some(id) = params
                .and_then(|p| p.get("requestId"))
                .filter(|id| valid_id(id))
            {
                shared.inflight.cancel(id, REASON_CLIENT_CANCELED);
            }
        }
        // R2: the listen stream starts here once the result was written.
        "notifications/initialized" => {
            log::bridge(Level::Debug, "the client sent notifications/initialized");
            let upstream = match &*shared.state() {
                State::Ready { upstream, .. } => Some(Arc::clone(upstream)),
                _ => None,
            };
            if let Some(upstream) = upstream {
                listener::start(shared, upstream);
            }
        }
        other => log::bridge(
            Level::Debug,
            &format!("ignored the notification {other} of the client"),
        ),
    }
}

/// Handles an event of an upstream client; returns the end when the connection of the ready
/// state is gone.
fn on_client_event(shared: &Shared, generation: u64, event: ClientEvent) -> Option<Ended> {
    let current =
        matches!(&*shared.state(), State::Ready { generation: g, .. } if *g == generation);
    match event {
        ClientEvent::Ended(ended) => current.then_some(ended),
    }
}

/// O5, O6, O7: a notification of the upstream server, on its router. An event of a listen
/// stream (it names its subscription) goes to the listener; a log message without a stream
/// reaches VS Code at the client's level or above; everything else is dropped.
fn on_upstream_notification(
    shared: &Shared,
    generation: u64,
    method: String,
    params: Option<Value>,
) {
    let current =
        matches!(&*shared.state(), State::Ready { generation: g, .. } if *g == generation);
    let subscription = params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(SUBSCRIPTION_ID_KEY))
        .and_then(Value::as_i64);
    match (current, subscription) {
        (true, Some(uid)) => {
            let mut message = serde_json::Map::new();
            message.insert("jsonrpc".into(), Value::from("2.0"));
            message.insert("method".into(), Value::from(method));
            if let Some(params) = params {
                message.insert("params".into(), params);
            }
            listener::on_event(shared, uid, &Value::Object(message));
        }
        (true, None) if method == "notifications/message" => {
            let frame = params
                .as_ref()
                .and_then(|p| level::log_message_for_client(p, shared.log_level()));
            if let Some(frame) = frame {
                shared.outbox.send(&frame);
            }
        }
        _ => log::bridge(
            Level::Debug,
            &format!("dropped the notification {method} of the upstream server"),
        ),
    }
}

/// R7 and "The stop sequence of VS Code": cancel every request without a response, stop the
/// upstream (close its stdin; a termination signal after shutdown_grace; a kill after one
/// more grace), all within 2 × grace + 2 s.
async fn stop_at_eof(shared: &Shared) {
    let upstream = {
        let mut state = shared.state();
        let upstream = match &*state {
            State::Ready { upstream, .. }
            | State::Initializing {
                upstream: Some(upstream),
                ..
            } => Some(Arc::clone(upstream)),
            _ => None,
        };
        *state = State::Closing;
        upstream
    };
    // The owner of the listen stream cancels its streams upstream (R7: within the bound).
    shared.listener.stop.cancel();
    shared.inflight.cancel_all(REASON_CLIENT_CLOSED);
    // The tasks only queue their cancellations upstream; then stdin of the upstream closes
    // after those frames.
    shared.tasks.close();
    let _ = tokio::time::timeout(Duration::from_secs(1), shared.tasks.wait()).await;
    let bound = shared.opts.shutdown_grace * 2 + Duration::from_secs(1);
    if let Some(upstream) = upstream {
        let _ = tokio::time::timeout(bound, upstream.shutdown()).await;
    }
    shared.stoppers.close();
    let _ = tokio::time::timeout(bound, shared.stoppers.wait()).await;
}

/// "When the upstream server stops": the error line, -32603 `upstream_exited` to every
/// request in flight, then the caller exits with code 1. The tasks stop first (bounded), so
/// that what they owe VS Code before a response comes before it (M2: `notifications/cancelled`
/// for their `b-` requests and `notifications/elicitation/complete` for accepted URLs, §3.7).
async fn stop_after_upstream_exit(shared: &Shared, exit: Ended) {
    *shared.state() = State::Closing;
    shared.listener.stop.cancel();
    if let Some(status) = exit.exit {
        log::write(Scope::McpStdio, Level::Warn, &status.stdio_line());
    }
    log::bridge(Level::Err, &format!("the upstream server {exit}"));
    let slots = shared.inflight.take_all(REASON_UPSTREAM_STOPPED);
    for slot in &slots {
        slot.token.cancel();
    }
    shared.tasks.close();
    let _ = tokio::time::timeout(shared.opts.shutdown_grace, shared.tasks.wait()).await;
    for slot in slots {
        shared.reply(slot.id, Err(error_object(Cause::UpstreamExited, None)));
    }
    shared.stoppers.close();
    let _ = tokio::time::timeout(shared.opts.shutdown_grace, shared.stoppers.wait()).await;
}

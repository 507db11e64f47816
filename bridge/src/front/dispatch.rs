//! The dispatch of each line of VS Code, and of each notification and event of the upstream
//! client: answered at once (R2, C1, C4), handed to a request task (docs/architecture.md principle 5), or
//! to the owner of the listen stream (O7).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tracing::Instrument;

use super::inflight::{REASON_CLIENT_CANCELED, Refused, Slot};
use super::{Shared, State};
use super::{early, initialize, listener, older, request};
use crate::errors::{Cause, error_object};
use crate::input::answers::ClientAnswer;
use crate::listen::filter::SUBSCRIPTION_ID_KEY;
use crate::listen::replay::subscription_uri;
use crate::log::{self, Level};
use crate::translate::forward::{ForwardKind, MethodClass, classify, has_modern_meta};
use crate::translate::initialize::parse_initialize;
use crate::translate::level;
use crate::upstream::Ended;
use crate::upstream::client::{ClientEvent, Incoming, UpstreamClient};
use crate::wire::fast::{Fast, parse_fast};
use crate::wire::lazy::LazyObject;
use crate::wire::parse::{self, Message, Parsed, valid_id};

/// One line of VS Code. A forwarded request in the ready state takes the pass-through parse
/// (a hot-path choice of bridge/README.md): its params keep their members as received. Every other line is parsed whole
/// and goes to [`on_parsed`], as does a line that the pass-through does not take.
pub(super) fn on_line(shared: &Arc<Shared>, line: Vec<u8>) {
    match parse_fast(line) {
        Ok(Fast::Request { id, method, params }) => {
            if let MethodClass::Forward(kind) = classify(&method)
                && let Some(upstream) = ready_upstream(shared)
            {
                return forward(shared, id, &method, kind, params, upstream);
            }
            let params = params.map(|p| Value::Object(p.into_map()));
            on_request(shared, id, method, params)
        }
        Ok(Fast::Response { id, result }) => {
            let body = Ok(Value::Object(result.into_map()));
            on_parsed(shared, Parsed::Message(Message::Response { id, body }))
        }
        Err(line) => on_parsed(shared, parse::parse_line(&line)),
    }
}

fn ready_upstream(shared: &Shared) -> Option<Arc<UpstreamClient>> {
    match &*shared.state() {
        State::Ready { upstream, .. } => Some(Arc::clone(upstream)),
        _ => None,
    }
}

pub(super) fn on_parsed(shared: &Arc<Shared>, parsed: Parsed) {
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
    // L2: an older server answers its own ping, level, subscriptions and every method that
    // the bridge does not know; the front answers only initialize and server/discover.
    if !matches!(class, MethodClass::Initialize | MethodClass::Discover)
        && let Some(older) = shared.older()
        && let Some(upstream) = ready_upstream(shared)
    {
        if class == MethodClass::SetLevel {
            // R2: a level that is not one of the eight gets -32602 in both eras (the older
            // server would get a request that its schema refuses). O5: the level also filters
            // the log messages that reach VS Code.
            let Some(level) = level::set_level_params(params.as_ref()) else {
                return shared.reply(id, Err(error_object(Cause::InvalidParams, None)));
            };
            shared.level.store(level.rank() + 1, Ordering::Relaxed);
            older.level_sent();
        }
        let kind = match class {
            MethodClass::Forward(kind) => kind,
            _ => ForwardKind::List,
        };
        let params = match params {
            Some(Value::Object(map)) => Some(LazyObject::from(map)),
            _ => None,
        };
        return forward(shared, id, &method, kind, params, upstream);
    }
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
            State::Initializing { answered: true, .. } => {
                drop(state);
                return before_ready(shared, id, method, params);
            }
            State::Failed { error } => {
                let error = error.clone();
                drop(state);
                return shared.reply(id, Err(error));
            }
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
    // R3: params that are not an object are forwarded as `{}`.
    let params = match params {
        Some(Value::Object(map)) => Some(LazyObject::from(map)),
        _ => None,
    };
    forward(shared, id, &method, kind, params, upstream);
}

/// S1: a request of VS Code after the early answer, before the server is ready. A list is
/// empty at once; anything else waits for the start and is then dispatched as in the ready
/// state (or gets the start's error).
fn before_ready(shared: &Arc<Shared>, id: Value, method: String, params: Option<Value>) {
    if let Some((_, key, _)) = early::LISTS.iter().find(|(m, _, _)| *m == method) {
        let mut empty = serde_json::Map::new();
        empty.insert((*key).to_owned(), Value::Array(Vec::new()));
        return shared.reply(id, Ok(Value::Object(empty)));
    }
    let Some(slot) = admit(shared, &id, &method) else {
        return;
    };
    let tasks = shared.tasks.clone();
    let shared = Arc::clone(shared);
    let task = async move {
        let mut changes = shared.start_changes.subscribe();
        loop {
            match early::phase(&shared) {
                early::Phase::Starting => {}
                early::Phase::Ready => {
                    // Dispatched anew, with a slot of its own; none of VS Code's lines comes
                    // in between (one thread).
                    if shared.inflight.finish(&slot) {
                        on_request(&shared, id, method, params);
                    }
                    return;
                }
                early::Phase::Failed(error) => return shared.respond(&slot, Err(error)),
            }
            tokio::select! {
                () = slot.token.cancelled() => return,
                changed = changes.changed() => if changed.is_err() { return },
            }
        }
    };
    tasks.spawn(task);
}

/// O8, O9: a forwarded request in the ready state, on a request task of its own.
fn forward(
    shared: &Arc<Shared>,
    id: Value,
    method: &str,
    kind: ForwardKind,
    params: Option<LazyObject>,
    upstream: Arc<UpstreamClient>,
) {
    let Some(slot) = admit(shared, &id, method) else {
        return;
    };
    // The debug lines of the task carry the id of its request.
    let span = log::request_span(&slot.id);
    // Boxed: the task then holds a pointer, and the large state of the request is not moved
    // on each step of the spawn (a hot-path choice of bridge/README.md: measured with callgrind, the moves cost more than
    // the allocation).
    let task = Box::pin(request::run_forward(
        Arc::clone(shared),
        slot,
        kind,
        params,
        upstream,
    ));
    shared.tasks.spawn(task.instrument(span));
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
                // Nothing connects: the error, then the end of the dispatch (docs/secrets.md).
                if let Some(refusal) = &shared.opts.refusal {
                    *state = State::Closing;
                    drop(state);
                    shared.reply(id, Err(refusal.clone()));
                    shared.refused.notify_one();
                    return;
                }
                let generation = shared.generation.fetch_add(1, Ordering::SeqCst) + 1;
                *state = State::Initializing {
                    generation,
                    upstream: None,
                    id: id.clone(),
                    answered: false,
                };
                (generation, init)
            }
            State::Initializing { .. } | State::Ready { .. } | State::Failed { .. } => {
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
    let span = log::request_span(&slot.id);
    shared.tasks.spawn(
        initialize::run_initialize(Arc::clone(shared), slot, generation, init).instrument(span),
    );
}

fn on_notification(shared: &Arc<Shared>, method: &str, params: Option<&Value>) {
    // L2: every notification of VS Code but its cancellations goes to an older server.
    if method != "notifications/cancelled"
        && let Some(older) = shared.older()
        && let Some(upstream) = ready_upstream(shared)
    {
        if method == "notifications/initialized" {
            shared.initialized.send_replace(true);
        }
        return older::notify(shared, &older, &upstream, method, params);
    }
    match method {
        "notifications/cancelled" => {
            // requestId is optional in 2025-11-25; without a valid one it cancels nothing.
            if let Some(id) = params
                .and_then(|p| p.get("requestId"))
                .filter(|id| valid_id(id))
            {
                shared.inflight.cancel(id, REASON_CLIENT_CANCELED);
                shared.initialize_cancelled(id);
            }
        }
        // R2: the listen stream starts here once the result was written. S1: after the
        // early answer, the flag is set under the lock of the state, so that either this
        // line or the end of the start acts on it, never neither.
        "notifications/initialized" => {
            log::bridge(Level::Debug, "the client sent notifications/initialized");
            let upstream = {
                let state = shared.state();
                shared.initialized.send_replace(true);
                match &*state {
                    State::Ready { upstream, .. } => Some(Arc::clone(upstream)),
                    _ => None,
                }
            };
            match (upstream, shared.older()) {
                (Some(upstream), Some(older)) => {
                    older::notify(shared, &older, &upstream, method, params)
                }
                (Some(upstream), None) => listener::start(shared, upstream),
                (None, _) => {}
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
pub(super) fn on_client_event(
    shared: &Shared,
    generation: u64,
    event: ClientEvent,
) -> Option<Ended> {
    let current =
        matches!(&*shared.state(), State::Ready { generation: g, .. } if *g == generation);
    match event {
        ClientEvent::Ended(ended) => current.then_some(ended),
    }
}

/// O5, O6, O7, L3: a message of the upstream server that belongs to no request, on its
/// router. For an older server: its requests to VS Code and its notifications (L2, L3).
/// Else an event of a listen stream (it names its subscription) goes to the listener; a log
/// message without a stream reaches VS Code at the client's level or above; everything else
/// is dropped.
pub(super) fn on_incoming(shared: &Arc<Shared>, generation: u64, incoming: Incoming) {
    if let Some(older) = shared.older_of(generation) {
        return match incoming {
            Incoming::Request { id, method, params } => match shared.upstream_of(generation) {
                Some(client) => older::asked(shared, &older, &client, id, &method, params),
                None => log::bridge(
                    Level::Debug,
                    &format!("dropped the request {method} of a stopped upstream server"),
                ),
            },
            Incoming::Notification { method, params } => {
                older::on_notification(shared, &older, method, params)
            }
        };
    }
    let Incoming::Notification { method, params } = incoming else {
        return;
    };
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
                shared.log_message(&frame);
            }
        }
        _ => log::bridge(
            Level::Debug,
            &format!("dropped the notification {method} of the upstream server"),
        ),
    }
}
